"""Configuration: `.gpuaudit.yaml` or `[tool.gpuaudit]` in pyproject.toml, validated by the
shipped JSON Schema plus a check of each policy's parameter names and types."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).parent / "schemas" / "config.schema.json"
CONFIG_NAMES = (".gpuaudit.yaml", ".gpuaudit.yml")


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file and the key."""


@dataclass
class Config:
    path: str | None = None
    policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    mutes: list[dict[str, Any]] = field(default_factory=list)
    fail_on: str | None = None

    def enabled(self, policy_id: str) -> bool | None:
        entry = self.policies.get(policy_id, {})
        value = entry.get("enabled")
        return value if isinstance(value, bool) else None

    def params(self, policy_id: str, defaults: Mapping[str, Any]) -> dict[str, Any]:
        merged = dict(defaults)
        for key, value in self.policies.get(policy_id, {}).items():
            if key == "enabled":
                continue
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
        return merged


def find_config(start: Path) -> Path | None:
    for name in CONFIG_NAMES:
        candidate = start / name
        if candidate.is_file():
            return candidate
    pyproject = start / "pyproject.toml"
    if pyproject.is_file() and "[tool.gpuaudit" in pyproject.read_text(errors="replace"):
        return pyproject
    return None


def load_config(path: Path | None, *, search_from: Path | None = None) -> Config:
    """Load and validate a config. No path: look for one in `search_from` (the cwd)."""
    if path is None:
        path = find_config(search_from or Path.cwd())
        if path is None:
            return Config()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    if path.name == "pyproject.toml":
        data = _from_pyproject(path, text)
    else:
        data = _from_yaml(path, text)
    if data is None:
        data = {}
    for mute in data.get("mutes") or [] if isinstance(data, dict) else []:
        if isinstance(mute, dict) and hasattr(mute.get("expires"), "isoformat"):
            mute["expires"] = mute["expires"].isoformat()  # YAML reads 2027-01-31 as a date
    validate_config(data, str(path))
    return Config(path=str(path), policies=data.get("policies", {}) or {},
                  mutes=list(data.get("mutes", []) or []), fail_on=data.get("fail_on"))


def _from_pyproject(path: Path, text: str) -> Any:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return doc.get("tool", {}).get("gpuaudit", {})


def _from_yaml(path: Path, text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        where = f" line {line + 1}" if line is not None else ""
        raise ConfigError(f"{path}:{where}: not valid YAML: {exc}") from exc


def validate_config(data: Any, where: str) -> None:
    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: key '{key}': {err.message}")
    _check_policy_params(data.get("policies") or {}, where)


def _check_policy_params(policies: Mapping[str, Any], where: str) -> None:
    from policies import all_policies

    known = all_policies()
    for pid, entry in policies.items():
        if pid not in known:
            raise ConfigError(f"{where}: key 'policies.{pid}': unknown policy id "
                              f"(known: {', '.join(known)})")
        defaults = known[pid].params
        for key, value in (entry or {}).items():
            if key == "enabled":
                continue
            if key not in defaults:
                names = ", ".join(["enabled", *defaults]) or "enabled"
                raise ConfigError(f"{where}: key 'policies.{pid}.{key}': unknown parameter "
                                  f"(known: {names})")
            _check_type(value, defaults[key], f"policies.{pid}.{key}", where)


def _check_type(value: Any, default: Any, key: str, where: str) -> None:
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int | float):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    elif isinstance(default, dict):
        ok = isinstance(value, dict)
        if ok:
            for k, v in value.items():
                if k not in default:
                    raise ConfigError(f"{where}: key '{key}.{k}': unknown parameter "
                                      f"(known: {', '.join(default)})")
                _check_type(v, default[k], f"{key}.{k}", where)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ConfigError(f"{where}: key '{key}': expected a value like {default!r}, "
                          f"got {value!r}")
