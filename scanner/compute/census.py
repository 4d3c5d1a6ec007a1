"""Which resources of an evaluation are GPU compute: what the report's coverage line counts as
"GPU resources judged".

A resource is GPU compute when its compute view can launch a GPU instance type (or asks for GPUs
by attributes); it *may* be when a type is not known (a variable without a value, a data
source). A resource that does not exist (``count = 0``) is neither."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from scanner.model import Resource, Unknown


@dataclass
class GpuCensus:
    judged: list[Resource] = field(default_factory=list)  # every resource in the run's scope
    gpu: list[Resource] = field(default_factory=list)  # launches GPU compute
    maybe: list[Resource] = field(default_factory=list)  # whether it does is not known


def gpu_census(resources: Iterable[Resource], views: object) -> GpuCensus:
    """The GPU compute among ``resources`` (``views``: the evaluation's ``scanner.compute``
    views, so no view is built twice)."""
    out = GpuCensus()
    for resource in resources:
        out.judged.append(resource)
        view = views.of(resource)  # type: ignore[attr-defined]
        if view is None or view.active is False:
            continue
        gpu = view.types.gpu()
        if gpu is True:
            out.gpu.append(resource)
        elif isinstance(gpu, Unknown):
            out.maybe.append(resource)
    return out
