"""What the reader needs to know of all planned resources before it resolves any one of them:
their addresses, the module instances that hold them, and the root module's resources (to tell
whether the .tf files beside the plan are its own)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from scanner.sources.terraform.plan.refs import _split_module_path

# How many root resources are looked up in the .tf files to tell whether they are the plan's.
ROOT_SAMPLE = 200

Planned = tuple[str, dict[str, Any]]  # (module instance address, planned resource)


@dataclass
class PlannedIndex:
    """Built with :meth:`add` from each planned resource, in order."""

    addresses: set[str] = field(default_factory=set)
    # (parent module instance, call name) -> the instances of that call, in order
    module_instances: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    root: list[tuple[str, str]] = field(default_factory=list)  # (type, name), at most ROOT_SAMPLE
    count: int = 0
    types: set[str] = field(default_factory=set)  # the planned resource types
    _seen_modules: set[str] = field(default_factory=lambda: {""})

    def add(self, module: str, r: dict[str, Any]) -> None:
        self.count += 1
        self.types.add(str(r.get("type")))
        addr = r.get("address")
        if isinstance(addr, str):
            self.addresses.add(addr)
        if not module and len(self.root) < ROOT_SAMPLE and r.get("mode", "managed") == "managed":
            self.root.append((str(r.get("type")), str(r.get("name"))))
        while module not in self._seen_modules:  # this instance and its parents, once each
            self._seen_modules.add(module)
            segments = _split_module_path(module)
            if not segments:
                break
            parent = ".".join(f"module.{n}{i}" for n, i in segments[:-1])
            self.module_instances.setdefault((parent, segments[-1][0]), []).append(module)
            module = parent


@dataclass
class PlannedResources:
    """The planned resources: the index, and a way to go through them (again) in order."""

    index: PlannedIndex
    again: Callable[[], Iterator[Planned]]
    # The same resources in parts, each to go through on its own (the parts in order are
    # ``again``'s order): what the reader shares out among processes. 0: only ``again``.
    parts: int = 0
    part: Callable[[int], Iterator[Planned]] | None = None


def in_memory(planned: Iterable[Planned]) -> PlannedResources:
    """Planned resources already decoded (the whole-document read)."""
    items = list(planned)
    index = PlannedIndex()
    for module, r in items:
        index.add(module, r)
    return PlannedResources(index, lambda: iter(items))
