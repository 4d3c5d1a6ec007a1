"""What a root module directory holds beside its ``.tf`` files: ``*.tfvars`` values, the selected
workspace, and the ``.terraform/modules/modules.json`` manifest of installed modules (and whether
an installed or fetched module directory is still what its call asks for)."""

from __future__ import annotations

import json
import os
import posixpath
from typing import Any

from scanner.sources.terraform.hcl.expressions import (
    evaluate,
)
from scanner.sources.terraform.hcl.lazy_blocks import Installed, _const_scope
from scanner.sources.terraform.hcl.type_constraints import (
    Type,
)
from scanner.sources.terraform.hcl.values import (
    EvalError,
)


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
