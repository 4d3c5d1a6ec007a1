"""Which resources of an evaluation are GPU compute: what the report's coverage line counts as
"GPU resources judged".

A resource is GPU compute when its compute view can launch a GPU instance type (or asks for GPUs
by attributes); it *may* be when a type is not known (a variable without a value, a data
source). A resource that does not exist (``count = 0``) is neither."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scanner.kinds.terraform_modules import UNREAD_MODULE_CALL
from scanner.model import Resource, Unknown


@dataclass
class GpuCensus:
    """What the coverage line counts, kept as counts and names only: the report is built after
    the resources are let go (a large plan's report would otherwise hold them all)."""

    judged: int = 0  # resources in the run's scope (utilization records not counted)
    gpu: int = 0  # launches GPU compute
    maybe: int = 0  # whether it does is not known
    files: set[str] = field(default_factory=set)  # the files their resources are declared in
    places: set[str] = field(default_factory=set)  # live resources: their account/regions
    unread_sources: list[Any] = field(default_factory=list)  # module calls not read: Source

    def count(self, resource: Resource, views: Any) -> None:
        """Count ``resource`` (``views``: the evaluation's ``scanner.compute`` views)."""
        if not resource.kind.startswith("telemetry."):
            self.judged += 1
            if resource.provenance.file:
                self.files.add(resource.provenance.file)
            elif resource.scope:
                self.places.add(resource.scope)
            if resource.kind == UNREAD_MODULE_CALL:
                self.unread_sources.append(resource.get("Source"))
        view = views.of(resource)
        if view is None or view.active is False:
            return
        gpu = view.types.gpu()
        if gpu is True:
            self.gpu += 1
        elif isinstance(gpu, Unknown):
            self.maybe += 1


def gpu_census(resources: Iterable[Resource], views: object) -> GpuCensus:
    """The GPU compute among ``resources`` (``views``: the evaluation's ``scanner.compute``
    views, so no view is built twice)."""
    out = GpuCensus()
    for resource in resources:
        out.count(resource, views)
    return out
