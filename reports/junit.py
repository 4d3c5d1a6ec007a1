"""JUnit XML for CI test views: a testsuite per policy, a testcase per (policy, resource).

FAIL -> <failure>, ERROR -> <error>, SUPPRESSED / UNKNOWN -> <skipped>, PASS -> a passing case.
Input errors get their own suite, so a CI run shows what could not be read.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from reports.common import (
    live_name,
    location_label,
    money,
    money_class,
    resource_label,
    reveal,
    suppression_text,
)
from scanner.compliance import finding_controls, short_label

# Characters XML 1.0 cannot carry at all, even escaped, that reveal() leaves alone.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_PRECEDENCE = ("FAIL", "ERROR", "UNKNOWN", "SUPPRESSED", "PASS")
_ELEMENT = {"FAIL": "failure", "ERROR": "error", "UNKNOWN": "skipped", "SUPPRESSED": "skipped"}


def xml_text(value: Any) -> str:
    """Text safe for XML 1.0, with control and bidi characters made visible as ``<U+001B>``."""
    return _NOT_XML.sub(lambda m: f"<U+{ord(m.group()):04X}>", reveal(value))


def _case_key(finding: dict[str, Any]) -> str:
    res = finding.get("resource") or {}
    if (finding.get("location") or {}).get("file"):
        return str(res.get("address") or res.get("id"))
    return live_name(res) or str(res.get("id"))


def _details(finding: dict[str, Any]) -> str:
    lines = [
        f"{finding.get('status')} {finding.get('policy_id')} [{finding.get('severity')}]: "
        f"{finding.get('message')}",
        f"resource: {resource_label(finding.get('resource') or {})} "
        f"({(finding.get('resource') or {}).get('kind')})",
        f"location: {location_label(finding)}",
    ]
    if finding.get("evidence"):
        ev = json.dumps(finding["evidence"], sort_keys=True, ensure_ascii=False, default=str)
        lines.append(f"evidence: {ev}")
    if finding.get("savings"):
        sav = finding["savings"]
        word = "exposure (worst case)" if money_class(finding) == "exposure" else "saving"
        lines.append(f"{word}: {money(sav.get('usd_month'))}/month ({sav.get('basis')})")
    if finding.get("suppression"):
        lines.append(f"suppressed {suppression_text(finding['suppression'])}")
    controls = short_label(finding_controls(finding))
    if controls:
        lines.append(f"compliance: {controls}")
    rem = (finding.get("remediation") or {}).get("text")
    if rem:
        lines.append(f"remediation: {rem}")
    return "\n".join(lines)


def _sub(parent: ET.Element, tag: str, **attrs: Any) -> ET.Element:
    return ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})


def _suite(root: ET.Element, name: str, cases: dict[str, list[dict[str, Any]]]) -> None:
    suite = _sub(root, "testsuite", name=name)
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for key in sorted(cases):
        group = sorted(
            cases[key],
            key=lambda f: (
                _PRECEDENCE.index(f.get("status", "PASS")) if f.get("status") in _PRECEDENCE else 0
            ),
        )
        worst = str(group[0].get("status"))
        case = _sub(
            suite,
            "testcase",
            classname=f"gpuaudit.{name}",
            name=key,
            file=(group[0].get("location") or {}).get("file") or "",
        )
        if not case.get("file"):
            del case.attrib["file"]
        counts["tests"] += 1
        tag = _ELEMENT.get(worst)
        if tag:
            counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[tag]] += 1
            bad = [f for f in group if f.get("status") != "PASS"]
            first = bad[0]
            message = str(first.get("message") or "")
            if worst == "SUPPRESSED":
                message = f"suppressed {suppression_text(first.get('suppression'))}: {message}"
            el = _sub(case, tag, message=message, type=f"{worst} {first.get('severity')}")
            el.text = xml_text("\n\n".join(_details(f) for f in bad))
    for k, v in counts.items():
        suite.set(k, str(v))


def build(doc: dict[str, Any]) -> ET.Element:
    root = ET.Element("testsuites", {"name": "gpuaudit"})
    by_policy: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for f in doc.get("findings") or []:
        by_policy.setdefault(str(f.get("policy_id")), {}).setdefault(_case_key(f), []).append(f)
    for policy in sorted(by_policy):
        _suite(root, policy, by_policy[policy])
    errors = doc.get("errors") or []
    if errors:
        suite = _sub(
            root,
            "testsuite",
            name="inputs",
            tests=len(errors),
            failures=0,
            errors=len(errors),
            skipped=0,
        )
        for e in errors:
            where = f"{e.get('path')}:{e['line']}" if e.get("line") else str(e.get("path"))
            case = _sub(suite, "testcase", classname="gpuaudit.inputs", name=where)
            _sub(
                case, "error", message=e.get("reason"), type=e.get("kind", "input")
            ).text = xml_text(f"[{e.get('kind', 'input')}] {where}: {e.get('reason')}")
    totals = {
        k: sum(int(s.get(k, 0)) for s in root) for k in ("tests", "failures", "errors", "skipped")
    }
    for k, v in totals.items():
        root.set(k, str(v))
    return root


def render(doc: dict[str, Any]) -> str:
    root = build(doc)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
