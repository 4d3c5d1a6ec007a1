"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; a rule per policy seen in the findings; results for FAIL and SUPPRESSED findings (the
latter with ``suppressions``); input errors, ERROR results and notices as tool execution
notifications.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import quote

from reports.common import (
    by_severity,
    live_name,
    money,
    resource_label,
    suppression_kind,
)

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}
LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
FINGERPRINT_KEY = "gpuaudit/v1"


def artifact_uri(path: str) -> tuple[str, str | None]:
    """``(uri, uriBaseId)``: a relative, forward-slash, percent-encoded URI under %SRCROOT%, or a
    ``file://`` URI for an absolute path."""
    if PureWindowsPath(path).drive:
        return PureWindowsPath(path).as_uri(), None
    posix = path.replace("\\", "/")
    if posix.startswith("/"):
        return PurePosixPath(posix).as_uri(), None
    while posix.startswith("./"):
        posix = posix[2:]
    return quote(posix, safe="/-._~"), "%SRCROOT%"


def _rule_name(title: str, policy_id: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", title)
    return "".join(w[:1].upper() + w[1:] for w in words) or policy_id.replace("-", "")


def _rule(finding: dict[str, Any]) -> dict[str, Any]:
    sev = str(finding.get("severity"))
    rem = finding.get("remediation") or {}
    title = str(finding.get("title") or finding.get("policy_id"))
    help_text = str(rem.get("text") or title)
    markdown = help_text
    for key, label, lang in (
        ("terraform", "Terraform", "hcl"),
        ("cloudformation", "CloudFormation", "yaml"),
    ):
        if rem.get(key):
            markdown += f"\n\n{label}:\n\n```{lang}\n{rem[key]}\n```"
    return {
        "id": str(finding.get("policy_id")),
        "name": _rule_name(title, str(finding.get("policy_id"))),
        "shortDescription": {"text": title},
        "fullDescription": {"text": f"{finding.get('policy_id')}: {title} (severity {sev})."},
        "help": {"text": help_text, "markdown": markdown},
        "defaultConfiguration": {"level": LEVEL.get(sev, "warning")},
        "properties": {
            "security-severity": SECURITY_SEVERITY.get(sev, "0.0"),
            "tags": ["security", "gpuaudit", sev],
        },
    }


def _locations(finding: dict[str, Any]) -> dict[str, Any]:
    res = finding.get("resource") or {}
    loc = finding.get("location") or {}
    out: dict[str, Any] = {}
    if loc.get("file"):
        uri, base = artifact_uri(str(loc["file"]))
        artifact: dict[str, Any] = {"uri": uri}
        if base:
            artifact["uriBaseId"] = base
        physical: dict[str, Any] = {"artifactLocation": artifact}
        start = loc.get("start_line")
        if isinstance(start, int) and start >= 1:
            end = loc.get("end_line")
            physical["region"] = {
                "startLine": start,
                "endLine": end if isinstance(end, int) and end >= start else start,
            }
        out["physicalLocation"] = physical
        logical = {
            "name": resource_label(res),
            "fullyQualifiedName": str(res.get("address") or res.get("id")),
            "kind": "resource",
        }
    else:
        logical = {
            "name": str(res.get("id") or "?"),
            "fullyQualifiedName": live_name(res),
            "kind": "resource",
        }
    out["logicalLocations"] = [logical]
    return out


def _result(finding: dict[str, Any], rule_index: int) -> dict[str, Any]:
    sev = str(finding.get("severity"))
    text = str(finding.get("message") or finding.get("title") or "")
    sav = finding.get("savings")
    if sav:
        text += f" Estimated saving {money(sav.get('usd_month'))}/month: {sav.get('basis')}."
    result: dict[str, Any] = {
        "ruleId": str(finding.get("policy_id")),
        "ruleIndex": rule_index,
        "level": LEVEL.get(sev, "warning"),
        "message": {"text": text},
        "locations": [_locations(finding)],
        "partialFingerprints": {FINGERPRINT_KEY: str(finding.get("id"))},
        "properties": {
            "severity": sev,
            "status": finding.get("status"),
            "resourceKind": (finding.get("resource") or {}).get("kind"),
            "evidence": finding.get("evidence") or {},
        },
    }
    if sav:
        result["properties"]["savings"] = sav
    if finding.get("status") == "SUPPRESSED":
        sup = finding.get("suppression") or {}
        justification = str(sup.get("reason") or f"suppressed by {sup.get('by') or 'baseline'}")
        suppression: dict[str, Any] = {
            "kind": suppression_kind(sup),
            "status": "accepted",
            "justification": justification,
        }
        if sup.get("by") or sup.get("expires"):
            suppression["properties"] = {k: sup[k] for k in ("by", "expires") if sup.get(k)}
        result["suppressions"] = [suppression]
    return result


def _file_location(path: Any, line: Any) -> dict[str, Any]:
    uri, base = artifact_uri(str(path))
    artifact: dict[str, Any] = {"uri": uri}
    if base:
        artifact["uriBaseId"] = base
    physical: dict[str, Any] = {"artifactLocation": artifact}
    if isinstance(line, int) and line >= 1:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def _notification(level: str, text: str, rule: str, location: dict[str, Any] | None) -> dict:
    note: dict[str, Any] = {"level": level, "message": {"text": text}, "descriptor": {"id": rule}}
    if location:
        note["locations"] = [location]
    return note


def build(doc: dict[str, Any]) -> dict[str, Any]:
    findings = by_severity(doc.get("findings") or [])
    reported = [f for f in findings if f.get("status") in ("FAIL", "SUPPRESSED")]
    rules: dict[str, dict[str, Any]] = {}
    for f in sorted(findings, key=lambda f: str(f.get("policy_id"))):
        rules.setdefault(str(f.get("policy_id")), _rule(f))
    index = {rule_id: i for i, rule_id in enumerate(rules)}
    notes = [
        _notification(
            "error",
            f"[{e.get('kind', 'input')}] {e.get('path')}: {e.get('reason')}",
            f"input-error/{e.get('kind', 'input')}",
            _file_location(e["path"], e.get("line")) if e.get("kind") != "aws" else None,
        )
        for e in doc.get("errors") or []
    ]
    notes += [
        _notification(
            "error",
            f"{f.get('policy_id')} could not evaluate "
            f"{resource_label(f.get('resource') or {})}: {f.get('message')}",
            str(f.get("policy_id")),
            _locations(f),
        )
        for f in findings
        if f.get("status") == "ERROR"
    ]
    notes += [
        _notification(
            "note",
            f"{n.get('path')}: {n.get('message')}",
            "notice",
            _file_location(n["path"], n.get("line")) if n.get("line") else None,
        )
        for n in doc.get("notices") or []
    ]
    tool = doc.get("tool") or {}
    invocation: dict[str, Any] = {
        "executionSuccessful": not any(n["level"] == "error" for n in notes),
        "toolExecutionNotifications": notes,
    }
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": str(tool.get("name") or "gpuaudit"),
                "version": str(tool.get("version") or "0"),
                "rules": list(rules.values()),
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The scanned repository"}}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[str(f.get("policy_id"))]) for f in reported],
        "properties": {
            "catalog": doc.get("catalog") or {},
            "summary": doc.get("summary") or {},
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(doc: dict[str, Any]) -> str:
    return json.dumps(build(doc), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
