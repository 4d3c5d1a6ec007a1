"""The lazy values of a module instance: resource groups and their instances (``count`` /
``for_each`` expanded within budgets), data sources, module calls and their outputs. Each is
evaluated when something refers to it, once (:class:`.values.Lazy`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scanner.model import InputError, Notice, Ref, Unknown
from scanner.sources.terraform.hcl.config import (
    META_ARGUMENTS,
    ModuleCallConfig,
    ModuleConfig,
    ResourceConfig,
)
from scanner.sources.terraform.hcl.expressions import (
    apply_ops,
    evaluate,
    for_scope,
)
from scanner.sources.terraform.hcl.parse import Expr, ForExpr, Traversal
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
    literal_scope,
    to_number,
    to_str,
)

if TYPE_CHECKING:
    from scanner.sources.terraform.hcl.modules import ModuleInstance

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
