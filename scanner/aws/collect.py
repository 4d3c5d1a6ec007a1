"""Fan the selected collectors out over (account, region) pairs with a bounded thread pool,
and within a pair run up to ``COLLECTORS_AT_ONCE`` collectors side by side (each after the ones
whose output it reads).

Only the collectors that the needed kinds call for run; each one fetches its service once per
region. Every failure ends up as an ``InputError`` + ``Gap`` and an ``error`` coverage row; the
rest of the audit goes on.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from concurrent.futures import TimeoutError as FuturesTimeout
from typing import Any

from scanner.aws import faults
from scanner.aws import progress as live_progress
from scanner.aws.clients import ClientFactory
from scanner.aws.collectors.base import Collector, Coverage, RegionContext
from scanner.aws.deadline import Deadline
from scanner.aws.registry import DEFAULT_KINDS, selected
from scanner.aws.targets import SessionMaker, Target, TargetSpec, default_session_maker, resolve
from scanner.model import Gap, InputError, SourceResult

# progress(done, total, target, status) — status "ok" or "error"; called from the caller's thread.
Progress = Callable[[int, int, Target, str], None]
# Collectors of one (account, region) that run side by side: a region's calls are then
# paced by its longest chain of dependent calls, not by the sum of all its calls' round trips.
COLLECTORS_AT_ONCE = 4


def collect(
    spec: TargetSpec,
    *,
    kinds: Collection[str] | None = None,
    endpoint_url: str | None = None,
    max_workers: int = 8,
    max_attempts: int | None = None,
    progress: Progress | None = None,
    session_maker: SessionMaker = default_session_maker,
    timeout: float | None = None,
) -> SourceResult:
    """Resolve the targets of ``spec`` and collect them (``plan`` + ``collect_targets``),
    within ``timeout`` seconds (None: no deadline)."""
    factory = ClientFactory(
        endpoint_url=endpoint_url, max_attempts=max_attempts, deadline=Deadline(timeout)
    )
    targets = plan(spec, factory, max_workers=max_workers, session_maker=session_maker)
    return collect_targets(
        targets, kinds=kinds, factory=factory, max_workers=max_workers, progress=progress
    )


def plan(
    spec: TargetSpec,
    factory: ClientFactory,
    *,
    max_workers: int = 8,
    session_maker: SessionMaker = default_session_maker,
) -> list[Target]:
    """The (account, region) pairs of ``spec`` (this shard's), sorted."""
    return resolve(spec, factory, max_workers=max_workers, session_maker=session_maker)


def collect_targets(
    targets: Sequence[Target],
    *,
    kinds: Collection[str] | None = None,
    factory: ClientFactory | None = None,
    max_workers: int = 8,
    progress: Progress | None = None,
) -> SourceResult:
    """Collect every target, ``max_workers`` pairs at a time. At the factory's deadline the
    pairs still running are closed (what they read so far is kept; every call not settled is
    an error and a gap) and the pairs not started are gaps for every wanted kind; the threads
    still in a request are left to end at their read timeout (``Deadline.abandoned``)."""
    wanted = frozenset(DEFAULT_KINDS if kinds is None else kinds)
    factory = factory or ClientFactory()
    deadline = factory.deadline
    parts: dict[tuple[str, str], SourceResult] = {}
    total = len(targets)
    pool = ThreadPoolExecutor(max_workers=max(1, max_workers))
    futures: dict[Future[SourceResult], RegionRun] = {}
    try:
        for t in targets:
            run = RegionRun(t, wanted, factory)
            futures[pool.submit(run.collect)] = run
        try:
            for future in as_completed(futures, timeout=deadline.remaining()):
                run = futures[future]
                part = future.result()
                parts[run.target.sort_key()] = part
                if progress is not None:
                    progress(len(parts), total, run.target, "error" if part.errors else "ok")
        except FuturesTimeout:
            deadline.expired = True
            for future, run in futures.items():
                if run.target.sort_key() in parts:
                    continue
                future.cancel()
                part = run.expire(deadline.reason)
                parts[run.target.sort_key()] = part
                if progress is not None:
                    progress(len(parts), total, run.target, "error")
            deadline.abandoned = any(not f.done() for f in futures)
    finally:
        pool.shutdown(wait=not deadline.abandoned, cancel_futures=True)
    result = SourceResult()
    for key in sorted(parts):
        result.extend(parts[key])
    _one_region_each(result)
    _sort(result)
    return result


# An id EC2 made (vol-0abc…, i-…, lt-…, subnet-…): unique across regions, unlike the names
# of groups, clusters and environments (the same name in two regions is two resources).
_AWS_ID = re.compile(r"[a-z]+(?:-[a-z]+)?-[0-9a-f]{8,17}")


def _one_region_each(result: SourceResult) -> None:
    """The same AWS-made id read in two regions of one account: an endpoint answered for
    another region (a resource without a zone or an ARN, such as a launch template or a VPC,
    passes ``pages.check_region``). Which region it is in cannot be told: it is dropped from
    both, each with an error and a gap for its kind there (ERROR, never data)."""
    where: dict[tuple[str | None, str, str], set[str]] = {}
    for r in result.resources:
        prov = r.provenance
        if prov.region and r.kind.startswith("ec2.") and _AWS_ID.fullmatch(r.id):
            where.setdefault((prov.account, r.kind, r.id), set()).add(prov.region)
    doubled = {key: regions for key, regions in where.items() if len(regions) > 1}
    if not doubled:
        return
    result.resources = [r for r in result.resources
                        if (r.provenance.account, r.kind, r.id) not in doubled]
    for (account, kind, rid), regions in sorted(doubled.items(), key=str):
        for region in sorted(regions):
            others = ", ".join(sorted(regions - {region}))
            reason = (f"{kind} {rid[:40]} is in the answers of {region} and of {others}: an "
                      "endpoint answered for another region (not read)")
            scope = f"{account}/{region}"
            result.errors.append(InputError(path=f"{scope}/{kind}", reason=reason, kind="aws"))
            result.gaps.append(Gap(scope=scope, kinds=(kind,), reason=f"{kind}: {reason}",
                                   account=account, region=region))


class RegionRun:
    """The collection of one (account, region): run in a worker thread (``collect``), or cut
    short by the audit's deadline from the caller's thread (``expire``)."""

    def __init__(self, target: Target, wanted: frozenset[str], factory: ClientFactory) -> None:
        self.target = target
        self.wanted = wanted
        self.factory = factory
        self.collectors = selected(wanted)
        self.ctx: RegionContext | None = None
        self._lock = threading.Lock()
        self._finished: SourceResult | None = None

    def collect(self) -> SourceResult:
        result = collect_one(self.target, self.wanted, self.factory, self)
        with self._lock:
            self._finished = result
        return result

    def started(self, ctx: RegionContext) -> bool:
        """Called by ``collect_one`` before the region's first call: False after the deadline
        (then nothing is sent)."""
        with self._lock:
            if self.ctx is not None or self._finished is not None:
                return False
            self.ctx = ctx
            return True

    def expire(self, reason: str) -> SourceResult:
        """What the region has when the deadline passes: all of it if it finished; what it read
        so far plus errors and gaps for the rest if it is running; a gap for every wanted kind
        if it never started."""
        with self._lock:
            if self._finished is not None:
                return self._finished
            ctx = self.ctx
            if ctx is None:
                self.ctx = _NEVER  # a worker that starts now sends nothing
        result = SourceResult()
        if ctx is None or ctx is _NEVER:
            _unreachable(result, self.target, "deadline", f"not read: {reason}", self.wanted)
            return result
        result = ctx.close(reason, self.collectors)
        _coverage_rows(result, self.target, self.collectors, ctx.coverage)
        return result


_NEVER: Any = object()  # RegionRun.ctx of a region the deadline reached before it started


def collect_one(
    target: Target,
    wanted: frozenset[str],
    factory: ClientFactory,
    run: RegionRun | None = None,
) -> SourceResult:
    """Everything the wanted kinds need from one (account, region)."""
    result = SourceResult()
    if target.failure is not None or target.principal is None:
        what, reason = target.failure or ("credentials", "no principal")
        _unreachable(result, target, what, reason, wanted)
        return result
    try:
        session = target.principal.session(target.region)
    except Exception as exc:
        _unreachable(result, target, "session", faults.describe(exc), wanted)
        return result
    collectors = selected(wanted)
    ctx = RegionContext(
        account=target.account,
        region=target.region,
        session=session,
        factory=factory,
        wanted=wanted,
        result=result,
        collectors=collectors,
    )
    if run is not None and not run.started(ctx):
        return result  # the deadline passed before this region started: expire() reports it
    run_collectors(ctx, collectors)
    _coverage_rows(result, target, collectors, ctx.coverage)
    return result


def _coverage_rows(
    result: SourceResult,
    target: Target,
    collectors: Sequence[Collector],
    coverage: dict[str, Coverage],
) -> None:
    for collector in collectors:
        cov = coverage.get(collector.name)
        row: dict[str, Any] = {
            "account": target.account,
            "region": target.region,
            "service": collector.name,
            "status": "error" if cov is not None and cov.errors else "ok",
            "calls": cov.calls if cov is not None else 0,
        }
        if cov is not None and cov.errors:
            row["error"] = "; ".join(cov.errors)
        result.coverage.append(row)


def run_collectors(
    ctx: RegionContext, collectors: Sequence[Collector], concurrency: int = COLLECTORS_AT_ONCE
) -> None:
    """Run the region's collectors, up to ``concurrency`` side by side, each after the ones its
    requests need (``Collector.after``), then their in-memory joins (``Collector.finish``). They
    are started in run order and only ever wait for earlier ones, so a small pool cannot
    deadlock. With ``concurrency`` 1 they run one after another."""
    done: dict[str, threading.Event] = {c.name: threading.Event() for c in collectors}

    def run(collector: Collector) -> None:
        view = ctx.bind(collector)
        try:
            for name in collector.after:
                if name in done:
                    done[name].wait()
            if not ctx.closed:
                collector.run(view)
        except Exception as exc:
            _failed(view, collector, exc)
        finally:
            if not ctx.closed:
                ctx.settle(*((c.service, c.operation) for c in collector.calls))
            ctx.release(collector)
            done[collector.name].set()
            failed = getattr(ctx.coverage.get(collector.name), "errors", None)
            live_progress.service_done(ctx.account, ctx.region, collector.name,
                                       "error" if failed else "ok")

    if concurrency <= 1 or len(collectors) <= 1:
        for collector in collectors:
            run(collector)
    else:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            for future in [pool.submit(run, c) for c in collectors]:
                future.result()
    for collector in collectors:
        if collector.finish is not None:
            _finish(ctx, collector, collector.finish)


def _finish(
    ctx: RegionContext, collector: Collector, finish: Callable[[RegionContext], None]
) -> None:
    if ctx.closed:
        return  # past the deadline: the result was taken as it was
    view = ctx.bind(collector)
    try:
        finish(view)
    except Exception as exc:
        _failed(view, collector, exc)


def _failed(view: RegionContext, collector: Collector, exc: Exception) -> None:
    """A collector's own code failed (a malformed answer): an error, and Gaps for its kinds."""
    view.record_failure(
        collector.name,
        f"collector failed: {faults.describe(exc)}",
        tuple(sorted(collector.kinds & view.wanted)),
    )


def _unreachable(
    result: SourceResult, target: Target, what: str, reason: str, wanted: frozenset[str]
) -> None:
    result.errors.append(InputError(path=f"{target.scope}/{what}", reason=reason, kind="aws"))
    result.gaps.append(
        Gap(
            scope=target.scope,
            kinds=tuple(sorted(wanted)),
            reason=f"{what}: {reason}",
            account=target.account,
            region=target.region,
        )
    )
    result.coverage.append(
        {
            "account": target.account,
            "region": target.region,
            "service": what.split(":", 1)[0],
            "status": "error",
            "error": f"{what}: {reason}",
            "calls": 0,
        }
    )


def _sort(result: SourceResult) -> None:
    result.resources.sort(key=lambda r: (r.scope, r.kind, r.id))
    result.errors.sort(key=lambda e: (e.path, e.reason))
    result.notices.sort(key=lambda n: (n.path, n.message))
    result.gaps.sort(key=lambda g: (g.scope, g.kinds, g.reason))
    result.coverage.sort(key=lambda c: (c["account"], c["region"], c["service"]))


def inputs_of(targets: Sequence[Target]) -> dict[str, list[str]]:
    """The report's ``inputs``: the accounts and regions this run covered (or tried to)."""
    return {
        "accounts": sorted({t.account for t in targets}),
        "regions": sorted({t.region for t in targets}),
    }
