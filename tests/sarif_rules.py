"""What GitHub code scanning requires of an uploaded SARIF file, as a checker for the tests.

From GitHub's "SARIF support for code scanning" (docs.github.com, code-security/code-scanning/
integrating-with-code-scanning/sarif-support-for-code-scanning) and its limits table:
- version 2.1.0 and ``$schema``; at most 20 runs, 25,000 results and 25,000 rules a run; 10 MB
  gzip-compressed at most;
- a rule: ``id``, ``shortDescription.text`` and ``fullDescription.text`` (at most 1024
  characters each), ``help.text``, ``name`` at most 255 characters, at most 20 tags,
  ``defaultConfiguration.level`` one of note/warning/error; ``security-severity`` a string
  holding a score in (0, 10], and only on security rules (tag ``security``);
- a result: ``message.text``; ``ruleId`` naming a rule (and ``ruleIndex`` pointing at it);
  ``locations`` 1 to 10, the first with a ``physicalLocation`` whose ``artifactLocation.uri``
  is a path relative to the repository root (no scheme such as ``file://``, no leading ``/``,
  no ``..``) and whose ``region.startLine`` is at least 1 — a result without one makes GitHub
  reject the whole upload; ``partialFingerprints`` present (code scanning matches alerts
  across runs on ``primaryLocationLineHash``);
- a ``uriBaseId`` must be declared in ``originalUriBaseIds``.
"""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

MAX_RUNS = 20
MAX_RESULTS = 25_000
MAX_RULES = 25_000
MAX_LOCATIONS = 10
MAX_TAGS = 20
MAX_TEXT = 1024
MAX_NAME = 255
MAX_GZIP_BYTES = 10 * 1024 * 1024
LEVELS = ("none", "note", "warning", "error")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _text(obj: Any, key: str) -> str:
    value = (obj or {}).get(key) if isinstance(obj, dict) else None
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else ""


def _rule_problems(i: int, rule: dict[str, Any]) -> list[str]:
    where = f"rules[{i}] {rule.get('id')!r}"
    out = []
    if not rule.get("id"):
        out.append(f"{where}: no id")
    for key in ("shortDescription", "fullDescription"):
        text = _text(rule, key)
        if not text.strip():
            out.append(f"{where}: no {key}.text")
        if len(text) > MAX_TEXT:
            out.append(f"{where}: {key}.text over {MAX_TEXT} characters")
    if not _text(rule, "help").strip():
        out.append(f"{where}: no help.text")
    if len(str(rule.get("name") or "")) > MAX_NAME:
        out.append(f"{where}: name over {MAX_NAME} characters")
    level = (rule.get("defaultConfiguration") or {}).get("level")
    if level is not None and level not in ("note", "warning", "error"):
        out.append(f"{where}: defaultConfiguration.level {level!r}")
    props = rule.get("properties") or {}
    tags = props.get("tags") or []
    if len(tags) > MAX_TAGS:
        out.append(f"{where}: {len(tags)} tags, over {MAX_TAGS}")
    if "security-severity" in props:
        score = props["security-severity"]
        if not isinstance(score, str):
            out.append(f"{where}: security-severity is not a string")
        else:
            try:
                ok = 0.0 < float(score) <= 10.0
            except ValueError:
                ok = False
            if not ok:
                out.append(f"{where}: security-severity {score!r} is not a score in (0, 10]")
        if "security" not in tags:
            out.append(f"{where}: security-severity on a rule not tagged security")
    return out


def _location_problems(where: str, location: Any, bases: set[str]) -> list[str]:
    physical = location.get("physicalLocation") if isinstance(location, dict) else None
    if not isinstance(physical, dict):
        return [f"{where}: no physicalLocation"]
    out = []
    artifact = physical.get("artifactLocation") or {}
    uri = artifact.get("uri")
    if not isinstance(uri, str) or not uri:
        out.append(f"{where}: no artifactLocation.uri")
    else:
        if _SCHEME.match(uri) or "file://" in uri:
            out.append(f"{where}: uri {uri!r} is absolute (has a scheme)")
        if uri.startswith("/") or uri.startswith("\\"):
            out.append(f"{where}: uri {uri!r} is absolute")
        if ".." in re.split(r"[/\\]", uri) or uri.startswith("%2E%2E"):
            out.append(f"{where}: uri {uri!r} climbs out of the repository")
    base = artifact.get("uriBaseId")
    if base is not None and base not in bases:
        out.append(f"{where}: uriBaseId {base!r} not in originalUriBaseIds")
    region = physical.get("region") or {}
    start = region.get("startLine")
    if not isinstance(start, int) or isinstance(start, bool) or start < 1:
        out.append(f"{where}: region.startLine {start!r} is not a line number >= 1")
    end = region.get("endLine")
    if end is not None and (not isinstance(end, int) or not isinstance(start, int)
                            or end < start):
        out.append(f"{where}: region.endLine {end!r} before startLine {start!r}")
    return out


def _result_problems(i: int, result: dict[str, Any], rules: list[dict[str, Any]],
                     bases: set[str]) -> list[str]:
    where = f"results[{i}]"
    out = []
    ids = [r.get("id") for r in rules]
    rule_id = result.get("ruleId")
    if rule_id not in ids:
        out.append(f"{where}: ruleId {rule_id!r} names no rule")
    index = result.get("ruleIndex")
    if index is not None and not (isinstance(index, int) and 0 <= index < len(rules)
                                  and rules[index].get("id") == rule_id):
        out.append(f"{where}: ruleIndex {index!r} does not point at rule {rule_id!r}")
    if not _text(result, "message").strip():
        out.append(f"{where}: no message.text")
    if result.get("level") is not None and result["level"] not in LEVELS:
        out.append(f"{where}: level {result['level']!r}")
    locations = result.get("locations")
    if not isinstance(locations, list) or not locations:
        out.append(f"{where}: no locations (GitHub rejects the whole upload)")
    else:
        if len(locations) > MAX_LOCATIONS:
            out.append(f"{where}: {len(locations)} locations, over {MAX_LOCATIONS}")
        out += _location_problems(f"{where}.locations[0]", locations[0], bases)
    fingerprints = result.get("partialFingerprints")
    if not isinstance(fingerprints, dict) or not fingerprints:
        out.append(f"{where}: no partialFingerprints")
    elif not all(isinstance(v, str) and v for v in fingerprints.values()):
        out.append(f"{where}: a partialFingerprints value is not a non-empty string")
    return out


def github_upload_problems(log: dict[str, Any], raw: str | None = None) -> list[str]:
    """Every reason GitHub code scanning would reject (or misplace) ``log``; empty when none."""
    out = []
    if log.get("version") != "2.1.0":
        out.append(f"version {log.get('version')!r}, not 2.1.0")
    if not log.get("$schema"):
        out.append("no $schema")
    runs = log.get("runs")
    if not isinstance(runs, list) or not runs:
        return [*out, "no runs"]
    if len(runs) > MAX_RUNS:
        out.append(f"{len(runs)} runs, over {MAX_RUNS}")
    for r, run in enumerate(runs):
        driver = ((run.get("tool") or {}).get("driver")) or {}
        if not driver.get("name"):
            out.append(f"runs[{r}]: no tool.driver.name")
        rules = driver.get("rules") or []
        ids = [rule.get("id") for rule in rules]
        if len(ids) != len(set(ids)):
            out.append(f"runs[{r}]: duplicate rule ids")
        if len(rules) > MAX_RULES:
            out.append(f"runs[{r}]: {len(rules)} rules, over {MAX_RULES}")
        for i, rule in enumerate(rules):
            out += [f"runs[{r}].{p}" for p in _rule_problems(i, rule)]
        results = run.get("results")
        if not isinstance(results, list):
            out.append(f"runs[{r}]: no results array")
            continue
        if len(results) > MAX_RESULTS:
            out.append(f"runs[{r}]: {len(results)} results, over {MAX_RESULTS}")
        bases = set((run.get("originalUriBaseIds") or {}).keys())
        for i, result in enumerate(results):
            out += [f"runs[{r}].{p}" for p in _result_problems(i, result, rules, bases)]
    text = raw if raw is not None else json.dumps(log)
    size = len(gzip.compress(text.encode("utf-8")))
    if size > MAX_GZIP_BYTES:
        out.append(f"{size} bytes gzip-compressed, over {MAX_GZIP_BYTES}")
    return out
