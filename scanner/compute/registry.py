"""The registry of compute extractors: one per kind, with what its view can hold.

A kind registers once (a module in ``scanner/compute/extractors/``, found by discovery) and
states what its view provides; policies ask for "the kinds whose view holds storage devices" or
"the kinds that may request spot capacity" and never list kinds themselves.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scanner.model import Resource

# What a kind's view can hold.
LAUNCHES = "launches"  # instance types (or a GPU requirement): compute, GPU compute when GPU types
PLACES = "places"  # launches capacity into subnets (a template or configuration alone does not)
SPOT = "spot"  # may request spot capacity with a max price
GROUP = "group"  # a group with a desired size and an on-demand/spot split
DEVICES = "devices"  # storage devices judged for encryption (IaC; live: the volumes themselves)
# Its devices' keys are judged live too (EBS-003): the volumes are not in the account (a
# SageMaker HyperPod cluster's), so the configuration is all there is to judge.
DEVICES_LIVE = "devices_live"
# Its running capacity is measured for right-sizing (RS-*): an instance, or a group judged on
# its member instances' utilization.
MEASURED = "measured"
POOLS = "pools"  # draws spot capacity from pools of types without a group split (SpotPools)
CAPABILITIES = frozenset({LAUNCHES, PLACES, SPOT, GROUP, DEVICES, DEVICES_LIVE, MEASURED, POOLS})

# (resource, scanner.compute.index.Views) -> scanner.compute.view.ComputeView; typed loosely here
# because the index imports this registry.
Extract = Callable[[Resource, Any], Any]


@dataclass(frozen=True, eq=False)
class Extractor:
    kind: str
    extract: Extract
    provides: frozenset[str]
    reads: tuple[str, ...]  # the other kinds its view reads (launch templates, configurations)
    rank: int  # where the kind is listed among others (policies' kinds, "GPU compute (first …)")


_REGISTRY: dict[str, Extractor] = {}
_loaded = False


def extractor(kind: str, *, provides: tuple[str, ...], reads: tuple[str, ...] = (),
              rank: int = 100) -> Callable[[Extract], Extract]:
    """Register the function that builds ``kind``'s compute view."""
    bad = set(provides) - CAPABILITIES
    if bad:
        raise ValueError(f"extractor for {kind}: unknown capabilities {sorted(bad)}")

    def register(fn: Extract) -> Extract:
        if kind in _REGISTRY:
            raise ValueError(f"a compute extractor for {kind} is registered twice")
        _REGISTRY[kind] = Extractor(kind, fn, frozenset(provides), tuple(reads), rank)
        return fn

    return register


def _load() -> None:
    global _loaded
    if _loaded:
        return
    from scanner.compute import extractors

    for info in sorted(pkgutil.iter_modules(extractors.__path__), key=lambda m: m.name):
        importlib.import_module(f"{extractors.__name__}.{info.name}")
    _loaded = True


def get(kind: str) -> Extractor | None:
    _load()
    return _REGISTRY.get(kind)


def registered() -> dict[str, Extractor]:
    _load()
    return dict(sorted(_REGISTRY.items(), key=lambda item: (item[1].rank, item[0])))


def kinds_with(*capabilities: str) -> tuple[str, ...]:
    """The kinds whose view provides every one of these capabilities (in rank order)."""
    unknown = set(capabilities) - CAPABILITIES
    if unknown:
        raise ValueError(f"unknown capabilities {sorted(unknown)}")
    return tuple(k for k, e in registered().items() if e.provides.issuperset(capabilities))


def reads_of(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The kinds the views of ``kinds`` read besides their own (sorted, without ``kinds``)."""
    out = {r for k in kinds if (e := get(k)) is not None for r in e.reads}
    return tuple(sorted(out - set(kinds)))
