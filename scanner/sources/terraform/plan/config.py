"""The plan's configuration section: its modules (by keyless path), where their .tf files are,
and the region of each aws provider configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scanner.catalog import region_name
from scanner.model import InputError, Notice
from scanner.sources.terraform.plan.locate import installed_modules
from scanner.sources.terraform.plan.refs import _join, _split_module_path
from scanner.sources.terraform.plan.resolve import _ConfigModule

MAX_MODULE_DEPTH = 100  # modules nested deeper than this are an input error
MAX_CONFIG_MODULES = 10_000


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



def _provider_regions(doc: dict[str, Any]) -> dict[str, str]:
    """The region of each aws provider configuration (key: its ``provider_config_key``, e.g.
    "aws", "aws.west"), where the plan says it: a constant, or a root provider's region that is
    one root variable (its value in the plan). Used to price the resources it creates."""
    config = doc.get("configuration")
    providers = config.get("provider_config") if isinstance(config, dict) else None
    found = doc.get("variables")
    variables: dict[str, Any] = found if isinstance(found, dict) else {}
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

