"""The JSON Schema of the report document (schema_version 1) and its validation."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

SCHEMA_RESOURCE = "findings.schema.json"


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The findings JSON Schema (draft 2020-12) shipped as package data."""
    text = resources.files("scanner.findings").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def input_keys() -> tuple[str, ...]:
    """The keys of ``inputs`` the schema types (paths, accounts, regions; lists of strings).

    Unknown keys: refused at the top level of a report and in its records (findings and their
    resource, location, savings, suppression; errors; notices), which the schema closes; in
    the objects that describe the run (tool, inputs, catalog, summary, coverage rows) they are
    tolerated, so that a report of a newer gpuaudit that says more there stays readable, and
    never read: render, merge and diff use only the keys the schema types."""
    props = load_schema()["properties"]["inputs"]["properties"]
    return tuple(k for k, v in props.items() if v == {"$ref": "#/$defs/strings"})


def known_inputs(doc: dict[str, Any]) -> dict[str, list[str]]:
    """The report's ``inputs`` with only the keys :func:`input_keys` names."""
    inputs = doc.get("inputs") or {}
    return {k: list(inputs[k]) for k in input_keys() if isinstance(inputs.get(k), list)}


def json_path(parts: Any) -> str:
    """``["findings", 0, "severity"]`` -> ``$.findings[0].severity``."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validate_report(doc: dict[str, Any]) -> list[str]:
    """Every schema violation of ``doc`` as ``"<json path>: <message>"``; empty when valid."""
    import jsonschema  # lazy: the table/pre-commit path never needs it

    validator_cls = jsonschema.Draft202012Validator
    validator = validator_cls(load_schema(), format_checker=validator_cls.FORMAT_CHECKER)
    found = [_best(e) for e in validator.iter_errors(doc)]
    return sorted({f"{json_path(e.absolute_path)}: {e.message}" for e in found})


def plain_problems(doc: dict[str, Any]) -> list[str]:
    """Like :func:`validate_report`, worded for a person: values as JSON (``null``, not Python's
    ``None``), a missing or unexpected key by name."""
    import jsonschema

    validator_cls = jsonschema.Draft202012Validator
    validator = validator_cls(load_schema(), format_checker=validator_cls.FORMAT_CHECKER)
    found = [_best(e) for e in validator.iter_errors(doc)]
    return sorted({f"{json_path(e.absolute_path)}: {_plain(e)}" for e in found})


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _plain(error: Any) -> str:
    kind, want, value = error.validator, error.validator_value, error.instance
    if kind == "required" and isinstance(value, dict):
        missing = [k for k in want if k not in value]
        return f"missing key {', '.join(missing)}"
    if kind == "additionalProperties" and isinstance(value, dict):
        allowed = set((error.schema or {}).get("properties") or {})
        extra = sorted(str(k) for k in value if k not in allowed)
        return f"unexpected key {', '.join(extra[:5])}"
    if kind == "type":
        kinds = want if isinstance(want, list) else [want]
        return f"{_show(value)} is not {' or '.join(map(str, kinds))}"
    if kind == "enum":
        return f"{_show(value)} is not one of {', '.join(_show(v) for v in want)}"
    if kind == "const":
        return f"{_show(value)} is not {_show(want)}"
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength",
                "maxLength", "pattern", "format", "minItems", "maxItems"):
        return f"{_show(value)} does not meet {kind} {_show(want)}"
    return f"{_show(value)} does not match the schema ({kind})"


def _best(error: Any) -> Any:
    """For oneOf/anyOf failures, the deepest, most specific sub-error reads better than the summary
    ("-1 is less than the minimum of 0" rather than "{...} is not of type 'null'")."""
    if not error.context:
        return error
    deepest = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return _best(deepest)
