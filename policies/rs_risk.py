"""The performance risk of a right-sizing move, on Compute Optimizer's scale: 0 very low, 1 low,
2 medium, 3 high, 4 very high. The level is the highest of its reasons; every reason is named
in the evidence. A move above ``max_risk_for_saving`` books no saving (it is a notice).

- 3 (high): a fact the move leans on is not in the catalogue (interconnect where GPUs work
  together, memory bandwidth, BF16/FP8, Tensor Core generation, EFA for multi-node work, the
  region's offering); the GPU link (NVLink/NVSwitch) lost while several GPUs are used, even
  with no sign of collective work (multi-GPU work keeps its link).
- 2 (medium): a group's N instances consolidated into fewer; the projected peak above
  ``TIGHT_PERCENT`` of the candidate; an estimated bandwidth demand above ``TIGHT_PERCENT`` of
  the candidate's.
- 0 (very low): the zone's offering not known (zones are known by ID).
- 1 (low): another GPU model (kernels, drivers and numerics to re-validate); host vCPU/memory
  not measured (the used GPUs' share of the current host is assumed); a bursty series (sized
  on its peak).
"""

from __future__ import annotations

from policies import rs_facts as facts
from policies.recommend import Demand, Fit, Options
from scanner.catalog import InstanceSpec

LEVELS = ("very low", "low", "medium", "high", "very high")
NOT_KNOWN = 3
TIGHT_PERCENT = 80.0


def level_name(level: int) -> str:
    return LEVELS[max(0, min(level, len(LEVELS) - 1))]


def assess(current: InstanceSpec, cand: InstanceSpec, fit: Fit, demand: Demand,
           opts: Options, count: int | None = None) -> tuple[int, tuple[str, ...]]:
    reasons: list[tuple[int, str]] = []
    n = max(opts.instances, 1)
    if count is not None and count < n:
        reasons.append((2, f"{n} instances consolidated into {count}: one failure takes more "
                           "of the capacity; scaling policies and zone spread to re-check"))

    def missing(what: str, spec: InstanceSpec) -> None:
        reasons.append((NOT_KNOWN, f"{what} of {spec.instance_type} not in the catalogue"))

    now = demand.current_types or (current,)
    names = ", ".join(sorted({s.instance_type for s in now}))
    for name in ("bf16", "fp8"):
        need = facts.required_flag(now, name)
        if need is None:
            reasons.append((NOT_KNOWN, f"{name.upper()} support of {names} not in the "
                                       "catalogue"))
        elif need and facts.flag(cand, name) is None:
            missing(name.upper() + " support", cand)
    if facts.required_gen(now) is None:
        reasons.append((NOT_KNOWN, f"Tensor Core generation of {names} not in the catalogue"))
    elif facts.tensor_core_gen(cand) is None:
        missing("Tensor Core generation", cand)
    for spec in (current, cand):
        if facts.bandwidth_gbs(spec) is None:
            missing("memory bandwidth", spec)
    if demand.gpus_used > 1:
        link_now, link = facts.required_link(now), facts.has_gpu_link(cand)
        if link_now is None:
            reasons.append((NOT_KNOWN, f"GPU interconnect of {names} not in the catalogue"))
        if link is None:
            missing("GPU interconnect", cand)
        if link_now is not None and link_now[1] in facts.GPU_LINKS and link is False \
                and not demand.needs_gpu_link:
            # multi-GPU work keeps its GPU link: several GPUs busy at once may talk over it
            # (data-parallel training, tensor-parallel inference) whether or not a tag says so
            reasons.append((3, f"{demand.gpus_used} GPUs used: {facts.interconnect(cand)} "
                               f"in place of {link_now[1]} slows any traffic between them"))
    if demand.needs_efa and facts.required_efa(now) is not False and facts.efa(cand) is None:
        missing("EFA", cand)
    if facts.offered(cand, opts.region) is None:
        where = opts.region or "a region not known"
        reasons.append((NOT_KNOWN, f"whether {cand.instance_type} is offered in {where} is "
                                   "not known"))
    else:
        unknown = [z for z in opts.zones if facts.offered(cand, opts.region, z) is None]
        if unknown:
            reasons.append((0, f"offered in {opts.region}; in zone {', '.join(unknown)} not "
                               "known (zones are known by ID)"))
    if fit.projected_peak > TIGHT_PERCENT:
        reasons.append((2, f"projected peak {fit.projected_peak:.0f}% of {cand.gpu_model}"))
    if (fit.bandwidth_percent is not None and demand.bandwidth_util is None
            and fit.bandwidth_percent > TIGHT_PERCENT):
        reasons.append((2, f"estimated memory-bandwidth demand {fit.bandwidth_percent:.0f}% of "
                           f"{cand.gpu_model}'s"))
    if cand.gpu_model != current.gpu_model:
        reasons.append((1, f"{cand.gpu_model} in place of {current.gpu_model}: validate "
                           "kernels, drivers and numerics"))
    if not fit.host.get("measured"):
        reasons.append((1, "host vCPU/memory not measured: the used GPUs' share of the current "
                           "host is assumed"))
    if demand.bursty:
        reasons.append((1, f"bursty (peak {demand.util_max:.0f}% vs p95 "
                           f"{demand.util_p95:.0f}%): sized on its peak"))
    level = max((lvl for lvl, _ in reasons), default=0)
    ordered = sorted(reasons, key=lambda r: -r[0])
    return level, tuple(f"{level_name(lvl)}: {text}" for lvl, text in ordered)
