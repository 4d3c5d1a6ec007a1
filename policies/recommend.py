"""The right-sizing recommendation: the cheapest catalogue type that does the observed work and
keeps what the work needs.

A candidate fits (``fits``) when it has

- enough GPUs for the GPUs actually used (a fractional GPU only in place of one used GPU),
- per GPU, at least the observed peak memory used plus ``memory_headroom`` percent,
- per GPU, compute for the decision statistic (the high percentile, or the peak for a bursty
  series) plus ``compute_headroom`` percent, and for the peak within ``peak_limit_percent``,
  where work is utilization x the current GPU's dense FP16 tensor TFLOPS (relative throughput
  per GPU model; where the current model has no published figure only the same GPU model is
  compared),
- memory bandwidth for the same statistic (measured where the source gives it, else taken to
  scale with GPU utilization) plus ``compute_headroom`` percent,
- host vCPU and memory for the measured host use plus ``host_headroom`` percent, else the used
  GPUs' share of the current host,
- BF16, FP8 and a Tensor Core generation no lower than the current GPU's,
- for collective work, an interconnect no weaker than the current one and EFA where it runs
  across nodes,
- an offering in the region (and zones),
- the same CPU architecture and accelerator vendor (unless allowed) and a family in the
  allow-list (when one is given),

and costs less per hour than the current type. A fact the catalogue does not hold does not
exclude a candidate: it makes the move's performance risk high (``policies.rs_risk``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from policies import rs_facts as facts
from scanner.catalog import Catalog, InstanceSpec
from scanner.pricing.prices import Price

MIB_PER_GIB = 1024.0


@dataclass(frozen=True)
class Demand:
    gpus_used: int  # GPUs with any activity (at least 1 here)
    mem_peak_mib: float  # the largest peak memory used by one GPU
    util_p95: float  # the largest p95 utilization of one used GPU (%)
    util_max: float  # the largest peak (hourly maximum) of one GPU (%)
    mem_measured: bool = True  # False: no memory metric, the current GPU's memory is assumed
    util_high: float | None = None  # the decision percentile (None: the peak stands in)
    high_label: str = "maximum"  # what util_high is ("P99.5", "maximum (no P99.5 kept)")
    bursty: bool = False  # the peak is far above p95: sized on the peak
    bandwidth_util: float | None = None  # measured memory-bandwidth utilization (%), if any
    host_vcpu: float | None = None  # vCPUs used (measured), None: not measured
    host_mem_gib: float | None = None  # host memory used (measured), None: not measured
    needs_gpu_link: bool = False  # collective work across the used GPUs
    needs_efa: bool = False  # collective work across instances
    gpu_sum_peak: float | None = None  # the largest sum over one member's GPUs of their peaks
    # the instance types it runs now (a group: every override type): what a move must keep is
    # the least they share (``rs_facts.required_*``); empty: the measured type alone
    current_types: tuple[InstanceSpec, ...] = ()

    @property
    def sized_on(self) -> float:
        """The utilization the candidate must carry with headroom."""
        if self.bursty or self.util_high is None:
            return self.util_max
        return self.util_high


@dataclass(frozen=True)
class Options:
    memory_headroom: float = 20.0  # percent
    compute_headroom: float = 20.0  # percent
    allow_arch_change: bool = False
    allow_vendor_change: bool = False
    families: tuple[str, ...] = ()
    peak_limit_percent: float = 100.0
    host_headroom: float = 20.0  # percent
    region: str | None = None
    zones: tuple[str, ...] = ()
    instances: int = 1  # N: the instances running now (a group's desired capacity)
    consolidate: bool = False  # may N instances become M of another type (a group)
    min_instances: int = 2  # a group of several never becomes fewer than this


@dataclass(frozen=True)
class Fit:
    projected: float  # the decision statistic as % of the candidate GPU's compute
    projected_peak: float
    memory_percent: float  # peak memory used as % of the candidate GPU's memory
    bandwidth_percent: float | None  # bandwidth demand as % of the candidate's (None: unknown)
    host: dict[str, Any] = field(default_factory=dict)  # the host need and what it is based on


@dataclass(frozen=True)
class Candidate:
    spec: InstanceSpec
    price: Price
    fit: Fit
    risk: int = 0
    risk_reasons: tuple[str, ...] = ()
    count: int = 1  # M: instances of this type in place of the N running now
    per_instance: int = 1  # members' work one instance of it carries

    @property
    def instance_type(self) -> str:
        return self.spec.instance_type

    @property
    def projected_util_p95(self) -> float:  # the name earlier reports used
        return self.fit.projected

    def as_evidence(self, hours: float) -> dict[str, Any]:
        usd = self.price.usd_hour or 0.0
        out = {"instance_type": self.instance_type, "count": self.count, "usd_hour": usd,
               "usd_month": round(usd * hours * self.count, 2),
               "gpu_model": self.spec.gpu_model,
               "gpus": self.spec.gpu_count, "gpu_memory_gib": self.spec.gpu_mem_gib,
               "vcpu": self.spec.vcpu, "memory_gib": self.spec.mem_gib,
               "projected_util_percent": round(self.fit.projected, 1),
               "projected_peak_percent": round(self.fit.projected_peak, 1),
               "peak_memory_percent": round(self.fit.memory_percent, 1),
               "performance_risk": self.risk, "risk_reasons": list(self.risk_reasons),
               "price_basis": self.price.basis}
        if self.fit.bandwidth_percent is not None:
            out["projected_bandwidth_percent"] = round(self.fit.bandwidth_percent, 1)
        return out


def _share(spec: InstanceSpec) -> float:
    """The part of one GPU a GPU of this type is (0.125 for a g6f.large's slice)."""
    count = spec.gpu_count or 0.0
    return count if 0 < count < 1 else 1.0


def compute_per_gpu(spec: InstanceSpec) -> float | None:
    """Dense FP16 TFLOPS one GPU of this type offers (a slice offers its share)."""
    if spec.fp16_tflops_per_gpu is None:
        return None
    return spec.fp16_tflops_per_gpu * _share(spec)


def _projected(current: InstanceSpec, cand: InstanceSpec, util: float) -> float | str:
    have_now, have = compute_per_gpu(current), compute_per_gpu(cand)
    if have_now is not None and have is not None:
        return 100.0 * (util / 100.0 * have_now) / have
    if cand.gpu_model == current.gpu_model:
        return util * _share(current) / _share(cand)
    missing = cand.gpu_model if have is None else current.gpu_model
    return f"no published FP16 throughput for {missing}"


def host_need(current: InstanceSpec, demand: Demand, opts: Options) -> dict[str, Any]:
    """vCPUs and GiB the host must offer: the measured use + host_headroom, else the used GPUs'
    share of the current host (its vCPU and memory per GPU x GPUs used)."""
    grow = 1 + opts.host_headroom / 100.0
    count = current.gpu_count if current.gpu_count and current.gpu_count >= 1 else 1.0
    share = min(1.0, max(demand.gpus_used, 1) / count)
    out: dict[str, Any] = {}
    if demand.host_vcpu is not None:
        out["vcpu"] = demand.host_vcpu * grow
        out["vcpu_basis"] = f"measured {demand.host_vcpu:.1f} vCPU + {opts.host_headroom:g}%"
    else:
        out["vcpu"] = current.vcpu * share
        out["vcpu_basis"] = (f"not measured: {share:g} of the current {current.vcpu} vCPU "
                             "(the used GPUs' share)")
    if demand.host_mem_gib is not None:
        out["memory_gib"] = demand.host_mem_gib * grow
        out["memory_basis"] = (f"measured {demand.host_mem_gib:.1f} GiB + "
                               f"{opts.host_headroom:g}%")
    elif current.mem_gib is not None:
        out["memory_gib"] = current.mem_gib * share
        out["memory_basis"] = (f"not measured: {share:g} of the current {current.mem_gib:g} "
                               "GiB (the used GPUs' share)")
    out["measured"] = demand.host_vcpu is not None and demand.host_mem_gib is not None
    return out


def bandwidth_percent(current: InstanceSpec, cand: InstanceSpec,
                      demand: Demand) -> float | None:
    """Bandwidth demand as % of the candidate GPU's: the measured bandwidth utilization, else
    the decision statistic of GPU utilization, x the current GPU's bandwidth."""
    now, then = facts.bandwidth_gbs(current), facts.bandwidth_gbs(cand)
    if now is None or then is None or then <= 0:
        return None
    util = demand.bandwidth_util if demand.bandwidth_util is not None else demand.sized_on
    return 100.0 * util / 100.0 * now / then


def fits(current: InstanceSpec, cand: InstanceSpec, demand: Demand,
         opts: Options) -> Fit | str:
    """How ``cand`` carries the observed work; else why it cannot (a fact it is known to lack).
    Facts not known do not exclude (they are risks)."""
    if cand.gpu_count is None or cand.gpu_mem_gib is None or cand.gpu_count <= 0:
        return "no GPU facts"
    if cand.gpu_vendor != current.gpu_vendor and not opts.allow_vendor_change:
        return f"{cand.gpu_vendor} in place of {current.gpu_vendor}"
    if cand.arch != current.arch and not opts.allow_arch_change:
        return f"{cand.arch} in place of {current.arch}"
    if opts.families and cand.family not in opts.families:
        return "family not allowed"
    used = max(demand.gpus_used, 1)
    if cand.gpu_count < 1 and used > 1:
        return "a GPU slice for several used GPUs"
    if cand.gpu_count >= 1 and cand.gpu_count < used:
        return f"{cand.gpu_count:g} GPUs for {used} used"
    mem_mib = cand.gpu_mem_gib * MIB_PER_GIB
    if mem_mib < demand.mem_peak_mib * (1 + opts.memory_headroom / 100.0):
        return "not enough GPU memory"
    projected = _projected(current, cand, demand.sized_on)
    peak = _projected(current, cand, demand.util_max)
    if isinstance(projected, str) or isinstance(peak, str):
        return projected if isinstance(projected, str) else str(peak)
    grow = 1 + opts.compute_headroom / 100.0
    if projected * grow > 100.0 + 1e-9:
        return "not enough GPU compute"
    if peak > opts.peak_limit_percent + 1e-9:
        return "not enough GPU compute for the peak"
    bandwidth = bandwidth_percent(current, cand, demand)
    if bandwidth is not None and bandwidth * grow > 100.0 + 1e-9:
        return "not enough GPU memory bandwidth"
    lost = lost_capability(current, cand, demand, opts)
    if lost:
        return lost
    host = host_need(current, demand, opts)
    if host["vcpu"] > cand.vcpu + 1e-9:
        return f"{cand.vcpu} vCPU for {host['vcpu']:.1f} needed"
    if cand.mem_gib is not None and host.get("memory_gib", 0.0) > cand.mem_gib + 1e-9:
        return f"{cand.mem_gib:g} GiB host memory for {host['memory_gib']:.1f} needed"
    return Fit(projected, peak, 100.0 * demand.mem_peak_mib / mem_mib, bandwidth, host)


def lost_capability(current: InstanceSpec, cand: InstanceSpec, demand: Demand,
                    opts: Options) -> str | None:
    """A capability the candidate is known to lack that the current types all have: BF16/FP8,
    the Tensor Core generation, the interconnect and EFA collective work needs, the offering."""
    now = demand.current_types or (current,)
    for name in ("bf16", "fp8"):
        if facts.required_flag(now, name) is True and facts.flag(cand, name) is False:
            return f"no {name.upper()}"
    gen_now, gen = facts.required_gen(now), facts.tensor_core_gen(cand)
    if gen_now is not None and gen is not None and gen < gen_now:
        return f"Tensor Core generation {gen} below {gen_now}"
    link_now, rank = facts.required_link(now), facts.interconnect_rank(cand)
    if demand.needs_gpu_link and demand.gpus_used > 1 and link_now is not None \
            and rank is not None and rank < link_now[0]:
        return (f"interconnect {facts.interconnect(cand)} in place of {link_now[1]} for "
                "collective work")
    if demand.needs_efa and facts.required_efa(now) is True and facts.efa(cand) is False:
        return "no EFA for multi-node work"
    if facts.offered(cand, opts.region) is False:
        return f"not offered in {opts.region}"
    for zone in opts.zones:
        if facts.offered(cand, opts.region, zone) is False:
            return f"not offered in {opts.region} zone {zone}"
    return None


def per_instance(cand: InstanceSpec, demand: Demand, fit: Fit) -> int:
    """How many members' work one ``cand`` carries, each member moved whole: its used GPUs on
    GPUs of their own (never two GPUs' work on one), its host need beside the others'."""
    used = max(demand.gpus_used, 1)
    k = int((cand.gpu_count or 0) // used) if (cand.gpu_count or 0) >= 1 else 1
    vcpu, mem = fit.host.get("vcpu") or 0.0, fit.host.get("memory_gib") or 0.0
    if vcpu > 0:
        k = min(k, int(cand.vcpu // vcpu))
    if mem > 0 and cand.mem_gib is not None:
        k = min(k, int(cand.mem_gib // mem))
    return max(k, 1)


def count_for(cand: InstanceSpec, demand: Demand, fit: Fit, opts: Options) -> tuple[int, int]:
    """(M, members per instance): the instances of ``cand`` that carry the N running now."""
    n = max(opts.instances, 1)
    if not opts.consolidate or n < 2:
        return n, 1
    k = per_instance(cand, demand, fit)
    return max(-(-n // k), min(n, opts.min_instances)), k


def recommend(current: InstanceSpec, current_price: float, demand: Demand, catalog: Catalog,
              price_of: Callable[[str], Price], opts: Options,
              exclude: Collection[str] = (),
              assess: Callable[[InstanceSpec, Fit, int], tuple[int, tuple[str, ...]]]
              | None = None) -> list[Candidate]:
    """Every fitting type whose M instances cost less per hour than the N running now (at
    ``current_price`` each), cheapest first, each with its performance risk (``assess``)."""
    out: list[Candidate] = []
    n = max(opts.instances, 1)
    for name, spec in catalog.instances.items():
        if name == current.instance_type or name in exclude:
            continue
        fit = fits(current, spec, demand, opts)
        if isinstance(fit, str):
            continue
        price = price_of(name)
        if price.usd_hour is None:
            continue
        m, k = count_for(spec, demand, fit, opts)
        if m * price.usd_hour >= n * current_price - 1e-9:
            continue
        risk, reasons = assess(spec, fit, m) if assess is not None else (0, ())
        out.append(Candidate(spec, price, fit, risk, reasons, m, k))
    out.sort(key=lambda c: ((c.price.usd_hour or 0.0) * c.count, c.instance_type))
    return out
