"""The GPU instance types a scan meets that the catalogue lacks: one notice per type and file.

A type the catalogue does not list still counts as GPU compute (by its family), but its specs and
price are not known; the policies that need them say UNKNOWN or leave the saving out. This makes
that visible by name, so an absent type is never a silent pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from scanner.catalog import Catalog
from scanner.model import Notice, Resource

if TYPE_CHECKING:
    from scanner.compute.index import Views


def lacking_notices(resources: Iterable[Resource], views: Views, catalog: Catalog
                    ) -> list[tuple[Resource, Notice]]:
    """(resource, notice) for each GPU instance type a resource can launch that ``catalog``
    does not list (``views``: the evaluation's ``scanner.compute`` views)."""
    out: list[tuple[Resource, Notice]] = []
    seen: set[tuple[str, str]] = set()
    for resource in resources:
        view = views.of(resource)
        if view is None:
            continue
        for name in view.types.gpu_types():
            if catalog.spec(name) is not None:
                continue
            prov = resource.provenance
            where = prov.file or resource.scope
            if (where, name) in seen:
                continue
            seen.add((where, name))
            out.append((resource, Notice(where, (
                f"{resource.id}: instance type {name} is not in the gpuaudit catalogue "
                f"({len(catalog.instances)} types, prices as of {catalog.as_of}): its GPU specs "
                "and on-demand price are not known, so checks that need them report UNKNOWN "
                "or leave its cost out (--catalog FILE reads a newer catalogue)"),
                prov.start_line)))
    return out
