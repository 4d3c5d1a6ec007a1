"""Terraform plan JSON (`terraform show -json PLAN`) -> normalized Resources.

Resources come from ``planned_values`` (root and child modules; addresses such as
``module.x.aws_y.z`` with ``[key]`` for count/for_each instances). A plan leaves out every value
that is only known after apply and marks it in ``resource_changes[].change.after_unknown``. For
each such value this source asks the plan's ``configuration`` section:

- not configured (no expression for it): the provider computes it, i.e. the AWS default applies,
  so it stays absent (e.g. no spot allocation strategy = lowest-price);
- configured with references to other resources: a :class:`Ref` to the full address
  (module path included; ``aws_subnet.a[*].id`` and ``[for s in aws_subnet.a : s.id]`` name every
  instance: ``Ref("aws_subnet.a")``), following module input variables up to the module call and
  module outputs down to their expressions;
- anything else (locals, data sources, several resources for one value): UNKNOWN with a reason.

``aws_subnet.a[count.index]`` / ``[each.key]`` / ``each.value`` of a ``for_each`` over another
resource are narrowed to the instance with the same key when that instance exists in the plan
(the plan keeps only the references, not the expression, so this is the one inference made).
Blocks written with ``dynamic`` do not appear in the configuration section: unknown values inside
them stay UNKNOWN.

Locations: when the plan sits beside its ``.tf`` files (or ``source_dir`` says where they are),
findings point at the ``resource`` block there (root module and local child modules, plus modules
installed by ``terraform init``); otherwise at the plan file and the line of the resource's address
in it. Inline ``# gpuaudit:skip=ID:reason`` comments are read from the located blocks.

Stdlib only: the pre-commit path imports this.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.model import (
    InputError,
    Notice,
    Provenance,
    Ref,
    Resource,
    SourceKind,
    SourceResult,
    Unknown,
)
from scanner.sources.terraform_types import SUPPORTED_TYPES, merge_ebs_defaults, translate
from scanner.sources.tf_locate import Block, SourceIndex, has_tf_files, installed_modules

SNIFF_BYTES = 4096
_KEY_AFTER_VERSION = re.compile(
    r'"terraform_version"\s*:\s*"[^"]*"\s*,\s*"(variables|planned_values|resource_changes|'
    r'prior_state|output_changes|resource_drift|relevant_attributes|configuration)"')
_PLAN_KEY = re.compile(r'"(planned_values|resource_changes)"\s*:')
_ADDRESS = re.compile(r'"address"\s*:\s*"((?:[^"\\]|\\.)*)"')
_RESOURCE_REF = re.compile(
    r'([A-Za-z_][\w-]*)\.([A-Za-z_][\w-]*)((?:\[(?:"(?:[^"\\]|\\.)*"|[^\]]*)\])?)'
    r'(?:\.([A-Za-z_][\w-]*))?')
_MODULE_REF = re.compile(r'module\.([A-Za-z_][\w-]*)((?:\[(?:"(?:[^"\\]|\\.)*"|[^\]]*)\])?)'
                         r'(?:\.([A-Za-z_][\w-]*))?')
_VAR_REF = re.compile(r'var\.([A-Za-z_][\w-]*)')
_MODULE_SEGMENT = re.compile(r'module\.([A-Za-z_][\w-]*)((?:\[(?:"(?:[^"\\]|\\.)*"|[^\]]*)\])?)')

# Attributes whose value is a collection of ids: an unknown one becomes a list of Refs.
COLLECTION_ATTRS = frozenset({
    "vpc_zone_identifier", "route_table_ids", "subnet_ids", "security_group_ids",
    "vpc_security_group_ids", "security_groups", "availability_zones", "target_group_arns",
    "load_balancers", "network_interface_ids",
})
# The resource types an id attribute can name: picks one of several referenced resources
# (an inline route's gateway_id among the references of all the table's routes).
_GATEWAYS = ("aws_internet_gateway", "aws_vpn_gateway")
ATTR_TYPES: dict[str, tuple[str, ...]] = {
    "subnet_id": ("aws_subnet", "aws_default_subnet"),
    "subnet_ids": ("aws_subnet", "aws_default_subnet"),
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
    "kms_key_id": ("aws_kms_key", "aws_kms_alias", "aws_kms_replica_key"),
    "key_arn": ("aws_kms_key", "aws_kms_alias", "aws_kms_replica_key"),
}
MAX_DEPTH = 16

# How a part of a resource is configured (the walk over after_unknown).
_CONFIGURED, _LEAF, _BLOCKS, _DYNAMIC, _UNCONFIGURED, _NOCONFIG = range(6)
_ABSENT = object()


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


# -- small helpers ---------------------------------------------------------------------------------


def _split_module_path(address: str) -> list[tuple[str, str]]:
    """'module.a["x"].module.b' -> [("a", '["x"]'), ("b", "")]."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(address):
        m = _MODULE_SEGMENT.match(address, pos)
        if m is None:
            break
        out.append((m.group(1), m.group(2)))
        pos = m.end() + 1  # skip the "."
    return out


def _keyless(module_address: str) -> str:
    return ".".join(f"module.{name}" for name, _ in _split_module_path(module_address))


def _index_text(key: Any) -> str | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return f"[{key}]"
    if isinstance(key, str):
        return "[" + json.dumps(key) + "]"
    return None


def _join(module: str, rel: str) -> str:
    return f"{module}.{rel}" if module else rel


@dataclass
class _Ctx:
    """Where an expression is evaluated: a module instance, and the instance key in scope."""

    module: str  # module instance address, "" for root
    key: Any = None  # count.index / each.key of the resource or module call
    for_each: Any = None  # the for_each_expression of that resource or module call
    dynamic: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)  # from .tf


@dataclass
class _ConfigModule:
    body: dict[str, Any]
    parent: str | None  # keyless path of the parent module
    call: dict[str, Any] | None  # the module call block in the parent
    resources: dict[tuple[str, str], dict[str, Any]] | None = None

    def resource(self, tf_type: str, name: str) -> dict[str, Any] | None:
        if self.resources is None:
            self.resources = {}
            for r in self.body.get("resources") or ():
                if isinstance(r, dict) and r.get("mode", "managed") == "managed":
                    self.resources[(str(r.get("type")), str(r.get("name")))] = r
        return self.resources.get((tf_type, name))


@dataclass
class _Stats:
    unknown: int = 0
    example: str = ""


@dataclass
class _Plan:
    """The parsed plan and the lookups built from it."""

    path: str
    config: dict[str, _ConfigModule]
    addresses: set[str]
    module_instances: dict[str, list[str]]  # keyless module path -> instance addresses
    stats: _Stats = field(default_factory=_Stats)
    memo: dict[tuple[str, str, str], tuple[list[Ref], list[str]]] = field(default_factory=dict)

    # -- reference resolution ------------------------------------------------------------------

    def targets(self, refs: list[Any], ctx: _Ctx, depth: int = 0
                ) -> tuple[list[Ref], list[str]]:
        """Resources named by an expression's references, and the references not followed."""
        if depth > MAX_DEPTH:
            return [], ["a reference chain too deep to follow"]
        found: dict[str, str | None] = {}
        unresolved: list[str] = []
        by_base: dict[str, list[tuple[str, str | None]]] = {}
        each_value_attr: str | None = None
        has_each_value = False
        count_index = each_key = False
        vars_seen: set[str] = set()
        modules_seen: dict[tuple[str, str], set[str]] = {}
        data_seen: set[str] = set()
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
                    has_each_value = True
                    attr = rest[len("value."):].split(".", 1)[0].split("[", 1)[0] \
                        if rest.startswith("value.") else None
                    each_value_attr = each_value_attr or attr
            elif head in ("path", "terraform", "self"):
                continue
            elif head == "var":
                m = _VAR_REF.match(ref)
                if m and m.group(1) not in vars_seen:
                    vars_seen.add(m.group(1))
            elif head == "local":
                unresolved.append(ref.split("[", 1)[0])
            elif head == "data":
                base = ".".join(ref.split(".")[:3]).split("[", 1)[0]
                if base not in data_seen:
                    data_seen.add(base)
                    unresolved.append(base)
            elif head == "module":
                m = _MODULE_REF.match(ref)
                if m:
                    outputs = modules_seen.setdefault((m.group(1), m.group(2)), set())
                    if m.group(3):
                        outputs.add(m.group(3))
            else:
                m = _RESOURCE_REF.match(ref)
                if m:
                    base = f"{m.group(1)}.{m.group(2)}"
                    idx = "" if m.group(3) == "[*]" else m.group(3)
                    by_base.setdefault(base, []).append((idx, m.group(4)))
        for name in vars_seen:
            t, u = self.follow_var(name, ctx, depth)
            for r in t:
                found.setdefault(r.target, r.attr)
            unresolved.extend(u)
        for (call, idx), outputs in modules_seen.items():
            if not outputs:
                unresolved.append(f"module.{call}{idx}")
            for output in sorted(outputs):
                t, u = self.follow_output(call, idx, output, ctx, depth)
                for r in t:
                    found.setdefault(r.target, r.attr)
                unresolved.extend(u)
        for base, entries in by_base.items():
            indexed = [(idx, attr) for idx, attr in entries if idx]
            if indexed:
                for idx, attr in indexed:
                    target = _join(ctx.module, base + idx)
                    if found.get(target) is None:
                        found[target] = attr
                continue
            attr = next((a for _, a in entries if a), None)
            target = self._narrow(base, ctx, count_index, each_key)
            if found.get(target) is None:
                found[target] = attr
        if has_each_value:
            narrowed = self._each_value(ctx, each_value_attr, depth)
            if narrowed is None:
                unresolved.append("each.value")
            else:
                found.setdefault(narrowed.target, narrowed.attr)
        return [Ref(t, a) for t, a in found.items()], unresolved

    def _narrow(self, base: str, ctx: _Ctx, count_index: bool, each_key: bool) -> str:
        """`base[count.index]` / `base[each.key]`: the instance with this key, when it exists."""
        if (count_index and isinstance(ctx.key, int)) or (each_key and isinstance(ctx.key, str)):
            idx = _index_text(ctx.key)
            if idx is not None:
                candidate = _join(ctx.module, base + idx)
                if candidate in self.addresses:
                    return candidate
        return _join(ctx.module, base)

    def _each_value(self, ctx: _Ctx, attr: str | None, depth: int) -> Ref | None:
        """`each.value[.attr]` of a for_each over one other resource: that resource's instance."""
        expr = ctx.for_each
        idx = _index_text(ctx.key)
        if not isinstance(expr, dict) or idx is None or depth > MAX_DEPTH:
            return None
        refs = expr.get("references")
        if not isinstance(refs, list):
            return None
        bases = {f"{m.group(1)}.{m.group(2)}" for ref in refs if isinstance(ref, str)
                 and not ref.startswith(("var.", "local.", "data.", "module.", "each.",
                                         "count."))
                 and (m := _RESOURCE_REF.match(ref)) and not m.group(3)}
        if len(bases) != 1 or len(refs) > 2:
            return None
        candidate = _join(ctx.module, bases.pop() + idx)
        return Ref(candidate, attr) if candidate in self.addresses else None

    def follow_var(self, name: str, ctx: _Ctx, depth: int) -> tuple[list[Ref], list[str]]:
        """A module input variable: the expression the module call gives it, in the parent."""
        if not ctx.module:
            return [], []  # root variables are known in a plan: never the unknown part
        memo_key = ("var", ctx.module, name)
        if memo_key in self.memo:
            return self.memo[memo_key]
        segments = _split_module_path(ctx.module)
        _call_name, call_idx = segments[-1]
        parent = ".".join(f"module.{n}{i}" for n, i in segments[:-1])
        cfg = self.config.get(_keyless(ctx.module))
        call = cfg.call if cfg is not None else None
        result: tuple[list[Ref], list[str]]
        if call is None:
            result = [], [f"var.{name}"]
        else:
            expr = (call.get("expressions") or {}).get(name)
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
                result = self.targets(refs, parent_ctx, depth + 1)
        self.memo[memo_key] = result
        return result

    def follow_output(self, call: str, idx: str, output: str, ctx: _Ctx, depth: int
                      ) -> tuple[list[Ref], list[str]]:
        """`module.call[idx].output`: the output's expression inside the module instance(s)."""
        child_keyless = _join(_keyless(ctx.module), f"module.{call}")
        cfg = self.config.get(child_keyless)
        label = f"module.{call}{idx}.{output}"
        if cfg is None:
            return [], [label]
        out_def = (cfg.body.get("outputs") or {}).get(output)
        expr = out_def.get("expression") if isinstance(out_def, dict) else None
        refs = expr.get("references") if isinstance(expr, dict) else None
        if not isinstance(refs, list):
            return [], [label]
        if idx:
            instances = [_join(ctx.module, f"module.{call}{idx}")]
        else:
            prefix = _join(ctx.module, f"module.{call}")
            instances = [a for a in self.module_instances.get(child_keyless, [])
                         if a == prefix or (a.startswith(prefix + "[")
                                            and "." not in a[len(prefix):].split("]", 1)[-1])]
            instances = instances or [prefix]
        targets: list[Ref] = []
        unresolved: list[str] = []
        for inst in instances:
            memo_key = ("out", inst, output)
            if memo_key not in self.memo:
                self.memo[memo_key] = self.targets(refs, _Ctx(inst), depth + 1)
            t, u = self.memo[memo_key]
            targets.extend(t)
            unresolved.extend(u)
        return targets, unresolved

    def resolve(self, expr: dict[str, Any], key: Any, ctx: _Ctx) -> Any:
        """The value of an unknown but configured attribute."""
        refs = expr.get("references")
        if not isinstance(refs, list) or not refs:
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
            return targets[0]
        if unresolved:
            return Unknown(f"depends on {', '.join(unresolved[:3])}")
        return Unknown("refers to several resources: "
                       + ", ".join(str(t) for t in targets[:3]))

    # -- the walk over after_unknown ---------------------------------------------------------------

    def overlay(self, values: dict[str, Any], au: dict[str, Any], mode: int, exprs: Any,
                ctx: _Ctx, where: str) -> None:
        for key, flag in au.items():
            if flag is False or flag is None:
                continue
            cmode, cexprs = _child(mode, exprs, key, ctx)
            if flag is True:
                value = self._value(cmode, cexprs, key, ctx)
                if value is not _ABSENT:
                    values[key] = value
                    self._count(value, where, key)
            elif isinstance(flag, dict):
                if flag:
                    target = values.get(key)
                    if isinstance(target, dict):
                        self.overlay(target, flag, cmode, cexprs, ctx, where)
            elif isinstance(flag, list) and flag:
                self._overlay_list(values, key, flag, cmode, cexprs, ctx, where)

    def _overlay_list(self, values: dict[str, Any], key: str, flags: list[Any], mode: int,
                      exprs: Any, ctx: _Ctx, where: str) -> None:
        target = values.get(key)
        if not isinstance(target, list):
            return
        if mode == _LEAF:
            if any(f is True for f in flags):  # a collection attribute with unknown elements
                known = [v for i, v in enumerate(target)
                         if i >= len(flags) or flags[i] is not True]
                resolved = self.resolve(exprs, key, ctx)
                extra = resolved if isinstance(resolved, list) else [resolved]
                values[key] = [v for v in known if v is not None] + extra
                self._count(values[key], where, key)
                return
            for item, flag in zip(target, flags, strict=False):  # a list of objects
                if isinstance(flag, dict) and flag and isinstance(item, dict):
                    self.overlay(item, flag, _LEAF, exprs, ctx, where)
            return
        if mode == _UNCONFIGURED and target:
            mode = _DYNAMIC  # blocks in the plan but not in the configuration: `dynamic`
        for i, flag in enumerate(flags):
            if i >= len(target):
                break
            item = target[i]
            emode, eexprs = _element(mode, exprs, item, i, len(target))
            if flag is True:
                value = self._value(emode, eexprs, key, ctx)
                if value is not _ABSENT:
                    target[i] = value
                    self._count(value, where, key)
            elif isinstance(flag, dict) and flag and isinstance(item, dict):
                self.overlay(item, flag, emode, eexprs, ctx, where)

    def _value(self, mode: int, exprs: Any, key: str, ctx: _Ctx) -> Any:
        if mode == _UNCONFIGURED:
            return _ABSENT  # computed by the provider: the AWS default
        if mode == _LEAF:
            return self.resolve(exprs, key, ctx)
        if mode == _DYNAMIC:
            ref = exprs.get(key) if isinstance(exprs, Mapping) else None
            if isinstance(ref, str):  # the .tf sets it to one plain reference
                return self.resolve({"references": [ref.strip()]}, key, ctx)
            return Unknown("set in a dynamic block, known only after apply")
        if mode == _NOCONFIG:
            return Unknown("known only after apply (the plan has no configuration section)")
        return Unknown("known only after apply")

    def _count(self, value: Any, where: str, key: str) -> None:
        if isinstance(value, Unknown) or (isinstance(value, list)
                                          and any(isinstance(v, Unknown) for v in value)):
            self.stats.unknown += 1
            if not self.stats.example:
                reason = value.reason if isinstance(value, Unknown) else "an element is unknown"
                self.stats.example = f"{where} {key}: {reason}"


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


def _child(mode: int, exprs: Any, key: str, ctx: _Ctx) -> tuple[int, Any]:
    if mode == _CONFIGURED:
        e = exprs.get(key) if isinstance(exprs, dict) else None
        if e is None:
            if key in ctx.dynamic:
                return _DYNAMIC, ctx.dynamic[key]
            return _UNCONFIGURED, None
        if isinstance(e, list):
            return _BLOCKS, e
        if isinstance(e, dict):
            return _LEAF, e
        return _UNCONFIGURED, None
    if mode == _BLOCKS:  # an attribute of a block list itself (should not happen)
        return _NOCONFIG, None
    if mode == _DYNAMIC and isinstance(exprs, Mapping) and key not in exprs:
        return _UNCONFIGURED, None  # the .tf shows the dynamic block does not set it
    return mode, exprs


def _element(mode: int, exprs: Any, item: Any, i: int, n: int) -> tuple[int, Any]:
    """The configuration of the i-th of n planned blocks."""
    if mode != _BLOCKS:
        return mode, exprs
    blocks = [b for b in exprs if isinstance(b, dict)]
    if not blocks:
        return _DYNAMIC, None
    if len(blocks) == 1 and n == 1:
        return _CONFIGURED, blocks[0]
    if len(blocks) != n:
        return _DYNAMIC, None  # static and dynamic blocks mixed: cannot pair them
    if isinstance(item, dict):  # sets may reorder blocks: pair on the constants they set
        matches = [b for b in blocks if all(
            not isinstance(e, dict) or "constant_value" not in e
            or item.get(k) == e["constant_value"] for k, e in b.items())]
        if len(matches) == 1:
            return _CONFIGURED, matches[0]
    return _CONFIGURED, blocks[i]


def _config_modules(configuration: Any) -> dict[str, _ConfigModule]:
    out: dict[str, _ConfigModule] = {}
    root = configuration.get("root_module") if isinstance(configuration, dict) else None
    if not isinstance(root, dict):
        return out
    stack: list[tuple[str, dict[str, Any], str | None, dict[str, Any] | None]] = [
        ("", root, None, None)]
    while stack:
        path, body, parent, call = stack.pop()
        out[path] = _ConfigModule(body, parent, call)
        calls = body.get("module_calls")
        if isinstance(calls, dict) and len(out) < 10_000:
            for name, c in calls.items():
                if isinstance(c, dict) and isinstance(c.get("module"), dict):
                    stack.append((_join(path, f"module.{name}"), c["module"], path, c))
    return out


def _module_dirs(config: dict[str, _ConfigModule], root: Path, result: SourceResult,
                 plan_path: str) -> dict[str, Path]:
    dirs: dict[str, Path] = {"": root}
    installed: dict[str, Path] | None = None
    for path in sorted(config, key=lambda p: p.count(".")):
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
            result.notices.append(Notice(plan_path, f"{path} (source {source!r}) is not "
                                         "available locally: its findings point into the plan"))
    return dirs


def _plan_lines(text: str) -> dict[str, int] | None:
    """First line of each address in the plan text; None when the JSON is on one line."""
    if text.count("\n", 0, len(text) - 1) == 0:
        return None
    lines: dict[str, int] = {}
    line, last = 1, 0
    for m in _ADDRESS.finditer(text):
        raw = m.group(1)
        addr = json.loads(f'"{raw}"') if "\\" in raw else raw
        if addr not in lines:
            line += text.count("\n", last, m.start())
            last = m.start()
            lines[addr] = line
    return lines


def _iter_planned(module: Any, depth: int = 0) -> Iterator[tuple[str, dict[str, Any]]]:
    """(module instance address, resource) for every planned resource, child modules included."""
    if not isinstance(module, dict) or depth > 100:
        return
    address = module.get("address") if depth else ""
    address = address if isinstance(address, str) else ""
    for r in module.get("resources") or ():
        if isinstance(r, dict):
            yield address, r
    for child in module.get("child_modules") or ():
        yield from _iter_planned(child, depth + 1)


# -- reading -----------------------------------------------------------------------------------


def _read(path: Path) -> tuple[dict[str, Any], str] | InputError:
    spath = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return InputError(spath, f"cannot read: {exc.strerror or exc}")
    if data.startswith(b"PK\x03\x04"):
        return InputError(spath, "a binary Terraform plan file, not JSON: convert it with "
                                 "`terraform show -json PLANFILE > plan.json`")
    if b"\x00" in data[:8192]:
        return InputError(spath, "a binary file, not a Terraform plan JSON")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return InputError(spath, f"not UTF-8 text: {exc.reason}",
                          line=data.count(b"\n", 0, exc.start) + 1)
    if not text.strip():
        return InputError(spath, "empty file, not a Terraform plan")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        truncated = " (truncated?)" if exc.pos >= len(text.rstrip()) else ""
        return InputError(spath, f"invalid JSON: {exc.msg}{truncated}", line=exc.lineno)
    except RecursionError:
        return InputError(spath, "invalid JSON: nested too deeply")
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
    result = SourceResult()
    read = _read(path)
    if isinstance(read, InputError):
        result.errors.append(read)
        return result
    doc, text = read
    try:
        _load(path, doc, text, source_dir, result)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError) as exc:
        result.resources.clear()
        result.errors.append(InputError(str(path), f"malformed Terraform plan: "
                                                   f"{type(exc).__name__}: {exc}"))
    return result


def _load(path: Path, doc: dict[str, Any], text: str, source_dir: Path | None,
          result: SourceResult) -> None:
    spath = str(path)
    planned = list(_iter_planned((doc.get("planned_values") or {}).get("root_module")))
    config = _config_modules(doc.get("configuration"))
    has_config = bool(config)
    changes: dict[str, dict[str, Any]] = {}
    for rc in doc.get("resource_changes") or ():
        if isinstance(rc, dict) and "deposed" not in rc and rc.get("mode", "managed") == "managed":
            change = rc.get("change")
            if isinstance(change, dict) and isinstance(rc.get("address"), str):
                changes[rc["address"]] = change
    module_instances: dict[str, list[str]] = {}
    addresses: set[str] = set()
    for module, r in planned:
        addr = r.get("address")
        if isinstance(addr, str):
            addresses.add(addr)
        if module not in module_instances.setdefault(_keyless(module), []):
            module_instances[_keyless(module)].append(module)
    plan = _Plan(spath, config, addresses, module_instances)

    if doc.get("errored") is True:
        result.notices.append(Notice(spath, "terraform reported errors while planning: the plan "
                                            "may be incomplete"))

    # Where are the .tf files?
    tf_dir = source_dir
    if tf_dir is None and has_tf_files(path.parent):
        tf_dir = path.parent
    sources: SourceIndex | None = None
    if tf_dir is not None and has_config:
        sources = SourceIndex(_module_dirs(config, tf_dir, result, spath))
        if source_dir is None and not _matches(sources, planned):
            sources = None  # unrelated .tf files beside the plan
            result.notices = [n for n in result.notices if "available locally" not in n.message]
    scope = str(tf_dir) if sources is not None else spath
    lines: dict[str, int] | None = None
    lines_done = False
    bad_skips_seen: set[tuple[str, int]] = set()

    out: list[Resource] = []
    for module, r in planned:
        tf_type = r.get("type")
        if r.get("mode", "managed") != "managed" or tf_type not in SUPPORTED_TYPES:
            continue
        address = r.get("address")
        name = r.get("name")
        if not isinstance(address, str) or not isinstance(name, str):
            continue
        values = r.get("values")
        if not isinstance(values, dict):
            values = {}
        keyless = _keyless(module)
        block: Block | None = sources.locate(keyless, tf_type, name) if sources else None
        change = changes.get(address)
        au = change.get("after_unknown") if change else None
        if isinstance(au, dict) and au:
            cm = config.get(keyless)
            rcfg = cm.resource(tf_type, name) if cm is not None else None
            ctx = _Ctx(module, r.get("index"),
                       rcfg.get("for_each_expression") if rcfg else None,
                       block.dynamic if block else {})
            if rcfg is not None:
                plan.overlay(values, au, _CONFIGURED, rcfg.get("expressions") or {}, ctx,
                             address)
            else:
                plan.overlay(values, au, _UNCONFIGURED if has_config else _NOCONFIG, None, ctx,
                             address)
        if block is not None:
            prov = Provenance(SourceKind.TERRAFORM_PLAN, str(block.file), block.start_line,
                              block.end_line, module)
            skips = block.skips
            for line, line_text in block.bad_skips:
                if (str(block.file), line) not in bad_skips_seen:
                    bad_skips_seen.add((str(block.file), line))
                    result.notices.append(Notice(str(block.file), "ignored gpuaudit:skip without "
                                                 f"a policy id and a reason: {line_text}", line))
        else:
            if not lines_done:
                lines, lines_done = _plan_lines(text), True
            line = lines.get(address, 1) if lines is not None else 1
            prov = Provenance(SourceKind.TERRAFORM_PLAN, spath, line, line, module)
            skips = ()
        out.extend(translate(tf_type, address, values, provenance=prov, scope=scope,
                             skips=skips))
    result.resources.extend(merge_ebs_defaults(out))
    if plan.stats.unknown:
        result.notices.append(Notice(spath, f"{plan.stats.unknown} value(s) are known only after "
                                            f"apply and stay UNKNOWN, e.g. {plan.stats.example}"))


def _matches(sources: SourceIndex, planned: list[tuple[str, dict[str, Any]]]) -> bool:
    """Do the .tf files hold the plan's root module? (any root resource found, or none to find)"""
    root = [r for module, r in planned if not module and r.get("mode", "managed") == "managed"]
    if not root:
        return True
    return any(sources.locate("", str(r.get("type")), str(r.get("name"))) for r in root[:200])
