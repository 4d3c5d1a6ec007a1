"""Terraform plan JSON (`terraform show -json PLAN`) -> normalized Resources.

Resources come from ``planned_values`` (root and child modules; addresses such as
``module.x.aws_y.z`` with ``[key]`` for count/for_each instances). Terraform leaves every value
that is known only after apply out of the planned values (its ``omitUnknowns``: an unknown object
attribute is omitted, an unknown list element becomes null; ``after_unknown`` in
``resource_changes`` marks the same values). For each such value this source asks the plan's
``configuration`` section:

- not configured (no expression for it): the provider computes it, i.e. the AWS default applies,
  so it stays absent (e.g. no spot allocation strategy = lowest-price);
- configured with references to other resources: a :class:`Ref` to the full address
  (module path included; ``aws_subnet.a[*].id`` and ``[for s in aws_subnet.a : s.id]`` name every
  instance: ``Ref("aws_subnet.a")``), following module input variables up to the module call and
  module outputs down to their expressions;
- anything else (locals, data sources, several resources for one value): UNKNOWN with a reason.

``aws_subnet.a[count.index]`` / ``[each.key]`` / ``each.value`` of a ``for_each`` over another
resource are narrowed to the instance with the same key when that instance exists in the plan
(the plan keeps only the references, not the expression: this is the one inference made).
Blocks written with ``dynamic`` are missing from the configuration section: with the ``.tf``
source at hand, the names a dynamic block sets are read from it (a plain reference such as
``var.kms_key_arn`` is followed); without it, the attributes policies read in such a block
(:data:`BLOCK_KEYS`) stay UNKNOWN when absent.

Because of this, only ``planned_values`` and ``configuration`` are needed: terraform writes the
top-level keys in a fixed order, so the reader decodes those two (and the small keys) and skips
``resource_changes`` / ``prior_state`` (more than half of a large plan). When the layout is not
terraform's, the whole document is decoded. The cyclic GC is paused while loading.

Locations: when the plan sits beside its ``.tf`` files (or ``source_dir`` says where they are),
findings point at the ``resource`` block there (root module and local child modules, plus modules
installed by ``terraform init``); otherwise at the plan file and the line of the resource's
address in it (line 1 for terraform's one-line JSON). Inline ``# gpuaudit:skip=ID:reason``
comments are read from the located blocks.

Stdlib only: the pre-commit path imports this.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.catalog import region_name
from scanner.inputs.numbers import NOT_FINITE
from scanner.inputs.safe_read import ReadError, decode_text, read_regular
from scanner.kinds import schema
from scanner.model import (
    Gap,
    InputError,
    Notice,
    Provenance,
    Ref,
    Resource,
    SourceKind,
    SourceResult,
    Unknown,
)
from scanner.sources.terraform.plan.locate import (
    Block,
    SourceIndex,
    has_tf_files,
    installed_modules,
)
from scanner.sources.terraform.translate import SUPPORTED_TYPES, merge_ebs_defaults, translate

SNIFF_BYTES = 4096
_KEY_AFTER_VERSION = re.compile(
    r'"terraform_version"\s*:\s*"[^"]*"\s*,\s*"(variables|planned_values|resource_changes|'
    r'resource_drift|prior_state|output_changes|relevant_attributes|configuration)"')
_PLAN_KEY = re.compile(r'"(planned_values|resource_changes)"\s*:')
_ADDRESS = re.compile(r'"address"\s*:\s*"((?:[^"\\]|\\.)*)"')
_INDEX = r'(?:\[(?:"(?:[^"\\]|\\.)*"|[^\]]*)\])?'
_RESOURCE_REF = re.compile(
    rf'([A-Za-z_][\w-]*)\.([A-Za-z_][\w-]*)({_INDEX})(?:\.([A-Za-z_][\w-]*))?')
_MODULE_REF = re.compile(
    rf'module\.([A-Za-z_][\w-]*)({_INDEX})(?:\.([A-Za-z_][\w-]*)(?:\[([0-9]+)\])?)?')
_MODULE_SEGMENT = re.compile(rf'module\.([A-Za-z_][\w-]*)({_INDEX})')
_VAR_REF = re.compile(r'var\.([A-Za-z_][\w-]*)')
_WS = re.compile(r"[ \t\r\n]*")

# Attributes whose value is a collection of ids: an unknown one becomes a list of Refs.
COLLECTION_ATTRS = frozenset({
    "vpc_zone_identifier", "route_table_ids", "subnet_ids", "security_group_ids",
    "vpc_security_group_ids", "security_groups", "availability_zones", "target_group_arns",
    "load_balancers", "network_interface_ids", "subnets",
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
_ROUTE_KEYS = ("gateway_id", "nat_gateway_id", "vpc_endpoint_id", "transit_gateway_id",
               "network_interface_id", "vpc_peering_connection_id", "egress_only_gateway_id")
# Object-typed attributes configured as one expression (terraform's "attributes as blocks"):
# the member attributes that, absent from a planned element, are unknown until apply.
OBJECT_KEYS: dict[str, tuple[str, ...]] = {"route": _ROUTE_KEYS}
# Per Terraform type, its nested blocks and the attributes policies read in them (declared with
# each kind, scanner/kinds): absent from a block that a `dynamic` block produced (and the .tf is
# not at hand), such an attribute is unknown until apply.
BLOCK_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    tf_type: dict(tf.blocks) for tf_type, (_kind, tf) in schema().terraform.items()}
_NO_BLOCKS: dict[str, tuple[str, ...]] = {}
_NO_EXPRESSIONS: dict[str, Any] = {}  # one object: expression blocks are cached by id()
MAX_DEPTH = 16
MAX_MODULE_DEPTH = 100  # modules nested deeper than this are an input error
MAX_CONFIG_MODULES = 10_000
MAX_PLAN_BYTES = 2 << 30
# Top-level members that are not needed (after_unknown's information is in planned_values).
_SKIPPABLE = frozenset({"resource_changes", "resource_drift", "output_changes", "prior_state"})


def looks_like_plan(head: str) -> bool:
    """Does this text look like `terraform show -json` of a plan?

    Rule: the head (the first bytes of the file; scan.py reads 64 KB, the first 4 KB suffice for
    terraform's own output) mentions ``"format_version"``, and either ``"planned_values"`` or
    ``"resource_changes"`` appears as a key in it, or the key right after ``"terraform_version"``
    is one only plans have (``variables``, ``planned_values``, ``resource_changes``,
    ``prior_state`` …): terraform writes ``format_version`` and ``terraform_version`` first, and
    a long ``variables`` section may push ``planned_values`` far into the file. A state file
    (``"values"`` after ``terraform_version``) is not a plan.
    """
    if '"format_version"' not in head:
        return False
    if _PLAN_KEY.search(head):
        return True
    return bool(_KEY_AFTER_VERSION.search(head[:SNIFF_BYTES]))


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


@dataclass
class _Ctx:
    """Where an expression is evaluated: a module instance, and the instance key in scope."""

    module: str  # module instance address, "" for root
    key: Any = None  # count.index / each.key of the resource or module call
    for_each: Any = None  # the for_each_expression of that resource or module call
    dynamic: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # from the .tf
    tf_type: str = ""
    picks: Mapping[str, tuple[str, int]] = field(default_factory=dict)  # from the .tf


@dataclass
class _ConfigModule:
    body: dict[str, Any]
    parent: str | None  # keyless path of the parent module
    call: dict[str, Any] | None  # the module call block in the parent
    resources: dict[tuple[str, str], dict[str, Any]] | None = None

    def resource(self, tf_type: str, name: str) -> dict[str, Any] | None:
        if self.resources is None:
            self.resources = {}
            for r in _seq(self.body.get("resources")):
                if isinstance(r, dict) and r.get("mode", "managed") == "managed":
                    self.resources[(str(r.get("type")), str(r.get("name")))] = r
        return self.resources.get((tf_type, name))


Targets = tuple[list[Ref], list[str]]


@dataclass
class _Plan:
    """The parsed plan and the lookups built from it."""

    config: dict[str, _ConfigModule]
    addresses: set[str]
    module_instances: dict[tuple[str, str], list[str]]  # (parent instance, call) -> instances
    unknown: int = 0
    example: str = ""
    memo: dict[tuple[Any, ...], Targets] = field(default_factory=dict)
    shapes: dict[int, Any] = field(default_factory=dict)  # id(expressions) -> _shape()
    # id(references list of the parsed plan, alive during the load) -> its strings
    strs: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def one_instance(self, ref: Ref, key: str, ctx: _Ctx) -> Any:
        """A single value naming a resource with count/for_each without saying which instance
        (`aws_subnet.a.*.id[0]` keeps only `aws_subnet.a` in the plan): the instance the .tf
        source picks by a literal index, else the reference to every instance (any of them)."""
        if ref.target in self.addresses:
            return ref
        pick = ctx.picks.get(key)
        if pick is not None and _join(ctx.module, pick[0]) == ref.target:
            chosen = f"{ref.target}[{pick[1]}]"
            if chosen in self.addresses:
                return Ref(chosen, ref.attr)
        return ref

    def targets(self, refs: tuple[str, ...], ctx: _Ctx, depth: int = 0) -> Targets:
        """Resources named by an expression's references, and the references not followed."""
        if depth > MAX_DEPTH:
            return [], ["a reference chain too deep to follow"]
        p = _parse_refs(refs)
        found: dict[str, str | None] = {}
        unresolved = list(p.unresolved)
        for name in p.variables:
            self._merge(found, unresolved, self.follow_var(name, ctx, depth))
        for call, idx, output in p.outputs:
            if output is None:
                unresolved.append(f"module.{call}{idx}")
            else:
                got = self.follow_output(call, idx, output, ctx, depth)
                element = p.elements.get((call, idx, output))
                if element is None and p.count_index and isinstance(ctx.key, int) \
                        and len(p.outputs) == 1 and not p.resources:
                    element = ctx.key  # `element(module.a.ids, count.index)`, `[count.index]`
                if element is not None:
                    got = self._element(got, element)
                self._merge(found, unresolved, got)
        for base, idx, attr in p.resources:
            target = _join(ctx.module, base + idx) if idx else \
                self._narrow(base, ctx, p.count_index, p.each_key)
            if found.get(target) is None:
                found[target] = attr
        if p.each_value:
            narrowed = self._each_value(ctx, p.each_value_attr)
            if narrowed is None:
                unresolved.append("each.value")
            else:
                found.setdefault(narrowed.target, narrowed.attr)
        return [Ref(t, a) for t, a in found.items()], unresolved

    def _shape(self, exprs: Mapping[str, Any]) -> tuple[list[tuple[str, Any]],
                                                       list[tuple[str, list[dict[str, Any]]]]]:
        """The attributes an expression block can leave unknown (all but constants), and its
        nested blocks; once per configuration block (instances share it)."""
        cached = self.shapes.get(id(exprs))
        if cached is None:
            leaves = [(k, e) for k, e in exprs.items()
                      if isinstance(e, dict) and "constant_value" not in e]
            blocks = [(k, [b for b in e if isinstance(b, dict)]) for k, e in exprs.items()
                      if isinstance(e, list)]
            cached = self.shapes[id(exprs)] = (leaves, blocks)
        return cached

    def _element(self, got: Targets, element: int) -> Targets:
        """Element N of a module output that lists one counted resource (``aws_subnet.a.*.id``):
        that resource's instance N, when it exists; else the output as it is."""
        refs, unresolved = got
        if len(refs) != 1 or unresolved or refs[0].target in self.addresses:
            return got
        chosen = f"{refs[0].target}[{element}]"
        if chosen not in self.addresses:
            return got
        return [Ref(chosen, refs[0].attr)], []

    @staticmethod
    def _merge(found: dict[str, str | None], unresolved: list[str], got: Targets) -> None:
        for r in got[0]:
            found.setdefault(r.target, r.attr)
        unresolved.extend(got[1])

    def _narrow(self, base: str, ctx: _Ctx, count_index: bool, each_key: bool) -> str:
        """`base[count.index]` / `base[each.key]`: the instance with this key, when it exists."""
        if (count_index and isinstance(ctx.key, int)) or (each_key and isinstance(ctx.key, str)):
            idx = _index_text(ctx.key)
            if idx is not None:
                candidate = _join(ctx.module, base + idx)
                if candidate in self.addresses:
                    return candidate
        return _join(ctx.module, base)

    def _each_value(self, ctx: _Ctx, attr: str | None) -> Ref | None:
        """`each.value[.attr]` of a for_each over one other resource: that resource's instance."""
        expr = ctx.for_each
        idx = _index_text(ctx.key)
        if not isinstance(expr, dict) or idx is None:
            return None
        refs = expr.get("references")
        if not isinstance(refs, list) or len(refs) > 2:
            return None
        p = _parse_refs(_strs(refs))
        if len(p.resources) != 1 or p.variables or p.outputs or p.unresolved or p.resources[0][1]:
            return None
        candidate = _join(ctx.module, p.resources[0][0] + idx)
        return Ref(candidate, attr) if candidate in self.addresses else None

    def follow_var(self, name: str, ctx: _Ctx, depth: int) -> Targets:
        """A module input variable: the expression the module call gives it, in the parent."""
        if not ctx.module:
            return [], []  # root variables are known in a plan: never the unknown part
        memo_key = ("var", ctx.module, name)
        cached = self.memo.get(memo_key)
        if cached is not None:
            return cached
        segments = _split_module_path(ctx.module)
        result: Targets = [], [f"var.{name}"]
        cfg = self.config.get(_keyless(ctx.module))
        call = cfg.call if cfg is not None else None
        if segments and call is not None:
            call_idx = segments[-1][1]
            parent = ".".join(f"module.{n}{i}" for n, i in segments[:-1])
            expr = _map(call.get("expressions")).get(name)
            refs = expr.get("references") if isinstance(expr, dict) else None
            if not refs:
                result = [], []  # a constant or the variable's default: known
            else:
                key: Any = None
                if call_idx:
                    try:
                        key = json.loads(call_idx[1:-1])
                    except ValueError:
                        key = None
                parent_ctx = _Ctx(parent, key, call.get("for_each_expression"))
                result = self.targets(_strs(refs), parent_ctx, depth + 1)
        self.memo[memo_key] = result
        return result

    def follow_output(self, call: str, idx: str, output: str, ctx: _Ctx, depth: int) -> Targets:
        """`module.call[idx].output`: the output's expression inside the module instance(s)."""
        child_keyless = _join(_keyless(ctx.module), f"module.{call}")
        cfg = self.config.get(child_keyless)
        label = f"module.{call}{idx}.{output}"
        out_def = _map(cfg.body.get("outputs")).get(output) if cfg is not None else None
        expr = out_def.get("expression") if isinstance(out_def, dict) else None
        refs = expr.get("references") if isinstance(expr, dict) else None
        if not isinstance(refs, list):
            return [], [label]
        prefix = _join(ctx.module, f"module.{call}")
        if idx:
            instances = [prefix + idx]
        else:
            instances = self.module_instances.get((ctx.module, call)) or [prefix]
        found: dict[str, str | None] = {}
        unresolved: list[str] = []
        for inst in instances:
            memo_key = ("out", inst, output)
            got = self.memo.get(memo_key)
            if got is None:
                got = self.targets(_strs(refs), _Ctx(inst), depth + 1)
                self.memo[memo_key] = got
            self._merge(found, unresolved, got)
        return [Ref(t, a) for t, a in found.items()], unresolved

    def resolve(self, expr: Mapping[str, Any], key: str, ctx: _Ctx) -> Any:
        """The value of a configured attribute that is known only after apply."""
        refs = expr.get("references")
        if not isinstance(refs, list) or not refs:
            return Unknown("computed at apply time")
        strs = self.strs.get(id(refs))  # instances share their configuration's lists
        if strs is None:
            strs = self.strs[id(refs)] = _strs(refs)
        return self.resolve_refs(strs, key, ctx)

    def resolve_refs(self, refs: tuple[str, ...], key: str, ctx: _Ctx) -> Any:
        """The value of an attribute known only after apply, from its expression's references."""
        if not refs:
            return Unknown("computed at apply time")
        targets, unresolved = self.targets(refs, ctx)
        if len(targets) > 1:
            targets = _plausible(targets, key)
        if not targets and not unresolved:
            return Unknown("computed at apply time")
        if key in COLLECTION_ATTRS:
            out: list[Any] = list(targets)
            if unresolved:
                out.append(Unknown(f"depends on {', '.join(unresolved[:3])}"))
            return out
        if len(targets) == 1 and not unresolved:
            return self.one_instance(targets[0], key, ctx)
        if unresolved:
            return Unknown(f"depends on {', '.join(unresolved[:3])}")
        return Unknown("refers to several resources: " + ", ".join(str(t) for t in targets[:3]))

    # -- filling in what apply will know -------------------------------------------------------

    def fill(self, values: dict[str, Any], exprs: Mapping[str, Any], ctx: _Ctx,
             where: str) -> None:
        """Configured values absent from the planned values are known only after apply."""
        leaves, blocks = self._shape(exprs)
        for key, e in leaves:
            if key not in values:
                self._set(values, key, self.resolve(e, key, ctx), where)
                continue
            value = values[key]
            if isinstance(value, list) and value and e.get("references"):
                if key in COLLECTION_ATTRS and any(v is None for v in value):
                    resolved = self.resolve(e, key, ctx)
                    extra = resolved if isinstance(resolved, list) else [resolved]
                    self._set(values, key, [v for v in value if v is not None] + extra, where)
                elif key in OBJECT_KEYS:
                    for item in value:
                        if isinstance(item, dict):
                            for k in OBJECT_KEYS[key]:
                                if k not in item:
                                    self._set(item, k, self.resolve(e, k, ctx), where)
                else:
                    self._fill_object(value, e, key, ctx, where)
            elif isinstance(value, dict) and value and e.get("references"):
                self._fill_object(value, e, key, ctx, where)
        for key, cfg_blocks in blocks:
            value = values.get(key)
            if key not in values:
                self._set(values, key, Unknown("known only after apply"), where)
            elif isinstance(value, list) and value:
                self._fill_blocks(value, key, cfg_blocks, ctx, where)
        self._dynamic(values, exprs, ctx, where)

    def _fill_object(self, value: Any, expr: Mapping[str, Any], key: str, ctx: _Ctx,
                     where: str, depth: int = 0) -> None:
        """An object (or list of objects) attribute set by one expression, e.g. awscc's
        ``vpc_config = {security_group_ids = [...], subnets = [...]}``: terraform writes its
        known leaves and leaves out (objects) or nulls (lists) those known only after apply.
        Each such leaf is filled on its own, the known ones stay: an id list's unknown
        elements become the expression's references of a type the member can name
        (``subnets`` -> aws_subnet), else UNKNOWN."""
        if depth > MAX_DEPTH:
            return
        if isinstance(value, list):
            for item in value:
                if isinstance(item, (dict, list)):
                    self._fill_object(item, expr, key, ctx, where, depth + 1)
            return
        if not isinstance(value, dict):
            return
        for k, v in list(value.items()):
            if isinstance(v, list) and any(x is None for x in v):
                self._set(value, k, [x for x in v if x is not None]
                          + self._elements(expr, k, ctx), where)
            elif isinstance(v, (dict, list)):
                self._fill_object(v, expr, k, ctx, where, depth + 1)
        for k in BLOCK_KEYS.get(ctx.tf_type, _NO_BLOCKS).get(key, ()):
            if k not in value:  # an object member terraform left out: known after apply
                self._set(value, k, self._elements(expr, k, ctx) if k in COLLECTION_ATTRS
                          else self._member(expr, k, ctx), where)

    def _member(self, expr: Mapping[str, Any], key: str, ctx: _Ctx) -> Any:
        """An object member known only after apply: the one resource of a type it can name
        among the expression's references, else UNKNOWN naming the member."""
        types = ATTR_TYPES.get(key)
        refs = expr.get("references")
        if types and isinstance(refs, list):
            targets, unresolved = self.targets(_strs(refs), ctx)
            found = [t for t in targets if _resource_type(t.target) in types]
            if len(found) == 1 and not unresolved:
                return found[0]
        return Unknown(f"{key}: known only after apply")

    def _elements(self, expr: Mapping[str, Any], key: str, ctx: _Ctx) -> list[Any]:
        """The unknown elements of an id list inside an object: the resources of a type the
        member can name among the expression's references (any of them), else UNKNOWN."""
        types = ATTR_TYPES.get(key)
        refs = expr.get("references")
        if types and isinstance(refs, list):
            targets, unresolved = self.targets(_strs(refs), ctx)
            found: list[Any] = [t for t in targets if _resource_type(t.target) in types]
            if found:
                if unresolved:
                    found.append(Unknown(f"{key}: depends on {', '.join(unresolved[:3])}"))
                return found
        return [Unknown(f"{key}: known only after apply")]

    def _fill_blocks(self, items: list[Any], key: str, blocks: list[dict[str, Any]], ctx: _Ctx,
                     where: str) -> None:
        n = len(items)
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            cfg = _pair(blocks, item, i, n)
            if cfg is None:  # static and dynamic blocks mixed: cannot pair them
                self._fill_dynamic(item, key, ctx.dynamic.get(key), ctx, where)
            else:
                self.fill(item, cfg, ctx, where)

    def _dynamic(self, values: dict[str, Any], exprs: Mapping[str, Any], ctx: _Ctx,
                 where: str) -> None:
        """Blocks in the plan that the configuration does not list: written with `dynamic`."""
        names = values.keys() & BLOCK_KEYS.get(ctx.tf_type, _NO_BLOCKS).keys()
        if ctx.dynamic:
            names |= values.keys() & ctx.dynamic.keys()
        for name in names:
            if name in exprs:
                continue
            items = values.get(name)
            if isinstance(items, list) and items:
                for item in items:
                    if isinstance(item, dict):
                        self._fill_dynamic(item, name, ctx.dynamic.get(name), ctx, where)

    def _fill_dynamic(self, item: dict[str, Any], name: str, sets: Mapping[str, Any] | None,
                      ctx: _Ctx, where: str) -> None:
        """One block made by `dynamic`. `sets`: what its content sets, from the .tf
        ({name: plain reference or None, block name: {...}}); without it, BLOCK_KEYS."""
        if sets is not None:
            for k, v in sets.items():
                sub = item.get(k)
                if isinstance(v, dict):  # a nested block
                    for s in sub if isinstance(sub, list) else ():
                        if isinstance(s, dict):
                            self._fill_dynamic(s, k, v, ctx, where)
                elif k not in item:
                    value = (self.resolve_refs((v,), k, ctx) if isinstance(v, str)
                             else Unknown("set in a dynamic block, known only after apply"))
                    self._set(item, k, value, where)
            return
        blocks = BLOCK_KEYS.get(ctx.tf_type, _NO_BLOCKS)
        for k in blocks.get(name, ()):
            if k not in item:
                self._set(item, k, Unknown("set in a dynamic block, known only after apply"),
                          where)
        for k, sub in item.items():
            if k in blocks and isinstance(sub, list):
                for s in sub:
                    if isinstance(s, dict):
                        self._fill_dynamic(s, k, None, ctx, where)

    def _set(self, target: dict[str, Any], key: str, value: Any, where: str) -> None:
        target[key] = value
        if isinstance(value, Unknown) or (isinstance(value, list)
                                          and any(isinstance(v, Unknown) for v in value)):
            self.unknown += 1
            if not self.example:
                reason = value.reason if isinstance(value, Unknown) else "an element is unknown"
                self.example = f"{where} {key}: {reason}"


def _pair(blocks: list[dict[str, Any]], item: dict[str, Any], i: int,
          n: int) -> dict[str, Any] | None:
    """The configuration of the i-th of n planned blocks (None: cannot tell)."""
    if len(blocks) != n:
        return None
    if n == 1:
        return blocks[0]
    # Sets may reorder blocks: pair on the constants each block sets.
    matches = [b for b in blocks if all(
        not isinstance(e, dict) or "constant_value" not in e
        or item.get(k) == e["constant_value"] for k, e in b.items())]
    return matches[0] if len(matches) == 1 else blocks[i]


# -- configuration -------------------------------------------------------------------------------


def _config_modules(configuration: Any, errors: list[InputError] | None = None,
                    spath: str = "") -> dict[str, _ConfigModule]:
    out: dict[str, _ConfigModule] = {}
    root = configuration.get("root_module") if isinstance(configuration, dict) else None
    if not isinstance(root, dict):
        return out
    stack: list[tuple[str, dict[str, Any], str | None, dict[str, Any] | None]] = [
        ("", root, None, None)]
    dropped: list[str] = []
    while stack:
        path, body, parent, call = stack.pop()
        out[path] = _ConfigModule(body, parent, call)
        calls = body.get("module_calls")
        if not isinstance(calls, dict):
            continue
        if len(out) >= MAX_CONFIG_MODULES or path.count("module.") >= MAX_MODULE_DEPTH:
            dropped.append(path or "the root module")
            continue
        for name, c in calls.items():
            if isinstance(c, dict) and isinstance(c.get("module"), dict):
                stack.append((_join(path, f"module.{name}"), c["module"], path, c))
    if dropped and errors is not None:
        errors.append(InputError(spath, f"malformed Terraform plan: the configuration has more "
                                        f"than {MAX_CONFIG_MODULES:,} modules or modules nested "
                                        f"more than {MAX_MODULE_DEPTH} deep; the module calls of "
                                        f"{dropped[0]} are not read"))
    return out


def _module_dirs(config: dict[str, _ConfigModule], root: Path,
                 notices: list[Notice], plan_path: str) -> dict[str, Path]:
    dirs: dict[str, Path] = {"": root}
    installed: dict[str, Path] | None = None
    for path in sorted(config, key=lambda p: p.count("module.")):
        if not path:
            continue
        cm = config[path]
        parent_dir = dirs.get(cm.parent or "")
        source = cm.call.get("source") if cm.call else None
        if isinstance(source, str) and source.startswith(("./", "../")) and parent_dir:
            dirs[path] = parent_dir / source
            continue
        if installed is None:
            installed = installed_modules(root)
        key = ".".join(n for n, _ in _split_module_path(path))
        if key in installed:
            dirs[path] = installed[key]
        else:
            notices.append(Notice(plan_path, f"{path} (source {source!r}) is not available "
                                             "locally: its findings point into the plan"))
    return dirs


# -- reading -----------------------------------------------------------------------------------


def _skip_ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _members(text: str, i: int, dec: json.JSONDecoder, out: dict[str, Any],
             stop: frozenset[str]) -> tuple[int, str | None]:
    """Decode `"key": value` members of the top-level object from i (just after "{" or ",").

    Returns (index, key) of the first member whose key is in `stop` (value not decoded), or
    (index after the closing "}", None)."""
    first = True
    while True:
        i = _skip_ws(text, i)
        if text.startswith("}", i):
            return i + 1, None
        if not first:
            if not text.startswith(",", i):
                raise ValueError("expected ','")
            i = _skip_ws(text, i + 1)
        first = False
        key, j = dec.raw_decode(text, i)
        if not isinstance(key, str):
            raise ValueError("expected a key")
        j = _skip_ws(text, j)
        if not text.startswith(":", j):
            raise ValueError("expected ':'")
        if key in stop:
            return i, key
        out[key], i = dec.raw_decode(text, _skip_ws(text, j + 1))


def _decode_fast(text: str) -> dict[str, Any] | None:
    """planned_values, configuration and the small members, without the skippable ones.

    Walks the top-level object from the start until a skippable member (after planned_values),
    then resumes at the last `"configuration"` key, which is checked to be top-level: the rest of
    the text must decode as members up to the closing brace and the end. None: not this layout.
    """
    dec = json.JSONDecoder(parse_constant=_constant)
    out: dict[str, Any] = {}
    i = _skip_ws(text, 0)
    if not text.startswith("{", i):
        return None
    i, key = _members(text, i + 1, dec, out, _SKIPPABLE)
    if key is None:
        return out if text[i:].strip() == "" else None  # nothing to skip: all decoded
    if "planned_values" not in out:
        return None
    end = len(text)
    for _ in range(8):
        k = text.rfind('"configuration"', i, end)
        if k < 0:
            return None
        end = k
        b = k - 1
        while b > i and text[b] in " \t\r\n":
            b -= 1
        if text[b] != ",":
            continue
        tail: dict[str, Any] = {}
        try:
            j, stop = _members(text, k, dec, tail, frozenset())
        except ValueError:
            continue
        if stop is None and text[j:].strip() == "" and "configuration" in tail:
            out.update(tail)
            return out
    return None


def _constant(name: str) -> Unknown:
    """NaN, Infinity, -Infinity: not JSON, but Python's json module accepts them."""
    return Unknown(f"{NOT_FINITE} ({name})")


def _read(path: Path) -> tuple[dict[str, Any], str] | InputError:
    spath = str(path)
    try:
        data = read_regular(path, limit=MAX_PLAN_BYTES)
    except ReadError as exc:
        return InputError(spath, f"cannot read: {exc.reason}")
    if data.startswith(b"PK\x03\x04"):
        return InputError(spath, "a binary Terraform plan file, not JSON: convert it with "
                                 "`terraform show -json PLANFILE > plan.json`")
    try:
        text = decode_text(data)  # UTF-8; UTF-16 from PowerShell's `>`
    except UnicodeDecodeError as exc:
        if b"\x00" in data[:8192]:
            return InputError(spath, "a binary file, not a Terraform plan JSON")
        return InputError(spath, f"not {exc.encoding.upper()} text: {exc.reason}",
                          line=data.count(b"\n", 0, exc.start) + 1)
    del data
    if "\x00" in text[:8192]:
        return InputError(spath, "a binary file, not a Terraform plan JSON")
    if not text.strip():
        return InputError(spath, "empty file, not a Terraform plan")
    doc: Any = None
    try:
        doc = _decode_fast(text)
    except (ValueError, RecursionError):
        doc = None
    if doc is None:
        try:
            doc = json.loads(text, parse_constant=_constant)
        except json.JSONDecodeError as exc:
            truncated = " (truncated?)" if exc.pos >= len(text.rstrip()) else ""
            return InputError(spath, f"invalid JSON: {exc.msg}{truncated}", line=exc.lineno)
        except RecursionError:
            return InputError(spath, "invalid JSON: nested too deeply")
        except ValueError as exc:  # an integer of more than 4,300 digits
            return InputError(spath, f"invalid JSON: {str(exc).split(';')[0]}")
    if not isinstance(doc, dict) or "format_version" not in doc:
        return InputError(spath, "not a Terraform plan: no format_version")
    if "planned_values" not in doc and "resource_changes" not in doc:
        what = " (a state file?)" if "values" in doc else ""
        return InputError(spath, f"not a Terraform plan: no planned_values{what}")
    version = doc.get("format_version")
    if not isinstance(version, str) or not version.startswith("1."):
        return InputError(spath, f"unsupported plan format_version {version!r} (expected 1.x)")
    return doc, text


def load_plan(path: Path, *, source_dir: Path | None = None) -> SourceResult:
    """Read one plan JSON file. Bad input becomes an InputError in the result, never raises."""
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects, freed at once: the cyclic GC only slows it down
    try:
        result = SourceResult()
        read = _read(path)
        if isinstance(read, InputError):
            result.errors.append(read)
            return result
        doc, text = read
        try:
            _load(path, doc, text, source_dir, result)
        except (TypeError, AttributeError, KeyError, ValueError, IndexError,
                RecursionError) as exc:
            result.resources.clear()
            result.errors.append(InputError(str(path), f"malformed Terraform plan: "
                                                       f"{type(exc).__name__}: {exc}"))
        return result
    finally:
        if was_enabled:
            gc.enable()


def _iter_planned(root: Any, problems: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(module instance address, resource) for every planned resource, child modules included.
    What does not have the shape terraform writes is added to ``problems`` (naming the key)."""
    stack: list[tuple[Any, str, int]] = [(root, "planned_values.root_module", 0)]
    while stack:
        module, key, depth = stack.pop()
        if not isinstance(module, dict):
            problems.append(f"{key} is {_json_type(module)}, not an object")
            continue
        if depth > MAX_MODULE_DEPTH:
            problems.append(f"{key}: modules nested more than {MAX_MODULE_DEPTH} deep are not "
                            "read")
            continue
        address = module.get("address") if depth else ""
        address = address if isinstance(address, str) else ""
        resources = module.get("resources", [])
        if not isinstance(resources, list):
            problems.append(f"{key}.resources is {_json_type(resources)}, not a list")
            resources = []
        for i, r in enumerate(resources):
            if isinstance(r, dict):
                yield address, r
            else:
                problems.append(f"{key}.resources[{i}] is {_json_type(r)}, not an object")
        children = module.get("child_modules", [])
        if not isinstance(children, list):
            problems.append(f"{key}.child_modules is {_json_type(children)}, not a list")
            continue
        for i in range(len(children) - 1, -1, -1):
            stack.append((children[i], f"{key}.child_modules[{i}]", depth + 1))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "not JSON"


def _from_changes(changes: Any, problems: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """A plan without planned_values: the `after` of each resource change."""
    out: list[tuple[str, dict[str, Any]]] = []
    if not isinstance(changes, list):
        problems.append(f"resource_changes is {_json_type(changes)}, not a list")
        return out
    for i, rc in enumerate(changes):
        if not isinstance(rc, dict):
            problems.append(f"resource_changes[{i}] is {_json_type(rc)}, not an object")
            continue
        if "deposed" in rc:
            continue
        change = rc.get("change")
        after = change.get("after") if isinstance(change, dict) else None
        if isinstance(after, dict):
            module = rc.get("module_address")
            marks = change.get("after_sensitive") if isinstance(change, dict) else None
            out.append((module if isinstance(module, str) else "",
                        {**rc, "values": after, "sensitive_values": marks}))
    return out


# -- sensitive values ----------------------------------------------------------------------------


def _sensitive(value: Any, marks: Any, out: set[str]) -> None:
    """Add to ``out`` the text of every value that ``marks`` (terraform's ``sensitive_values``
    shape: ``true`` for a sensitive value, objects and lists mirroring the value) marks."""
    if not marks:
        return  # most resources: {} or only empty objects and lists
    short: set[Any] = set()
    stack = [(value, marks)]
    while stack:
        cur, mark = stack.pop()
        if mark is True:
            _all_text(cur, out)
        elif type(mark) is dict:
            if type(cur) is dict:
                for k, m in mark.items():
                    if m is True and _too_short(cur.get(k)):
                        short.add(cur[k])
                        cur[k] = _HIDDEN
                    elif m:
                        stack.append((cur.get(k), m))
        elif type(mark) is list and type(cur) is list:
            for i, (v, m) in enumerate(zip(cur, mark, strict=False)):
                if m is True and _too_short(v):
                    short.add(v)
                    cur[i] = _HIDDEN
                elif m:
                    stack.append((v, m))
    if short:
        _hide_copies(value, short)


# A report's redaction finds only secrets of at least this many characters (scanner.findings.redact's
# MIN_SENSITIVE): a shorter sensitive value (terraform marks a substr() of a secret too) is
# made UNKNOWN here, so that it never reaches a report.
_SHORT_SECRET = 4
_HIDDEN = Unknown("a sensitive value")


def _hide_copies(value: Any, short: set[Any], depth: int = 0) -> None:
    """The same short secrets where terraform does not mark them (the AWS provider's
    ``tags_all`` repeats ``tags`` unmarked): made UNKNOWN too."""
    if depth > 32:
        return
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for k, v in list(items):
        if isinstance(v, dict | list):
            _hide_copies(v, short, depth + 1)
        elif not isinstance(v, bool) and isinstance(v, str | int | float) and v in short:
            value[k] = _HIDDEN


def _too_short(v: Any) -> bool:
    if isinstance(v, str):
        return 0 < len(v) < _SHORT_SECRET
    return isinstance(v, int | float) and not isinstance(v, bool) and len(str(v)) < _SHORT_SECRET


def _all_text(value: Any, out: set[str]) -> None:
    stack = [value]
    while stack:
        cur = stack.pop()
        if isinstance(cur, str):
            out.add(cur)
        elif isinstance(cur, int | float) and not isinstance(cur, bool):
            out.add(str(cur))
        elif isinstance(cur, dict):
            stack.extend(cur.keys())  # a sensitive map's keys are secret too
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)


def _provider_regions(doc: dict[str, Any]) -> dict[str, str]:
    """The region of each aws provider configuration (key: its ``provider_config_key``, e.g.
    "aws", "aws.west"), where the plan says it: a constant, or a root provider's region that is
    one root variable (its value in the plan). Used to price the resources it creates."""
    config = doc.get("configuration")
    providers = config.get("provider_config") if isinstance(config, dict) else None
    variables = doc.get("variables") if isinstance(doc.get("variables"), dict) else {}
    out: dict[str, str] = {}
    for key, provider in providers.items() if isinstance(providers, dict) else ():
        if not isinstance(provider, dict) or provider.get("name") != "aws":
            continue
        exprs = provider.get("expressions")
        expr = exprs.get("region") if isinstance(exprs, dict) else None
        if not isinstance(expr, dict):
            continue
        value = expr.get("constant_value")
        refs = expr.get("references")
        if "constant_value" not in expr and ":" not in key and isinstance(refs, list) \
                and len(refs) == 1 and isinstance(refs[0], str) and refs[0].startswith("var."):
            given = variables.get(refs[0][4:])
            value = given.get("value") if isinstance(given, dict) else None
        region = region_name(value)
        if region is not None:
            out[str(key)] = region
    return out


def _sensitive_variables(doc: dict[str, Any], out: set[str]) -> None:
    """Root module variables declared ``sensitive = true``: their values in the plan."""
    config = doc.get("configuration")
    root = config.get("root_module") if isinstance(config, dict) else None
    declared = root.get("variables") if isinstance(root, dict) else None
    given = doc.get("variables")
    if not isinstance(declared, dict) or not isinstance(given, dict):
        return
    for name, decl in declared.items():
        if isinstance(decl, dict) and decl.get("sensitive") is True:
            entry = given.get(name)
            if isinstance(entry, dict):
                _all_text(entry.get("value"), out)


def _sensitive_changes(changes: Any, out: set[str]) -> None:
    """``before_sensitive`` / ``after_sensitive`` of the resource changes (when decoded)."""
    for rc in changes if isinstance(changes, list) else ():
        change = rc.get("change") if isinstance(rc, dict) else None
        if isinstance(change, dict):
            _sensitive(change.get("before"), change.get("before_sensitive"), out)
            _sensitive(change.get("after"), change.get("after_sensitive"), out)


def _plan_lines(text: str) -> dict[str, int] | None:
    """First line of each address in the plan text; None when the JSON is on one line."""
    if text.count("\n", 0, len(text) - 1) == 0:
        return None
    lines: dict[str, int] = {}
    line, last = 1, 0
    for m in _ADDRESS.finditer(text):
        raw = m.group(1)
        try:
            addr = json.loads(f'"{raw}"') if "\\" in raw else raw
        except ValueError:
            continue
        if addr not in lines:
            line += text.count("\n", last, m.start())
            last = m.start()
            lines[addr] = line
    return lines


def _load(path: Path, doc: dict[str, Any], text: str, source_dir: Path | None,
          result: SourceResult) -> None:
    from scanner.sources.karpenter.terraform import ManifestBudget

    spath = str(path)
    manifests = ManifestBudget()
    problems: list[str] = []
    if "planned_values" in doc:
        pv = doc["planned_values"]
        if not isinstance(pv, dict):
            problems.append(f"planned_values is {_json_type(pv)}, not an object")
            planned = []
        elif "root_module" not in pv:
            problems.append("planned_values has no root_module")
            planned = []
        else:
            planned = list(_iter_planned(pv["root_module"], problems))
    else:
        planned = _from_changes(doc.get("resource_changes"), problems)
    if "configuration" in doc and not isinstance(doc["configuration"], dict):
        problems.append(f"configuration is {_json_type(doc['configuration'])}, not an object")
    for problem in problems[:20]:
        result.errors.append(InputError(spath, f"malformed Terraform plan: {problem}"))
    if len(problems) > 20:
        result.errors.append(InputError(spath, f"malformed Terraform plan: {len(problems) - 20} "
                                               "more problems like these"))
    _sensitive_variables(doc, result.sensitive)
    _sensitive_changes(doc.get("resource_changes"), result.sensitive)
    config = _config_modules(doc.get("configuration"), result.errors, spath)
    module_instances: dict[tuple[str, str], list[str]] = {}
    addresses: set[str] = set()
    seen_modules: set[str] = {""}
    for module, r in planned:
        addr = r.get("address")
        if isinstance(addr, str):
            addresses.add(addr)
        while module not in seen_modules:  # this instance and its parents, once each
            seen_modules.add(module)
            segments = _split_module_path(module)
            if not segments:
                break
            parent = ".".join(f"module.{n}{i}" for n, i in segments[:-1])
            module_instances.setdefault((parent, segments[-1][0]), []).append(module)
            module = parent
    plan = _Plan(config, addresses, module_instances)

    if doc.get("errored") is True:
        result.notices.append(Notice(spath, "terraform reported errors while planning: the plan "
                                            "may be incomplete"))
    if not config:
        result.notices.append(Notice(spath, "the plan has no configuration section: values known "
                                            "only after apply cannot be told from unset ones"))

    # Where are the .tf files?
    tf_dir = source_dir
    if tf_dir is None and has_tf_files(path.parent):
        tf_dir = path.parent
    sources: SourceIndex | None = None
    dir_notices: list[Notice] = []
    if tf_dir is not None and config:
        sources = SourceIndex(_module_dirs(config, tf_dir, dir_notices, spath))
        if source_dir is None and not _matches(sources, planned):
            sources = None  # unrelated .tf files beside the plan
    if sources is not None:
        result.notices.extend(dir_notices)
    scope = str(tf_dir) if sources is not None else spath
    lines: dict[str, int] | None = None
    lines_done = False
    bad_skips_seen: set[tuple[str, int]] = set()
    plan_provs: dict[tuple[str, str | None, str], Provenance] = {}
    regions = _provider_regions(doc)

    out: list[Resource] = []
    for module, r in planned:
        tf_type = r.get("type")
        if not isinstance(tf_type, str) or tf_type not in SUPPORTED_TYPES \
                or r.get("mode", "managed") != "managed":
            continue
        address = r.get("address")
        name = r.get("name")
        if not isinstance(address, str) or not isinstance(name, str):
            result.errors.append(InputError(spath, f"malformed Terraform plan: a planned "
                                                   f"{tf_type} has no address or name"))
            continue
        values = r.get("values")
        if values is None:
            values = {}  # terraform omits "values" when every one is unknown
        elif not isinstance(values, dict):
            result.errors.append(InputError(spath, f"malformed Terraform plan: the values of "
                                                   f"{address} are {_json_type(values)}, not an "
                                                   "object"))
            continue
        _sensitive(values, r.get("sensitive_values"), result.sensitive)
        keyless = _keyless(module)
        block: Block | None = sources.locate(keyless, tf_type, name) if sources else None
        cm = config.get(keyless)
        rcfg = cm.resource(tf_type, name) if cm is not None else None
        region = regions.get(str(rcfg.get("provider_config_key"))) if rcfg is not None else None
        key = rcfg.get("provider_config_key") if rcfg is not None else None
        provider = key if isinstance(key, str) and key else "?"
        if rcfg is not None:
            exprs = rcfg.get("expressions")
            ctx = _Ctx(module, r.get("index"), rcfg.get("for_each_expression"),
                       block.dynamic if block else {}, tf_type,
                       block.picks if block else {})
            plan.fill(values, exprs if isinstance(exprs, dict) else _NO_EXPRESSIONS, ctx, address)
            for dyn in ctx.dynamic:
                # a `dynamic` block missing from the planned values (terraform writes known
                # blocks, even none, as a list): its for_each is known only after apply
                if dyn not in values:
                    plan._set(values, dyn, Unknown(f"the {dyn} blocks are made by a dynamic "
                                                   "block known only after apply"), address)
        if block is not None:
            prov = Provenance(SourceKind.TERRAFORM_PLAN, str(block.file), block.start_line,
                              block.end_line, module, pricing_region=region, provider=provider)
            skips = block.skips
            for line, line_text in block.bad_skips:
                if (str(block.file), line) not in bad_skips_seen:
                    bad_skips_seen.add((str(block.file), line))
                    result.notices.append(Notice(
                        str(block.file), f"gpuaudit:skip on {address} has no policy id or no "
                                         f"reason and is not applied: {line_text}", line))
        else:
            if not lines_done:
                lines, lines_done = _plan_lines(text), True
            if lines is None:  # one-line JSON: the same location for every resource of a module
                prov = plan_provs.get((module, region, provider))
                if prov is None:
                    prov = plan_provs[(module, region, provider)] = Provenance(
                        SourceKind.TERRAFORM_PLAN, spath, 1, 1, module, pricing_region=region,
                        provider=provider)
            else:
                line = lines.get(address, 1)
                prov = Provenance(SourceKind.TERRAFORM_PLAN, spath, line, line, module,
                                  pricing_region=region, provider=provider)
            skips = ()
        out.extend(translate(tf_type, address, values, provenance=prov, scope=scope,
                             skips=skips, notices=result.notices, errors=result.errors,
                             manifests=manifests))
    result.resources.extend(merge_ebs_defaults(out))
    if manifests.refused is not None:
        result.gaps.append(Gap(scope=scope, kinds=("*",), iac=True, reason=(
            f"the plan {spath} was not read whole: {manifests.gap()}")))
    if plan.unknown:
        result.notices.append(Notice(spath, f"{plan.unknown} value(s) are known only after apply "
                                            f"and stay UNKNOWN, e.g. {plan.example}"))


def _matches(sources: SourceIndex, planned: list[tuple[str, dict[str, Any]]]) -> bool:
    """Do the .tf files hold the plan's root module? (any root resource found, or none to find)"""
    root = [r for module, r in planned if not module and r.get("mode", "managed") == "managed"]
    if not root:
        return True
    return any(sources.locate("", str(r.get("type")), str(r.get("name"))) for r in root[:200])
