"""Reads of an account as a whole (AWS Budgets; global services), made once per account, not
once per region: after the regional collection, each account of the targets is read through
its principal in its partition's global region. The resources and gaps carry scope
``ACCOUNT/*`` (the account, every region), so that a failed read is an ERROR for the policies
that need it anywhere in that account.

With ``--shard`` exactly one shard reads each account: the one holding the account's first
pair of the whole sorted list (``targets.shard`` marks it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from scanner.aws import faults
from scanner.aws.clients import ClientFactory
from scanner.aws.collectors import budgets, commitments
from scanner.aws.collectors.base import Collector, Coverage, RegionContext
from scanner.aws.normalize import partition
from scanner.aws.targets import Target
from scanner.model import Gap, InputError, SourceResult

ACCOUNT_COLLECTORS: tuple[Collector, ...] = (budgets.COLLECTOR, commitments.COLLECTOR)
ACCOUNT_KINDS: frozenset[str] = frozenset(k for c in ACCOUNT_COLLECTORS for k in c.kinds)
# The region a global service of each partition answers in.
GLOBAL_REGION = {"aws": "us-east-1", "aws-cn": "cn-northwest-1", "aws-us-gov": "us-gov-west-1"}
WHOLE = "*"  # the region part of an account-wide scope


def collect_accounts(targets: Sequence[Target], wanted: frozenset[str], factory: ClientFactory,
                     max_workers: int = 8) -> SourceResult:
    """The account-wide kinds in ``wanted`` for every account of ``targets`` that has a
    principal (an account that could not be reached already has its gaps)."""
    collectors = tuple(c for c in ACCOUNT_COLLECTORS if c.kinds & wanted)
    result = SourceResult()
    if not collectors:
        return result
    firsts: dict[str, Target] = {}
    marked = {t.account for t in targets if t.account_wide is not None}
    for t in sorted(targets, key=Target.sort_key):
        if t.principal is None or t.failure is not None:
            continue
        if t.account in marked:  # sharded: only the pair ``shard`` chose, in whichever shard
            if t.account_wide:
                firsts.setdefault(t.account, t)
        else:
            firsts.setdefault(t.account, t)
    if not firsts:
        return result
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(firsts)))) as pool:
        parts = list(pool.map(lambda t: _one(t, wanted, factory, collectors),
                              [firsts[a] for a in sorted(firsts)]))
    for part in parts:
        result.extend(part)
    return result


def _one(target: Target, wanted: frozenset[str], factory: ClientFactory,
         collectors: tuple[Collector, ...]) -> SourceResult:
    result = SourceResult()
    scope = f"{target.account}/{WHOLE}"
    region = GLOBAL_REGION.get(partition(target.region), "us-east-1")
    kinds = tuple(sorted(k for c in collectors for k in c.kinds if k in wanted))
    assert target.principal is not None
    try:
        session = target.principal.session(region)
    except Exception as exc:
        reason = faults.describe(exc)
        result.errors.append(InputError(path=f"{scope}/session", reason=reason, kind="aws"))
        result.gaps.append(Gap(scope=scope, kinds=kinds, reason=f"session: {reason}",
                               account=target.account, region=WHOLE))
        return result
    ctx = RegionContext(account=target.account, region=region, session=session,
                        factory=factory, wanted=wanted, result=result, collectors=collectors)
    ctx.scope = scope  # resources, errors and gaps of the whole account
    _run(ctx, collectors)
    for collector in collectors:
        cov = ctx.coverage.get(collector.name) or Coverage()
        row = {"account": target.account, "region": WHOLE, "service": collector.name,
               "status": "error" if cov.errors else "ok", "calls": cov.calls}
        if cov.errors:
            row["error"] = "; ".join(cov.errors)
        result.coverage.append(row)
    # the whole account, whatever region the call was sent to
    result.gaps = [dataclasses.replace(g, region=WHOLE) for g in result.gaps]
    return result


def _run(ctx: RegionContext, collectors: Sequence[Collector]) -> None:
    """The account's collectors one after another (a handful of calls each); a collector's own
    failure (a malformed answer) is an error and a gap on its kinds."""
    for collector in collectors:
        view = ctx.bind(collector)
        try:
            if not ctx.closed:
                collector.run(view)
        except Exception as exc:
            view.record_failure(collector.name, f"collector failed: {faults.describe(exc)}",
                                tuple(sorted(collector.kinds & view.wanted)))
        finally:
            if not ctx.closed:
                ctx.settle(*((c.service, c.operation) for c in collector.calls))
            ctx.release(collector)
