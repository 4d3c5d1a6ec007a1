"""Actual GPU spend from Cost Explorer: GetCostAndUsage grouped by INSTANCE_TYPE (and
LINKED_ACCOUNT for an Organization) over a period, asked for GPU / accelerator families only
(the request's filter) and kept to GPU types again here (the catalogue's family rule), so a
group Cost Explorer answers outside the filter never counts.

A read that fails is an error with its reason, never a spend of 0; a period Cost Explorer
has no data for says so."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from scanner.aws.collectors.base import Call
from scanner.catalog import Catalog, family_of, is_gpu_type
from scanner.findings.spend import METRIC, SOURCE, by_family, cents, spend_document

SPEND_CALLS = (Call("ce", "GetCostAndUsage", ("ce.gpu_spend",)),)
EC2_COMPUTE = "Amazon Elastic Compute Cloud - Compute"
MAX_PAGES = 50  # GetCostAndUsage pages read per period (each costs 0.01 USD); more is an error
CE_REGION = "us-east-1"  # Cost Explorer's one endpoint
MAX_ACCOUNTS = 1000  # accounts whose spend one audit reads (a request each); the rest not read


class SpendError(Exception):
    """The spend could not be read (the message says why)."""


@dataclass
class Spend:
    start: str
    end: str
    metric: str = METRIC
    rows: list[dict[str, Any]] = field(default_factory=list)  # account, instance_type, usd
    estimated: bool = False
    periods: int = 0  # ResultsByTime entries Cost Explorer answered
    dropped: list[str] = field(default_factory=list)  # groups outside GPU types

    @property
    def total(self) -> float:
        return cents(r["usd"] for r in self.rows)

    def by_family(self) -> dict[str, float]:
        return by_family(self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {"period": {"start": self.start, "end": self.end}, "metric": self.metric,
                "source": SOURCE, "estimated": self.estimated,
                "total_usd": self.total, "by_family": self.by_family(),
                "rows": sorted(self.rows, key=lambda r: (r.get("account") or "",
                                                         r.get("region") or "",
                                                         r["instance_type"])),
                "no_data": self.periods == 0}


def last_full_month(today: dt.date | None = None) -> tuple[str, str]:
    """[first day of last month, first day of this month) as Cost Explorer dates."""
    today = today or dt.date.today()
    first = today.replace(day=1)
    start = (first - dt.timedelta(days=1)).replace(day=1)
    return start.isoformat(), first.isoformat()


def gpu_families(catalog: Catalog) -> list[str]:
    return sorted({family_of(t) for t in catalog.instances if is_gpu_type(t)})


def request(start: str, end: str, families: Iterable[str], by_account: bool, *,
            account: str | None = None, regions: Sequence[str] = ()) -> dict[str, Any]:
    """The GetCostAndUsage request: GPU families of EC2 compute, grouped by instance type and
    (``by_account``) LINKED_ACCOUNT, or (``regions``) REGION. ``account`` keeps the answer to
    that linked account (a management account's Cost Explorer sees the whole Organization:
    without it, its "own" spend would be everybody's); ``regions`` to those regions."""
    if by_account and regions:
        raise ValueError("group by LINKED_ACCOUNT or by REGION, not both (two GroupBy keys)")
    group_by = [{"Type": "DIMENSION", "Key": "INSTANCE_TYPE"}]
    if by_account:
        group_by.append({"Type": "DIMENSION", "Key": "LINKED_ACCOUNT"})
    if regions:
        group_by.append({"Type": "DIMENSION", "Key": "REGION"})
    filters: list[dict[str, Any]] = [
        {"Dimensions": {"Key": "SERVICE", "Values": [EC2_COMPUTE]}},
        {"Dimensions": {"Key": "INSTANCE_TYPE_FAMILY", "Values": sorted(families)}},
    ]
    if account:
        filters.append({"Dimensions": {"Key": "LINKED_ACCOUNT", "Values": [account]}})
    if regions:
        filters.append({"Dimensions": {"Key": "REGION", "Values": sorted(regions)}})
    return {
        "TimePeriod": {"Start": start, "End": end},
        "Granularity": "MONTHLY",
        "Metrics": [METRIC],
        "GroupBy": group_by,
        "Filter": {"And": filters},
    }


def read_spend(client: Any, start: str, end: str, catalog: Catalog, *, by_account: bool,
               account: str | None = None, regions: Sequence[str] = ()) -> Spend:
    """Every page of the answer (at most MAX_PAGES), summed per (account, instance type), and
    per region with ``regions`` (the answer kept to them: :func:`request`)."""
    params = request(start, end, gpu_families(catalog), by_account,
                     account=None if by_account else account, regions=regions)
    spend = Spend(start, end)
    wanted = set(regions)
    sums: dict[tuple[str | None, str, str | None], Decimal] = {}
    token: str | None = None
    for _ in range(MAX_PAGES):
        page = client.get_cost_and_usage(**params, **({"NextPageToken": token} if token else {}))
        for period in page.get("ResultsByTime") or []:
            spend.periods += 1
            spend.estimated |= bool(period.get("Estimated"))
            for group in period.get("Groups") or []:
                keys = [str(k) for k in group.get("Keys") or []]
                itype = keys[0] if keys else ""
                who = keys[1] if by_account and len(keys) > 1 else account
                where = keys[1] if regions and len(keys) > 1 else None
                if regions and where is None:
                    raise SpendError(f"{itype[:40]}: a group without its REGION key")
                if not is_gpu_type(itype) or (regions and where not in wanted):
                    spend.dropped.append(f"{itype[:40]} {where or ''}".strip())
                    continue
                amount = ((group.get("Metrics") or {}).get(METRIC) or {}).get("Amount")
                try:
                    value = Decimal(str(amount))
                except InvalidOperation as exc:
                    raise SpendError(f"{itype}: amount {str(amount)[:20]!r} is not a number") \
                        from exc
                if not value.is_finite():
                    raise SpendError(f"{itype}: amount {amount!r} is not a number")
                key = (who, itype, where)
                sums[key] = sums.get(key, Decimal(0)) + value
        token = page.get("NextPageToken")
        if not token:
            break
    else:
        raise SpendError(f"more than {MAX_PAGES} pages of GetCostAndUsage: not read whole")
    spend.rows = [{"account": who, "instance_type": t, "usd": round(float(v), 2),
                   **({"region": where} if where else {})}
                  for (who, t, where), v in sorted(sums.items(), key=lambda kv: (
                      kv[0][0] or "", kv[0][2] or "", kv[0][1]))]
    return spend


def table(spend: Spend) -> str:
    """The terminal table: spend per (account,) instance type, totals by family."""
    if spend.periods == 0:
        return (f"GPU spend {spend.start} to {spend.end}: Cost Explorer has no data for the "
                "period (not 0: nothing was answered)\n")
    lines = [f"GPU spend {spend.start} to {spend.end} ({spend.metric}"
             + (", estimated" if spend.estimated else "") + ")", ""]
    accounts = any(r["account"] for r in spend.rows)
    head = ("account       " if accounts else "") + f"{'instance type':<18}{'USD':>14}"
    lines.append(head)
    for r in spend.rows:
        lines.append((f"{r['account'] or '?':<14}" if accounts else "")
                     + f"{r['instance_type']:<18}{r['usd']:>14,.2f}")
    lines += ["", f"{'family':<18}{'USD':>14}"]
    lines += [f"{fam:<18}{usd:>14,.2f}" for fam, usd in spend.by_family().items()]
    lines.append(f"{'total':<18}{spend.total:>14,.2f}")
    return "\n".join(lines) + "\n"



def read_target_spend(target: Any, factory: Any, start: str, end: str, catalog: Catalog, *,
                      by_account: bool, regions: Sequence[str] = ()) -> Spend:
    """The GPU spend of ``target``'s account (``by_account``: of its Organization, by account;
    ``regions``: of those regions only, by region) over [start, end); SpendError saying why
    when it could not be read (a denied or failed call too: never a spend of 0)."""
    if target is None or target.principal is None:
        why = target.failure[1] if target is not None and target.failure else "no credentials"
        raise SpendError(f"could not reach the account: {why}")
    try:
        client = factory.client(target.principal.session(CE_REGION), "ce",
                                ["GetCostAndUsage"], region=CE_REGION)
        return read_spend(client, start, end, catalog, by_account=by_account,
                          account=None if by_account else target.account, regions=regions)
    except SpendError:
        raise
    except Exception as exc:
        from scanner.aws import faults

        raise SpendError(f"ce:GetCostAndUsage: {faults.describe(exc)}") from None


def _audited(targets: Iterable[Any]) -> dict[str, tuple[Any, list[str], str | None]]:
    """Per account of the run: a pair to read its spend with, its regions audited here, and
    why its spend cannot be read (None when it can)."""
    out: dict[str, tuple[Any, list[str], str | None]] = {}
    for t in sorted(targets, key=lambda t: (t.account, t.region)):
        reader, regions, why = out.get(t.account, (None, [], None))
        if t.principal is None or t.region == "*":
            reason = t.failure[1] if t.failure else "not reached"
            what = t.failure[0] if t.failure else "account"
            why = why or (f"{what}: {reason}" if t.region == "*" else
                          f"{t.region} not reached: {reason}")
        else:
            reader = reader or t
            regions.append(t.region)
        out[t.account] = (reader, regions, why)
    return out


def audit_spend(targets: Any, factory: Any, catalog: Catalog, *,
                today: dt.date | None = None, max_workers: int = 8) -> dict[str, Any]:
    """The audit report's ``spend``: the last full month's actual GPU spend of the (account,
    region) pairs this run audits, one request per account (kept to that linked account and
    to its regions here, grouped by region: the pairs of shards never overlap, and a
    management account never counts its Organization as its own), at most MAX_ACCOUNTS
    accounts (each request is billed). ``read``: the pairs read; ``not_read``: the accounts
    whose spend could not be read, and why; then ``error`` says so and there is no
    ``total_usd`` (``read_usd`` is the part read): never a spend of 0."""
    from concurrent.futures import ThreadPoolExecutor

    start, end = last_full_month(today)
    audited = sorted(_audited(targets).items())
    readable = [(a, reader, sorted(set(regions))) for a, (reader, regions, why) in audited
                if why is None and reader is not None][:MAX_ACCOUNTS]
    chosen = {a for a, _, _ in readable}

    def one(item: tuple[str, Any, list[str]]) -> Spend | str:
        _, reader, regions = item
        try:
            return read_target_spend(reader, factory, start, end, catalog, by_account=False,
                                     regions=regions)
        except SpendError as exc:
            return str(exc)

    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(readable) or 1))) as pool:
        answers = dict(zip([a for a, _, _ in readable], pool.map(one, readable),
                           strict=True))
    rows: list[dict[str, Any]] = []
    read: list[dict[str, Any]] = []
    not_read: list[dict[str, Any]] = []
    estimated, periods = False, 0
    for account, (_, regions, why) in audited:
        got = answers.get(account)
        if isinstance(got, Spend):
            rows += got.rows
            estimated |= got.estimated
            periods += got.periods
            read.append({"account": account, "regions": sorted(set(regions))})
            continue
        if why is None and account not in chosen:
            why = (f"more than {MAX_ACCOUNTS} accounts: not read (each Cost Explorer request "
                   "is billed)")
        not_read.append({"account": account, "regions": sorted(set(regions)) or ["*"],
                         "reason": got or why or "could not reach the account"})
    return spend_document(start, end, rows=rows, read=read, not_read=not_read,
                          estimated=estimated, no_data=bool(read) and periods == 0)
