"""The configuration checkov hands one check → one normalized :class:`Resource`.

Terraform: checkov's HCL parser wraps every attribute value in a one-item list and gives nested
blocks as a list of dicts (whose values are wrapped again); it renders variables and locals it
can, and leaves the rest as expression text (``var.x``, ``aws_kms_key.k.arn``, ``${...}``). Those
texts become :class:`Ref` (a reference to another resource, as the HCL source makes it) or
:class:`Unknown` (anything else checkov did not render), never a literal value. The values then go
through :func:`scanner.sources.terraform.translate.translate`, the one mapping of Terraform types.

CloudFormation: the resource's ``Type`` and ``Properties`` with checkov's line markers
(``__startline__``, ``__file__`` …) removed, read by the CloudFormation source as a one-resource
template: references to other resources and unresolved intrinsics become Unknown.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Any

from scanner.model import Provenance, Ref, Resource, SourceKind, Unknown

# Terraform expression text that checkov did not evaluate.
_RESOURCE_REF = re.compile(
    r"^(?P<target>(?:module\.[\w-]+(?:\[[^\]]*\])?\.)*aws_[\w-]+\.[\w-]+"
    r"(?:\[[^\]]*\])?)(?:\.(?P<attr>[\w-]+))?(?:[.\[].*)?$")
_EXPRESSION = re.compile(
    r"^(?:var|local|module|data|each|count|self|path|terraform)\.|\$\{|%\{|"
    r"^[a-z][a-z0-9_]*\(.*\)$|^\[\s*for\s|^\{\s*for\s|\?.*:|"
    # a traversal from a name with an underscore: another provider's resource, or a dynamic
    # block's iterator (``instances_distribution.value.on_demand_base_capacity``); literal
    # values the policies read (instance types, strategies, prices, ARNs) never look like it
    r"^[a-z][a-z0-9]*_[\w-]*(?:\[[^\]]*\])?(?:\.[\w-]+(?:\[[^\]]*\])?)+$|"
    r"^[a-z][\w-]*\.(?:value|key)(?:\.|\[|$)")
_TF_MARKERS = frozenset({"__start_line__", "__end_line__", "__address__", "__provider__",
                         "__resource_type__"})
_CFN_MARKERS = frozenset({"__file__", "__startline__", "__endline__"})
MAX_DEPTH = 64  # nesting budget: deeper configurations are not real resources


class ConfError(ValueError):
    """A configuration that does not have the shape checkov gives (the check says UNKNOWN)."""


def _expression(text: str) -> Any:
    """A string checkov left as expression text → Ref / Unknown; a literal stays itself."""
    inner = text
    if text.startswith("${") and text.endswith("}") and text.count("${") == 1:
        inner = text[2:-1].strip()
    m = _RESOURCE_REF.match(inner)
    if m and not inner.startswith(("var.", "local.", "data.", "each.", "count.", "self.")):
        return Ref(m.group("target"), m.group("attr"))
    if inner is not text or _EXPRESSION.search(text):
        return Unknown(f"checkov did not resolve {text[:80]!r}")
    return text


def _value(value: Any, depth: int) -> Any:
    """An attribute's value (already unwrapped from checkov's one-item list)."""
    if depth > MAX_DEPTH:
        raise ConfError("configuration nested too deeply")
    if isinstance(value, str):
        return _expression(value)
    if isinstance(value, dict):
        return _block(value, depth + 1) if _is_block(value) else {
            str(k): _value(v, depth + 1) for k, v in value.items()
            if str(k) not in _TF_MARKERS}
    if isinstance(value, list):
        return [_value(v, depth + 1) for v in value]
    return value


def _is_block(value: Mapping[str, Any]) -> bool:
    """A nested block (its values wrapped in lists), not a map attribute such as ``tags``."""
    items = [v for k, v in value.items() if k not in _TF_MARKERS]
    return bool(items) and all(isinstance(v, list) for v in items)


def _wrapped(value: Any, depth: int) -> Any:
    """A key of a block: ``[value]`` is an attribute, ``[{..}, {..}]`` several blocks."""
    if isinstance(value, list):
        if len(value) == 1:
            return _value(value[0], depth)
        if value and all(isinstance(v, dict) for v in value):
            return [_block(v, depth + 1) for v in value]
        return [_value(v, depth + 1) for v in value]
    return _value(value, depth)


def _block(conf: Mapping[str, Any], depth: int) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise ConfError("configuration nested too deeply")
    return {str(k): _wrapped(v, depth + 1) for k, v in conf.items() if str(k) not in _TF_MARKERS}


def terraform_values(conf: Mapping[str, Any]) -> dict[str, Any]:
    """checkov's HCL configuration of one resource → values in the shape of a plan's."""
    if not isinstance(conf, Mapping):
        raise ConfError(f"configuration is a {type(conf).__name__}, not a mapping")
    return _block(conf, 0)


def terraform_resource(tf_type: str, conf: Mapping[str, Any], *, file: str | None = None,
                       address: str | None = None) -> Resource | None:
    """The Resource for one Terraform resource checkov hands a check; None for other types."""
    from scanner.sources.terraform.translate import translate

    address = address or str(conf.get("__address__") or f"{tf_type}.this")
    prov = Provenance(SourceKind.TERRAFORM_HCL, file=file, start_line=_line(conf, "__start_line__"),
                      end_line=_line(conf, "__end_line__"))
    found = translate(tf_type, address, terraform_values(conf), provenance=prov,
                      scope=f"checkov:{file or ''}")
    if not found:
        return None
    # checkov expands a count / for_each it can evaluate (the key is gone, the address has
    # its index) and hands the resource unexpanded when it cannot: created or not is unknown
    for key in ("count", "for_each"):
        if key in conf:
            value = conf[key][0] if isinstance(conf[key], list) and conf[key] else conf[key]
            found[0].exists = Unknown(f"checkov did not expand its {key} ({str(value)[:80]!r}): "
                                      "whether it is created is not known")
    return found[0]


def _line(conf: Mapping[str, Any], key: str) -> int | None:
    value = conf.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _strip(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ConfError("configuration nested too deeply")
    if isinstance(value, dict):
        return {k: _strip(v, depth + 1) for k, v in value.items() if k not in _CFN_MARKERS}
    if isinstance(value, list):
        return [_strip(v, depth + 1) for v in value]
    return value


def cloudformation_resource(conf: Mapping[str, Any], *, logical_id: str = "Resource",
                            file: str | None = None) -> Resource | None:
    """The Resource for one CloudFormation resource checkov hands a check; None for types the
    resource model does not have."""
    from scanner.sources.cloudformation.reader import read_parsed_template

    if not isinstance(conf, Mapping) or not isinstance(conf.get("Type"), str):
        raise ConfError("resource has no Type")
    props = conf.get("Properties")
    body: dict[str, Any] = {"Type": conf["Type"]}
    if isinstance(props, Mapping):
        cleaned = _strip(dict(props), 0)
        if cleaned.get("resource_type") == conf["Type"]:
            del cleaned["resource_type"]  # checkov's own marker beside the line numbers
        body["Properties"] = cleaned
    elif props is not None:
        raise ConfError("Properties is not a mapping")
    where = file or "checkov"
    result = read_parsed_template({"Resources": {logical_id: body}}, where)
    if result.errors:
        raise ConfError(result.errors[0].reason)
    if not result.resources:
        return None
    r = result.resources[0]
    marks = props if isinstance(props, Mapping) else {}  # checkov puts them in Properties
    r.exists = _created(marks.get("__file__") or file, logical_id)
    r.provenance = Provenance(SourceKind.CLOUDFORMATION, file=file,
                              start_line=_line(conf, "__startline__") or _line(marks,
                                                                               "__startline__"),
                              end_line=_line(conf, "__endline__") or _line(marks, "__endline__"))
    return r


def _created(file: Any, logical_id: str) -> bool | Unknown:
    """Whether the template creates the resource. checkov does not hand a check the resource's
    ``Condition``: it is read from the template file (``__file__``, as checkov opened it) with
    gpuaudit's own CloudFormation source, which decides the conditions it can."""
    if not isinstance(file, str) or not file:
        return Unknown("the template file is not known, so neither is the resource's Condition")
    try:
        stat = os.stat(file)
    except OSError:
        return Unknown(f"cannot read {file} for the resource's Condition")
    return _created_in(file, stat.st_mtime_ns, stat.st_size, logical_id)


@functools.lru_cache(maxsize=256)
def _created_in(file: str, mtime_ns: int, size: int, logical_id: str) -> bool | Unknown:
    template = _template(file, mtime_ns, size)
    if template is None:
        return Unknown(f"cannot read {file} for the resource's Condition")
    for resource in template.resources:
        if resource.id == logical_id:
            exists: bool | Unknown = resource.exists  # a Resource's (template is Any here)
            return exists
    return Unknown(f"{logical_id} is not created (its Condition is false), or gpuaudit does not "
                   f"read it from {file}")


@functools.lru_cache(maxsize=16)
def _template(file: str, mtime_ns: int, size: int) -> Any:
    """gpuaudit's reading of the template (the arguments after ``file`` key the cache)."""
    from pathlib import Path

    from scanner.sources.cloudformation.reader import load_template

    result = load_template(Path(file))
    return None if result.errors and not result.resources else result
