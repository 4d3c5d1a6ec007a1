"""Terraform HCL source: ``.tf`` / ``.tf.json`` code → normalized Resources, before any plan.

Root modules. A directory holding ``.tf`` files is a root module, and so is every such directory
below a given directory (``.terraform/``, ``.git/``, hidden directories and virtualenvs are
skipped), except a directory that another scanned directory uses as a local module source
(``source = "../.."``): it is scanned as a module, through the calls, with their inputs.
A ``.tf`` file given by name stands for its directory's module, because a terraform module is a
directory: all files of that directory are loaded (variables, locals, other resources, default
encryption) and all its resources are reported, as ``terraform plan`` there would; its
subdirectories are not walked.

Variables of a root come, lowest precedence first, from defaults, ``terraform.tfvars``,
``terraform.tfvars.json``, ``*.auto.tfvars`` / ``*.auto.tfvars.json`` (lexical order), the
``var_files`` in order, then ``variables`` (``--var NAME=VALUE``). ``TF_VAR_*`` environment
variables are not read (scans stay reproducible).

What is evaluated (anything else is UNKNOWN with a reason, never a guess):

- literals, strings with escapes, heredocs (``<<EOT``, ``<<-EOT``), templates with
  interpolations, ``%{if}`` / ``%{for}`` directives and ``~`` strip markers;
- ``var.*`` (typed: ``optional()`` attributes filled with their defaults), ``local.*``,
  ``count.index``, ``each.key`` / ``each.value``, ``path.module`` / ``path.root`` / ``path.cwd``,
  ``terraform.workspace`` (``TF_WORKSPACE``, else ``.terraform/environment``, else "default");
- references to resources: an attribute set in the configuration is its value; anything else is
  ``Ref(address[, attr])`` (``id`` → ``Ref(address)``); ``aws_x.y[*].id`` and
  ``[for s in aws_x.y : s.id]`` over all instances → ``Ref("aws_x.y")``; module outputs of
  local modules; ``data.aws_iam_policy_document.*.json`` rendered; other data sources UNKNOWN;
- indexing, attribute access, splats (``[*]``, ``.*``), conditionals, arithmetic, comparison,
  logic (short-circuit on known operands), ``for`` expressions (list and object, ``if``,
  grouping ``...``), ``...`` argument expansion;
- functions: abs alltrue anytrue base64decode base64encode base64gzip base64sha256 base64sha512
  basename can ceil chomp chunklist cidrhost cidrnetmask cidrsubnet cidrsubnets coalesce
  coalescelist compact concat contains csvdecode dirname distinct element endswith flatten floor
  format formatlist index indent join jsondecode jsonencode keys length log lookup lower
  matchkeys max md5 merge min nonsensitive one parseint pow range regex regexall replace
  reverse sensitive setintersection setproduct setsubtract setunion sha1 sha256 sha512 signum
  slice sort split startswith strcontains strrev substr sum title tobool tolist tomap tonumber
  toset tostring transpose trim trimprefix trimspace trimsuffix try upper urlencode uuidv5
  values yamldecode yamlencode zipmap; file templatefile fileexists filebase64 file*sha*
  read inside the scanned tree only (else UNKNOWN); regular expressions with RE2. Not
  evaluated (UNKNOWN): the clock and randomness (timestamp, uuid, bcrypt …), fileset,
  provider functions;
- ``count`` / ``for_each`` over known values (addresses ``[0]`` / ``["key"]``); unknown ones
  give one representative instance at the unindexed address, whose ``exists`` is Unknown,
  and a notice;
- ``dynamic`` blocks (``iterator``, nested) over known values; unknown → the blocks are UNKNOWN;
- local modules (``source = "./…"``) with count / for_each, nested; remote modules are read
  from ``.terraform/modules`` when ``terraform init`` ran, else a notice and UNKNOWN outputs;
- ``override.tf`` / ``*_override.tf`` merged; ``.tf.json`` files.

Inline suppressions: ``# gpuaudit:skip=EBS-001:reason`` (or ``//``, ``/* */``) inside a resource
block or in the comment lines right above it. A skip without a reason is reported as a notice
and does not suppress anything.

Bad input (a syntax error, binary or non-UTF-8 content, a file over 5 MiB, a symlink loop, a
FIFO, a symbolic link out of the scanned tree) is an InputError naming the file and line; the
other files of the module are still read. Evaluation is bounded per root module (the budgets
of :mod:`.values`); past one, the value or block is an InputError where it is written.
Sensitive values (variables, outputs, ``sensitive()``) end in ``SourceResult.sensitive``.
Many root modules (64 or more) are scanned in forked worker processes, one per CPU
(``GPUAUDIT_WORKERS=N`` overrides).
"""

from __future__ import annotations

import contextlib
import gc
import os
import posixpath
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from scanner.model import (
    Gap,
    InputError,
    Notice,
    Provenance,
    Resource,
    Skip,
    SourceKind,
    SourceResult,
    Unknown,
)

SKIP_DIRS = frozenset({"node_modules", "venv", "__pycache__"})
TF_SUFFIXES = (".tf", ".tf.json")
PARALLEL_MIN_ROOTS = 64  # fewer roots than this: one process (forking costs ~50 ms)
_LOCAL_SOURCE = re.compile(rb'source"?\s*[=:]\s*"\.')
_T = TypeVar("_T")
_SKIP_RE = re.compile(r"gpuaudit:skip=([A-Za-z0-9_.\-]+)(?::(.*?))?(?=gpuaudit:skip=|\*/|$)", re.S)


def _norm(path: str) -> str:
    p = posixpath.normpath(path.replace(os.sep, "/"))
    return p


class _Modules:
    """Module directories parsed once per run, whoever uses them."""

    def __init__(self) -> None:
        from scanner.sources.terraform.hcl.config import ModuleConfig, ParseCache

        self._cache: dict[str, ModuleConfig] = {}
        self._refs: dict[str, list[str]] = {}
        self.extra_errors: list[InputError] = []  # module file errors found by workers
        # --fetch-modules: (source, version, where) → a module directory (raises FetchError)
        self.fetch: Callable[[str, str | None, str], str] | None = None
        self.files = ParseCache()

    def get(self, directory: str) -> Any:
        from scanner.sources.terraform.hcl.config import ModuleConfig, load_module

        d = _norm(directory)
        cfg = self._cache.get(d)
        if cfg is None:
            if self.files.admit_dir(d):
                cfg = load_module(d, self.files)
            else:
                cfg = ModuleConfig(dir=d, errors=[InputError(
                    d, "a symbolic link to a directory outside the scanned tree: not followed")])
            self._cache[d] = cfg
        return cfg

    def local_refs(self, directory: str) -> list[str]:
        """Directories this one uses as local module sources. Parses the directory only when a
        quick text search finds a ``source = "./…"``: discovery stays cheap on big trees."""
        d = _norm(directory)
        hit = self._refs.get(d)
        if hit is None:
            hit = _local_sources(self.get(d)) if self._mentions_local_source(d) else []
            self._refs[d] = hit
        return hit

    def _mentions_local_source(self, d: str) -> bool:
        from scanner.sources.terraform.hcl.config import join_path, module_files
        from scanner.sources.terraform.hcl.parse import ParseError

        for name in module_files(self.files.files(d)):
            path = join_path(d, name)
            try:
                data = self.files.read(path)
            except ParseError:
                return True  # let the real parse report it
            if b"source" in data and _LOCAL_SOURCE.search(data):
                return True
        return False

    def errors(self) -> list[InputError]:
        out: list[InputError] = []
        for d in sorted(self._cache):
            out.extend(self._cache[d].errors)
        out.extend(self.extra_errors)
        return sorted(out, key=lambda e: (e.path, e.line or 0, e.reason))


def _has_tf(filenames: list[str]) -> bool:
    return any(n.endswith(TF_SUFFIXES) and not n.startswith(".") for n in filenames)


def _walk(top: str, errors: list[InputError], listings: dict[str, list[str]]) -> list[str]:
    found: list[str] = []

    def onerror(exc: OSError) -> None:
        errors.append(
            InputError(str(exc.filename or top), f"cannot read directory: {exc.strerror or exc}")
        )

    for dirpath, dirnames, filenames in os.walk(top, onerror=onerror, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        if _has_tf(filenames):
            d = _norm(dirpath)
            listings.setdefault(d, filenames)
            found.append(d)
    return found


def _local_sources(cfg: Any) -> list[str]:
    out = []
    for call in cfg.module_calls.values():
        src = call.source
        if src and (src.startswith("./") or src.startswith("../") or src in (".", "..")):
            out.append(_norm(posixpath.join(cfg.dir or ".", src)))
    return out


def discover_roots(
    paths: Sequence[Path | str], modules: _Modules, errors: list[InputError]
) -> list[str]:
    """The root module directories to scan, in a stable order."""
    explicit: dict[str, None] = {}
    candidates: dict[str, None] = {}
    for given in paths:
        g = str(given)
        try:
            st = os.stat(g)
        except OSError as exc:
            errors.append(InputError(g, f"cannot read: {exc.strerror or exc}"))
            continue
        if os.path.isdir(g):
            modules.files.add_tree(g)
            for d in _walk(g, errors, modules.files.listings):
                candidates[d] = None
        elif g.endswith(TF_SUFFIXES):
            if st.st_size >= 0:
                modules.files.add_tree(os.path.dirname(g) or ".")
                explicit[_norm(os.path.dirname(g) or ".")] = None
        else:
            errors.append(InputError(g, "not a Terraform file (.tf or .tf.json)"))
    scanned = {**explicit, **candidates}
    refs: dict[str, set[str]] = {}
    for d in scanned:
        for target in modules.local_refs(d):
            if target != d:
                refs.setdefault(target, set()).add(d)
    roots = [d for d in scanned if d in explicit or not refs.get(d)]
    # Directories only reachable through a cycle of module calls: scan them as roots too.
    reach: set[str] = set()
    stack = list(roots)
    while stack:
        d = stack.pop()
        if d in reach:
            continue
        reach.add(d)
        stack.extend(modules.local_refs(d))
    for d in scanned:
        if d not in reach:
            roots.append(d)
            stack = [d]
            while stack:
                x = stack.pop()
                if x not in reach:
                    reach.add(x)
                    stack.extend(modules.local_refs(x))
    return sorted(roots)


def _tfvars_files(root_dir: str, names: list[str]) -> list[str]:
    auto = sorted(n for n in names if n.endswith(".auto.tfvars") or n.endswith(".auto.tfvars.json"))
    out = [n for n in ("terraform.tfvars", "terraform.tfvars.json") if n in names] + auto
    return [posixpath.join(root_dir, n) if root_dir not in ("", ".") else n for n in out]


def _read_vars(
    path: str, errors: list[InputError], cache: dict[Any, Any] | None = None,
    files: Any = None, confine: bool = True,
) -> dict[str, Any]:
    """The values of a variables file; files: the run's ParseCache, to refuse a symbolic link
    out of the scanned tree (var files named by the user are read where they are) and to
    keep the text of a file outside it out of error messages."""
    from scanner.sources.terraform.hcl.config import unquoted
    from scanner.sources.terraform.hcl.modules import load_tfvars
    from scanner.sources.terraform.hcl.parse import ParseError

    try:
        if files is not None and confine:
            files.confined(path)
        return load_tfvars(path, cache)
    except ParseError as exc:
        reason = exc.reason
        if files is not None and not files.inside(path, files.scanned):
            reason = unquoted(reason)
        errors.append(InputError(path, reason, exc.line))
    except RecursionError:
        errors.append(InputError(path, "nested too deeply"))
    return {}


VarFile = dict[str, Any] | InputError  # a --var-file's values, or why it could not be read


def _read_var_files(var_files: Sequence[Path], errors: list[InputError],
                    files: Any) -> list[VarFile]:
    """The ``--var-file`` files, in order; one that cannot be read is its error (reported once
    here): terraform refuses to plan without it, so every root module it was given to gets
    no verdict (see :func:`_not_read_whole`)."""
    out: list[VarFile] = []
    for f in var_files:
        before = len(errors)
        values = _read_vars(str(f), errors, files=files, confine=False)
        out.append(errors[before] if len(errors) > before else values)
    return out


def parse_skips(
    comments: Sequence[Any], file: str, address: str, notices: list[Notice]
) -> tuple[Skip, ...]:
    out: list[Skip] = []
    for c in comments:
        for m in _SKIP_RE.finditer(c.text):
            policy = m.group(1)
            reason = (m.group(2) or "").strip().rstrip("*/").strip().rstrip(",;").strip()
            if not reason:
                notices.append(
                    Notice(
                        file,
                        f"gpuaudit:skip={policy} on {address} has no reason and is not applied "
                        f"(write gpuaudit:skip={policy}:<reason>)",
                        c.line,
                    )
                )
                continue
            out.append(Skip(policy, reason, by=f"comment at {file}:{c.line}"))
    return tuple(out)


def _root_instance(
    root_dir: str,
    modules: _Modules,
    errors: list[InputError],
    file_vars: list[VarFile],
    variables: Mapping[str, str],
) -> Any:
    """The root ModuleInstance of root_dir with its variable values."""
    from scanner.sources.terraform.hcl.functions import FILE_READER
    from scanner.sources.terraform.hcl.modules import (
        ModuleInstance,
        RootContext,
        cli_value,
        read_modules_json,
        read_workspace,
    )
    from scanner.sources.terraform.hcl.parse import ParseError
    from scanner.sources.terraform.hcl.values import EvalError, reset_budget

    reset_budget()
    FILE_READER[:] = [file_reader(root_dir, modules.files)]
    values: dict[str, Any] = {}
    var_errors: list[InputError] = []
    for f in _tfvars_files(root_dir, modules.files.files(root_dir)):
        values.update(_read_vars(f, var_errors, modules.files.exprs, modules.files))
    errors.extend(var_errors)
    unread: list[InputError] = []
    for fv in file_vars:
        if isinstance(fv, InputError):
            unread.append(fv)
        else:
            values.update(fv)
    used: set[str] = set()  # the module directories this root reads

    def module_config(directory: str) -> Any:
        cfg = modules.get(directory)
        used.add(cfg.dir)
        return cfg

    ctx = RootContext(
        root_dir=root_dir,
        scope=root_dir,
        root_values=values,
        modules=module_config,
        installed=read_modules_json(root_dir),
        workspace=read_workspace(root_dir),
        fetch=modules.fetch,
    )
    ctx.lost.extend(f"{e.path}:{e.line}: {e.reason}" if e.line else f"{e.path}: {e.reason}"
                    for e in var_errors)  # a variable may keep its default instead
    ctx.lost.extend(f"--var-file {e.path}:{e.line}: {e.reason}" if e.line
                    else f"--var-file {e.path}: {e.reason}" for e in unread)
    ctx.used = used
    root = ModuleInstance(ctx, module_config(root_dir))
    _mark_sensitive_variables(root, values, variables)
    for name, text in variables.items():
        if name not in root.config.variables:
            # terraform: "Value for undeclared variable" is an error for -var (a warning only
            # for variables files): it does not plan this root module
            why = f'no variable "{name}" is declared in the root module'
            errors.append(InputError(f"--var {name}", why, kind="config"))  # once per name
            ctx.lost.append(f"--var {name}: {why} {root_dir or '.'}")
            continue
        try:
            values[name] = cli_value(text, root._var_type(name))
        except (ParseError, EvalError) as exc:
            reason = exc.reason if isinstance(exc, ParseError) else str(exc)
            errors.append(
                InputError(f"--var {name}", f"invalid value: {reason}", kind="config")
            )
            ctx.lost.append(f"--var {name}: invalid value: {reason}")
    return root


def file_reader(root_dir: str, files: Any) -> Callable[[str], Any]:
    """What ``file()`` and its kin read for one root module: a path relative to the root
    module (terraform runs there), read only when its real path (symbolic links and ``..``
    resolved) lies in the scanned tree, as a regular file within the size limit of source
    files. Outside the tree or absent: Unknown (never an error quoting it)."""
    from scanner.model import Unknown
    from scanner.sources.terraform.hcl.config import read_bytes
    from scanner.sources.terraform.hcl.parse import ParseError
    from scanner.sources.terraform.hcl.values import BudgetExceeded

    read: dict[str, Any] = {}

    def reader(path: str) -> Any:
        full = path if os.path.isabs(path) else os.path.join(root_dir or ".", path)
        full = os.path.normpath(full)
        hit = read.get(full)
        if hit is not None:
            return hit
        if not files.trees or not files.inside(full):
            out: Any = Unknown(f"file {path} is outside the scanned tree: not read")
        elif not os.path.exists(full):
            out = Unknown(f"file {path} does not exist (generated before plan?)")
        else:
            try:
                out = read_bytes(full)
            except ParseError as exc:
                if "too large" in exc.reason:
                    raise BudgetExceeded(f"file {path}: {exc.reason}") from None
                out = Unknown(f"file {path}: {exc.reason}")
        read[full] = out
        return out

    reader.paths = read  # type: ignore[attr-defined]  # what the root read, for manifests
    return reader


def _mark_sensitive_variables(
    root: Any, values: Mapping[str, Any], variables: Mapping[str, str]
) -> None:
    """A sensitive root variable's every value is secret: its default, a tfvars / var-file
    value and a --var value, whichever wins (a value that loses is secret all the same)."""
    from scanner.sources.terraform.hcl.config import is_sensitive
    from scanner.sources.terraform.hcl.expressions import evaluate
    from scanner.sources.terraform.hcl.values import EvalError, literal_scope, mark_sensitive

    for name, decl in root.config.variables.items():
        if not is_sensitive(decl.body):
            continue
        default = decl.body.attrs.get("default")
        if default is not None:
            with contextlib.suppress(EvalError, RecursionError):
                mark_sensitive(evaluate(default.expr, literal_scope()))
        if name in values:
            mark_sensitive(values[name])
        if name in variables:
            mark_sensitive(variables[name])


def scan_root(
    root_dir: str,
    modules: _Modules,
    result: SourceResult,
    file_vars: list[VarFile],
    variables: Mapping[str, str],
) -> None:
    from scanner.sources.karpenter.terraform import ManifestBudget
    from scanner.sources.terraform.hcl.modules import walk_instances
    from scanner.sources.terraform.hcl.values import hide_short_secrets
    from scanner.sources.terraform.translate import HOLED_ATTRIBUTES, SUPPORTED_TYPES, translate

    manifests = ManifestBudget()
    root = _root_instance(root_dir, modules, result.errors, file_vars, variables)
    region = _provider_region(root)
    skip_memo: dict[tuple[str, str], tuple[Skip, ...]] = {}
    resources: list[Resource] = []
    for rec in walk_instances(root, SUPPORTED_TYPES.__contains__):
        cfg = rec.config
        key = (cfg.file, cfg.key)
        skips = skip_memo.get(key)
        if skips is None:
            skips = parse_skips(cfg.skip_comments, cfg.file, cfg.key, result.notices)
            skip_memo[key] = skips
        prov = Provenance(
            SourceKind.TERRAFORM_HCL,
            file=cfg.file,
            start_line=cfg.start_line,
            end_line=cfg.end_line,
            module=rec.module_path,
            pricing_region=region if rec.default_provider else None,
            provider=_provider_key(rec),
        )
        values = rec.values
        if rec.type in HOLED_ATTRIBUTES and rec.instance is not None:
            values = _with_holes(rec, HOLED_ATTRIBUTES[rec.type], result)
        values = hide_short_secrets(values)
        translated = translate(
            rec.type, rec.address, values, provenance=prov, scope=root_dir, skips=skips,
            notices=result.notices, errors=result.errors, manifests=manifests,
        )
        if rec.exists is not True:
            for r in translated:
                r.exists = rec.exists
        for r in translated:
            _bound_attributes(r, result)
        resources.extend(translated)
    _mark_rendered_manifests(resources)
    resources.extend(unread_module_calls(root.root))
    result.resources.extend(resources)
    from scanner.sources.terraform.hcl.values import budget_exhausted

    if budget_exhausted():
        root.root.lose(
            root_dir,
            "evaluation stopped: too much work (a runaway expression?); values left UNKNOWN",
        )
    if manifests.refused is not None:
        root.root.lost.append(manifests.gap())
    _not_read_whole(root.root, modules, result)
    result.errors.extend(root.root.errors)
    result.notices.extend(root.root.notices)
    from scanner.sources.terraform.hcl.values import SENSITIVE

    result.sensitive.update(SENSITIVE)
    _finish(root)


def unread_module_calls(ctx: Any) -> list[Resource]:
    """A ``terraform.module_call`` resource per module call not read (policy TF-001 reports
    it UNKNOWN at the call): a scan that read none of a platform's modules is never a silent
    pass."""
    from scanner.kinds.terraform_modules import UNREAD_MODULE_CALL

    out = []
    for u in ctx.unread.values():
        attrs: dict[str, Any] = {"Source": u.source, "Reason": u.reason, "Fix": u.fix}
        if u.version is not None:
            attrs["Version"] = u.version
        prov = Provenance(SourceKind.TERRAFORM_HCL, file=u.file, start_line=u.line,
                          end_line=u.line, module=u.module_path)
        out.append(Resource(kind=UNREAD_MODULE_CALL, id=u.address, attrs=attrs,
                            provenance=prov, scope=ctx.scope))
    return out


def _not_read_whole(ctx: Any, modules: _Modules, result: SourceResult) -> None:
    """A root module whose configuration was not read whole (a file of it or of a local module
    it uses that does not parse, a module not found, a tfvars file not read, the work budget)
    gets no verdict at all: what is missing may be what a verdict leans on (the encryption
    default, the S3 endpoint, the route), and terraform itself would refuse to plan it."""
    lost = list(ctx.lost)
    for d in sorted(ctx.used):
        lost.extend(f"{e.path}:{e.line}: {e.reason}" if e.line else f"{e.path}: {e.reason}"
                    for e in modules.get(d).errors)
    if not lost:
        return
    more = f" (and {len(lost) - 1} more)" if len(lost) > 1 else ""
    result.gaps.append(Gap(
        scope=ctx.scope, kinds=("*",), iac=True,
        reason=f"the root module {ctx.root_dir or '.'} was not read whole: {lost[0]}{more}"))


def _provider_key(rec: Any) -> str:
    """The aws provider configuration of a resource instance: "aws" for the root's default,
    "aws.ALIAS" for a root-module resource naming one, else "?" (set through a module's
    ``providers`` map or its own provider block: which one is not followed)."""
    if rec.default_provider:
        return "aws"
    from scanner.sources.terraform.hcl.parse import Traversal

    attr = rec.config.body.attrs.get("provider")
    expr = attr.expr if attr is not None else None
    if rec.module_path == "" and isinstance(expr, Traversal) and expr.root == "aws" \
            and len(expr.ops) == 1 and expr.ops[0][0] == "a":
        return f"aws.{expr.ops[0][1]}"
    return "?"


def _provider_region(root: Any) -> str | None:
    """The region of the root module's default ``provider "aws"`` when it evaluates to a
    region name (a literal, a variable with a value, a local): where its resources are
    deployed, to price them. None otherwise (the environment or a profile sets it)."""
    from scanner.catalog import region_name
    from scanner.sources.terraform.hcl.expressions import evaluate
    from scanner.sources.terraform.hcl.values import BudgetExceeded, EvalError, Scope

    for body in root.config.aws_providers:
        attr = body.attrs.get("region")
        if "alias" in body.attrs or attr is None:
            continue
        with contextlib.suppress(EvalError, BudgetExceeded, RecursionError):
            return region_name(evaluate(attr.expr, Scope(root)))
    return None


def _mark_rendered_manifests(resources: list[Resource]) -> None:
    """The files this root module read (``file()``, ``templatefile()``) on each Kubernetes
    object it applies, as ``RenderedFrom``: the scan then reports a manifest file that Terraform
    renders once, from Terraform (scanner.sources.scan)."""
    from scanner.sources.terraform.hcl.functions import FILE_READER

    paths = getattr(FILE_READER[0], "paths", None) if FILE_READER else None
    if not paths:
        return
    files = sorted(p for p, v in paths.items() if isinstance(v, bytes))
    for r in resources:
        if r.kind.startswith("karpenter."):
            r.attrs["RenderedFrom"] = files


def _with_holes(rec: Any, names: tuple[str, ...], result: SourceResult) -> dict[str, Any]:
    """The instance's values with these attributes rendered again, unknown parts as holes (a
    copy: the instance's own values, which other expressions may read, stay as they are)."""
    from scanner.sources.terraform.hcl.holes import evaluate_holed
    from scanner.sources.terraform.hcl.values import BudgetExceeded, EvalError

    values = dict(rec.values)
    attrs = rec.config.body.attrs
    for name in names:
        attr = attrs.get(name)
        current = values.get(name)
        if attr is None or not (isinstance(current, Unknown) or (
                isinstance(current, list) and any(isinstance(v, Unknown) for v in current))):
            continue
        # on an error the value stays as evaluated (UNKNOWN, with its reason)
        with contextlib.suppress(EvalError, BudgetExceeded, RecursionError):
            values[name] = evaluate_holed(attr.expr, rec.instance.scope())
    return values


def _finish(root: Any) -> None:
    """Free a scanned root and forget its file reader (no later evaluation reads its tree)
    and its spent budgets (no later evaluation inherits them)."""
    _forget()
    root.close()


def _forget() -> None:
    from scanner.sources.terraform.hcl.functions import FILE_READER
    from scanner.sources.terraform.hcl.values import reset_budget

    FILE_READER.clear()
    reset_budget()


def instance_values(
    paths: Sequence[Path | str],
    *,
    var_files: Sequence[Path] = (),
    variables: Mapping[str, str] = {},
) -> tuple[dict[str, tuple[str, dict[str, Any]]], SourceResult]:
    """The terraform-plan-shaped values of every resource instance (all types), keyed by
    address, before translation: ``{address: (type, values)}``; for tests and debugging."""
    from scanner.inputs import real_path
    from scanner.sources.terraform.hcl.modules import walk_instances
    from scanner.sources.terraform.hcl.values import reset_budget

    reset_budget()
    real_path.forget()
    result = SourceResult()
    modules = _Modules()
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    file_vars = _read_var_files(var_files, result.errors, modules.files)
    for root_dir in discover_roots(paths, modules, result.errors):
        root = _root_instance(root_dir, modules, result.errors, file_vars, variables)
        for rec in walk_instances(root):
            out[rec.address] = (rec.type, rec.values)
        from scanner.sources.terraform.hcl.values import SENSITIVE

        result.sensitive.update(SENSITIVE)
        result.errors.extend(root.root.errors)
        result.notices.extend(root.root.notices)
        _finish(root)
    result.errors.extend(modules.errors())
    _dedupe(result)
    return out, result


def load_terraform_dir(
    paths: Sequence[Path],
    *,
    var_files: Sequence[Path] = (),
    variables: Mapping[str, str] = {},
    fetch_modules: Callable[[str, str | None, str], str] | None = None,
) -> SourceResult:
    """Scan Terraform source: directories and/or ``.tf`` / ``.tf.json`` files.
    ``fetch_modules``: fetches a remote module source that ``.terraform/modules`` lacks
    (:class:`scanner.sources.terraform.fetch.ModuleFetcher`); None: such a call is not
    read (a ``terraform.module_call`` resource, TF-001)."""
    # The loader allocates many small long-lived objects and frees them all at once: the cyclic
    # GC would walk them again and again (a third of the run time on large trees).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(paths, var_files, variables, fetch_modules)
    finally:
        if was_enabled:
            gc.enable()


def _load(
    paths: Sequence[Path], var_files: Sequence[Path], variables: Mapping[str, str],
    fetch_modules: Callable[[str, str | None, str], str] | None = None,
) -> SourceResult:
    from scanner.inputs import real_path
    from scanner.sources.terraform.hcl.values import reset_budget

    reset_budget()
    real_path.forget()
    result = SourceResult()
    modules = _Modules()
    modules.fetch = fetch_modules
    roots = discover_roots(paths, modules, result.errors)
    file_vars = _read_var_files(var_files, result.errors, modules.files)
    for part in _scan_all(roots, modules, file_vars, variables):
        result.extend(part)
    result.errors.extend(modules.errors())
    from scanner.sources.terraform.translate import merge_ebs_defaults

    result.resources[:] = merge_ebs_defaults(result.resources)
    from scanner.sources.terraform.s3_configs import fold_s3_configs

    result.resources[:] = fold_s3_configs(result.resources)
    _dedupe(result)
    return result


def _scan_chunk(
    roots: Sequence[str],
    modules: _Modules,
    file_vars: list[VarFile],
    variables: Mapping[str, str],
) -> list[SourceResult]:
    out = []
    for root_dir in roots:
        part = SourceResult()
        try:
            scan_root(root_dir, modules, part, file_vars, variables)
        except RecursionError:
            part = SourceResult(errors=[InputError(root_dir, "too deeply nested to evaluate")])
        except Exception as exc:  # a bug must not hide the other roots' results
            part = SourceResult(
                errors=[InputError(root_dir, f"could not be scanned ({type(exc).__name__}: {exc})")]
            )
        finally:
            _forget()
        out.append(part)
    return out


BLOCK_ROOTS = 16  # roots taken at a time: work is shared out as it goes, not split up front


def _scan_all(
    roots: list[str],
    modules: _Modules,
    file_vars: list[VarFile],
    variables: Mapping[str, str],
) -> list[SourceResult]:
    """Scan roots, in forked worker processes when there are many
    (:func:`scanner.inputs.workers.shared_out`: block by block of :data:`BLOCK_ROOTS`, the main
    process taking a share too); results come back in root order."""
    from scanner.inputs.workers import shared_out, worker_count

    n = worker_count(len(roots), PARALLEL_MIN_ROOTS)
    if n <= 1:
        return _scan_chunk(roots, modules, file_vars, variables)
    blocks, worker_errors = shared_out(
        lambda i: _scan_chunk(roots[i * BLOCK_ROOTS:(i + 1) * BLOCK_ROOTS], modules, file_vars,
                              variables),
        (len(roots) + BLOCK_ROOTS - 1) // BLOCK_ROOTS, n, tail=modules.errors)
    for errors in worker_errors:  # module file errors a worker found
        modules.extra_errors.extend(errors)
    return [part for i in sorted(blocks) for part in blocks[i]]


def _dedupe(result: SourceResult) -> None:
    result.errors[:] = _first_of_each(result.errors, lambda e: (e.path, e.reason, e.line))
    result.notices[:] = _first_of_each(result.notices, lambda n: (n.path, n.message, n.line))


def _first_of_each(items: list[_T], key: Callable[[_T], Hashable]) -> list[_T]:
    """``items`` in order, without those whose key an earlier one had."""
    first: dict[Hashable, _T] = {}
    for item in items:
        first.setdefault(key(item), item)
    return list(first.values())


__all__ = ["discover_roots", "instance_values", "load_terraform_dir", "parse_skips"]


def _bound_attributes(resource: Resource, result: SourceResult) -> None:
    """An attribute that references amplify (a long string listed thousands of times: small in
    memory, huge once written in a report) is an input error naming it, and UNKNOWN."""
    from scanner.inputs.sizes import cut_text, exceeds
    from scanner.sources.terraform.hcl.values import MAX_STRING

    def refuse(key: str) -> str:
        reason = (f"{resource.id}: {key} stands for more than {MAX_STRING >> 20} MiB of text "
                  "once its references are written out")
        prov = resource.provenance
        result.errors.append(InputError(str(prov.file), reason, line=prov.start_line))
        return reason

    for key, value in list(resource.attrs.items()):
        if isinstance(value, dict | list) and exceeds(value, MAX_STRING):
            resource.attrs[key] = Unknown(refuse(key))
    if exceeds(resource.tags, MAX_STRING):
        refuse("tags")  # AWS allows 256 characters a tag value: what is left is already wrong
        resource.tags = {k: cut_text(v, 256) for k, v in resource.tags.items()}
