"""Module instances: variables, locals, resources (with count / for_each), local module calls
(expanded with their inputs), outputs, and the plan-shaped ``values`` of each resource instance.

Everything is lazy and memoized: a local, a variable or a resource attribute is evaluated when
something refers to it, once. A reference cycle yields Unknown, never a hang.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from scanner.model import Unknown
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
    evaluate,
    materialize,
    safe_evaluate,
)
from scanner.sources.terraform.hcl.functions import make_set
from scanner.sources.terraform.hcl.lazy_blocks import (
    _IN_PROGRESS,
    _INDEX,
    _PLAIN,
    MAX_INSTANCES,
    MAX_MODULE_DEPTH,
    SKIPPED_BLOCKS,
    DataGroup,
    Installed,
    ModuleGroup,
    ModuleValue,
    PolicyDocumentData,
    Refused,
    RegionData,
    ResourceGroup,
    ResourceInstance,
    RootContext,
    UnreadModule,
    _const_scope,
    _evaluate_meta,
    _provider_key,
    expansion_keys,
    key_suffix,
)
from scanner.sources.terraform.hcl.parse import Block, Body, Expr, Traversal
from scanner.sources.terraform.hcl.root_files import (
    MAX_MANIFEST_BYTES,
    _fetched_package,
    _stale,
    _within,
    cli_value,
    load_tfvars,
    read_modules_json,
    read_workspace,
)
from scanner.sources.terraform.hcl.type_constraints import (
    ANY,
    Type,
    TypeSyntaxError,
    convert,
    parse_type,
)
from scanner.sources.terraform.hcl.values import (
    BudgetExceeded,
    EvalError,
    Lazy,
    Scope,
    iter_pairs,
    mark_sensitive,
)

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
            v = self._var_value(name, decl)
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
        calls = inst.module_group(name)
        keys = calls.keys()
        call = calls.call
        here = exists
        if isinstance(keys, Refused):
            continue
        if isinstance(keys, Unknown):
            root.notice(
                call.file,
                f"{calls.address}: {keys.reason}; scanned once with count.index / each unknown",
                call.line,
            )
            if here is True:
                here = Unknown(f"{keys.reason}")
        inherits = default_provider and _passes_default_aws(call.body.attrs.get("providers"))
        for mv in calls.instances():
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


__all__ = [
    "MAX_INSTANCES",
    "MAX_MANIFEST_BYTES",
    "MAX_MODULE_DEPTH",
    "SKIPPED_BLOCKS",
    "DataGroup",
    "Expr",
    "Installed",
    "InstanceRecord",
    "ModuleGroup",
    "ModuleInstance",
    "ModuleValue",
    "PolicyDocumentData",
    "Refused",
    "RegionData",
    "ResourceGroup",
    "ResourceInstance",
    "RootContext",
    "UnreadModule",
    "cli_value",
    "expansion_keys",
    "key_suffix",
    "load_module",
    "load_tfvars",
    "make_set",
    "read_modules_json",
    "read_workspace",
    "walk_instances",
]
