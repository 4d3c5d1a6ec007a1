"""Commitment coverage of the GPU families an account runs (COST-001): reserved instances and
Savings Plans against the coverage its own capacity history recommends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from policies.base import Context, Remediation, policy
from scanner.catalog import family_of
from scanner.compute import LAUNCHES, PLACES, kinds_with, reads_of
from scanner.kinds.commitments import CAPACITY, COVERAGE
from scanner.model import Resource, Result, Severity, Status, Unknown
from scanner.model.money import HOURS_PER_MONTH

GROUP = "autoscaling.group"
NODE_GROUP = "eks.nodegroup"  # an EKS managed node group: its capacity is its groups'
SHARE = 0.8  # of the steady base: the rest stays flexible (docs/money.md)
COMPUTE = kinds_with(LAUNCHES, PLACES)  # what places capacity (the GPU families run)


@dataclass
class _Family:
    family: str
    groups: list[tuple[Resource, list[str]]] = field(default_factory=list)  # with ASG names
    types: set[str] = field(default_factory=set)
    regions: set[str] = field(default_factory=set)


def recommended_share(base: float, peak: float) -> float:
    """The recommended commitment coverage, a fraction: base / peak x 0.8."""
    return 0.0 if peak <= 0 else min(1.0, base / peak) * SHARE


def _families(ctx: Context, account: str | None) -> tuple[dict[str, _Family], list[str]]:
    """The GPU Auto Scaling groups of the account by family, and the ones not judged (why)."""
    out: dict[str, _Family] = {}
    skipped: list[str] = []
    for p in ctx.compute.gpu_placements():
        r = p.compute
        if r.provenance.account != account:
            continue
        names = _group_names(r)
        if not names:
            if ctx.compute.owner_of(r) is not None:
                continue  # a member of a group: counted in its group's capacity
            skipped.append(f"{r.id}: not in an Auto Scaling group (no capacity history)")
            continue
        view = ctx.compute.of(r)
        types = view.types.gpu_types() if view is not None else []
        fams = {family_of(t) for t in types}
        if p.doubt is not None or len(fams) != 1:
            skipped.append(f"{r.id}: its GPU family is not known as one family")
            continue
        fam = out.setdefault(next(iter(fams)), _Family(next(iter(fams))))
        fam.groups.append((r, names))
        fam.types.update(types)
        if r.provenance.region:
            fam.regions.add(r.provenance.region)
    return out, skipped


def _group_names(r: Resource) -> list[str]:
    """The Auto Scaling groups whose desired capacity is the capacity of ``r``."""
    if r.kind == GROUP:
        name = r.get("AutoScalingGroupName")
        return [name] if isinstance(name, str) and name else []
    if r.kind == NODE_GROUP:
        res = r.get("Resources")
        groups = res.get("AutoScalingGroups") if isinstance(res, dict) else None
        return [str(g["Name"]) for g in groups or [] if isinstance(g, dict)
                and isinstance(g.get("Name"), str)]
    return []


def _coverage(marker: Resource, family: str) -> tuple[float | None, dict[str, Any]]:
    """The current coverage of a family (a fraction; None when Cost Explorer records none of
    its usage) and how it was figured."""
    reserved = marker.get("Reserved")
    plans = marker.get("SavingsPlans")
    ri = reserved.get(family) if isinstance(reserved, dict) else None
    sp = plans.get(family) if isinstance(plans, dict) else None
    ri_total = float(ri.get("TotalRunningHours") or 0) if isinstance(ri, dict) else 0.0
    ri_hours = float(ri.get("ReservedHours") or 0) if isinstance(ri, dict) else 0.0
    sp_total = float(sp.get("TotalCost") or 0) if isinstance(sp, dict) else 0.0
    sp_spend = float(sp.get("SpendCovered") or 0) if isinstance(sp, dict) else 0.0
    how = {"reserved_hours": ri_hours, "running_hours": ri_total,
           "savings_plans_covered_usd": sp_spend, "on_demand_equivalent_usd": sp_total,
           "source": "Cost Explorer GetReservationCoverage (hours) + GetSavingsPlansCoverage "
                     "(spend), summed as shares"}
    if ri_total <= 0 and sp_total <= 0:
        return None, how
    share = (ri_hours / ri_total if ri_total > 0 else 0.0) + \
        (sp_spend / sp_total if sp_total > 0 else 0.0)
    return min(1.0, share), how


def _judge(ctx: Context, marker: Resource, fam: _Family,
           capacity: dict[tuple[str, str], Resource]) -> tuple[Status, str, dict[str, Any]]:
    records = []
    missing = []
    for g, names in fam.groups:
        for name in names:
            rec = capacity.get((name, g.scope))
            (records.append(rec) if rec is not None else missing.append(name))
    ev: dict[str, Any] = {"family": fam.family, "groups": sorted(g.id for g, _ in fam.groups),
                          "instance_types": sorted(fam.types), "regions": sorted(fam.regions)}
    if missing:
        ev["no_history"] = missing
        return (Status.UNKNOWN, f"{fam.family}: no GroupDesiredCapacity history for "
                f"{', '.join(missing[:3])} (the group's metrics collection is off, or its "
                "read failed: see the errors)", ev)
    base = sum(float(r.get("Base") or 0) for r in records)
    peak = sum(float(r.get("Peak") or 0) for r in records)
    hours = min(float(r.get("Hours") or 0) for r in records)
    rec_share = recommended_share(base, peak)
    current, how = _coverage(marker, fam.family)
    ev.update(base=base, peak=peak, hours=hours, recommended_pct=round(rec_share * 100, 1),
              base_peak_source="CloudWatch AWS/AutoScaling GroupDesiredCapacity, hourly "
                               "min / max, summed over the family's groups",
              coverage=how, current_pct=None if current is None else round(current * 100, 1))
    if peak <= 0:
        return Status.PASS, f"{fam.family}: no desired capacity in the window", ev
    if current is None:
        return (Status.UNKNOWN, f"{fam.family}: Cost Explorer records none of its usage in the "
                f"window (base {base:g}, peak {peak:g})", ev)
    itype = sorted(fam.types)[0]
    region = sorted(fam.regions)[0] if fam.regions else "us-east-1"
    uncovered = max(0.0, rec_share - current) * peak
    ev["recommended_base"] = round(rec_share * peak, 2)
    ev["uncovered_base"] = round(uncovered, 2)
    ev["rates"] = {"on_demand_usd_hour": ctx.catalog.regional_price(itype, region),
                   "on_demand_source": f"{ctx.catalog.source} ({itype}, {region})",
                   "committed_usd_hour": None,
                   "committed_source": "none: the price data has no reserved or Savings Plans "
                                       "rate"}
    ev["saving"] = None
    ev["saving_why_none"] = ("no committed rate is known, so no saving is figured (a saving is "
                             f"(on-demand - committed) x uncovered base x {HOURS_PER_MONTH} h)")
    if current + 1e-9 >= rec_share:
        return (Status.PASS, f"{fam.family}: {current:.0%} covered, at least the recommended "
                f"{rec_share:.0%} (base {base:g} / peak {peak:g} x 0.8)", ev)
    return (Status.FAIL, f"{fam.family}: {current:.0%} covered by reservations / Savings Plans, "
            f"{rec_share:.0%} recommended (base {base:g} / peak {peak:g} x 0.8): about "
            f"{uncovered:.1f} instance(s) of steady use uncovered", ev)


ORDER = (Status.FAIL, Status.UNKNOWN, Status.PASS)


@policy(
    id="COST-001",
    title="Steady GPU capacity not covered by reservations or Savings Plans",
    severity=Severity.INFO,
    category="cost",
    kinds=(COVERAGE,),
    needs=(CAPACITY, *COMPUTE, *reads_of(COMPUTE)),
    description="For each GPU family an account runs in Auto Scaling groups, the reserved "
                "and Savings Plans coverage of the last 14 days (Cost Explorer) against the "
                "recommended coverage base / peak x 0.8, base and peak being the lowest and "
                "highest hourly GroupDesiredCapacity of the family's groups. A saving is given "
                "only where a committed rate is known. Live only; off by default (each Cost "
                "Explorer request is billed).",
    remediation=Remediation(
        text="Buy an EC2 Instance Savings Plan (or reserved instances) for the uncovered "
             "steady base of the family; keep the capacity above it on demand or spot."),
    sources="L",
    enabled_by_default=False,
)
def cost_001(resource: Resource, ctx: Context) -> Iterator[Result]:
    account = resource.provenance.account
    families, skipped = _families(ctx, account)
    if not families:
        if skipped:
            yield ctx.result(resource, Status.UNKNOWN, "base and peak come from Auto Scaling "
                             f"group history; not judged: {skipped[0]}",
                             evidence={"not_judged": skipped})
        return
    capacity = {(str(r.get("Group")), r.scope): r for r in ctx.index.of_kind(CAPACITY)
                if r.provenance.account == account}
    judged = [_judge(ctx, resource, families[f], capacity) for f in sorted(families)]
    status = next(s for s in ORDER if any(j[0] is s for j in judged))
    message = "; ".join(j[1] for j in judged if j[0] is status)
    evidence: dict[str, Any] = {"families": [j[2] for j in judged]}
    if skipped:
        evidence["not_judged"] = skipped
    doubt = Unknown(f"not judged: {skipped[0]}") if skipped and status is Status.PASS else None
    yield ctx.result(resource, status, message, evidence=evidence, doubt=doubt)
