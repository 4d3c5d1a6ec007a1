"""AWS Budgets, read once per account (``scanner.aws.account_wide``): every budget
(DescribeBudgets, all pages) and one ``budgets.account`` marker saying the list is complete.

A denied or failed DescribeBudgets leaves no marker and a Gap on both kinds for the whole
account (scope ``ACCOUNT/*``): COST-002 then gives ERROR there, never "no budget"."""

from __future__ import annotations

import dataclasses
from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make
from scanner.kinds.budgets import ACCOUNT_BUDGETS, BUDGET
from scanner.model import Resource

KEEP = ("BudgetName", "BudgetType", "TimeUnit", "CostFilters", "FilterExpression")


def account_resource(ctx: RegionContext, kind: str, rid: str, attrs: dict[str, Any], *,
                     name: str | None = None, arn: str | None = None) -> Resource:
    """A resource of the account as a whole: no region, scope ``ACCOUNT/*``."""
    r = make(ctx, kind, rid, attrs, name=name, arn=arn)
    return dataclasses.replace(r, provenance=dataclasses.replace(r.provenance, region=None))


def run(ctx: RegionContext) -> None:
    items = ctx.list("budgets", "DescribeBudgets", "Budgets", AccountId=ctx.account)
    if items is None:
        return  # recorded: an error and a Gap on both kinds
    count = 0
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("BudgetName"), str):
            continue
        name = item["BudgetName"]
        budget = {k: item[k] for k in KEEP if k in item}
        arn = f"arn:aws:budgets::{ctx.account}:budget/{name}"
        ctx.add(account_resource(ctx, BUDGET, f"budget/{name}", {"Budget": budget,
                                 "AccountId": ctx.account}, name=name, arn=arn))
        count += 1
    ctx.add(account_resource(ctx, ACCOUNT_BUDGETS, f"budgets:{ctx.account}",
                             {"AccountId": ctx.account, "Budgets": count}))


COLLECTOR = Collector(
    name="budgets",
    calls=(Call("budgets", "DescribeBudgets", (BUDGET, ACCOUNT_BUDGETS)),),
    run=run,
)
