"""Fan the selected collectors out over (account, region) pairs with a bounded thread pool,
and within a pair run up to ``COLLECTORS_AT_ONCE`` collectors side by side (each after the ones
whose output it reads).

Only the collectors that the needed kinds call for run; each one fetches its service once per
region. Every failure ends up as an ``InputError`` + ``Gap`` and an ``error`` coverage row; the
rest of the audit goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from scanner import progress as live_progress
from scanner.aws import faults
from scanner.aws.clients import ClientFactory
from scanner.aws.collectors.base import Collector, RegionContext
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
) -> SourceResult:
    """Resolve the targets of ``spec`` and collect them (``plan`` + ``collect_targets``)."""
    factory = ClientFactory(endpoint_url=endpoint_url, max_attempts=max_attempts)
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
    wanted = frozenset(DEFAULT_KINDS if kinds is None else kinds)
    factory = factory or ClientFactory()
    parts: dict[tuple[str, str], SourceResult] = {}
    total = len(targets)
    with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        futures = {pool.submit(collect_one, t, wanted, factory): t for t in targets}
        for done, future in enumerate(as_completed(futures), start=1):
            target = futures[future]
            part = future.result()
            parts[target.sort_key()] = part
            if progress is not None:
                progress(done, total, target, "error" if part.errors else "ok")
    result = SourceResult()
    for key in sorted(parts):
        result.extend(parts[key])
    _sort(result)
    return result


def collect_one(target: Target, wanted: frozenset[str], factory: ClientFactory) -> SourceResult:
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
    run_collectors(ctx, collectors)
    for collector in collectors:
        cov = ctx.coverage.get(collector.name)
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
    return result


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
            collector.run(view)
        except Exception as exc:
            _failed(view, collector, exc)
        finally:
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
