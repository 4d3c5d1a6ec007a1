"""Addresses and expression references of a Terraform plan: module paths, instance keys,
the references an expression lists, parsed once."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scanner.model import Ref

_INDEX = r'(?:\[(?:"(?:[^"\\]|\\.)*"|[^\]]*)\])?'
_RESOURCE_REF = re.compile(
    rf'([A-Za-z_][\w-]*)\.([A-Za-z_][\w-]*)({_INDEX})(?:\.([A-Za-z_][\w-]*))?')
_MODULE_REF = re.compile(
    rf'module\.([A-Za-z_][\w-]*)({_INDEX})(?:\.([A-Za-z_][\w-]*)(?:\[([0-9]+)\])?)?')
_MODULE_SEGMENT = re.compile(rf'module\.([A-Za-z_][\w-]*)({_INDEX})')
_VAR_REF = re.compile(r'var\.([A-Za-z_][\w-]*)')

# Attributes whose value is a collection of ids: an unknown one becomes a list of Refs.
COLLECTION_ATTRS = frozenset({
    "vpc_zone_identifier", "route_table_ids", "subnet_ids", "security_group_ids",
    "vpc_security_group_ids", "security_groups", "availability_zones", "target_group_arns",
    "load_balancers", "network_interface_ids", "subnets",
    "alarm_actions", "ok_actions",  # an alarm's scaling policies (ASG-003)
})
# The resource types an id attribute can name: picks one of several referenced resources
# (an inline route's gateway_id among the references of all the table's routes).
_GATEWAYS = ("aws_internet_gateway", "aws_vpn_gateway")
_KMS = ("aws_kms_key", "aws_kms_alias", "aws_kms_replica_key")
ATTR_TYPES: dict[str, tuple[str, ...]] = {
    "subnet_id": ("aws_subnet", "aws_default_subnet"),
    "subnet_ids": ("aws_subnet", "aws_default_subnet"),
    "subnets": ("aws_subnet", "aws_default_subnet"),
    "security_group_ids": ("aws_security_group", "aws_default_security_group"),
    "vpc_security_group_ids": ("aws_security_group", "aws_default_security_group"),
    "vpc_zone_identifier": ("aws_subnet", "aws_default_subnet"),
    "vpc_id": ("aws_vpc", "aws_default_vpc"),
    "route_table_id": ("aws_route_table", "aws_default_route_table"),
    "route_table_ids": ("aws_route_table", "aws_default_route_table"),
    "gateway_id": _GATEWAYS,
    "internet_gateway_id": ("aws_internet_gateway",),
    "nat_gateway_id": ("aws_nat_gateway",),
    "vpc_endpoint_id": ("aws_vpc_endpoint",),
    "transit_gateway_id": ("aws_ec2_transit_gateway",),
    "network_interface_id": ("aws_network_interface",),
    "vpc_peering_connection_id": ("aws_vpc_peering_connection",),
    "egress_only_gateway_id": ("aws_egress_only_internet_gateway",),
    "launch_template_id": ("aws_launch_template",),
    "launch_configuration": ("aws_launch_configuration",),
    "kms_key_id": _KMS,
    "volume_kms_key_id": _KMS,
    "key_arn": _KMS,
}

# -- addresses ---------------------------------------------------------------------------------

_SPLIT_CACHE: dict[str, list[tuple[str, str]]] = {}


def _split_module_path(address: str) -> list[tuple[str, str]]:
    """'module.a["x"].module.b' -> [("a", '["x"]'), ("b", "")]."""
    cached = _SPLIT_CACHE.get(address)
    if cached is not None:
        return cached
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(address):
        m = _MODULE_SEGMENT.match(address, pos)
        if m is None:
            break
        out.append((m.group(1), m.group(2)))
        pos = m.end() + 1  # skip the "."
    if len(_SPLIT_CACHE) < 100_000:
        _SPLIT_CACHE[address] = out
    return out


_KEYLESS_CACHE: dict[str, str] = {}


def _keyless(module_address: str) -> str:
    """'module.a["x"].module.b' -> 'module.a.module.b' (the configuration's module path)."""
    cached = _KEYLESS_CACHE.get(module_address)
    if cached is None:
        cached = ".".join(f"module.{name}" for name, _ in _split_module_path(module_address))
        if len(_KEYLESS_CACHE) < 100_000:
            _KEYLESS_CACHE[module_address] = cached
    return cached


def _index_text(key: Any) -> str | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return f"[{key}]"
    if isinstance(key, str):
        return "[" + json.dumps(key) + "]"
    return None


def _strs(refs: Any) -> tuple[str, ...]:
    return tuple(r for r in refs if isinstance(r, str)) if isinstance(refs, list) else ()


def _seq(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _join(module: str, rel: str) -> str:
    return f"{module}.{rel}" if module else rel


def _resource_type(address: str) -> str:
    """'module.a["x"].aws_subnet.b["k"]' -> 'aws_subnet'."""
    if address.endswith("]"):
        address = address[:address.rfind("[")]
    parts = address.rsplit(".", 2)
    return parts[-2] if len(parts) >= 2 else ""


def _plausible(targets: list[Ref], key: str) -> list[Ref]:
    """Of several referenced resources, those of a type the attribute can name (if any)."""
    types = ATTR_TYPES.get(key)
    if not types:
        return targets
    keep = [t for t in targets if _resource_type(t.target) in types
            or (t.attr in ("default_route_table_id", "main_route_table_id")
                and "aws_route_table" in types)]
    return keep or targets


# -- references --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Refs:
    """An expression's references, parsed once (they do not depend on where it is evaluated)."""

    resources: tuple[tuple[str, str, str | None], ...]  # (base, [idx] or "", attr)
    variables: tuple[str, ...]
    outputs: tuple[tuple[str, str, str | None], ...]  # (call, [idx] or "", output or None)
    # (call, [idx] or "", output) -> the literal element index taken of it: `module.a.ids[0]`
    elements: Mapping[tuple[str, str, str], int]
    unresolved: tuple[str, ...]
    count_index: bool
    each_key: bool
    each_value: bool
    each_value_attr: str | None


_REFS_CACHE: dict[tuple[str, ...], _Refs] = {}


def _parse_refs(refs: tuple[str, ...]) -> _Refs:
    cached = _REFS_CACHE.get(refs)
    if cached is not None:
        return cached
    by_base: dict[str, list[tuple[str, str | None]]] = {}
    variables: list[str] = []
    outputs: dict[tuple[str, str], set[str]] = {}
    elements: dict[tuple[str, str, str], int] = {}
    unresolved: list[str] = []
    count_index = each_key = each_value = False
    each_value_attr: str | None = None
    for ref in refs:
        if not isinstance(ref, str) or not ref:
            continue
        head, _, rest = ref.partition(".")
        if head == "count":
            count_index = count_index or rest == "index"
        elif head == "each":
            if rest == "key":
                each_key = True
            elif rest.startswith("value"):
                each_value = True
                if rest.startswith("value.") and each_value_attr is None:
                    each_value_attr = rest[len("value."):].split(".", 1)[0].split("[", 1)[0]
        elif head in ("path", "terraform", "self"):
            continue
        elif head == "var":
            m = _VAR_REF.match(ref)
            if m and m.group(1) not in variables:
                variables.append(m.group(1))
        elif head == "local":
            name = ref.split("[", 1)[0].split(".")[:2]
            if ".".join(name) not in unresolved:
                unresolved.append(".".join(name))
        elif head == "data":
            base = ".".join(ref.split(".")[:3]).split("[", 1)[0]
            if base not in unresolved:
                unresolved.append(base)
        elif head == "module":
            m = _MODULE_REF.match(ref)
            if m:
                outs = outputs.setdefault((m.group(1), m.group(2)), set())
                if m.group(3):
                    outs.add(m.group(3))
                    if m.group(4):
                        elements.setdefault((m.group(1), m.group(2), m.group(3)),
                                            int(m.group(4)))
        else:
            m = _RESOURCE_REF.match(ref)
            if m:
                idx = "" if m.group(3) == "[*]" else m.group(3)
                by_base.setdefault(f"{m.group(1)}.{m.group(2)}", []).append((idx, m.group(4)))
    resources: list[tuple[str, str, str | None]] = []
    for base, entries in by_base.items():
        indexed: dict[str, str | None] = {}
        for idx, attr in entries:
            if idx and indexed.get(idx) is None:
                indexed[idx] = attr
        if indexed:
            resources.extend((base, idx, attr) for idx, attr in indexed.items())
        else:
            resources.append((base, "", next((a for _, a in entries if a), None)))
    out_list: list[tuple[str, str, str | None]] = []
    for (call, idx), names in outputs.items():
        out_list.extend((call, idx, n) for n in sorted(names))
        if not names:
            out_list.append((call, idx, None))
    parsed = _Refs(tuple(resources), tuple(variables), tuple(out_list), elements,
                   tuple(unresolved), count_index, each_key, each_value, each_value_attr)
    if len(_REFS_CACHE) < 100_000:
        _REFS_CACHE[refs] = parsed
    return parsed

