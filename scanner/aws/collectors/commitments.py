"""Reserved-instance and Savings Plans coverage of the account's EC2 usage per instance family
(COST-001), read once per account (``scanner.aws.account_wide``) over the lookback window:
GetReservationCoverage grouped by instance type and GetSavingsPlansCoverage grouped by instance
family, every page (at most ``MAX_PAGES`` each). Each Cost Explorer request is billed, so this
runs only when COST-001 is enabled (it is off by default).

A denied or failed call leaves no record and a Gap for the whole account (COST-001: ERROR)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.collectors.budgets import account_resource
from scanner.aws.collectors.cloudwatch import SETTINGS, _now
from scanner.catalog import family_of
from scanner.kinds.commitments import COVERAGE

MAX_PAGES = 20  # pages of each Cost Explorer answer (each request costs USD 0.01)
EC2_COMPUTE = "Amazon Elastic Compute Cloud - Compute"


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _pages(ctx: RegionContext, operation: str, **params: Any) -> Iterator[dict[str, Any]] | None:
    answers = []
    token: str | None = None
    for _ in range(MAX_PAGES):
        answer = ctx.call("ce", operation, **params, **({"NextPageToken": token} if token else {}))
        if answer is None:
            return None  # recorded: an error and a Gap
        answers.append(answer)
        token = answer.get("NextPageToken") or None
        if not token:
            return iter(answers)
    ctx.fail("ce", operation, RuntimeError(f"more than {MAX_PAGES} pages"))
    return None


def run(ctx: RegionContext) -> None:
    end_ts = int(_now() // 86400) * 86400
    start_ts = end_ts - int(max(1.0, SETTINGS.lookback_days) * 86400)
    start = dt.datetime.fromtimestamp(start_ts, dt.UTC).date().isoformat()
    end = dt.datetime.fromtimestamp(end_ts, dt.UTC).date().isoformat()
    period = {"Start": start, "End": end}
    reserved: dict[str, dict[str, float]] = {}
    answers = _pages(ctx, "GetReservationCoverage", TimePeriod=period, Granularity="DAILY",
                     GroupBy=[{"Type": "DIMENSION", "Key": "INSTANCE_TYPE"}],
                     Filter={"Dimensions": {"Key": "SERVICE", "Values": [EC2_COMPUTE]}})
    if answers is None:
        return
    for answer in answers:
        for day in answer.get("CoveragesByTime") or []:
            for group in day.get("Groups") or []:
                itype = (group.get("Attributes") or {}).get("instanceType") or \
                    (group.get("Attributes") or {}).get("INSTANCE_TYPE")
                hours = (group.get("Coverage") or {}).get("CoverageHours") or {}
                if not isinstance(itype, str) or not isinstance(hours, dict):
                    continue
                row = reserved.setdefault(family_of(itype), {"ReservedHours": 0.0,
                                                             "TotalRunningHours": 0.0})
                row["ReservedHours"] += _num(hours.get("ReservedHours"))
                row["TotalRunningHours"] += _num(hours.get("TotalRunningHours"))
    plans: dict[str, dict[str, float]] = {}
    answers = _pages(ctx, "GetSavingsPlansCoverage", TimePeriod=period, Granularity="DAILY",
                     GroupBy=[{"Type": "DIMENSION", "Key": "INSTANCE_FAMILY"}],
                     Filter={"Dimensions": {"Key": "SERVICE", "Values": [EC2_COMPUTE]}})
    if answers is None:
        return
    for answer in answers:
        for item in answer.get("SavingsPlansCoverages") or []:
            family = (item.get("Attributes") or {}).get("INSTANCE_FAMILY") or \
                (item.get("Attributes") or {}).get("instanceFamily")
            cov = item.get("Coverage") or {}
            if not isinstance(family, str) or not isinstance(cov, dict):
                continue
            row = plans.setdefault(family, {"SpendCovered": 0.0, "TotalCost": 0.0})
            row["SpendCovered"] += _num(cov.get("SpendCoveredBySavingsPlans"))
            row["TotalCost"] += _num(cov.get("TotalCost"))
    ctx.add(account_resource(ctx, COVERAGE, f"commitments:{ctx.account}", {
        "AccountId": ctx.account, "Start": start, "End": end,
        "Reserved": reserved, "SavingsPlans": plans}))


COLLECTOR = Collector(
    name="commitments",
    calls=(Call("ce", "GetReservationCoverage", (COVERAGE,)),
           Call("ce", "GetSavingsPlansCoverage", (COVERAGE,))),
    run=run,
)
