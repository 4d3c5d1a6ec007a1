"""The right-sizing recommendation: the cheapest catalogue type that does the observed work.

A candidate fits when it has

- enough GPUs for the GPUs actually used (a fractional GPU only in place of one used GPU),
- per GPU, at least the observed peak memory used plus ``memory_headroom`` percent,
- per GPU, at least the observed p95 compute demand plus ``compute_headroom`` percent, where
  demand is p95 utilization x the current GPU's dense FP16 tensor TFLOPS (relative throughput per
  GPU model). Where the current model has no published figure, only the same GPU model is
  compared (projected utilization unchanged); a candidate without one is left out,
- the same CPU architecture and accelerator vendor (unless allowed) and a family in the
  allow-list (when one is given),

and costs less per hour than the current type. Host vCPU and memory are not measured.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from scanner.catalog import Catalog, InstanceSpec
from scanner.pricing.prices import Price

MIB_PER_GIB = 1024.0


@dataclass(frozen=True)
class Demand:
    gpus_used: int  # GPUs with any activity (at least 1 here)
    mem_peak_mib: float  # the largest peak memory used by one GPU
    util_p95: float  # the largest p95 utilization of one used GPU (%)
    util_max: float
    mem_measured: bool = True  # False: no memory metric, the current GPU's memory is assumed


@dataclass(frozen=True)
class Options:
    memory_headroom: float = 20.0  # percent
    compute_headroom: float = 20.0  # percent
    allow_arch_change: bool = False
    allow_vendor_change: bool = False
    families: tuple[str, ...] = ()


@dataclass(frozen=True)
class Candidate:
    spec: InstanceSpec
    price: Price
    projected_util_p95: float  # % of the candidate GPU's compute
    memory_percent: float  # peak memory used as % of the candidate GPU's memory

    @property
    def instance_type(self) -> str:
        return self.spec.instance_type

    def as_evidence(self, hours: float) -> dict[str, Any]:
        usd = self.price.usd_hour or 0.0
        return {"instance_type": self.instance_type, "usd_hour": usd,
                "usd_month": round(usd * hours, 2), "gpu_model": self.spec.gpu_model,
                "gpus": self.spec.gpu_count, "gpu_memory_gib": self.spec.gpu_mem_gib,
                "projected_util_p95_percent": round(self.projected_util_p95, 1),
                "peak_memory_percent": round(self.memory_percent, 1),
                "price_basis": self.price.basis}


def _share(spec: InstanceSpec) -> float:
    """The part of one GPU a GPU of this type is (0.125 for a g6f.large's slice)."""
    count = spec.gpu_count or 0.0
    return count if 0 < count < 1 else 1.0


def compute_per_gpu(spec: InstanceSpec) -> float | None:
    """Dense FP16 TFLOPS one GPU of this type offers (a slice offers its share)."""
    if spec.fp16_tflops_per_gpu is None:
        return None
    return spec.fp16_tflops_per_gpu * _share(spec)


def fits(current: InstanceSpec, cand: InstanceSpec, demand: Demand,
         opts: Options) -> tuple[float, float] | str:
    """(projected p95 %, memory %) when ``cand`` can do the observed work; else why not."""
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
    needed_mem = demand.mem_peak_mib * (1 + opts.memory_headroom / 100.0)
    if mem_mib < needed_mem:
        return "not enough GPU memory"
    have_now, have = compute_per_gpu(current), compute_per_gpu(cand)
    if have_now is not None and have is not None:
        work = demand.util_p95 / 100.0 * have_now
        projected = 100.0 * work / have
    elif cand.gpu_model == current.gpu_model:
        projected = demand.util_p95 * _share(current) / _share(cand)
    else:
        missing = cand.gpu_model if have is None else current.gpu_model
        return f"no published FP16 throughput for {missing}"
    if projected * (1 + opts.compute_headroom / 100.0) > 100.0 + 1e-9:
        return "not enough GPU compute"
    return projected, 100.0 * demand.mem_peak_mib / mem_mib


def recommend(current: InstanceSpec, current_price: float, demand: Demand, catalog: Catalog,
              price_of: Callable[[str], Price], opts: Options,
              exclude: Collection[str] = ()) -> list[Candidate]:
    """Every fitting type cheaper than ``current_price`` per hour, cheapest first."""
    out: list[Candidate] = []
    for name, spec in catalog.instances.items():
        if name == current.instance_type or name in exclude:
            continue
        fit = fits(current, spec, demand, opts)
        if isinstance(fit, str):
            continue
        price = price_of(name)
        if price.usd_hour is None or price.usd_hour >= current_price:
            continue
        out.append(Candidate(spec, price, fit[0], fit[1]))
    out.sort(key=lambda c: (c.price.usd_hour or 0.0, c.instance_type))
    return out
