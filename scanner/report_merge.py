"""`gpuaudit report merge`: one report from the JSON reports of shards (or of several runs).

``gpuaudit audit --shard K/N`` splits the (account, region) pairs; each shard writes its JSON
report and this joins them: findings listed once each (by fingerprint) in report order, the
summary recomputed (PASS results that a shard counted without listing them are carried over),
inputs, errors, notices and coverage combined. An input that cannot be read is an error in the
merged report (exit 2), and the others are still merged: nothing is dropped silently.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.report import SCHEMA_VERSION, assemble, with_unpriced_regions


class ReportReadError(Exception):
    """A file that is not a readable gpuaudit JSON report: ``path``, and ``reason`` (why); the
    message is "PATH: REASON"."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def read_report(path: Path) -> dict[str, Any]:
    """A JSON report, validated against the shipped schema."""
    from reports.schema import validate_report
    from scanner.runner import read_json_report_text
    from scanner.safe_read import ReadError

    try:
        doc = read_json_report_text(path)
    except ReadError as exc:
        raise ReportReadError(path, f"cannot read: {exc.reason}") from None
    except (ValueError, RecursionError) as exc:
        raise ReportReadError(path, f"not a JSON report: {exc}") from None
    if not isinstance(doc, dict):
        raise ReportReadError(path, "not a JSON report: the top level is not an object")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ReportReadError(
            path,
            f"schema_version {doc.get('schema_version')!r}; this gpuaudit reads {SCHEMA_VERSION}",
        )
    problems = validate_report(doc)
    if problems:
        raise ReportReadError(path, f"not a valid gpuaudit report: {problems[0]}")
    return doc


@dataclass
class Part:
    """One input of the merge: its name (as given) and its document."""

    name: str
    doc: dict[str, Any]


def merge_reports(
    parts: Sequence[Part],
    *,
    unreadable: Sequence[tuple[str, str]] = (),
    deterministic: bool = False,
) -> dict[str, Any]:
    """The merged document. ``unreadable`` is (path, reason) for inputs that could not be read."""
    from scanner.engine import report_order

    findings: dict[str, dict[str, Any]] = {}
    first_seen: dict[str, str] = {}
    duplicates: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    errors: list[dict[str, Any]] = [
        {"kind": "input", "path": path, "reason": reason} for path, reason in unreadable
    ]
    notices: list[dict[str, Any]] = []
    coverage: list[dict[str, Any]] = []
    resources = 0
    for part in parts:
        doc = part.doc
        listed_pass: Counter[str] = Counter()
        for f in doc["findings"]:
            if f["status"] == "PASS":
                listed_pass[f["policy_id"]] += 1
            if f["id"] in findings:
                duplicates[first_seen[f["id"]] + " and " + part.name] += 1
                continue
            findings[f["id"]] = f
            first_seen[f["id"]] = part.name
        for pid, counts in doc["summary"]["by_policy"].items():
            unlisted = int(counts.get("PASS", 0)) - listed_pass[pid]
            if unlisted > 0:
                passed[pid] += unlisted
        resources += int(doc["summary"].get("resources", 0))
        errors.extend(doc["errors"])
        notices.extend(doc.get("notices", []))
        coverage.extend(doc.get("coverage", []))
    for pair, n in sorted(duplicates.items()):
        notices.append(
            {
                "path": pair,
                "message": f"{n} finding(s) appear in both reports and are listed once; the "
                "reports overlap, so their PASS and resource counts may be counted twice",
            }
        )
    catalog = _catalog(parts, notices)
    _versions(parts, notices)
    ordered = sorted(
        findings.values(),
        key=lambda f: report_order(f.get("location"), f["policy_id"], f["resource"], f["id"]),
    )
    return assemble(
        findings=ordered,
        errors=_unique(errors),
        notices=_unique(notices),
        inputs=_inputs(parts),
        catalog=catalog,
        coverage=_unique(coverage),
        passed=passed,
        resources=resources,
        deterministic=deterministic,
    )


def _inputs(parts: Sequence[Part]) -> dict[str, Any]:
    """The union of the inputs' ``paths`` / ``accounts`` / ``regions`` (always at least one)."""
    merged: dict[str, set[str]] = {}
    for part in parts:
        for key, values in part.doc["inputs"].items():
            if isinstance(values, list):
                merged.setdefault(key, set()).update(str(v) for v in values)
    if not merged:
        return {"paths": []}
    return {key: sorted(values) for key, values in sorted(merged.items())}


def _catalog(parts: Sequence[Part], notices: list[dict[str, Any]]) -> dict[str, Any]:
    if not parts:
        from scanner.catalog import default_catalog

        return default_catalog().describe()
    first = {k: v for k, v in parts[0].doc["catalog"].items()
             if k not in ("note", "unpriced_regions")}
    regions = sorted({r for part in parts for r in part.doc["catalog"].get("unpriced_regions", [])})
    for part in parts[1:]:
        other = part.doc["catalog"]
        if (other.get("source"), other.get("as_of")) != (first.get("source"), first.get("as_of")):
            notices.append(
                {
                    "path": part.name,
                    "message": f"priced with catalogue {other.get('source')} as of "
                    f"{other.get('as_of')}, not {first.get('source')} as of "
                    f"{first.get('as_of')} like {parts[0].name}: savings mix both",
                }
            )
    return with_unpriced_regions(first, regions)


def _versions(parts: Sequence[Part], notices: list[dict[str, Any]]) -> None:
    from scanner import __version__

    for part in parts:
        version = part.doc["tool"].get("version")
        if version != __version__:
            notices.append(
                {
                    "path": part.name,
                    "message": f"written by gpuaudit {version}; merged by {__version__}",
                }
            )


def _unique(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        seen.setdefault(json.dumps(row, sort_keys=True), row)
    return list(seen.values())
