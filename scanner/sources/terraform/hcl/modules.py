"""Module instances: variables, locals, resources (with count / for_each), local module calls
(expanded with their inputs), outputs, and the plan-shaped ``values`` of each resource instance.

Everything is lazy and memoized: a local, a variable or a resource attribute is evaluated when
something refers to it, once. A reference cycle yields Unknown, never a hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from scanner.model import InputError, Notice, Ref, Unknown
from scanner.sources.terraform.hcl.config import (
    META_ARGUMENTS,
    MODULE_META,
    ModuleCallConfig,
    ModuleConfig,
    ResourceConfig,
    is_sensitive,
    load_module,
)
from scanner.sources.terraform.hcl.expressions import (
    apply_ops,
    evaluate,
    for_scope,
    materialize,
    safe_evaluate,
)
from scanner.sources.terraform.hcl.functions import make_set
from scanner.sources.terraform.hcl.parse import Block, Body, Expr, ForExpr, Traversal
from scanner.sources.terraform.hcl.type_constraints import (
    ANY,
    Type,
    TypeSyntaxError,
    convert,
    parse_type,
)
from scanner.sources.terraform.hcl.values import (
    INSTANCE_BUDGET,
    BudgetExceeded,
    EvalError,
    GroupRefs,
    Lazy,
    Scope,
    TSet,
    as_unknown,
    charge_instances,
    is_opaque,
    iter_pairs,
    literal_scope,
    mark_sensitive,
    to_number,
    to_str,
)

_PLAIN = (str, int, bool, float, type(None))
_INDEX = re.compile(r"\[[^\]]*\]")
MAX_MODULE_DEPTH = 16
MAX_INSTANCES = 10_000
SKIPPED_BLOCKS = frozenset({"lifecycle", "provisioner", "connection"})


class _Cycle:
    pass


_IN_PROGRESS = _Cycle()


def key_suffix(key: Any) -> str:
    if key is None:
        return ""
    if isinstance(key, int):
        return f"[{key}]"
    return "[" + json.dumps(key, ensure_ascii=False) + "]"


# ---------------------------------------------------------------------------------------------
# shared state of one root module scan
# ---------------------------------------------------------------------------------------------


@dataclass
class RootContext:
    root_dir: str
    scope: str
    root_values: dict[str, Any]  # variable values from tfvars / var files / --var (root only)
    modules: Callable[[str], ModuleConfig]
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    _seen: set[tuple[str, str, int | None]] = field(default_factory=set)
    installed: dict[str, Installed] = field(default_factory=dict)  # modules.json, by key
    workspace: str = "default"  # .terraform/environment, else terraform's default
    # Why part of the configuration was not read (a module not found or nested too deeply,
    # instances past the budget): the root module is then not judged (a Gap, see reader)
    lost: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)  # the module directories it read
    # remote module calls not read (not installed, not fetched), by module address
    unread: dict[str, UnreadModule] = field(default_factory=dict)
    # --fetch-modules: (source, version constraint, where) → a module directory, or raises
    # FetchError; None: remote modules are read from .terraform/modules only
    fetch: Callable[[str, str | None, str], str] | None = None

    def lose(self, path: str, reason: str, line: int | None = None) -> None:
        """An input error that leaves part of the configuration unread."""
        self.error(path, reason, line)
        where = f"{path}:{line}" if line else path
        entry = f"{where}: {reason}"
        if len(self.lost) < 20 and entry not in self.lost:
            self.lost.append(entry)

    def notice(self, path: str, message: str, line: int | None = None) -> None:
        k = (path, message, line)
        if k not in self._seen:
            self._seen.add(k)
            self.notices.append(Notice(path, message, line))

    def error(self, path: str, reason: str, line: int | None = None) -> None:
        k = ("E" + path, reason, line)
        if k not in self._seen:
            self._seen.add(k)
            self.errors.append(InputError(path, reason, line))

    def first(self, *key: Any) -> bool:
        """Whether this is the first time ``key`` is seen (one error for the instances of a
        block that all meet the same exhausted budget, not one per instance)."""
        k = ("F", *key)
        if k in self._seen:
            return False
        self._seen.add(k)
        return True


@dataclass(frozen=True)
class Installed:
    """A module ``terraform init`` installed (an entry of ``.terraform/modules/modules.json``)."""

    dir: str
    source: str | None = None  # as terraform records it (registry.terraform.io/…, git::…)
    version: str | None = None  # the registry version it chose


@dataclass(frozen=True)
class UnreadModule:
    """A module call whose module was not read: reported as a ``terraform.module_call``
    resource (policy TF-001), at the call."""

    address: str  # module address without instance keys: module.a.module.b
    source: str  # as shown: credentials removed
    version: str | None
    file: str
    line: int
    reason: str
    fix: str
    module_path: str  # the calling module's address ("" for the root)


def _const_scope() -> Scope:
    return literal_scope()


# ---------------------------------------------------------------------------------------------
# lazy values: resources and module calls
# ---------------------------------------------------------------------------------------------


class ResourceGroup(Lazy):
    """``aws_x.y`` for a resource with count / for_each: its instances."""

    def __init__(self, module: ModuleInstance, config: ResourceConfig) -> None:
        self.module = module
        self.config = config
        self.address = module.prefix + config.key
        self._keys: list[tuple[Any, Any]] | Unknown | None = None
        self._instances: dict[Any, ResourceInstance] = {}
        self.expanded = "count" in config.body.attrs or "for_each" in config.body.attrs

    def keys(self) -> list[tuple[Any, Any]] | Unknown:
        """(key, each.value) per instance; key None for a resource without count/for_each."""
        if self._keys is None:
            self._keys = self._compute_keys()
        return self._keys

    def _compute_keys(self) -> list[tuple[Any, Any]] | Unknown:
        cfg = self.config
        return expansion_keys(
            cfg.body.attrs, Scope(self.module), self.address, self.module.root, cfg.file,
            cfg.start_line,
        )

    def instance(self, key: Any, each_value: Any = None) -> ResourceInstance:
        inst = self._instances.get(key)
        if inst is None:
            inst = ResourceInstance(self, key, each_value)
            self._instances[key] = inst
        return inst

    def instances(self) -> list[ResourceInstance]:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return [self.representative(keys)]
        return [self.instance(k, v) for k, v in keys]

    def representative(self, why: Unknown) -> ResourceInstance:
        """With unknown count/for_each: one instance at the group's address, keys unknown."""
        inst = self._instances.get(_REPRESENTATIVE)
        if inst is None:
            inst = ResourceInstance(self, None, why, representative=True)
            self._instances[_REPRESENTATIVE] = inst
        return inst

    # Lazy protocol
    def get_attr(self, name: str) -> Any:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return keys
        raise EvalError(f"{self.address} has count or for_each: index it before .{name}")

    def index(self, key: Any) -> Any:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return self.representative(keys)
        if isinstance(key, Unknown):
            return key
        for k, v in keys:
            if isinstance(k, int):
                try:
                    if int(to_number(key)) == k:
                        return self.instance(k, v)
                except EvalError:
                    break
            elif k == to_str(key):
                return self.instance(k, v)
        raise EvalError(f"{self.address}{key_suffix(key)} does not exist")

    def items(self) -> list[tuple[Any, Any]] | Unknown:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return keys
        return [(k, self.instance(k, v)) for k, v in keys]

    def is_map(self) -> bool:
        return "for_each" in self.config.body.attrs

    def splat(self, ops: tuple[Any, ...], scope: Scope) -> Any:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return self._collapse([apply_ops(self.representative(keys), ops, scope)], force=True)
        if self.is_map():
            # a splat over a map treats it as a single value (terraform semantics)
            return [apply_ops(self, ops, scope)]
        return self._collapse([apply_ops(self.instance(k, v), ops, scope) for k, v in keys])

    def _collapse(self, results: list[Any], force: bool = False) -> Any:
        """A list of refs to every instance (same attribute) becomes one Ref to the group."""
        refs = [r for r in results if isinstance(r, Ref)]
        if refs and len(refs) == len(results):
            attrs = {r.attr for r in refs}
            targets = {r.target for r in refs}
            expected = {i.address for i in self._instances.values()}
            if len(attrs) == 1 and (force or targets <= expected):
                ref = Ref(self.address, refs[0].attr)
                return ref if force else GroupRefs(results, ref)
        if force:
            r = results[0]
            return r if isinstance(r, Unknown) else Unknown(f"instances of {self.address} unknown")
        return results

    def symbolic_for(self, e: ForExpr, scope: Scope) -> Any:
        """``[for s in aws_x.y : s.id]`` → Ref to the group; None: evaluate normally."""
        if e.key is not None:
            return None
        items = self.items()
        if isinstance(items, Unknown):
            inst = self.representative(items)
            items = [(None, inst)]
            force = True
        else:
            force = False
        out: list[Any] = []
        for k, v in items:
            s = for_scope(e, scope, k, v)
            if e.cond is not None:
                return None if not force else Unknown(f"instances of {self.address} unknown")
            out.append(evaluate(e.value, s))
        return self._collapse(out, force=force)

    def materialize(self) -> Any:
        return Ref(self.address)


_REPRESENTATIVE = object()
_PYTHON_ERRORS = (ValueError, TypeError, OverflowError, ArithmeticError, KeyError, IndexError,
                  RecursionError)


def _evaluate_meta(expr: Expr, scope: Scope) -> Any:
    """Evaluate a count / for_each / dynamic for_each; whatever fails is an EvalError."""
    try:
        return evaluate(expr, scope)
    except EvalError:
        raise
    except _PYTHON_ERRORS as exc:
        raise EvalError(f"{type(exc).__name__}: {exc}") from None


def expansion_keys(
    attrs: dict[str, Any], scope: Scope, address: str, root: RootContext, file: str,
    line: int,
) -> list[tuple[Any, Any]] | Unknown:
    """(key, each.value) of each instance of a resource or module call: ``[(None, None)]``
    without count / for_each; Unknown when they cannot be known (an error is reported when
    they are invalid, or when the instances would exceed the root module's budget)."""
    keys: list[tuple[Any, Any]] | Unknown
    if "count" in attrs:
        attr = attrs["count"]
        line = attr.line
        try:
            n = _evaluate_meta(attr.expr, scope)
            if is_opaque(n):
                return Unknown(f"count of {address} is unknown: {as_unknown(n).reason}")
            count = to_number(n)
            if count != int(count):
                raise EvalError(f"count must be a whole number, not {count}")
            if count < 0 or count > MAX_INSTANCES:
                raise EvalError(f"out of range: {count:.6g} (0 to {MAX_INSTANCES:,})")
        except EvalError as exc:
            root.error(file, f"count of {address}: {exc}", line)
            return Unknown(f"count of {address} could not be evaluated")
        if _refused(int(count), address, root, file, line):  # before the keys are built
            return Refused(f"{address} is not expanded: past the budget of instances")
        return [(i, None) for i in range(int(count))]
    elif "for_each" in attrs:
        attr = attrs["for_each"]
        line = attr.line
        try:
            coll = _evaluate_meta(attr.expr, scope)
        except EvalError as exc:
            root.error(file, f"for_each of {address}: {exc}", line)
            return Unknown(f"for_each of {address} could not be evaluated")
        keys = _for_each_keys(coll, address, root, file, line)
    else:
        keys = [(None, None)]
    if _refused(1 if isinstance(keys, Unknown) else len(keys), address, root, file, line):
        return Refused(f"{address} is not expanded: past the budget of instances")
    return keys


def _refused(n: int, address: str, root: RootContext, file: str, line: int) -> bool:
    """Count n instances against the root module's budget; past it, an input error (one per
    block, not one per instance of the modules around it) and True."""
    try:
        charge_instances(n, address)
    except BudgetExceeded:
        where = _INDEX.sub("", address)
        root.lose(file, f"{where}: not expanded: {n:,} instances would exceed the limit of "
                  f"{INSTANCE_BUDGET:,} resource and module instances per root module", line)
        return True
    return False


class Refused(Unknown):
    """The keys of a block past the instance budget: an input error, and no instance at all
    (not one representative): what it would hold is not scanned."""


def _for_each_keys(
    coll: Any, address: str, root: RootContext, file: str, line: int
) -> list[tuple[Any, Any]] | Unknown:
    if is_opaque(coll):
        return Unknown(f"for_each of {address} is unknown: {as_unknown(coll).reason}")
    if isinstance(coll, Lazy):
        items = coll.items()
        if isinstance(items, Unknown):
            return items
        coll = {to_str(k): v for k, v in items}
    if isinstance(coll, dict):
        keys = sorted(coll)
        if len(keys) > MAX_INSTANCES:
            root.error(file, f"for_each of {address} has too many elements", line)
            return Unknown("for_each too large")
        return [(k, coll[k]) for k in keys]
    if isinstance(coll, TSet):
        if len(coll) > MAX_INSTANCES:
            root.error(file, f"for_each of {address} has too many elements", line)
            return Unknown("for_each too large")
        out = []
        for x in coll:
            if is_opaque(x):
                return Unknown(f"for_each of {address} has unknown elements")
            if not isinstance(x, str):
                root.error(file, f"for_each of {address}: a set must hold strings", line)
                return Unknown("invalid for_each")
            out.append((x, x))
        return out
    if coll is None:
        root.error(file, f"for_each of {address} is null", line)
        return Unknown("invalid for_each")
    root.error(
        file,
        f"for_each of {address} must be a map or a set of strings, not a list or other value "
        "(use toset())",
        line,
    )
    return Unknown("invalid for_each")


class ResourceInstance(Lazy):
    def __init__(
        self, group: ResourceGroup, key: Any, each_value: Any, *, representative: bool = False
    ) -> None:
        self.group = group
        self.key = key
        self.each_value = each_value
        self.representative = representative
        self.address = group.address + ("" if representative else key_suffix(key))
        self._attrs: dict[str, Any] = {}
        self._scope: Scope | None = None
        self._values: dict[str, Any] | None = None

    @property
    def config(self) -> ResourceConfig:
        return self.group.config

    def scope(self) -> Scope:
        if self._scope is None:
            attrs = self.config.body.attrs
            bindings: dict[str, Any] = {}
            if self.representative:
                why = self.each_value
                if "count" in attrs:
                    bindings["count"] = {"index": why}
                else:
                    bindings["each"] = {"key": why, "value": why}
            elif "count" in attrs:
                bindings["count"] = {"index": self.key}
            elif "for_each" in attrs:
                bindings["each"] = {"key": self.key, "value": self.each_value}
            self._scope = Scope(self.group.module, bindings)
        return self._scope

    def get_attr(self, name: str) -> Any:
        if name in self._attrs:
            v = self._attrs[name]
            if v is _IN_PROGRESS:
                return Unknown(f"{self.address}.{name} refers to itself")
            return v
        self._attrs[name] = _IN_PROGRESS
        try:
            v = self._compute_attr(name)
        finally:
            self._attrs.pop(name, None)
        self._attrs[name] = v
        return v

    def _compute_attr(self, name: str) -> Any:
        if self.config.mode == "data":
            return Unknown(f"{self.address} is read at plan time")
        body = self.config.body
        attr = body.attrs.get(name)
        if attr is not None and name not in META_ARGUMENTS:
            v = evaluate(attr.expr, self.scope())
            if v is None:
                return Ref(self.address, name)  # left to the provider: computed
            return v
        if any(
            b.type == name or (b.type == "dynamic" and b.labels[:1] == [name]) for b in body.blocks
        ):
            return self.group.module.block_values(
                body, self.scope(), name, (self.config.file, self.address)
            )
        if name == "id":
            return Ref(self.address)
        return Ref(self.address, name)

    def index(self, key: Any) -> Any:
        raise EvalError(f"{self.address} is a single resource instance and cannot be indexed")

    def items(self) -> list[tuple[Any, Any]] | Unknown:
        raise EvalError(f"{self.address} is a resource object and cannot be iterated")

    def values(self) -> dict[str, Any]:
        """The plan-shaped values of this instance (snake_case, blocks as lists of dicts)."""
        if self._values is None:
            self._values = self.group.module.body_values(
                self.config.body, self.scope(), (self.config.file, self.address), top=True
            )
        return self._values

    def materialize(self) -> Any:
        return Ref(self.address)


class DataGroup(Lazy):
    def __init__(self, address: str) -> None:
        self.address = address

    def _u(self) -> Unknown:
        return Unknown(f"{self.address} is read at plan time")

    def get_attr(self, name: str) -> Any:
        return self._u()

    def index(self, key: Any) -> Any:
        return self._u()

    def splat(self, ops: tuple[Any, ...], scope: Scope) -> Any:
        return self._u()

    def items(self) -> list[tuple[Any, Any]] | Unknown:
        return self._u()

    def materialize(self) -> Any:
        return self._u()


class PolicyDocumentData(DataGroup):
    """``data.aws_iam_policy_document``: a pure function of its configuration, rendered here
    the way the AWS provider renders it (one-element lists become strings)."""

    def __init__(self, module: ModuleInstance, config: ResourceConfig, address: str) -> None:
        super().__init__(address)
        self.module = module
        self.config = config
        self._json: Any = None

    def get_attr(self, name: str) -> Any:
        if name not in ("json", "minified_json"):
            return super().get_attr(name)
        if self._json is None:
            from scanner.sources.terraform.hcl.data_sources import render_policy_document

            values = self.module.body_values(
                self.config.body, Scope(self.module), (self.config.file, self.address)
            )
            self._json = render_policy_document(values, self.address)
        return self._json


class RegionData(DataGroup):
    """``data.aws_region``: the region of the provider configuration it reads from, when that
    configuration sets it statically (else the environment decides at plan time: Unknown).
    Its ``name`` / ``region`` argument, when set, is the region it looks up instead."""

    REGION_ATTRIBUTES = ("name", "id", "region")

    def __init__(self, module: ModuleInstance, config: ResourceConfig, address: str) -> None:
        super().__init__(address)
        self.module = module
        self.config = config

    def get_attr(self, name: str) -> Any:
        if name not in self.REGION_ATTRIBUTES:
            return super().get_attr(name)
        attrs = self.config.body.attrs
        for arg in ("region", "name"):
            if arg in attrs:
                return evaluate(attrs[arg].expr, Scope(self.module))
        meta = attrs.get("provider")
        key = _provider_key(meta.expr if meta is not None else None, "aws")
        if isinstance(key, Unknown):
            return key
        region = self.module.provider_region(key)
        if isinstance(region, str) and region:
            return region
        if isinstance(region, Unknown):
            return Unknown(f"{self.address}: {region.reason}" if region.reason else "")
        return Unknown(f"{self.address}: the region of provider {key} is not a region: "
                       f"{region!r}")


def _provider_key(expr: Expr | str | None, default: str) -> str | Unknown:
    """The provider configuration a reference such as ``aws.west`` names (``provider = …``, a
    key or value of a module call's ``providers``); ``default`` when there is none."""
    from scanner.sources.terraform.hcl.parse import Lit

    if expr is None:
        return default
    if isinstance(expr, str):
        return expr
    if isinstance(expr, Lit) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, Traversal) and all(op[0] == "a" for op in expr.ops) \
            and len(expr.ops) <= 1:
        return ".".join([expr.root, *(op[1] for op in expr.ops)])
    return Unknown("the provider configuration it uses is not a plain reference")


class ModuleGroup(Lazy):
    """``module.x`` for a module call with count / for_each."""

    def __init__(self, parent: ModuleInstance, call: ModuleCallConfig) -> None:
        self.parent = parent
        self.call = call
        self.address = parent.prefix + "module." + call.name
        self._keys: list[tuple[Any, Any]] | Unknown | None = None
        self._instances: dict[Any, ModuleValue] = {}

    def keys(self) -> list[tuple[Any, Any]] | Unknown:
        if self._keys is None:
            call = self.call
            self._keys = expansion_keys(
                call.body.attrs, Scope(self.parent), self.address, self.parent.root, call.file,
                call.line,
            )
        return self._keys

    def instance(self, key: Any, each_value: Any, representative: bool = False) -> ModuleValue:
        k = _REPRESENTATIVE if representative else key
        mv = self._instances.get(k)
        if mv is None:
            mv = ModuleValue(self, key, each_value, representative)
            self._instances[k] = mv
        return mv

    def instances(self) -> list[ModuleValue]:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return [self.instance(None, keys, representative=True)]
        return [self.instance(k, v) for k, v in keys]

    def get_attr(self, name: str) -> Any:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return keys
        raise EvalError(f"{self.address} has count or for_each: index it before .{name}")

    def index(self, key: Any) -> Any:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return self.instance(None, keys, representative=True)
        for k, v in keys:
            if isinstance(k, int):
                if int(to_number(key)) == k:
                    return self.instance(k, v)
            elif k == to_str(key):
                return self.instance(k, v)
        raise EvalError(f"{self.address}{key_suffix(key)} does not exist")

    def items(self) -> list[tuple[Any, Any]] | Unknown:
        keys = self.keys()
        if isinstance(keys, Unknown):
            return keys
        return [(k, self.instance(k, v)) for k, v in keys]

    def splat(self, ops: tuple[Any, ...], scope: Scope) -> Any:
        items = self.items()
        if isinstance(items, Unknown):
            return items
        if "for_each" in self.call.body.attrs:
            return [apply_ops(self, ops, scope)]
        return [apply_ops(v, ops, scope) for _, v in items]


class ModuleValue(Lazy):
    """One instance of a module call: ``module.x`` / ``module.x["k"]``; attributes are outputs."""

    def __init__(self, group: ModuleGroup, key: Any, each_value: Any, representative: bool) -> None:
        self.group = group
        self.key = key
        self.each_value = each_value
        self.representative = representative
        self._child: ModuleInstance | Unknown | None = None

    def child(self) -> ModuleInstance | Unknown:
        if self._child is None:
            self._child = self.group.parent.instantiate(self)
        return self._child

    def get_attr(self, name: str) -> Any:
        child = self.child()
        if isinstance(child, Unknown):
            return child
        return child.output(name)

    def index(self, key: Any) -> Any:
        raise EvalError(f"{self.group.address} is a module instance and cannot be indexed")

    def items(self) -> list[tuple[Any, Any]] | Unknown:
        child = self.child()
        if isinstance(child, Unknown):
            return child
        return [(k, child.output(k)) for k in sorted(child.config.outputs)]

    def materialize(self) -> Any:
        return Unknown(f"the whole object of {self.group.address}")


# ---------------------------------------------------------------------------------------------
# module instance: the resolver behind every Scope
# ---------------------------------------------------------------------------------------------


class ModuleInstance:
    def __init__(
        self,
        root: RootContext,
        config: ModuleConfig,
        *,
        prefix: str = "",
        call_scope: Scope | None = None,
        call: ModuleCallConfig | None = None,
        depth: int = 0,
        install_key: str = "",
    ) -> None:
        self.root = root
        self.config = config
        self.prefix = prefix  # "module.a[0]." or "" for the root
        self.call_scope = call_scope  # parent scope the inputs are evaluated in
        self.call = call
        self.depth = depth
        self.install_key = install_key
        self._vars: dict[str, Any] = {}
        self._locals: dict[str, Any] = {}
        self._outputs: dict[str, Any] = {}
        self._resources: dict[str, Lazy] = {}
        self._modules: dict[str, Lazy] = {}

    @property
    def path(self) -> str:
        return self.prefix[:-1] if self.prefix else ""

    def close(self) -> None:
        """Drop the memo caches (and the reference cycles through them), so that a finished
        root is freed by reference counting rather than left to the cyclic GC."""
        for m in self._modules.values():
            if isinstance(m, ModuleGroup):
                for mv in m._instances.values():
                    if isinstance(mv._child, ModuleInstance):
                        mv._child.close()
                    mv._child = None
                m._instances.clear()
        for r in self._resources.values():
            if isinstance(r, ResourceGroup):
                for inst in r._instances.values():
                    inst._attrs.clear()
                    inst._scope = None
                    inst._values = None
                r._instances.clear()
                r._keys = None
            elif isinstance(r, PolicyDocumentData):
                r._json = None
        self._modules.clear()
        self._resources.clear()
        self._vars.clear()
        self._locals.clear()
        self._outputs.clear()
        self.call_scope = None

    # -- name resolution -----------------------------------------------------------------------

    def resolve(self, root: str, ops: tuple[Any, ...], scope: Scope) -> tuple[Any, int]:
        first = ops[0][1] if ops and ops[0][0] == "a" else None
        if root == "var":
            if first is None:
                raise EvalError("var must be followed by a variable name")
            return self.var(first), 1
        if root == "local":
            if first is None:
                raise EvalError("local must be followed by a name")
            return self.local(first), 1
        if root == "module":
            if first is None:
                raise EvalError("module must be followed by a module name")
            return self.module(first), 1
        if root == "data":
            if len(ops) >= 2 and ops[1][0] == "a" and first is not None:
                return self.data(first, ops[1][1]), 2
            raise EvalError("data must be followed by a type and a name")
        if root == "path":
            # as terraform gives them, run in the root module: relative to it, cwd absolute
            if first == "module":
                return _relative(self.config.dir, self.root.root_dir), 1
            if first == "root":
                return ".", 1
            if first == "cwd":
                return os.path.abspath(self.root.root_dir or ".").replace(os.sep, "/"), 1
            raise EvalError(f"unknown path.{first}")
        if root == "terraform":
            if first == "workspace":
                return self.root.workspace, 1
            return Unknown(f"terraform.{first} is not known statically"), 1
        if root in ("count", "each"):
            raise EvalError(f"{root} is only available in a block with {root}")
        if root == "self":
            return Unknown("self is only known at apply"), len(ops)
        if root == "resource":
            # terraform's explicit prefix: resource.aws_vpc.main is aws_vpc.main
            if len(ops) >= 2 and ops[1][0] == "a" and first is not None:
                r = self.resource(first, ops[1][1])
                if r is not None:
                    return r, 2
                raise EvalError(f"reference to undeclared resource {first}.{ops[1][1]}")
            raise EvalError("resource must be followed by a type and a name")
        if first is not None:
            r = self.resource(root, first)
            if r is not None:
                return r, 1
            raise EvalError(f"reference to undeclared resource {root}.{first}")
        raise EvalError(f'unknown name "{root}"')

    def var(self, name: str) -> Any:
        if name in self._vars:
            v = self._vars[name]
            if v is _IN_PROGRESS:
                return Unknown(f"var.{name} refers to itself")
            if isinstance(v, EvalError):
                raise v
            return v
        decl = self.config.variables.get(name)
        if decl is None:
            raise EvalError(f'undeclared variable "{name}"')
        self._vars[name] = _IN_PROGRESS
        try:
            v: Any = self._var_value(name, decl)
        except EvalError as exc:
            v = exc
        if is_sensitive(decl.body):
            mark_sensitive(v)
        self._vars[name] = v
        if isinstance(v, EvalError):
            raise v
        return v

    def _var_type(self, name: str) -> Type:
        decl = self.config.variables[name]
        if decl.parsed_type is not None:
            return decl.parsed_type  # type: ignore[no-any-return]
        t: Type = ANY
        attr = decl.body.attrs.get("type")
        if attr is not None:
            try:
                t = parse_type(attr.expr, _const_scope())
            except (TypeSyntaxError, EvalError) as exc:
                self.root.error(decl.file, f"variable {name}: invalid type: {exc}", attr.line)
        decl.parsed_type = t
        return t

    def _var_value(self, name: str, decl: Any) -> Any:
        attrs = decl.body.attrs
        value: Any
        have = False
        if self.call is None:
            if name in self.root.root_values:
                value = self.root.root_values[name]
                have = True
        elif name in self.call.body.attrs and name not in MODULE_META:
            assert self.call_scope is not None
            value = evaluate(self.call.body.attrs[name].expr, self.call_scope)
            have = True
        if not have or value is None:
            nullable = True
            if "nullable" in attrs:
                with contextlib.suppress(EvalError):
                    nullable = evaluate(attrs["nullable"].expr, _const_scope()) is not False
            if not have or not nullable:
                if "default" in attrs:
                    try:
                        value = evaluate(attrs["default"].expr, _const_scope())
                    except EvalError as exc:
                        self.root.error(
                            decl.file,
                            f"variable {name}: invalid default: {exc}",
                            attrs["default"].line,
                        )
                        return Unknown(f"var.{name}: invalid default")
                elif self.call is None:
                    return Unknown(f"var.{name} has no value (no default, not set in tfvars)")
                else:
                    return Unknown(f"var.{name} is required by the module but not passed")
        t = self._var_type(name)
        if t is ANY:
            return value
        try:
            return convert(value, t, f"var.{name}")
        except EvalError as exc:
            where = self.call.file if self.call is not None else decl.file
            line = self.call.line if self.call is not None else decl.line
            if self.call is None and have:
                # a value given to the root module (tfvars, --var): terraform refuses to plan
                self.root.lose(where, f"the value given for var.{name} does not match its "
                                      f"type: {exc}", line)
            else:
                self.root.notice(where, f"value of var.{name} does not match its type: {exc}",
                                 line)
            return Unknown(f"var.{name} does not match its type")

    def local(self, name: str) -> Any:
        entry = self.config.locals.get(name)
        missing = f'undeclared local value "{name}"'
        return self._memo_eval(self._locals, name, entry, f"local.{name}", missing)

    def output(self, name: str) -> Any:
        entry = self.config.outputs.get(name)
        missing = f'module {self.path} has no output "{name}"'
        v = self._memo_eval(self._outputs, name, entry, f"output {name}", missing)
        if name in self.config.sensitive_outputs:
            mark_sensitive(v)
        return v

    def _memo_eval(self, memo: dict[str, Any], name: str, entry: Any, label: str,
                   missing: str) -> Any:
        """Evaluate a local or output once; a cycle or an error is remembered and re-raised."""
        if name in memo:
            v = memo[name]
            if v is _IN_PROGRESS:
                raise EvalError(f"{label} refers to itself")
            if isinstance(v, EvalError):
                raise v
            return v
        if entry is None:
            raise EvalError(missing)
        memo[name] = _IN_PROGRESS
        try:
            v = evaluate(entry[0].expr, Scope(self))
        except BudgetExceeded as exc:  # an input error where it is written, once
            if not exc.reported:
                exc.reported = True
                self.root.error(entry[1], f"{self.prefix}{label}: {exc}", entry[0].line)
            v = exc
        except EvalError as exc:
            v = exc
        except RecursionError:
            v = EvalError("expression nested too deeply")
        memo[name] = v
        if isinstance(v, EvalError):
            raise v
        return v

    def resource(self, rtype: str, name: str) -> Lazy | None:
        key = f"{rtype}.{name}"
        r = self._resources.get(key)
        if r is None:
            cfg = self.config.resources.get(key)
            if cfg is None:
                return None
            group = ResourceGroup(self, cfg)
            self._resources[key] = group
            r = group
        assert isinstance(r, ResourceGroup)
        if r.expanded:
            return r
        return r.instance(None)

    def group(self, cfg: ResourceConfig) -> ResourceGroup:
        key = cfg.key
        r = self._resources.get(key)
        if r is None:
            r = ResourceGroup(self, cfg)
            self._resources[key] = r
        assert isinstance(r, ResourceGroup)
        return r

    def data(self, dtype: str, name: str) -> Any:
        address = f"{self.prefix}data.{dtype}.{name}"
        cfg = self.config.resources.get(f"data.{dtype}.{name}")
        if cfg is None:
            raise EvalError(f"reference to undeclared data source data.{dtype}.{name}")
        attrs = cfg.body.attrs
        single = "count" not in attrs and "for_each" not in attrs
        if dtype == "aws_region" and single:
            return RegionData(self, cfg, address)
        if dtype == "aws_iam_policy_document" and single:
            key = f"data.{dtype}.{name}"
            doc = self._resources.get(key)
            if doc is None:
                doc = PolicyDocumentData(self, cfg, address)
                self._resources[key] = doc
            return doc
        return DataGroup(address)

    def provider_region(self, key: str) -> Any:
        """The ``region`` of provider configuration ``key`` ("aws", "aws.west") as this module
        sees it: its own provider block, else what its module call passes in ``providers``,
        else (the default configuration only, and only without ``providers``) its parent's.
        Unknown when no configuration sets it (the environment's AWS_REGION decides)."""
        body = self.config.providers.get(key)
        if body is not None:
            attr = body.attrs.get("region")
            if attr is None:
                return Unknown(f"provider {key} sets no region (the environment decides)")
            return evaluate(attr.expr, Scope(self))
        parent = self.call_scope.resolver if self.call_scope is not None else None
        if self.call is None or not isinstance(parent, ModuleInstance):
            return Unknown(f"no provider {key} block in the root module (the environment "
                           "decides the region)")
        passed = self.call.body.attrs.get("providers")
        if passed is None:
            if "." in key:
                return Unknown(f"provider {key} is not passed to {self.path}")
            return parent.provider_region(key)
        from scanner.sources.terraform.hcl.parse import ObjectExpr

        if not isinstance(passed.expr, ObjectExpr):
            return Unknown(f"the providers of {self.path} are not a literal map")
        for item_key, value in passed.expr.items:
            if _provider_key(item_key, "") == key:
                target = _provider_key(value, "")
                if isinstance(target, Unknown):
                    return target
                return parent.provider_region(target)
        return Unknown(f"provider {key} is not passed to {self.path}")

    def module(self, name: str) -> Any:
        m = self._modules.get(name)
        if m is None:
            call = self.config.module_calls.get(name)
            if call is None:
                raise EvalError(f'undeclared module "{name}"')
            m = ModuleGroup(self, call)
            self._modules[name] = m
        assert isinstance(m, ModuleGroup)
        attrs = m.call.body.attrs
        if "count" in attrs or "for_each" in attrs:
            return m
        return m.instance(None, None)

    def module_group(self, name: str) -> ModuleGroup:
        self.module(name)
        m = self._modules[name]
        assert isinstance(m, ModuleGroup)
        return m

    # -- child modules -------------------------------------------------------------------------

    def instantiate(self, mv: ModuleValue) -> ModuleInstance | Unknown:
        call = mv.group.call
        address = mv.group.address + ("" if mv.representative else key_suffix(mv.key))
        directory = self.module_dir(call)
        if isinstance(directory, Unknown):
            return directory
        if self.depth + 1 > MAX_MODULE_DEPTH:
            self.root.lose(call.file, f"{address}: modules nested too deeply", call.line)
            return Unknown("modules nested too deeply")
        config = self.root.modules(directory)
        bindings: dict[str, Any] = {}
        attrs = call.body.attrs
        if mv.representative:
            if "count" in attrs:
                bindings["count"] = {"index": mv.each_value}
            else:
                bindings["each"] = {"key": mv.each_value, "value": mv.each_value}
        elif "count" in attrs:
            bindings["count"] = {"index": mv.key}
        elif "for_each" in attrs:
            bindings["each"] = {"key": mv.key, "value": mv.each_value}
        key = f"{self.install_key}.{call.name}" if self.install_key else call.name
        return ModuleInstance(
            self.root,
            config,
            prefix=address + ".",
            call_scope=Scope(self, bindings),
            call=call,
            depth=self.depth + 1,
            install_key=key,
        )

    def module_dir(self, call: ModuleCallConfig) -> str | Unknown:
        src = call.source
        address = self.prefix + "module." + call.name
        if src is None:
            self.root.lose(
                call.file, f"{address}: the module source must be a literal string", call.line
            )
            return Unknown(f"module {address}: no literal source")
        if src.startswith("./") or src.startswith("../") or src in (".", ".."):
            base = self.config.dir or "."
            d = posixpath.normpath(posixpath.join(base.replace(os.sep, "/"), src))
            if not os.path.isdir(d):
                self.root.lose(
                    call.file,
                    f"{address}: local module source {src!r} is not a directory",
                    call.line,
                )
                return Unknown(f"module {address}: source not found")
            package = _fetched_package(base, self.root.fetch)
            if package is not None and not _within(d, package):
                # terraform: "Local module path escapes module package"
                self.root.lose(call.file, f"{address}: local module source {src!r} leads out "
                               "of the fetched package it is in: not read", call.line)
                return Unknown(f"module {address}: source out of its package")
            return d
        key = f"{self.install_key}.{call.name}" if self.install_key else call.name
        installed = self.root.installed.get(key)
        version = _literal(call.body.attrs.get("version"))
        stale = None
        if installed is not None and os.path.isdir(installed.dir):
            stale = _stale(installed, src, version)
            if stale is None:
                return installed.dir
        return self._remote_dir(call, address, src, version, stale)

    def _remote_dir(self, call: ModuleCallConfig, address: str, src: str,
                    version: str | None, stale: str | None) -> str | Unknown:
        """A remote module: fetched (``--fetch-modules``), else not read, reported at the
        call (TF-001) with what would read it. stale: why the module terraform init installed
        for this call is not the one it names now."""
        from scanner.sources.terraform.module_sources import display_source

        shown = display_source(src)
        root_dir = self.root.root_dir or "."
        if self.root.fetch is not None and version is None and "version" in call.body.attrs:
            reason = "its version constraint is not a literal string (terraform requires one)"
            fix = "write the version constraint as a literal string"
        elif stale is not None and self.root.fetch is None:
            reason = f".terraform/modules holds it {stale}"
            fix = f"run terraform init again in {root_dir}, or scan with --fetch-modules"
        elif self.root.fetch is not None:
            from scanner.sources.terraform.fetch import FetchError

            try:
                return self.root.fetch(src, version, f"{call.file}:{call.line}")
            except FetchError as exc:
                reason = f"it could not be fetched: {exc}"
                self.root.error(call.file, f"{address}: module source {shown!r} could not be "
                                f"fetched: {exc}", call.line)
                fix = ("make the source reachable (network, credentials of git or the ssh "
                       f"agent) and scan again, or run terraform init in {root_dir}")
        else:
            reason = "its remote source is not installed in .terraform/modules"
            fix = f"run terraform init in {root_dir}, or scan with --fetch-modules"
        where = _INDEX.sub("", address)
        if where not in self.root.unread:
            self.root.unread[where] = UnreadModule(
                where, shown, version, call.file, call.line, reason, fix,
                _INDEX.sub("", self.path))
        return Unknown(f"output of remote module {where} ({shown}), which was not read")

    # -- values --------------------------------------------------------------------------------

    def body_values(
        self, body: Body, scope: Scope, site: tuple[str, str], *, top: bool = False
    ) -> dict[str, Any]:
        """Values of a block body; site is (file, resource address) for notices."""
        out: dict[str, Any] = {}
        for name, attr in body.attrs.items():
            if top and name in META_ARGUMENTS:
                continue
            try:
                v, err = safe_evaluate(attr.expr, scope)
                if err is not None:
                    self.root.notice(
                        site[0], f"{site[1]}: {name}: could not evaluate: {err}", attr.line
                    )
                if type(v) not in _PLAIN or isinstance(v, (int, float)):
                    v = materialize(v)
            except BudgetExceeded as exc:  # the value is an input error, named
                if exc.quiet:
                    pass
                elif exc.reported:  # where it was written (a local, an output)
                    self.root.notice(site[0], f"{site[1]}: {name}: not evaluated: {exc}",
                                     attr.line)
                elif self.root.first(site[0], attr.line, name, str(exc)):
                    self.root.error(site[0], f"{site[1]}: {name}: {exc}", attr.line)
                v = Unknown(f"not evaluated: {exc}")
            except EvalError as exc:
                v = Unknown(str(exc))
            out[name] = v
        if body.blocks:
            for btype in _block_types(body):
                if btype in SKIPPED_BLOCKS:
                    continue
                out[btype] = self.block_values(body, scope, btype, site)
        return out

    def block_values(self, body: Body, scope: Scope, btype: str, site: tuple[str, str]) -> Any:
        result: list[Any] = []
        for b in body.blocks:
            if b.type == btype:
                result.append(self.body_values(b.body, scope, site))
            elif b.type == "dynamic" and b.labels[:1] == [btype]:
                expanded = self.dynamic(b, scope, site)
                if isinstance(expanded, Unknown):
                    return expanded
                result.extend(expanded)
        return result

    def dynamic(
        self, block: Block, scope: Scope, site: tuple[str, str]
    ) -> list[dict[str, Any]] | Unknown:
        attrs = block.body.attrs
        name = block.labels[0]
        it = name
        if "iterator" in attrs:
            e = attrs["iterator"].expr
            if isinstance(e, Traversal) and not e.ops:
                it = e.root
        fe = attrs.get("for_each")
        content = next((b for b in block.body.blocks if b.type == "content"), None)
        if fe is None or content is None:
            self.root.error(
                site[0], f'{site[1]}: dynamic "{name}" needs for_each and content', block.start_line
            )
            return Unknown(f'invalid dynamic "{name}" block')
        try:
            coll = _evaluate_meta(fe.expr, scope)
            pairs = iter_pairs(coll)
        except BudgetExceeded as exc:
            self.root.error(site[0], f'{site[1]}: dynamic "{name}": {exc}', fe.line)
            return Unknown(f'dynamic "{name}" not expanded: {exc}')
        except EvalError as exc:
            self.root.notice(site[0], f'{site[1]}: dynamic "{name}": {exc}', fe.line)
            return Unknown(f'for_each of dynamic "{name}" could not be evaluated: {exc}')
        if isinstance(pairs, Unknown):
            return Unknown(f'dynamic "{name}" blocks unknown: {pairs.reason}')
        out = []
        for k, v in pairs:
            out.append(
                self.body_values(content.body, scope.child({it: {"key": k, "value": v}}), site)
            )
        return out


def _fetched_package(directory: str, fetch: Any) -> str | None:
    """The fetched package (a cache entry, ``CACHE/KIND/KEY``) a module directory lies in,
    else None."""
    cache = getattr(fetch, "cache_dir", None)
    if cache is None:
        return None
    top = os.path.realpath(cache)
    rel = os.path.relpath(os.path.realpath(directory or "."), top)
    parts = rel.split(os.sep)
    if rel.startswith("..") or len(parts) < 2:
        return None
    return os.path.join(top, parts[0], parts[1])


def _within(path: str, top: str) -> bool:
    real = os.path.realpath(path)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _stale(installed: Installed, source: str, version: str | None) -> str | None:
    """Why the module terraform init installed for a call is not the one the call names now
    (its source or version changed since: terraform refuses to plan until init runs again);
    None when it is, or when the record does not say (an older modules.json)."""
    from scanner.sources.terraform.module_sources import (
        OtherSource,
        RegistrySource,
        display_source,
        parse_source,
    )
    from scanner.sources.terraform.versions import VersionError, allows

    if installed.source:
        now, then = parse_source(source), parse_source(installed.source)
        if isinstance(now, OtherSource) or isinstance(then, OtherSource):
            same = source.strip() == installed.source.strip()
        elif isinstance(now, RegistrySource) and isinstance(then, RegistrySource):
            same = (now.package.lower(), now.subdir) == (then.package.lower(), then.subdir)
        else:
            same = now == then
        if not same:
            return f"from another source ({display_source(installed.source)!r})"
    if version and installed.version:
        try:
            if not allows(version, installed.version):
                return f"at version {installed.version}, which {version!r} does not allow"
        except VersionError:
            return None
    return None


def _literal(attr: Any) -> str | None:
    """A module call argument that is a literal string (``version``), else None."""
    from scanner.sources.terraform.hcl.parse import Lit

    expr = getattr(attr, "expr", None)
    if isinstance(expr, Lit) and isinstance(expr.value, str):
        return expr.value
    return None


def _relative(directory: str, root_dir: str) -> str:
    try:
        rel = os.path.relpath(directory or ".", root_dir or ".")
    except ValueError:
        return (directory or ".").replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def _block_types(body: Body) -> list[str]:
    seen: dict[str, None] = {}
    for b in body.blocks:
        if b.type == "dynamic":
            if b.labels:
                seen.setdefault(b.labels[0], None)
        else:
            seen.setdefault(b.type, None)
    return list(seen)


# ---------------------------------------------------------------------------------------------
# walking a root: every resource instance of every module instance
# ---------------------------------------------------------------------------------------------


@dataclass
class InstanceRecord:
    type: str
    address: str
    values: dict[str, Any]
    config: ResourceConfig
    module_path: str
    # True, or Unknown when an unknown count / for_each (of the resource or of a module call
    # around it) leaves open whether terraform creates it at all
    exists: bool | Unknown = True
    instance: Any = None  # the ResourceInstance (its scope, to evaluate an attribute again)
    # True when it is created by the root module's default aws provider: no ``provider``
    # argument, no module call on the way with a ``providers`` map or its own aws provider
    default_provider: bool = True


def walk_instances(
    inst: ModuleInstance, want: Callable[[str], bool] | None = None,
    exists: bool | Unknown = True, default_provider: bool = True,
) -> Iterator[InstanceRecord]:
    """Every managed resource instance, depth-first through module calls, in file order.
    Where count / for_each is unknown, one representative instance stands for the unknown
    set, with ``exists`` Unknown (it may be none at all)."""
    root = inst.root
    if inst.call is not None and any("alias" not in p.attrs for p in inst.config.aws_providers):
        default_provider = False  # a module that configures its own aws provider
    for cfg in inst.config.resources.values():
        if cfg.mode != "managed" or (want is not None and not want(cfg.type)):
            continue
        group = inst.group(cfg)
        keys = group.keys()
        here = exists
        if isinstance(keys, Refused):
            continue
        if isinstance(keys, Unknown):
            root.notice(
                cfg.file,
                f"{group.address}: {keys.reason}; scanned once with count.index / each unknown",
                cfg.start_line,
            )
            if here is True:
                here = Unknown(f"{keys.reason}")
        default = default_provider and "provider" not in cfg.body.attrs
        for ri in group.instances():
            yield InstanceRecord(cfg.type, ri.address, ri.values(), cfg, inst.path, here, ri,
                                 default)
    for name in inst.config.module_calls:
        group = inst.module_group(name)
        keys = group.keys()
        call = group.call
        here = exists
        if isinstance(keys, Refused):
            continue
        if isinstance(keys, Unknown):
            root.notice(
                call.file,
                f"{group.address}: {keys.reason}; scanned once with count.index / each unknown",
                call.line,
            )
            if here is True:
                here = Unknown(f"{keys.reason}")
        inherits = default_provider and _passes_default_aws(call.body.attrs.get("providers"))
        for mv in group.instances():
            child = mv.child()
            if isinstance(child, Unknown):
                continue
            yield from walk_instances(child, want, here, inherits)


def _passes_default_aws(attr: Any) -> bool:
    """A module call without a ``providers`` map, or whose map passes the caller's default aws
    provider as its own (``providers = { aws = aws }``): its resources use that provider."""
    if attr is None:
        return True
    from scanner.sources.terraform.hcl.parse import Lit, ObjectExpr

    expr = attr.expr
    if not isinstance(expr, ObjectExpr):
        return False
    for k, v in expr.items:
        name = k if isinstance(k, str) else k.value if isinstance(k, Lit) else \
            (k.root if isinstance(k, Traversal) and not k.ops else None)
        if name == "aws":
            return isinstance(v, Traversal) and v.root == "aws" and not v.ops
    return False  # no "aws" entry: whether the default one is inherited is not followed


def load_tfvars(path: str, cache: dict[Any, Any] | None = None) -> dict[str, Any]:
    """Values of a ``.tfvars`` / ``.tfvars.json`` file; raises ParseError. cache: the run's
    parse cache of expressions (:class:`~.config.ParseCache` ``exprs``)."""
    from scanner.sources.terraform.hcl.config import read_text
    from scanner.sources.terraform.hcl.parse import ParseError, parse_hcl

    text = read_text(path)
    if path.endswith(".json"):
        from scanner.sources.terraform.hcl.json_syntax import parse_tfvars_json

        return parse_tfvars_json(text)
    parsed = parse_hcl(text.encode("utf-8"), want_skips=False, cache=cache)
    if parsed.body.blocks:
        raise ParseError(
            "blocks are not allowed in a variables file", parsed.body.blocks[0].start_line
        )
    out: dict[str, Any] = {}
    scope = _const_scope()
    for name, attr in parsed.body.attrs.items():
        try:
            out[name] = evaluate(attr.expr, scope)
        except EvalError as exc:
            raise ParseError(f"{name}: {exc}", attr.line) from None
    return out


def cli_value(text: str, t: Type) -> Any:
    """A ``--var NAME=VALUE`` string: parsed as an expression for complex types, else a string."""
    from scanner.sources.terraform.hcl.parse import parse_expression
    from scanner.sources.terraform.hcl.type_constraints import is_complex

    if is_complex(t):
        return evaluate(parse_expression(text), _const_scope())
    return text


def read_workspace(root_dir: str) -> str:
    """The selected workspace: ``TF_WORKSPACE`` (terraform's override, how CI selects one),
    else ``terraform workspace select``'s, else "default"."""
    chosen = os.environ.get("TF_WORKSPACE", "").strip()
    if chosen:
        return chosen[:256]
    from scanner.inputs.safe_read import ReadError, read_regular

    path = os.path.join(root_dir or ".", ".terraform", "environment")
    if not os.path.exists(path):
        return "default"
    try:  # a regular file only: a FIFO or a link to /dev/stdin there would block the scan
        name = read_regular(path, limit=4096).decode("utf-8").strip()
    except (ReadError, OSError, UnicodeDecodeError):
        return "default"
    return name[:256] or "default"


MAX_MANIFEST_BYTES = 16 * 1024 * 1024


def read_modules_json(root_dir: str) -> dict[str, Installed]:
    from scanner.inputs.safe_read import ReadError, read_regular

    path = os.path.join(root_dir or ".", ".terraform", "modules", "modules.json")
    if not os.path.exists(path):
        return {}
    try:  # a regular file only (a FIFO, or a link to /dev/zero, would hang or fill memory)
        doc = json.loads(read_regular(path, limit=MAX_MANIFEST_BYTES).decode("utf-8"))
    except (ReadError, OSError, ValueError, RecursionError):
        return {}
    out: dict[str, Installed] = {}
    base = (root_dir or ".").replace(os.sep, "/")
    for m in doc.get("Modules", []) if isinstance(doc, dict) else []:
        if not isinstance(m, dict):
            continue
        key, d = m.get("Key"), m.get("Dir")
        if isinstance(key, str) and key and isinstance(d, str):
            src, ver = m.get("Source"), m.get("Version")
            out[key] = Installed(
                d if os.path.isabs(d) else posixpath.normpath(posixpath.join(base, d)),
                src if isinstance(src, str) and src else None,
                ver if isinstance(ver, str) and ver else None)
    return out


__all__ = [
    "Expr",
    "InstanceRecord",
    "ModuleInstance",
    "RootContext",
    "cli_value",
    "load_module",
    "load_tfvars",
    "make_set",
    "read_modules_json",
    "walk_instances",
]
