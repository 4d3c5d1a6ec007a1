"""GPU right-sizing from utilization history: oversized (RS-001), idle (RS-002), not measured
(RS-003).

RS-* judge running instances, Auto Scaling groups and EKS managed node groups of NVIDIA GPU
compute (the kinds whose view is MEASURED; RS-002 and RS-003 AWS Inferentia / Trainium too:
idle is idle on any accelerator, but no move between Neuron types is computed), only in a
scope where utilization was looked for (a ``telemetry.coverage`` marker: a live audit read
CloudWatch there, or ``scan --utilization`` was given). A group is judged on its members'
utilization together (members are never judged on their own, so no saving is counted twice)
and priced at its desired capacity, on-demand and spot units at their own prices. RS-002
replaces RS-001 on the same resource; where utilization is missing or too short, RS-003 says
so and RS-001/RS-002 give no result.

A member is judged where its capacity is configured: an instance of a group at the group, an
instance or group EKS runs for a node group at the node group (``Views.owner_of``); the group EKS
runs has an empty view, so the node group's capacity is priced once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from policies import rs_risk
from policies.base import Context, Remediation, policy
from policies.recommend import MIB_PER_GIB, Candidate, Demand, Options, host_need, recommend
from policies.rs_workload import Workload, workload_of
from scanner.catalog import InstanceSpec, is_gpu_type, vendor_by_family
from scanner.compute import MEASURED, kinds_with, reads_of
from scanner.compute.view import CAPACITY_BLOCK, RESERVATION_TARGETED
from scanner.model import Resource, Result, Severity, Status, Unknown
from scanner.model.money import (
    HOURS_PER_MONTH,
    Component,
    build_savings,
    rate_text,
    usd_text,
)
from scanner.pricing.prices import ON_DEMAND, SPOT, SPOT_PRICE_RATIO, Price, price, region_of
from scanner.pricing.rates import paid
from scanner.telemetry import COVERAGE, TELEMETRY

KINDS = kinds_with(MEASURED)  # instances, Auto Scaling groups, EKS managed node groups
NEEDS = (*reads_of(KINDS), TELEMETRY, COVERAGE)
# live: a node group's members are its group's and its tagged instances (read with the kinds)
OBSERVED = (*KINDS, "ec2.launch_template", TELEMETRY, COVERAGE)
USED_MEMORY_MIB = 1024.0  # a GPU holding more than this is in use even at 0 % utilization
MAX_MEMBERS_SHOWN = 20

# -- what RS-* ask of compute resources (swap for the compute view) -----------------------------


@dataclass(frozen=True)
class Capacity:
    """Units of capacity and how many run on each market."""

    types: tuple[str, ...]  # instance types it can run (a group: every override type)
    on_demand: int
    spot: int
    note: str = ""
    group: bool = False  # a group's desired capacity (its instances may change in number)
    weighted: bool = False

    @property
    def total(self) -> int:
        return self.on_demand + self.spot


def is_member(resource: Resource, ctx: Context) -> bool:
    """Capacity judged elsewhere: an instance of a group (or node group) in the scope, or the
    group EKS runs for a node group."""
    return ctx.compute.owner_of(resource) is not None


def is_running(resource: Resource, ctx: Context) -> bool:
    """Capacity running now (live: state running; IaC: declared capacity runs once applied)."""
    view = ctx.compute.of(resource)
    return view is not None and view.running


def types_of(resource: Resource, ctx: Context) -> tuple[Any, ...]:
    view = ctx.compute.of(resource)
    return view.types.values if view is not None else ()


def capacity_of(resource: Resource, ctx: Context) -> Capacity | Unknown | None:
    """What runs now (None: nothing, e.g. a group at desired capacity 0)."""
    view = ctx.compute.of(resource)
    if view is None:
        return None
    all_types = view.types.values
    types = tuple(t for t in dict.fromkeys(all_types) if isinstance(t, str))
    unknown = [t for t in all_types if isinstance(t, Unknown)]
    if unknown and not types:
        return unknown[0]
    if view.capacity is None:  # one instance
        spot = view.on_spot is True  # an unknown market is priced on-demand (the larger)
        return Capacity(types, 0 if spot else 1, 1 if spot else 0)
    split = view.purchase.split
    if split is None or isinstance(split, Unknown):
        return split
    if split.basis.startswith("MaxSize"):
        return None  # desired 0: MaxSize stands in for ASG-001's share; nothing runs now
    note = f"desired capacity from {split.basis}"
    if split.weighted:
        note += "; weighted capacity: units priced as instances of the cheapest type"
    return Capacity(types, split.on_demand, split.spot, note, group=True,
                    weighted=bool(split.weighted))


def member_ids(group: Resource, ctx: Context) -> list[str]:
    """Instance ids of a group's members (the view's join)."""
    view = ctx.compute.of(group)
    return list(view.members) if view is not None else []


def spot_prices_of(resource: Resource, ctx: Context) -> dict[str, Any]:
    view = ctx.compute.of(resource)
    prices = view.purchase.current_spot_prices if view is not None else None
    return prices if isinstance(prices, dict) else {}


# -- utilization -------------------------------------------------------------------------------


@dataclass
class Usage:
    members: list[dict[str, Any]]
    hours: int
    sources: list[str]
    lookback_days: float | None
    trend: dict[str, Any] | None
    running_members: int = 0  # a group's running members (live), with or without data
    silent_members: int = 0  # of those, the ones that published no utilization


def _telemetry(ctx: Context, scope: str) -> tuple[Resource | None, dict[str, Resource]]:
    memo = ctx.memo.setdefault("rs_telemetry", {})
    if scope not in memo:
        coverage = next(iter(ctx.index.of_kind(COVERAGE, scope)), None)
        by_target = {str(t.get("Target")): t for t in ctx.index.of_kind(TELEMETRY, scope)}
        memo[scope] = (coverage, by_target)
    return memo[scope]  # type: ignore[no-any-return]


def _names(r: Resource) -> list[str]:
    return [n for n in dict.fromkeys((r.id, r.name, *r.aliases)) if isinstance(n, str) and n]


def usage_of(resource: Resource, ctx: Context) -> Usage | str | None:
    """The resource's utilization; None when utilization was not looked for in its scope, a
    string when the file that held it could not be read."""
    coverage, by_target = _telemetry(ctx, resource.scope)
    if coverage is None:
        return None
    unreadable = coverage.get("Unreadable") or {}
    for name in _names(resource):
        if name in unreadable:
            return f"utilization for {name} could not be read: {unreadable[name]}"
    records = [by_target[n] for n in _names(resource) if n in by_target][:1]
    running = silent = 0
    if not records:  # a group: its members' utilization together
        ids = member_ids(resource, ctx)
        records = [by_target[i] for i in ids if i in by_target]
        for i in ids:
            inst = ctx.index.resolve(i, resource.scope, "ec2.instance")
            if inst is not None and is_running(inst, ctx):
                running += 1
                silent += i not in by_target
    members = [m for r in records for m in r.get("Members") or []]
    trends = [r.get("Trend") for r in records if isinstance(r.get("Trend"), dict)]
    return Usage(members, max((int(m.get("Hours") or 0) for m in members), default=0),
                 sorted({str(r.get("Source")) for r in records}),
                 next((r.get("LookbackDays") for r in records), coverage.get("LookbackDays")),
                 _combine(trends), running, silent)


def _combine(trends: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One trend for a group: per point, the largest of its members'."""
    if not trends:
        return None
    first = trends[0]
    same = [t for t in trends if t.get("Start") == first.get("Start")
            and t.get("HoursPerPoint") == first.get("HoursPerPoint")]
    out = {"Start": first.get("Start"), "HoursPerPoint": first.get("HoursPerPoint")}
    for key in ("UtilMax", "UtilP95"):
        cols = zip(*(t.get(key) or [] for t in same), strict=False)
        out[key] = [max((v for v in col if v is not None), default=None) for col in cols]
    return out


def _gpus(usage: Usage) -> list[dict[str, Any]]:
    return [g for m in usage.members for g in m.get("Gpus") or []]


def _is_used(gpu: dict[str, Any], idle: float) -> bool:
    return (float(gpu.get("UtilMax") or 0) > idle
            or float(gpu.get("MemUsedMaxMiB") or 0) > USED_MEMORY_MIB)


def _stat(d: dict[str, Any], prefix: str, pct: float) -> float | None:
    """``prefix`` + the percentile (``UtilP99.5``, also spelled ``UtilP995``), else None."""
    text = f"{pct:g}"
    for key in (f"{prefix}P{text}", f"{prefix}P{text.replace('.', '')}"):
        value = _finite(d.get(key))
        if value is not None:
            return value
    return None


def _finite(value: Any) -> float | None:
    """A statistic a decision can rest on: a finite number, at least 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _high(d: dict[str, Any], prefix: str, pct: float) -> float | None:
    """The decision statistic of a series: its high percentile, else its maximum."""
    value = _stat(d, prefix, pct)
    if value is not None:
        return value
    return _finite(d.get(f"{prefix}Max"))


def demand_of(usage: Usage, spec: InstanceSpec, idle: float, pct: float = 99.5,
              burst_ratio: float = 2.0, workload: Workload | None = None) -> Demand:
    """The observed work, member by member (a group's members are never consolidated: the
    busiest member's needs are the group's)."""
    used_per_member = [sum(1 for g in m.get("Gpus") or [] if _is_used(g, idle))
                       for m in usage.members]
    used = [g for g in _gpus(usage) if _is_used(g, idle)] or _gpus(usage)
    mems = [float(g["MemUsedMaxMiB"]) for g in used if g.get("MemUsedMaxMiB") is not None]
    measured = bool(mems)
    peak = max(mems) if mems else (spec.gpu_mem_gib or 0.0) * 1024.0
    p95 = max(float(g.get("UtilP95") or 0) for g in used)
    top = max(float(g.get("UtilMax") or 0) for g in used)
    highs = [_stat(g, "Util", pct) for g in used]
    high = max(min(h, top) for h in highs) if all(h is not None for h in highs) else None
    label = f"P{pct:g}" if high is not None else f"maximum (no P{pct:g} kept by the source)"
    bursty = top >= burst_ratio * max(p95, 1.0) and top > idle
    bw = [_high(g, "MemBwUtil", pct) for g in used]
    cpu = [_high(m, "CpuUtil", pct) for m in usage.members]
    host_mem = [_finite(m.get("HostMemUsedMaxMiB")) for m in usage.members]
    vcpu = (min(max(c for c in cpu if c is not None), 100.0) / 100.0 * spec.vcpu
            if cpu and all(c is not None for c in cpu) else None)
    host_gib = (max(h for h in host_mem if h is not None) / MIB_PER_GIB
                if host_mem and all(h is not None for h in host_mem) else None)
    sums = [sum(float(g.get("UtilMax") or 0) for g in m.get("Gpus") or [])
            for m in usage.members]
    work = workload or Workload()
    return Demand(max(max(used_per_member, default=1), 1), peak, p95, top, measured,
                  util_high=high if high is not None else top, high_label=label,
                  bursty=bursty,
                  bandwidth_util=max(b for b in bw if b is not None)
                  if bw and all(b is not None for b in bw) else None,
                  host_vcpu=vcpu, host_mem_gib=host_gib, needs_gpu_link=work.needs_gpu_link,
                  needs_efa=work.needs_efa, gpu_sum_peak=max(sums, default=None))


def _evidence_usage(usage: Usage) -> dict[str, Any]:
    shown = usage.members[:MAX_MEMBERS_SHOWN]
    out: dict[str, Any] = {
        "hours_of_data": usage.hours,
        "lookback_days": usage.lookback_days,
        "utilization_source": ", ".join(usage.sources) or "none",
        "members": [{"id": m.get("Id"), "hours": m.get("Hours"),
                     "gpus": [{k: g.get(k) for k in ("Index", "Hours", "UtilP50", "UtilP95",
                                                     "UtilMax", "MemUsedMaxMiB", "MemTotalMiB")}
                              for g in m.get("Gpus") or []]} for m in shown]}
    if len(usage.members) > len(shown):
        out["members_not_shown"] = len(usage.members) - len(shown)
    if usage.trend:
        out["utilization_trend"] = usage.trend
    return out


# -- the shared first steps --------------------------------------------------------------------


@dataclass
class Subject:
    resource: Resource
    capacity: Capacity
    usage: Usage
    spec: InstanceSpec | None
    current: str  # the instance type priced (a group's cheapest override)
    region: str | None


NVIDIA = frozenset({"nvidia"})
# RS-002 (idle) and RS-003 (not measured) judge AWS Inferentia / Trainium too: idle is every
# device at or below idle_util_percent whatever the accelerator; RS-001's moves stay NVIDIA's
# (the catalogue holds no fact that makes a move between Neuron types safe)
MEASURED_VENDORS = frozenset({"nvidia", "aws-neuron"})


def _applies(resource: Resource, ctx: Context, vendors: frozenset[str] = NVIDIA) -> bool:
    """Running capacity judged here (not a member) with an accelerator type of ``vendors``."""
    if is_member(resource, ctx) or not is_running(resource, ctx):
        return False
    types = [t for t in types_of(resource, ctx) if isinstance(t, str)]
    return any(is_gpu_type(t) and _vendor(t, ctx) in vendors for t in types)


def _device_word(subj: Subject, ctx: Context) -> str:
    """How the accelerators are named in a message: "GPU", or "Neuron device" (Inferentia,
    Trainium) where every type is one."""
    neuron = all(_vendor(t, ctx) == "aws-neuron" for t in subj.capacity.types)
    return "Neuron device" if neuron and subj.capacity.types else "GPU"


def _vendor(instance_type: str, ctx: Context) -> str:
    spec = ctx.catalog.spec(instance_type)
    if spec is not None:
        return spec.gpu_vendor
    return vendor_by_family(instance_type)


def _unnamed_gpu(resource: Resource, ctx: Context) -> Unknown | None:
    """Why the types are not known, for GPU compute whose types are not named (chosen by
    attributes, or EKS's default for a GPU AMI) that RS-* would otherwise pass over."""
    if is_member(resource, ctx) or not is_running(resource, ctx):
        return None
    view = ctx.compute.of(resource)
    if view is None or view.types.known() or view.types.gpu() is not True:
        return None
    reasons = [t for t in view.types.values if isinstance(t, Unknown)]
    return reasons[0] if reasons else Unknown("instance types chosen by attributes "
                                              "(InstanceRequirements)")


def subject(resource: Resource, ctx: Context,
            vendors: frozenset[str] = NVIDIA) -> Subject | Result | None:
    """What RS-001/RS-002 judge, a Result to give as it is, or None (no result)."""
    if not _applies(resource, ctx, vendors):
        why = _unnamed_gpu(resource, ctx)
        usage = usage_of(resource, ctx) if why is not None else None
        if why is None or usage is None or (not isinstance(usage, str) and not usage.members):
            return None
        return ctx.result(resource, Status.UNKNOWN, usage if isinstance(usage, str) else
                          f"GPU compute whose instance type is not known ({why.reason}): the "
                          "utilization given for it cannot be priced or compared",
                          evidence=None if isinstance(usage, str) else _evidence_usage(usage))
    usage = usage_of(resource, ctx)
    if usage is None:
        return None
    if isinstance(usage, str):
        return ctx.result(resource, Status.UNKNOWN, usage)
    if usage.hours < int(ctx.params["min_hours_of_data"]):
        return None  # RS-003 says it
    if usage.silent_members:
        return ctx.result(
            resource, Status.UNKNOWN,
            f"{usage.silent_members} of its {usage.running_members} running members published "
            "no GPU utilization in the window: the group's use is not known (a silent member "
            "may be the busy one)", evidence=_evidence_usage(usage))
    cap = capacity_of(resource, ctx)
    if cap is None:
        return None
    if isinstance(cap, Unknown):
        return ctx.result(resource, Status.UNKNOWN, f"capacity not known: {cap.reason}")
    region = region_of(resource)
    priced = sorted((p.usd_hour, t) for t in cap.types
                    if (p := price(t, region, catalog=ctx.catalog)).usd_hour is not None)
    if not priced:
        return ctx.result(resource, Status.UNKNOWN,
                          f"no catalogue price for {', '.join(cap.types) or 'its type'}")
    current = priced[0][1]
    problem = _inconsistent(usage, [s for t in cap.types if (s := ctx.catalog.spec(t))])
    if problem:
        return ctx.result(resource, Status.UNKNOWN, problem, evidence=_evidence_usage(usage))
    return Subject(resource, cap, usage, ctx.catalog.spec(current), current, region)


MEMORY_SLACK = 1.05  # nvidia-smi's total differs from the marketed size by a few percent
MAX_UTIL_PERCENT = 100.5  # one GPU's utilization (rounding aside)


def _inconsistent(usage: Usage, specs: list[InstanceSpec]) -> str | None:
    """Why the utilization cannot be read as the work of these types' GPUs: a member that
    published fewer GPUs than the type has (the others are not known to be idle), utilization
    above 100 % (a sum over GPUs), memory used above the GPU's memory, or a total memory far
    from the catalogue's (a unit mistake)."""
    counts = [s.gpu_count for s in specs if s.gpu_count]
    mems = [s.gpu_mem_gib * MIB_PER_GIB for s in specs if s.gpu_mem_gib]
    if not counts or not mems:
        return None
    expected = math.ceil(min(counts))
    gpu_mib = max(mems)
    for m in usage.members:
        gpus = [g for g in m.get("Gpus") or [] if int(g.get("Hours") or 0) > 0]
        who = f" (member {m.get('Id')})" if len(usage.members) > 1 else ""
        if len({str(g.get("Index")) for g in gpus}) < expected:
            return (f"utilization of {len(gpus)} of its {expected} GPUs{who}: the others "
                    "published nothing in the window, so whether they work is not known")
        for g in gpus:
            top = _finite(g.get("UtilMax"))
            if top is not None and top > MAX_UTIL_PERCENT:
                return (f"GPU {g.get('Index')}{who} reports {top:g}% utilization: more than "
                        "one GPU can do, so the series is a sum over GPUs (or not a "
                        "percentage) and cannot be read as one GPU's work")
            used, total = g.get("MemUsedMaxMiB"), g.get("MemTotalMiB")
            if used is not None and float(used) > gpu_mib * MEMORY_SLACK:
                return (f"GPU {g.get('Index')}{who} used {float(used):g} MiB, more memory than "
                        f"one GPU holds ({gpu_mib:g} MiB): check the units (MiB) and the key")
            if total is not None and not gpu_mib / 2 <= float(total) <= gpu_mib * 2:
                return (f"GPU {g.get('Index')}{who} reports a total memory of {float(total):g} "
                        f"MiB where the catalogue says {gpu_mib:g} MiB: check the units (MiB) "
                        "and the key")
    return None


def _price(subj: Subject, ctx: Context, instance_type: str, market: str) -> Price:
    """At the rate paid (config ``pricing``: list, discounted, committed), its basis saying
    which (scanner.pricing.rates)."""
    return paid(price(instance_type, subj.region, market, catalog=ctx.catalog,
                      spot_prices=spot_prices_of(subj.resource, ctx),
                      spot_price_ratio=float(ctx.params.get("spot_price_ratio",
                                                            SPOT_PRICE_RATIO))),
                ctx.pricing, subj.resource.provenance.account)


def _components(subj: Subject, ctx: Context, after: str | None,
                count: int | None = None) -> list[Component]:
    """Per market: the current rate against ``after``'s rate (None: the whole price saved);
    ``count`` instances of ``after`` in place of the N running now (one market only)."""
    n = subj.capacity.total
    if after is not None and count is not None and count != n:
        market = ON_DEMAND if subj.capacity.on_demand else SPOT
        now, then = _price(subj, ctx, subj.current, market), _price(subj, ctx, after, market)
        a, b = now.usd_hour or 0.0, then.usd_hour or 0.0
        note = (f"{n} x {rate_text(a)} $/h {subj.current} -> {count} x {rate_text(b)} $/h "
                f"{after}; {now.basis}; {then.basis}")
        return [Component(n * a, count * b, 1, unit="group", note=note)]
    out = []
    for market, units in ((ON_DEMAND, subj.capacity.on_demand), (SPOT, subj.capacity.spot)):
        if units <= 0:
            continue
        now = _price(subj, ctx, subj.current, market)
        if after is None:
            note = now.basis
            out.append(Component(now.usd_hour or 0.0, 0.0, units, note=note))
        else:
            then = _price(subj, ctx, after, market)
            note = f"{now.basis}; {then.basis}"
            out.append(Component(now.usd_hour or 0.0, then.usd_hour or 0.0, units, note=note))
    return out


def _range_note(subj: Subject, ctx: Context) -> str:
    if len(subj.capacity.types) < 2:
        return subj.capacity.note
    prices = sorted(p.usd_hour for t in subj.capacity.types
                    if (p := price(t, subj.region, catalog=ctx.catalog)).usd_hour is not None)
    text = (f"override types cost {prices[0]:g}-{prices[-1]:g} $/h on-demand; the cheapest "
            f"({subj.current}) is counted")
    return "; ".join(x for x in (text, subj.capacity.note) if x)


# -- the policies ------------------------------------------------------------------------------

COMMON_PARAMS = {"min_hours_of_data": 30, "lookback_days": 14}
RECOMMENDATION = (
    "The recommendation is the cheapest catalogue type that does the observed work safely: "
    "enough GPUs for the GPUs actually used (a GPU is used when its utilization ever exceeded "
    "idle_util_percent or it held more than 1 GiB); per GPU, the observed peak memory used + "
    "memory_headroom percent; per GPU, compute for the util_percentile percentile of "
    "utilization (the maximum where the source keeps no such percentile; the peak for a bursty "
    "series, peak >= burst_ratio x p95) + compute_headroom percent, and for the peak within "
    "peak_limit_percent, where work = utilization x the current GPU's dense FP16 tensor TFLOPS "
    "(where the current model has no published figure only the same GPU model is compared; a "
    "group of several GPU models is measured against the strongest); memory bandwidth for the "
    "same statistic + compute_headroom percent; host vCPU and memory for the measured use + "
    "host_headroom percent, else the used GPUs' share of the current host; BF16, FP8 and a "
    "Tensor Core generation no lower than the current types share; for collective work (EFA "
    "interfaces, a placement group, NCCL/training tags or labels) an interconnect no weaker "
    "and EFA; an offering in the region (and zone, by ID); the same CPU architecture and "
    "accelerator vendor unless allow_arch_change / allow_vendor_change; a family in `families` "
    "when that list is not empty. A group's N instances are weighed against M of the candidate "
    "(each member's work moved whole, never fewer than 2 where there were several; not for "
    "collective work; consolidate_groups). Every move carries a performance risk 0-4 with its "
    "reasons; a move above max_risk_for_saving (a fact missing from the catalogue is 3) is a "
    "notice and books no saving. Prepaid capacity (a capacity block, a targeted reservation) "
    "books no saving. Groups are priced at desired capacity (on-demand and spot units apart, "
    "spot at the live spot price, else spot_price_ratio x on-demand).")


@policy(
    id="RS-001",
    title="GPU compute is oversized for its measured utilization",
    severity=Severity.MEDIUM,
    kinds=KINDS,
    needs=NEEDS,
    observed_needs=OBSERVED,
    description="A cheaper GPU instance type does the observed work (peak GPU memory, a high "
                "percentile and the peak of compute and memory bandwidth, host vCPU and memory, "
                "each with headroom) and keeps what it needs (precision, Tensor Core "
                "generation, interconnect, EFA, the region's offering), saving at least "
                "min_saving_usd_month at an acceptable performance risk. " + RECOMMENDATION,
    remediation=Remediation(
        text="Move the workload to the recommended instance type (for a group: change the "
             "launch template's type or the override types), after checking host CPU and memory "
             "needs.",
        terraform='instance_type = "g4dn.xlarge"  # the recommended type',
        cloudformation="InstanceType: g4dn.xlarge  # the recommended type",
        by_kind={"eks.nodegroup": Remediation(
            text="Move the node group to the recommended instance type, after checking host "
                 "CPU and memory needs of the pods it runs.",
            terraform='instance_types = ["g4dn.xlarge"]  # the recommended type',
            cloudformation="InstanceTypes: [g4dn.xlarge]  # the recommended type")}),
    params={**COMMON_PARAMS, "idle_util_percent": 5, "memory_headroom": 20,
            "compute_headroom": 20, "min_saving_usd_month": 50, "allow_arch_change": False,
            "allow_vendor_change": False, "families": [], "spot_price_ratio": SPOT_PRICE_RATIO,
            "util_percentile": 99.5, "burst_ratio": 2.0, "peak_limit_percent": 100,
            "host_headroom": 20, "max_risk_for_saving": 2, "consolidate_groups": True},
    sources="HPCL",
)
def rs_001(resource: Resource, ctx: Context) -> Iterator[Result]:
    subj = subject(resource, ctx)
    if subj is None or isinstance(subj, Result):
        if subj is not None:
            yield subj
        return
    idle = float(ctx.params["idle_util_percent"])
    if all(float(g.get("UtilMax") or 0) <= idle for g in _gpus(subj.usage)):
        return  # idle: RS-002 replaces RS-001
    evidence: dict[str, Any] = {"instance_type": subj.current, "region": subj.region,
                                **_capacity_evidence(subj), **_evidence_usage(subj.usage)}
    if subj.spec is None:
        yield ctx.result(resource, Status.UNKNOWN,
                         f"{subj.current} is not in the catalogue: no specs to compare",
                         evidence=evidence)
        return
    measured, measured_note = _measured_on(subj, subj.spec, ctx)
    work = workload_of(resource, ctx)
    demand = demand_of(subj.usage, measured, idle, float(ctx.params["util_percentile"]),
                       float(ctx.params["burst_ratio"]), work)
    demand = replace(demand, current_types=tuple(
        s for t in subj.capacity.types if (s := ctx.catalog.spec(t)) is not None))
    opts = Options(float(ctx.params["memory_headroom"]), float(ctx.params["compute_headroom"]),
                   bool(ctx.params["allow_arch_change"]), bool(ctx.params["allow_vendor_change"]),
                   tuple(str(f) for f in ctx.params["families"] or ()),
                   float(ctx.params["peak_limit_percent"]), float(ctx.params["host_headroom"]),
                   subj.region, work.zones, subj.capacity.total,
                   _may_consolidate(subj, work, ctx))
    market = ON_DEMAND if subj.capacity.on_demand else SPOT
    current_rate = _price(subj, ctx, subj.current, market).usd_hour or 0.0
    found = recommend(measured, current_rate, demand, ctx.catalog,
                      lambda t: _price(subj, ctx, t, market), opts, exclude=subj.capacity.types,
                      assess=lambda spec, fit, m: rs_risk.assess(measured, spec, fit, demand, opts,
                                                                 m))
    evidence["demand"] = _demand_evidence(demand, measured, work, opts)
    evidence["headroom_percent"] = {"memory": opts.memory_headroom,
                                    "compute": opts.compute_headroom, "host": opts.host_headroom}
    max_risk = int(ctx.params["max_risk_for_saving"])
    safe = [c for c in found if c.risk <= max_risk]
    risky = [c for c in found if c.risk > max_risk]
    evidence["candidates"] = [c.as_evidence(HOURS_PER_MONTH) for c in (safe[:3] or risky[:3])]
    if measured.fp16_tflops_per_gpu is None:
        evidence["note"] = (f"{measured.gpu_model} has no published dense FP16 figure: only "
                            f"{measured.gpu_model} types were compared")
    elif measured_note:
        evidence["note"] = measured_note
    minimum = float(ctx.params["min_saving_usd_month"])
    if not found:
        yield ctx.result(resource, Status.PASS, f"no cheaper type fits the observed use of "
                         f"{subj.current}{_bursty_note(demand)}", evidence=evidence)
        return
    if not safe:
        first = risky[0]
        would = build_savings(_components(subj, ctx, first.instance_type, first.count),
                              kind="rightsize").usd_month
        if would < minimum:
            yield ctx.result(resource, Status.PASS,
                             f"{first.instance_type} would save {usd_text(would)} $/month, "
                             f"below min_saving_usd_month {minimum:g}", evidence=evidence)
            return
        yield _risky_notice(subj, ctx, first, evidence, max_risk)
        return
    best = safe[0]
    move = _move(subj, best)
    evidence |= {"recommended": best.instance_type, "move": move,
                 "performance_risk": {"level": best.risk,
                                      "name": rs_risk.level_name(best.risk),
                                      "reasons": list(best.risk_reasons)}}
    savings = build_savings(_components(subj, ctx, best.instance_type, best.count),
                            kind="rightsize", note=_range_note(subj, ctx))
    if savings.usd_month < minimum:
        yield ctx.result(resource, Status.PASS,
                         f"{best.instance_type} would save {usd_text(savings.usd_month)} $/month, "
                         f"below min_saving_usd_month {minimum:g}", evidence=evidence)
        return
    stat = demand.high_label if demand.high_label.startswith("P") and not demand.bursty \
        else "peak"
    text = (f"{subj.current} is oversized: {demand.gpus_used} of "
            f"{subj.spec.gpu_count:g} GPU(s) used, {stat} "
            f"{demand.sized_on:.0f}%, peak memory {demand.mem_peak_mib / 1024:.1f} GiB; "
            f"{move['text']} fits (projected {best.fit.projected:.0f}%, performance risk "
            f"{best.risk} {rs_risk.level_name(best.risk)})")
    prepaid = prepaid_of(resource, ctx)
    if prepaid is not None:
        evidence["prepaid"] = prepaid
        yield ctx.result(resource, Status.FAIL, f"{text}; {prepaid}: no saving is booked",
                         path="InstanceType", evidence=evidence)
        return
    yield ctx.result(resource, Status.FAIL,
                     f"{text} and saves {usd_text(savings.usd_month)} $/month",
                     path="InstanceType", evidence=evidence, savings=savings)


def _bursty_note(demand: Demand) -> str:
    if not demand.bursty:
        return ""
    return (f" (bursty: peak {demand.util_max:.0f}% against p95 {demand.util_p95:.0f}%, so it is "
            "sized on its peak and keeps its size)")


def _may_consolidate(subj: Subject, work: Workload, ctx: Context) -> bool:
    """N instances of a group may become M of another type: a group (judged whole), on one
    market, not counted in weighted units, without collective work (whose node count is part
    of the job)."""
    cap = subj.capacity
    return (bool(ctx.params["consolidate_groups"]) and cap.group and cap.total > 1
            and not cap.weighted and (cap.on_demand == 0 or cap.spot == 0)
            and not work.needs_gpu_link)


def _move(subj: Subject, best: Candidate) -> dict[str, Any]:
    """N x current -> M x candidate, with how the M were counted."""
    n, m = subj.capacity.total, best.count
    if m == n:
        basis = (f"each of the {n} instances moved to {best.instance_type}" if n > 1
                 else f"the instance moved to {best.instance_type}")
    else:
        basis = (f"{n} members' work, each member moved whole, {best.per_instance} per "
                 f"{best.instance_type} (its GPUs, vCPU and memory for the busiest member's "
                 f"need): ceil({n} / {best.per_instance}) = {-(-n // best.per_instance)}"
                 + (f", at least {m} kept" if m > -(-n // best.per_instance) else ""))
    return {"from": {"count": n, "instance_type": subj.current},
            "to": {"count": m, "instance_type": best.instance_type},
            "text": f"{n} x {subj.current} -> {m} x {best.instance_type}", "basis": basis}


def _risky_notice(subj: Subject, ctx: Context, cand: Candidate, evidence: dict[str, Any],
                  max_risk: int) -> Result:
    """A cheaper type fits the observed use, but the move's performance risk is above
    max_risk_for_saving: a notice, never a saving."""
    move = _move(subj, cand)
    evidence |= {"possible_move": move,
                 "performance_risk": {"level": cand.risk, "name": rs_risk.level_name(cand.risk),
                                      "reasons": list(cand.risk_reasons)},
                 "max_risk_for_saving": max_risk}
    why = "; ".join(cand.risk_reasons[:3])
    text = (f"{move['text']} may fit, but its performance risk is {cand.risk} "
            f"({rs_risk.level_name(cand.risk)}; {why}): not a safe move, no saving booked")
    ctx.notice(subj.resource, text)
    return ctx.result(subj.resource, Status.UNKNOWN, f"whether {subj.current} can be made "
                      f"smaller safely is not known: {text}", evidence=evidence)


PREPAID_WORDS = {CAPACITY_BLOCK: "a capacity block",
                 RESERVATION_TARGETED: "a targeted capacity reservation"}


def prepaid_of(resource: Resource, ctx: Context) -> str | None:
    """Why the capacity's price is paid whatever runs on it (a capacity block, a targeted
    reservation: ``Purchase.prepaid``), or why that is not known; None when it is not prepaid.
    Prepaid capacity books no right-sizing saving."""
    view = ctx.compute.of(resource)
    if view is None:
        return None
    prepaid = view.purchase.prepaid
    if isinstance(prepaid, Unknown):
        return f"whether it is prepaid is not known ({prepaid.reason})"
    if prepaid is True:
        option = view.purchase.option
        return f"prepaid capacity ({PREPAID_WORDS.get(str(option), option)})"
    return None


def _demand_evidence(demand: Demand, measured: InstanceSpec, work: Workload,
                     opts: Options) -> dict[str, Any]:
    out: dict[str, Any] = {
        "gpus_used": demand.gpus_used, "peak_memory_used_mib": round(demand.mem_peak_mib, 1),
        "memory_measured": demand.mem_measured,
        "util_p95_percent": round(demand.util_p95, 2),
        "util_max_percent": round(demand.util_max, 2),
        "decision_statistic": demand.high_label if not demand.bursty else
        "maximum (bursty: peak at least burst_ratio x p95)",
        "decision_util_percent": round(demand.sized_on, 2),
        "bursty": demand.bursty, "gpu_model": measured.gpu_model,
        "fp16_tflops_per_gpu": measured.fp16_tflops_per_gpu,
        "host": {k: (round(v, 1) if isinstance(v, float) else v)
                 for k, v in host_need(measured, demand, opts).items()},
        "collective_work": work.collective, "multi_node_work": work.multi_node}
    if demand.gpu_sum_peak is not None:
        out["gpu_sum_peak_percent"] = round(demand.gpu_sum_peak, 1)
    if demand.bandwidth_util is not None:
        out["bandwidth_util_percent"] = round(demand.bandwidth_util, 2)
    if work.zones:
        out["zones"] = list(work.zones)
    return out


def _measured_on(subj: Subject, current: InstanceSpec,
                 ctx: Context) -> tuple[InstanceSpec, str | None]:
    """The GPU the utilization is read against, and a note when it is not the priced type's. A
    group whose override types hold different GPU models may have been measured on any of them:
    the strongest with a published FP16 figure is assumed (its work is the most), so no
    recommendation is too weak for what ran; models without a figure are named in the note."""
    specs = [s for t in subj.capacity.types if (s := ctx.catalog.spec(t)) is not None]
    models = sorted({s.gpu_model for s in specs})
    rated = [s for s in specs if s.fp16_tflops_per_gpu is not None]
    if len(models) < 2 or not rated:
        return current, None
    strongest = max(rated, key=lambda s: (s.fp16_tflops_per_gpu or 0.0, s.instance_type))
    note = (f"the override types hold {', '.join(models)} GPUs: the utilization is read as work "
            f"on the strongest, {strongest.gpu_model} ({strongest.fp16_tflops_per_gpu:g} TFLOPS)")
    missing = sorted({s.gpu_model for s in specs if s.fp16_tflops_per_gpu is None})
    if missing:
        note += f"; {', '.join(missing)} has no published figure and is taken as no stronger"
    return strongest, note


def _capacity_evidence(subj: Subject) -> dict[str, Any]:
    return {"instance_types": list(subj.capacity.types), "on_demand_units": subj.capacity.on_demand,
            "spot_units": subj.capacity.spot}


@policy(
    id="RS-002",
    title="GPU compute is idle",
    severity=Severity.HIGH,
    kinds=KINDS,
    needs=NEEDS,
    observed_needs=OBSERVED,
    description="Every GPU's (or Inferentia / Trainium Neuron device's) utilization stayed "
                "at or below idle_util_percent for the whole lookback (its hourly maxima): the "
                "saving is the full price of the capacity. Replaces RS-001 on the same resource.",
    remediation=Remediation(
        text="Stop or terminate the idle capacity (for a group: lower its desired and minimum "
             "capacity, or schedule it to zero outside working hours).",
        terraform="desired_capacity = 0  # or remove the instance",
        cloudformation="DesiredCapacity: 0  # or remove the instance",
        by_kind={"eks.nodegroup": Remediation(
            text="Scale the idle node group down (desired and minimum size 0, or a cluster "
                 "autoscaler / Karpenter that scales GPU nodes to zero).",
            terraform="scaling_config {\n  desired_size = 0\n  min_size     = 0\n"
                      "  max_size     = 4\n}",
            cloudformation="ScalingConfig:\n  DesiredSize: 0\n  MinSize: 0\n  MaxSize: 4")}),
    params={**COMMON_PARAMS, "idle_util_percent": 5, "spot_price_ratio": SPOT_PRICE_RATIO},
    sources="HPCL",
)
def rs_002(resource: Resource, ctx: Context) -> Iterator[Result]:
    subj = subject(resource, ctx, MEASURED_VENDORS)
    if subj is None or isinstance(subj, Result):
        if subj is not None:
            yield subj
        return
    idle = float(ctx.params["idle_util_percent"])
    gpus = _gpus(subj.usage)
    top = max(float(g.get("UtilMax") or 0) for g in gpus)
    evidence = {"instance_type": subj.current, "region": subj.region,
                "idle_util_percent": idle, "util_max_percent": round(top, 2),
                **_capacity_evidence(subj), **_evidence_usage(subj.usage)}
    device = _device_word(subj, ctx)
    if top > idle:
        yield ctx.result(resource, Status.PASS, f"{device} utilization reached {top:.0f}% "
                         f"(idle is at most {idle:g}%)", evidence=evidence)
        return
    savings = build_savings(_components(subj, ctx, None), kind="idle",
                            note=_range_note(subj, ctx))
    prepaid = prepaid_of(resource, ctx)
    if prepaid is not None:
        evidence["prepaid"] = prepaid
        yield ctx.result(
            resource, Status.FAIL,
            f"{subj.current}: every {device} at or below {idle:g}% for {subj.usage.hours} "
            f"hours (max {top:.1f}%); {prepaid}: no saving is booked (release or reuse it)",
            path="InstanceType", evidence=evidence)
        return
    yield ctx.result(
        resource, Status.FAIL,
        f"{subj.current}: every {device} at or below {idle:g}% for {subj.usage.hours} hours "
        f"(max {top:.1f}%); idle capacity costs {usd_text(savings.usd_month)} $/month",
        path="InstanceType", evidence=evidence, savings=savings)


@policy(
    id="RS-003",
    title="GPU or Neuron compute without enough utilization data to be right-sized",
    severity=Severity.LOW,
    kinds=KINDS,
    needs=NEEDS,
    observed_needs=OBSERVED,
    description="Fewer than min_hours_of_data hours of GPU (NVIDIA) or Neuron device "
                "(Inferentia, Trainium) utilization within lookback_days (live: CloudWatch "
                "agent NVIDIA metrics or Container Insights GPU / NeuronCore metrics; scan: "
                "--utilization, --prometheus-url): RS-001 and RS-002 cannot judge it.",
    remediation=Remediation(
        text="Publish GPU metrics: the CloudWatch agent's nvidia_gpu section with "
             "append_dimensions InstanceId (utilization_gpu, memory_used, memory_total), or "
             "the DCGM exporter; for Inferentia / Trainium, Container Insights (the "
             "CloudWatch Observability add-on) or neuron-monitor; for IaC, pass a history "
             "file or a capture with scan --utilization.",
        terraform="",
        cloudformation=""),
    params=dict(COMMON_PARAMS),
    sources="HPCL",
)
def rs_003(resource: Resource, ctx: Context) -> Iterator[Result]:
    if not _applies(resource, ctx, MEASURED_VENDORS):
        return
    usage = usage_of(resource, ctx)
    if usage is None:
        return
    if isinstance(usage, str):
        yield ctx.result(resource, Status.UNKNOWN, usage)
        return
    view = ctx.compute.of(resource)
    if view is not None and view.capacity is not None and capacity_of(resource, ctx) is None:
        return  # a group at desired capacity 0: nothing runs
    minimum = int(ctx.params["min_hours_of_data"])
    evidence = {"hours_of_data": usage.hours, "min_hours_of_data": minimum,
                "lookback_days": usage.lookback_days,
                "utilization_source": ", ".join(usage.sources) or "none"}
    if usage.hours >= minimum:
        yield ctx.result(resource, Status.PASS, f"{usage.hours} hours of accelerator utilization",
                         evidence=evidence)
        return
    what = "no accelerator utilization" if not usage.members else \
        f"{usage.hours} hours of accelerator utilization"
    yield ctx.result(resource, Status.FAIL, f"{what} within the lookback (at least {minimum} "
                     "needed): cannot be right-sized", evidence=evidence)
