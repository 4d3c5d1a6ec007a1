"""Configuration: `.gpuaudit.yaml` or `[tool.gpuaudit]` in pyproject.toml, validated by the
shipped JSON Schema plus a check of each policy's parameter names, types and ranges.

The file is read like any input: a regular file of at most 1 MiB. YAML nesting deeper than
:data:`MAX_DEPTH`, aliases that expand past :data:`MAX_NODES` values, and a key written twice in
one mapping are errors naming the line; no error message quotes the file's text."""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).parent / "config.schema.json"
CONFIG_NAMES = (".gpuaudit.yaml", ".gpuaudit.yml")
MAX_BYTES = 1024 * 1024
MAX_DEPTH = 32  # nesting levels of collections
MAX_NODES = 100_000  # values, aliases expanded


class ConfigError(Exception):
    """A config file that cannot be used; the message names the file and the key."""


class PolicyDirError(ConfigError):
    """A policy file of the config's ``policy_dirs`` that cannot be used (file and line)."""


@dataclass
class Config:
    path: str | None = None
    policies: dict[str, dict[str, Any]] = field(default_factory=dict)
    mutes: list[dict[str, Any]] = field(default_factory=list)
    fail_on: str | None = None
    pricing: dict[str, Any] = field(default_factory=dict)  # scanner.pricing.rates.Pricing
    policy_dirs: list[str] = field(default_factory=list)  # resolved against the config's dir

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
    from scanner.inputs.safe_read import ReadError, decode_text, read_regular

    try:
        text = decode_text(read_regular(path, limit=MAX_BYTES))
    except ReadError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read config: not {exc.encoding.upper()} text") \
            from None
    if path.name == "pyproject.toml":
        data = _from_pyproject(path, text)
    else:
        data = _from_yaml(path, text)
    if data is None:
        data = {}
    for i, mute in enumerate(data.get("mutes") or [] if isinstance(data, dict) else []):
        if isinstance(mute, dict) and "expires" in mute:
            mute["expires"] = expiry_date(mute["expires"], str(path), f"mutes.{i}.expires")
    validate_config(data, str(path))
    return Config(path=str(path), policies=data.get("policies", {}) or {},
                  mutes=list(data.get("mutes", []) or []), fail_on=data.get("fail_on"),
                  pricing=dict(data.get("pricing") or {}),
                  policy_dirs=policy_dirs(data, str(path)))


DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def expiry_date(value: Any, where: str, key: str) -> str | None:
    """An ``expires`` value as ``YYYY-MM-DD`` (None: never expires). A TOML date is taken as
    one; anything else, an impossible date (``2027-02-30``) or a date and time included, is a
    ConfigError naming the file and the key."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):  # TOML's 2027-01-31T10:00:00 (a subclass of date)
        raise ConfigError(f"{where}: key '{key}': {value.isoformat()} is a date and time; "
                          "expires takes a date, YYYY-MM-DD")
    if isinstance(value, dt.date):
        return value.isoformat()
    if not isinstance(value, str):
        raise ConfigError(f"{where}: key '{key}': expected a date YYYY-MM-DD, got "
                          f"{type(value).__name__} {_shown(value)}")
    if not DATE.fullmatch(value.strip()):
        raise ConfigError(f"{where}: key '{key}': {_shown(value)} is not a date YYYY-MM-DD")
    try:
        return dt.date.fromisoformat(value.strip()).isoformat()
    except ValueError as exc:  # 2027-02-30, 2027-13-01
        raise ConfigError(f"{where}: key '{key}': {_shown(value)} is not a date ({exc})") \
            from None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _from_pyproject(path: Path, text: str) -> Any:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except ValueError as exc:  # a value tomllib cannot convert (an integer of 5,000 digits)
        raise ConfigError(f"{path}: not valid TOML: {_value_problem(exc)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
    tool = doc.get("tool")
    section = tool.get("gpuaudit", {}) if isinstance(tool, dict) else {}
    _check_nesting(section, path)
    return section


def _check_nesting(data: Any, path: Path) -> None:
    stack = [(data, 0)]
    while stack:
        cur, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ConfigError(f"{path}: [tool.gpuaudit] is nested deeper than {MAX_DEPTH} levels")
        if isinstance(cur, dict):
            stack.extend((v, depth + 1) for v in cur.values())
        elif isinstance(cur, list):
            stack.extend((v, depth + 1) for v in cur)


def _from_yaml(path: Path, text: str) -> Any:
    import yaml

    try:
        _check_shape(text, path)
        return yaml.load(text, Loader=_unique_key_loader())  # a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise ConfigError(f"{path}:{where}: not valid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {type(exc).__name__}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid YAML: nested too deeply") from None


def _check_shape(text: str, path: Path) -> None:
    """Refuse deep nesting and alias bombs from the event stream (never expands anything)."""
    import yaml

    frames: list[list[Any]] = []  # [anchor, expanded size] of each open collection
    sizes: dict[str, int] = {}
    total = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        if isinstance(event, yaml.CollectionStartEvent):
            if len(frames) >= MAX_DEPTH:
                raise ConfigError(f"{path}: line {line}: nested deeper than {MAX_DEPTH} levels")
            frames.append([event.anchor, 1])
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            anchor, size = frames.pop()
            if anchor is not None:
                sizes[anchor] = size
            if frames:
                frames[-1][1] += size
            else:
                total += size
        elif isinstance(event, yaml.AliasEvent | yaml.ScalarEvent):
            size = sizes.get(event.anchor, 1) if isinstance(event, yaml.AliasEvent) else 1
            if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
                sizes[event.anchor] = 1
            if frames:
                frames[-1][1] += size
            else:
                total += size
        else:
            continue
        if total + sum(f[1] for f in frames) > MAX_NODES:
            raise ConfigError(f"{path}: line {line}: the document expands to more than "
                              f"{MAX_NODES:,} values (YAML aliases?)")


@functools.lru_cache(maxsize=1)
def _unique_key_loader() -> Any:
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_yaml_timestamp(self, node: Any) -> Any:
            # a date stays the text written: load_config checks the dates it takes (an
            # impossible one, 2027-02-30, is a ConfigError naming its key, not a ValueError)
            return self.construct_scalar(node)

        def construct_yaml_int(self, node: Any) -> Any:
            try:
                return super().construct_yaml_int(node)
            except ValueError as exc:  # more digits than Python converts
                raise yaml.constructor.ConstructorError(
                    None, None, f"integer value not usable: {_value_problem(exc)}",
                    node.start_mark) from None

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[tuple[str, str]] = set()
            for key_node, _ in node.value:  # the keys as written (a merge `<<` may override)
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"duplicate key {key_node.value!r} (each key may appear once)",
                        key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_yaml_timestamp)
    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    return Loader


def _value_problem(exc: ValueError) -> str:
    text = str(exc)
    return "more digits than can be converted" if "digits" in text else "not convertible"


def validate_config(data: Any, where: str) -> None:
    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft202012Validator(schema)
    # an unknown key first: a misspelt key is also why a required one is "missing"
    errors = sorted(validator.iter_errors(data), key=lambda e: (
        [str(p) for p in e.absolute_path], e.validator != "additionalProperties"))
    if errors:
        err = errors[0]
        if err.validator == "additionalProperties" and isinstance(err.instance, Mapping):
            raise ConfigError(_unknown_keys(err, where))
        key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: key '{key}': {err.message}")
    dirs = policy_dirs(data, where)
    if dirs:  # their policies are known before the policies' parameters are checked
        from policies.discovery import PolicyLoadError, add_policy_dirs

        try:
            add_policy_dirs(dirs)
        except PolicyLoadError as exc:
            raise PolicyDirError(str(exc)) from None
    _check_policy_params(data.get("policies") or {}, where)


def policy_dirs(data: Mapping[str, Any], where: str) -> list[str]:
    """``policy_dirs:`` of a config, each relative to the config file's directory."""
    base = Path(where).parent
    return [str(base / d) for d in data.get("policy_dirs") or []]


def _unknown_keys(err: Any, where: str) -> str:
    """An unknown key, named with the nearest valid one ("did you mean 'fail_on'?")."""
    import difflib
    import re

    allowed = sorted(err.schema.get("properties") or {})
    patterns = sorted(err.schema.get("patternProperties") or {})  # pricing.discounts' keys
    unknown = sorted(str(k) for k in err.instance if k not in allowed
                     and not any(re.search(p, str(k)) for p in patterns))
    parent = ".".join(str(p) for p in err.absolute_path)
    parts = []
    for key in unknown:
        near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        hint = f" (did you mean '{near[0]}'?)" if near else ""
        parts.append(f"key '{f'{parent}.' if parent else ''}{key}': unknown{hint}")
    valid = [*allowed, *(f"a key matching {p}" for p in patterns)]
    return f"{where}: {'; '.join(parts)}. Valid keys here: {', '.join(valid)}"


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
            _check_band(value, defaults[key], f"policies.{pid}.{key}", where)


def _check_band(value: Any, default: Any, key: str, where: str) -> None:
    """A {min, max} parameter (with the defaults it does not set) must have min <= max."""
    if not (isinstance(default, dict) and isinstance(value, dict)
            and {"min", "max"} <= default.keys()):
        return
    merged = {**default, **value}
    if merged["min"] > merged["max"]:
        set_by = "" if {"min", "max"} <= value.keys() else " (with the default of the other)"
        raise ConfigError(f"{where}: key '{key}': min {merged['min']!r} is greater than max "
                          f"{merged['max']!r}{set_by}")


def _check_type(value: Any, default: Any, key: str, where: str) -> None:
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int | float):
        ok = (isinstance(value, int | float) and not isinstance(value, bool)
              and math.isfinite(value) and 0 <= value <= 1e9)
        if ok and "percent" in key and value > 100:
            raise ConfigError(f"{where}: key '{key}': a percentage is at most 100, got {value!r}")
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
