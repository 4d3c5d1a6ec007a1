"""The JSON Schema of the report document (schema_version 1) and its validation."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

SCHEMA_RESOURCE = "schema/findings.schema.json"


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The findings JSON Schema (draft 2020-12) shipped as package data."""
    text = resources.files("reports").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


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


def _best(error: Any) -> Any:
    """For oneOf/anyOf failures, the deepest, most specific sub-error reads better than the summary
    ("-1 is less than the minimum of 0" rather than "{...} is not of type 'null'")."""
    if not error.context:
        return error
    deepest = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
    return _best(deepest)
