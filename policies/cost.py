"""Cost guard rails of an account that runs GPU compute: a budget that covers it (COST-002)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from policies.base import Context, Remediation, policy
from scanner.catalog import is_gpu_type
from scanner.compute import LAUNCHES, PLACES, kinds_with, reads_of
from scanner.kinds.budgets import ACCOUNT_BUDGETS, BUDGET
from scanner.model import Resource, Result, Severity, Status, Unknown

COMPUTE = kinds_with(LAUNCHES, PLACES)  # what places capacity (a template alone does not)
EC2_COMPUTE = "Amazon Elastic Compute Cloud - Compute"  # the Cost Explorer / Budgets service
SPEND_TYPES = ("COST", "USAGE")  # budgets that track spend or usage (not RI / SP ratios)
EXAMPLES = 5  # GPU compute resources named in the evidence


@dataclass
class _Group:
    """The resources judged together: one account whose budgets were listed whole (its
    ``marker``), or everything else with the same (possibly unknown) account."""

    account: str | None
    marker: Resource | None = None
    budgets: list[Resource] = field(default_factory=list)
    gpu: list[Resource] = field(default_factory=list)  # certainly GPU compute
    maybe: list[tuple[Resource, str]] = field(default_factory=list)  # may be GPU compute
    regions: set[str] = field(default_factory=set)


def _norm(key: str) -> str:
    return key.replace("_", "").replace(" ", "").casefold()


def _admits(key: str, values: Any, account: str | None,
            regions: set[str] | None) -> bool | Unknown:
    """Whether a filter dimension with these values lets GPU EC2 compute through."""
    if isinstance(values, Unknown):
        return Unknown(f"the values of the {key} filter are not known")
    vals = [v for v in (values if isinstance(values, list) else [values]) if isinstance(v, str)]
    k = _norm(key)
    if k == "service":
        return any(v.strip().casefold() == EC2_COMPUTE.casefold() for v in vals)
    if k == "instancetype":
        return any(is_gpu_type(v) for v in vals)
    if k == "instancetypefamily":
        return any(is_gpu_type(f"{v}.xlarge") for v in vals)
    if k == "linkedaccount":
        if account is None:
            return Unknown("filtered on LinkedAccount, and the account is not known")
        return account in vals
    if k == "region":
        if not regions:
            return Unknown("filtered on Region, and where the GPU compute runs is not known")
        return bool(regions & set(vals))
    return Unknown(f"filtered on {key}: whether that includes the GPU compute is not known")


def _expression(expr: Any, account: str | None, regions: set[str] | None) -> bool | Unknown:
    """A FilterExpression of Dimensions joined by And; anything else is not judged."""
    if not isinstance(expr, Mapping) or not expr:
        return True
    if set(expr) == {"And"} and isinstance(expr["And"], list):
        parts = [_expression(e, account, regions) for e in expr["And"]]
        return _all(parts)
    dims = expr.get("Dimensions")
    if set(expr) == {"Dimensions"} and isinstance(dims, Mapping) and isinstance(
            dims.get("Key"), str):
        return _admits(dims["Key"], dims.get("Values") or [], account, regions)
    return Unknown("its filter expression uses Or, Not, tags or cost categories: not judged")


def _all(parts: list[bool | Unknown]) -> bool | Unknown:
    if any(p is False for p in parts):
        return False
    for p in parts:
        if isinstance(p, Unknown):
            return p
    return True


def covers(budget: Resource, account: str | None,
           regions: set[str] | None) -> tuple[bool | Unknown, str]:
    """(whether the budget covers GPU EC2 compute, why in words)."""
    data = budget.get("Budget")
    if isinstance(data, Unknown):
        return Unknown(f"its settings are not known ({data.reason})"), "not known"
    data = data if isinstance(data, Mapping) else {}
    btype = data.get("BudgetType")
    if isinstance(btype, Unknown) or btype is None:
        return Unknown("its budget type is not known"), "budget type not known"
    if str(btype).upper() not in SPEND_TYPES:
        return False, f"a {btype} budget tracks a ratio, not spend"
    filters = data.get("CostFilters")
    if isinstance(filters, Unknown):
        return Unknown(f"its cost filters are not known ({filters.reason})"), "filters not known"
    expr = data.get("FilterExpression")
    if expr:
        verdict = _expression(expr, account, regions)
    elif not filters:
        return True, "no cost filter: it covers every cost of the account"
    else:
        verdict = _all([_admits(str(k), v, account, regions) for k, v in filters.items()])
    if verdict is True:
        return True, "its filters include EC2 compute / GPU instance types"
    if verdict is False:
        return False, "its filters leave GPU EC2 compute out"
    return verdict, verdict.reason


def _groups(ctx: Context) -> dict[int, _Group]:
    """The group of each resource the policy judges, by ``id(resource)``."""
    def build() -> dict[int, _Group]:
        markers = {r.provenance.account: r for r in ctx.index.of_kind(ACCOUNT_BUDGETS)}
        out: dict[Any, _Group] = {}

        def group(r: Resource) -> _Group:
            account = r.provenance.account
            key = ("listed", account) if account in markers else ("declared", account)
            found = out.get(key)
            if found is None:
                found = out[key] = _Group(account, markers.get(account))
            return found

        for m in markers.values():
            group(m)
        for b in ctx.index.of_kind(BUDGET):
            group(b).budgets.append(b)
        for p in ctx.compute.gpu_placements():
            g = group(p.compute)
            if p.doubt is None:
                g.gpu.append(p.compute)
                if p.compute.provenance.region:
                    g.regions.add(p.compute.provenance.region)
            else:
                g.maybe.append((p.compute, p.doubt.reason or "may not exist"))
        by_resource: dict[int, _Group] = {}
        for g in out.values():
            g.budgets.sort(key=lambda r: r.id)
            g.gpu.sort(key=lambda r: (r.scope, r.id))
            g.maybe.sort(key=lambda m: (m[0].scope, m[0].id))
            members = [*g.budgets, *g.gpu, *(c for c, _ in g.maybe)]
            members += [g.marker] if g.marker is not None else []
            by_resource.update((id(r), g) for r in members)
        return by_resource

    key = "cost-002:groups"
    found = ctx.memo.get(key)
    if found is None or found[0] is not ctx.index:
        found = ctx.memo[key] = (ctx.index, build())
    return found[1]


def _group_of(resource: Resource, ctx: Context) -> _Group | None:
    return _groups(ctx).get(id(resource))


def _evidence(g: _Group, judged: list[tuple[Resource, bool | Unknown, str]]) -> dict[str, Any]:
    rows = []
    for b, verdict, why in judged:
        data = b.get("Budget") if isinstance(b.get("Budget"), Mapping) else {}
        filters = data.get("CostFilters")
        rows.append({"name": data.get("BudgetName") if isinstance(data.get("BudgetName"), str)
                     else b.id, "budget_type": data.get("BudgetType")
                     if isinstance(data.get("BudgetType"), str) else None,
                     "cost_filters": filters if isinstance(filters, Mapping) else None,
                     "filter_expression": bool(data.get("FilterExpression")),
                     "covers_gpu_compute": verdict if isinstance(verdict, bool) else None,
                     "why": why})
    return {"budgets": rows, "gpu_compute": {
        "count": len(g.gpu), "examples": [r.id for r in g.gpu[:EXAMPLES]],
        "regions": sorted(g.regions), "maybe": len(g.maybe)}}


@policy(
    id="COST-002",
    title="No AWS Budget covers the GPU compute of the account",
    severity=Severity.LOW,
    category="cost",
    kinds=(ACCOUNT_BUDGETS, BUDGET, *COMPUTE),
    needs=reads_of(COMPUTE),
    description="An account that runs GPU compute needs a COST (or USAGE) budget that covers it: "
                "a budget with no cost filter covers every cost; a Service filter must include "
                f"\"{EC2_COMPUTE}\", an InstanceType filter a GPU type. Judged where the "
                "account's budgets were listed whole (live); in IaC a budget that covers GPU "
                "compute passes, and a tree without one gets a notice (a budget may be "
                "declared elsewhere in the account).",
    remediation=Remediation(
        text="Create a monthly COST budget filtered on EC2 compute (or on the GPU instance "
             "types) with an alert at 80 % of actual and 100 % of forecasted spend.",
        terraform='resource "aws_budgets_budget" "gpu" {\n  name         = "gpu-compute"\n'
                  '  budget_type  = "COST"\n  limit_amount = "10000"\n  limit_unit   = "USD"\n'
                  '  time_unit    = "MONTHLY"\n  cost_filter {\n    name   = "Service"\n'
                  f'    values = ["{EC2_COMPUTE}"]\n  }}\n  notification {{\n'
                  '    comparison_operator        = "GREATER_THAN"\n'
                  '    threshold                  = 80\n    threshold_type             = '
                  '"PERCENTAGE"\n    notification_type          = "ACTUAL"\n'
                  '    subscriber_email_addresses = ["finops@example.com"]\n  }\n}',
        cloudformation="GpuBudget:\n  Type: AWS::Budgets::Budget\n  Properties:\n"
                       "    Budget:\n      BudgetName: gpu-compute\n      BudgetType: COST\n"
                       "      TimeUnit: MONTHLY\n      BudgetLimit: {Amount: 10000, Unit: USD}\n"
                       f"      CostFilters:\n        Service: [\"{EC2_COMPUTE}\"]"),
)
def cost_002(resource: Resource, ctx: Context) -> Iterator[Result]:
    g = _group_of(resource, ctx)
    if g is None or (not g.gpu and not g.maybe):
        return  # no GPU compute: not applicable
    regions = g.regions if g.marker is not None else None
    judged = [(b, *covers(b, g.account, regions)) for b in g.budgets]
    covering = [j for j in judged if j[1] is True]
    doubtful = [j for j in judged if isinstance(j[1], Unknown)]
    evidence = _evidence(g, judged)
    if g.marker is not None:
        if resource is not g.marker:
            return  # the account is judged once, at its list of budgets
        if covering:
            yield _pass(ctx, resource, covering, evidence, g)
        elif not g.gpu:
            yield ctx.result(resource, Status.UNKNOWN, "whether the account runs GPU compute "
                             f"is not known ({g.maybe[0][1]}); no budget covers it",
                             evidence=evidence)
        elif doubtful:
            b, verdict, _why = doubtful[0]
            yield ctx.result(resource, Status.UNKNOWN, f"no budget certainly covers the GPU "
                             f"compute; budget {b.name or b.id}: {verdict}", evidence=evidence)
        else:
            listed = ", ".join(str(r["name"]) for r in evidence["budgets"]) or "none"
            yield ctx.result(resource, Status.FAIL,
                             f"the account runs GPU compute ({len(g.gpu)} resource(s), e.g. "
                             f"{g.gpu[0].id}) and no budget covers it (budgets: {listed})",
                             evidence=evidence)
        return
    # Not the account's whole list (IaC): a covering budget passes; its absence is not known.
    if resource.kind == BUDGET:
        if covering and resource is covering[0][0]:
            yield _pass(ctx, resource, covering, evidence, g)
        elif not covering and doubtful and resource is doubtful[0][0]:
            yield ctx.result(resource, Status.UNKNOWN, f"whether this budget covers the GPU "
                             f"compute is not known: {doubtful[0][1]}", evidence=evidence)
        return
    # An account that is known but not listed here was listed in another shard of the audit
    # (or its listing failed: the gap's ERROR says so): only a tree of no known account gets
    # the notice.
    first = g.gpu[0] if g.gpu else g.maybe[0][0]
    if resource is first and not covering and not doubtful and g.account is None:
        ctx.notice(resource, "no budget declared here covers GPU compute; whether the account "
                             "has one elsewhere is not known (a live audit reads its budgets)")


def _pass(ctx: Context, resource: Resource, covering: list[tuple[Resource, Any, str]],
          evidence: dict[str, Any], g: _Group) -> Result:
    b, _v, why = covering[0]
    more = f" (and {len(covering) - 1} more)" if len(covering) > 1 else ""
    doubt = None
    if not g.gpu:
        doubt = Unknown(f"whether the GPU compute exists is not known ({g.maybe[0][1]})")
    return ctx.result(resource, Status.PASS, f"budget {b.name or b.id} covers the GPU compute: "
                      f"{why}{more}", evidence=evidence, doubt=doubt)
