"""The catalogue facts a right-sizing move must keep, read so that a fact the catalogue does not
hold is ``None`` (not known), never a default: the GPU interconnect, per-GPU memory bandwidth,
BF16 / FP8 support, the Tensor Core generation and where a type is offered.

A move that leans on a fact that is ``None`` is not safe (``policies.rs_risk`` makes it a high
performance risk: a notice, never a saving).
"""

from __future__ import annotations

from typing import Any

from scanner.catalog import InstanceSpec

# Interconnects from weakest to strongest; "none" is a single GPU (no GPU-to-GPU link at all).
INTERCONNECT_RANK = {"none": 0, "pcie": 1, "nvlink": 2, "neuronlink": 2, "nvswitch": 3}
GPU_LINKS = ("nvlink", "nvswitch", "neuronlink")


def interconnect(spec: InstanceSpec) -> str | None:
    value = getattr(spec, "interconnect", None)
    if isinstance(value, str) and value.strip().lower() in INTERCONNECT_RANK:
        return value.strip().lower()
    return None


def interconnect_rank(spec: InstanceSpec) -> int | None:
    link = interconnect(spec)
    return None if link is None else INTERCONNECT_RANK[link]


def has_gpu_link(spec: InstanceSpec) -> bool | None:
    """NVLink / NVSwitch (or NeuronLink) between its accelerators; None when not known."""
    link = interconnect(spec)
    return None if link is None else link in GPU_LINKS


def bandwidth_gbs(spec: InstanceSpec) -> float | None:
    """Per-GPU memory bandwidth in GB/s (a GPU slice offers its share)."""
    value = _number(getattr(spec, "gpu_mem_bandwidth_gbs", None))
    if value is None:
        return None
    count = spec.gpu_count or 0.0
    return value * count if 0 < count < 1 else value


def flag(spec: InstanceSpec, name: str) -> bool | None:
    """``bf16`` / ``fp8``: True, False or None (not known)."""
    value = getattr(spec, name, None)
    return value if isinstance(value, bool) else None


def tensor_core_gen(spec: InstanceSpec) -> int | None:
    """The Tensor Core generation; None when the catalogue does not say."""
    number = _number(getattr(spec, "tensor_core_gen", None))
    return int(number) if number is not None else None


def efa(spec: InstanceSpec) -> bool | None:
    return spec.efa if isinstance(spec.efa, bool) else None


def offered(spec: InstanceSpec, region: str | None, zone: str | None = None) -> bool | None:
    """Is the type offered in ``region`` (and in ``zone``, a zone ID, when given)? None: the
    catalogue holds no offering data for it there, the region is not known, or the zone is
    given by name (a name maps to a different zone in each account)."""
    ask = getattr(spec, "offered", None)
    if region is None or not callable(ask):
        return None
    try:
        answer = ask(region, zone) if zone is not None else ask(region)
    except (TypeError, ValueError, OSError):
        return None
    return answer if isinstance(answer, bool) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value == value and value not in (float("inf"), float("-inf")) \
        else None


# -- what the current capacity already works without ------------------------------------------
# A group whose override types differ runs on any of them: a capability one of them lacks is
# one the work already does without. So what a move must keep is the least the current types
# share; a fact one of them does not hold (and none lacks) is not known.


def required_flag(specs: tuple[InstanceSpec, ...], name: str) -> bool | None:
    """Must a candidate have ``bf16`` / ``fp8``? False when a current type lacks it, None when
    not known."""
    values = [flag(s, name) for s in specs]
    if False in values:
        return False
    return None if None in values or not values else True


def required_gen(specs: tuple[InstanceSpec, ...]) -> int | None:
    values = [tensor_core_gen(s) for s in specs]
    return None if None in values or not values else min(v for v in values if v is not None)


def required_link(specs: tuple[InstanceSpec, ...]) -> tuple[int, str] | None:
    """The weakest interconnect of the current types (rank, name); None when not known."""
    values = [(interconnect_rank(s), interconnect(s)) for s in specs]
    if not values or any(r is None for r, _ in values):
        return None
    rank, name = min(values, key=lambda v: v[0] or 0)
    return (rank or 0), str(name)


def required_efa(specs: tuple[InstanceSpec, ...]) -> bool | None:
    values = [efa(s) for s in specs]
    if False in values:
        return False
    return None if None in values or not values else True
