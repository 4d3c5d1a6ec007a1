"""What apply will know: configured values absent from the planned values, resolved from the
configuration's expression references to Refs or UNKNOWN (see reader.py for the rules)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.kinds import schema
from scanner.model import Ref, Unknown
from scanner.sources.terraform.plan.refs import (
    ATTR_TYPES,
    COLLECTION_ATTRS,
    _index_text,
    _join,
    _keyless,
    _map,
    _parse_refs,
    _plausible,
    _resource_type,
    _seq,
    _split_module_path,
    _strs,
)

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

