"""`gpuaudit scan`: find IaC files under the given paths, sniff what each is, and read it with the
right source (the sources, their files and readers: :mod:`scanner.sources.registry`). Sources are
imported only when a file of theirs is found (pre-commit speed)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from scanner.inputs.safe_read import ReadError, decode_head, read_head, read_regular
from scanner.model import InputError, Notice, SourceResult
from scanner.sources.registry import (
    DATA_SUFFIXES,
    TF_SUFFIXES,
    ScanOptions,
    not_iac_message,
    read_data_file,
)

SNIFF_BYTES = 64 * 1024
SKIP_DIRS = {".git", ".terraform", "node_modules", ".venv", "venv", "__pycache__", ".tox"}
# Files named on the command line that no source recognised are ignored quietly (pre-commit
# hands gpuaudit every YAML and JSON file of a commit, most of which are not infrastructure);
# only when none of the named files was IaC is it said, once.
NOT_IAC = not_iac_message()
LINK_OUT = ("not read: a symbolic link to a file outside the scanned tree (links that leave the "
            "tree are not followed)")


def _walk(root: Path, errors: list[InputError]) -> Iterator[tuple[str, str]]:
    """(directory, lower-cased file name) pairs below root, in a stable order."""
    def onerror(exc: OSError) -> None:
        errors.append(InputError(str(exc.filename or root), f"cannot read directory: "
                                                             f"{exc.strerror or exc}"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            yield dirpath, name


def discover(paths: Sequence[Path], errors: list[InputError],
             notices: list[Notice] | None = None) -> tuple[list[Path], list[Path]]:
    """(terraform inputs, other candidate files), each once, in a stable order.

    Terraform inputs are the given directories that hold `.tf` files (the HCL source walks them
    and groups root modules itself) and the `.tf` files given by name. A data file that is a
    symbolic link to a file outside the scanned tree (the directory walked; for a file named on
    the command line, the working directory when it lies below it, else its own directory) is
    not read: a notice says so."""
    tf: dict[Path, None] = {}
    data: dict[Path, None] = {}
    left: list[Notice] = notices if notices is not None else []
    for given in paths:
        if not given.exists() and not given.is_symlink():
            errors.append(InputError(str(given), "no such file or directory"))
            continue
        if not given.is_dir():
            if given.name.lower().endswith(TF_SUFFIXES):
                tf[given] = None
            elif _leaves_tree(given, _tree_of_file(given)):
                left.append(Notice(str(given), LINK_OUT))
            else:
                data[given] = None
            continue
        root = os.path.realpath(given)
        for dirpath, name in _walk(given, errors):
            lower = name.lower()
            if lower.endswith(TF_SUFFIXES):
                tf[given] = None
            elif lower.endswith(DATA_SUFFIXES):
                path = Path(dirpath) / name
                if _leaves_tree(path, root):
                    left.append(Notice(str(path), LINK_OUT))
                else:
                    data[path] = None
    return list(tf), list(data)


def _tree_of_file(path: Path) -> str:
    """The tree a file named on the command line belongs to (see :func:`discover`)."""
    cwd = os.getcwd()
    lexical = os.path.normpath(os.path.join(cwd, path))
    if _inside(lexical, cwd):
        return os.path.realpath(cwd)
    return os.path.realpath(os.path.dirname(lexical))


def _leaves_tree(path: Path, root: str) -> bool:
    """A symbolic link whose target lies outside ``root`` (a real path)."""
    if not path.is_symlink():
        return False
    try:
        target = os.path.realpath(path, strict=True)
    except (OSError, RuntimeError):
        return False  # dangling or a loop: reading it reports the error
    return not _inside(target, root)


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:
        return False


def _read_head(path: Path) -> str | InputError:
    """The first 64 KB of a regular file as text (by its BOM: UTF-8, UTF-16 or UTF-32)."""
    try:
        if path.is_symlink():
            path.resolve(strict=True)  # raises on loops and dangling links
        head = read_head(path, SNIFF_BYTES)
    except ReadError as exc:
        return InputError(str(path), f"cannot read: {exc.reason}")
    except (OSError, RuntimeError) as exc:
        return InputError(str(path), f"cannot read: {getattr(exc, 'strerror', None) or exc}")
    return decode_head(head)


def scan_paths(paths: Sequence[Path], opts: ScanOptions | None = None) -> SourceResult:
    from scanner.inputs import real_path

    real_path.forget()  # a new run: the file system may have changed since the last one
    opts = opts or ScanOptions()
    result = SourceResult()
    paths = _tfvars_to_modules(paths, opts, result)
    tf_files, data_files = discover(paths, result.errors, result.notices)
    not_iac: list[Path] = []
    templates: list[Path] = []
    for path in data_files:
        head = _read_head(path)
        if isinstance(head, InputError):
            if path.name.lower().endswith(DATA_SUFFIXES) or path in paths:
                result.errors.append(head)
            continue
        read = read_data_file(path, head, opts)
        if read is not None:
            result.extend(read)
            if opts.cfn_params and _is_template(head):
                templates.append(path)
        elif path in paths:
            not_iac.append(path)
    # under pre-commit (which sets PRE_COMMIT=1 for its hooks) a commit of non-IaC YAML or JSON
    # is the common case, not a mistake: the hook's output (shown on every commit) stays quiet
    if not_iac and len(not_iac) == len(paths) and not os.environ.get("PRE_COMMIT"):
        result.notices.append(Notice(", ".join(map(str, not_iac[:3])) +
                                     (f" (+{len(not_iac) - 3} more)" if len(not_iac) > 3 else ""),
                                     NOT_IAC.format(n=len(not_iac))))
    if tf_files:
        result.extend(_without_planned_roots(_read_terraform(tf_files, opts), result))
        _without_rendered_manifests(result)
    # A directory that cannot be listed is found by this walk and by the HCL source's own
    result.errors = list(dict.fromkeys(result.errors))
    if opts.cfn_params:
        result.errors.extend(_unknown_cfn_params(opts.cfn_params, templates))
    return result


def _is_template(head: str) -> bool:
    from scanner.sources.cloudformation.reader import looks_like_cloudformation
    from scanner.sources.terraform.plan.reader import looks_like_plan

    return looks_like_cloudformation(head) and not looks_like_plan(head)


def _unknown_cfn_params(params: Mapping[str, str], templates: list[Path]) -> list[InputError]:
    """A --cfn-param that no scanned template declares is a usage error naming the parameters
    the templates do declare (a typo would otherwise leave the default in place silently). Each
    template is parsed a second time for this, only when --cfn-param is given."""
    from scanner.sources.cloudformation import yaml_nodes

    declared: set[str] = set()
    for path in templates:
        try:
            data = yaml_nodes.load_bytes(read_regular(path, limit=yaml_nodes.MAX_BYTES)).data
        except (OSError, ReadError, yaml_nodes.TemplateError):
            continue  # already reported by the reader
        section = data.get("Parameters") if isinstance(data, dict) else None
        if isinstance(section, dict):
            declared.update(str(k) for k in section)
    where = (f"the scanned template(s) declare {', '.join(sorted(declared))}" if declared
             else "the scanned template(s) declare no parameters" if templates
             else "no CloudFormation template was scanned")
    return [InputError(f"--cfn-param {name}", f"unknown parameter: {where}", kind="config")
            for name in sorted(params) if name not in declared]


def _tfvars_to_modules(paths: Sequence[Path], opts: ScanOptions,
                       result: SourceResult) -> list[Path]:
    """A Terraform variables file named by itself (pre-commit passes a changed
    ``terraform.tfvars``) stands for the module of its directory, which reads it."""
    from scanner.sources.terraform.layout import TFVARS_SUFFIXES, is_auto_tfvars, module_file

    out: list[Path] = []
    given_vars = {os.path.realpath(f) for f in opts.var_files}
    for path in paths:
        if not path.name.lower().endswith(TFVARS_SUFFIXES) or not path.is_file():
            out.append(path)
            continue
        module = module_file(path.parent)
        if module is None:
            result.notices.append(Notice(str(path), "not scanned: no Terraform module (.tf "
                                                    "files) in its directory"))
        elif not is_auto_tfvars(path.name) and os.path.realpath(path) not in given_vars:
            result.notices.append(Notice(str(path), "terraform does not load this file by "
                                         "itself (only terraform.tfvars and *.auto.tfvars): "
                                         f"name it with --var-file {path} to scan with it"))
        else:
            out.append(module)
    return list(dict.fromkeys(out))


def _without_planned_roots(hcl: SourceResult, plans: SourceResult) -> SourceResult:
    """A root module that a scanned plan describes is reported once, from the plan (its values
    are resolved); the .tf files' errors and notices are kept."""
    planned = {scope for scope in {r.scope for r in plans.resources} if os.path.isdir(scope)}
    if not planned:
        return hcl
    planned_real = {os.path.realpath(p) for p in planned}
    kept = [r for r in hcl.resources if os.path.realpath(r.scope) not in planned_real]
    dropped = {r.scope for r in hcl.resources} - {r.scope for r in kept}
    for scope in sorted(dropped):
        hcl.notices.append(Notice(scope, "a plan of this root module was scanned too: its "
                                         "resources are reported from the plan"))
    hcl.resources = kept
    return hcl


def _without_rendered_manifests(result: SourceResult) -> None:
    """A manifest file that a Terraform root module renders (``templatefile``, ``file``) and
    applies is reported once, from Terraform, where its values are filled in: the objects read
    from the file itself with the same kind and name are dropped, with a notice."""
    rendered: dict[tuple[str, str | None, str], str] = {}
    for r in result.resources:
        for file in r.attrs.get("RenderedFrom") or () if r.kind.startswith("karpenter.") else ():
            rendered[(r.kind, r.name, os.path.realpath(file))] = r.id
    if not rendered:
        return
    kept = []
    for r in result.resources:
        file = r.provenance.file
        by = rendered.get((r.kind, r.name, os.path.realpath(file))) if file and \
            r.provenance.source.value == "karpenter" else None
        if by is None:
            kept.append(r)
        else:
            result.notices.append(Notice(file or r.scope, f"{r.id}: Terraform renders and "
                                         f"applies this file ({by}): reported from there",
                                         r.provenance.start_line))
    result.resources = kept


def _read_terraform(inputs: list[Path], opts: ScanOptions) -> SourceResult:
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    fetcher = None
    if opts.module_cache is not None:
        from scanner.sources.terraform.fetch import ModuleFetcher

        fetcher = ModuleFetcher(opts.module_cache)
    return load_terraform_dir(inputs, var_files=opts.var_files, variables=opts.variables,
                              fetch_modules=fetcher)
