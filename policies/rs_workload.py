"""What the configuration says about the work a right-sizing move must keep serving: signs of
collective (NCCL / MPI) work across GPUs and nodes, and the Availability Zones the capacity runs
in. Read from the normalized attributes (AWS API spelling) of the resource and of the launch
templates it uses, and from its tags and Kubernetes labels; never from where it came from.

Signs, each named in the evidence:

- an EFA network interface (``InterfaceType`` ``efa`` or ``efa-only``; EFA serves traffic
  between instances) or a placement group (a lone instance's peers are elsewhere) — multi-node
  work, which needs EFA and the GPU interconnect;
- a tag or label whose key or value names collective or training work (``nccl``, ``mpi``,
  ``horovod``, ``torchrun``, ``deepspeed``, ``distributed``, ``training``, as a word).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from policies.base import Context
from scanner.model import Resource, Unknown, dig

COLLECTIVE_WORDS = ("nccl", "mpi", "horovod", "torchrun", "deepspeed", "megatron",
                    "distributed", "training", "efa")
MAX_TAGS = 200  # tags and labels looked at per resource (a hostile input may carry thousands)
MAX_TEXT = 256  # characters of one tag key or value looked at


@dataclass
class Workload:
    multi_node: list[str] = field(default_factory=list)  # why it is multi-node work
    collective: list[str] = field(default_factory=list)  # why GPUs talk to each other
    zones: tuple[str, ...] = ()

    @property
    def needs_efa(self) -> bool:
        return bool(self.multi_node)

    @property
    def needs_gpu_link(self) -> bool:
        return bool(self.multi_node or self.collective)


def _word_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z0-9])(" + "|".join(map(re.escape, words)) + r")(?![a-z0-9])")


_COLLECTIVE = _word_pattern(COLLECTIVE_WORDS)


def _launch_data(resource: Resource, ctx: Context) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, attributes) of the resource and of each launch template it uses."""
    yield resource.id, resource.attrs
    view = ctx.compute.of(resource)
    for use in view.templates if view is not None else ():
        data = use.template.get("LaunchTemplateData")
        yield use.template.id, data if isinstance(data, dict) else use.template.attrs


def _efa(data: dict[str, Any]) -> bool:
    nis = data.get("NetworkInterfaces")
    return isinstance(nis, list) and any(
        isinstance(ni, dict)
        and str(ni.get("InterfaceType") or "").strip().lower() in ("efa", "efa-only")
        for ni in nis[:64])


def _placement_group(data: dict[str, Any]) -> Any:
    for path in ("PlacementGroup", "Placement.GroupName", "Placement.GroupId"):
        value = dig(data, path)
        if value not in (None, ""):
            return value
    return None


def _texts(resource: Resource) -> Iterator[tuple[str, str]]:
    labels = resource.get("Labels")
    pairs = list(islice(resource.tags.items(), MAX_TAGS))
    if isinstance(labels, dict):
        pairs += list(islice(labels.items(), MAX_TAGS))
    for key, value in pairs:
        yield str(key)[:MAX_TEXT], str(value)[:MAX_TEXT] if value is not None else ""


def _tag_signs(resource: Resource) -> list[str]:
    out = []
    for key, value in _texts(resource):
        if _COLLECTIVE.search(key.lower()) or _COLLECTIVE.search(value.lower()):
            out.append(f"tag or label {key}={value}")
    return out[:5]


def _zones(resource: Resource, data: list[tuple[str, dict[str, Any]]]) -> tuple[str, ...]:
    found: list[str] = []
    for value in (resource.get("AvailabilityZones"), resource.get("AvailabilityZone"),
                  dig(resource.attrs, "Placement.AvailabilityZone"),
                  resource.get("AvailabilityZoneId"),
                  dig(resource.attrs, "Placement.AvailabilityZoneId")):
        for z in value if isinstance(value, list) else [value]:
            if isinstance(z, str) and z.strip():
                found.append(z.strip())
    for _where, d in data[1:]:
        z = dig(d, "Placement.AvailabilityZone")
        if isinstance(z, str) and z.strip():
            found.append(z.strip())
    return tuple(dict.fromkeys(found))


def workload_of(resource: Resource, ctx: Context) -> Workload:
    """The signs of collective work on ``resource``."""
    data = list(_launch_data(resource, ctx))
    out = Workload(zones=_zones(resource, data))
    for where, d in data:
        if _efa(d):
            out.multi_node.append(f"EFA network interface ({where})")
        group = _placement_group(d)
        if group is not None:
            name = group.reason if isinstance(group, Unknown) else str(group)[:MAX_TEXT]
            out.multi_node.append(f"placement group {name} ({where}; its strategy is not read: "
                                  "taken as cluster)")
    out.collective += _tag_signs(resource)
    for _where, d in data[1:]:
        tags = dig(d, "TagSpecifications")
        if isinstance(tags, list):
            for spec in tags[:16]:
                for tag in (spec.get("Tags") if isinstance(spec, dict) else None) or []:
                    if isinstance(tag, dict):
                        key, value = str(tag.get("Key"))[:MAX_TEXT], str(tag.get("Value"))[
                            :MAX_TEXT]
                        if _COLLECTIVE.search(key.lower()) or _COLLECTIVE.search(value.lower()):
                            out.collective.append(f"launch template tag {key}={value}")
    return out
