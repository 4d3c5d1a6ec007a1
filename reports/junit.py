"""JUnit XML for CI test views: a testsuite per policy, a testcase per (policy, resource).

FAIL -> <failure>, ERROR -> <error>, SUPPRESSED / UNKNOWN -> <skipped>, PASS -> a passing case.
Input errors get their own suite, so a CI run shows what could not be read.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any, TextIO

from reports.common import (
    lean_sorted,
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


def _worst_first(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        group,
        key=lambda f: (
            _PRECEDENCE.index(f.get("status", "PASS")) if f.get("status") in _PRECEDENCE else 0
        ),
    )


def _case(name: str, key: str, group: list[dict[str, Any]]) -> tuple[ET.Element, str | None]:
    """The testcase of one (policy, resource), and the counter it adds to."""
    group = _worst_first(group)
    worst = str(group[0].get("status"))
    case = ET.Element("testcase", {k: xml_text(v) for k, v in (
        ("classname", f"gpuaudit.{name}"), ("name", key),
        ("file", (group[0].get("location") or {}).get("file") or ""))})
    if not case.get("file"):
        del case.attrib["file"]
    tag = _ELEMENT.get(worst)
    if not tag:
        return case, None
    bad = [f for f in group if f.get("status") != "PASS"]
    first = bad[0]
    message = str(first.get("message") or "")
    if worst == "SUPPRESSED":
        message = f"suppressed {suppression_text(first.get('suppression'))}: {message}"
    el = _sub(case, tag, message=message, type=f"{worst} {first.get('severity')}")
    el.text = xml_text("\n\n".join(_details(f) for f in bad))
    return case, {"failure": "failures", "error": "errors", "skipped": "skipped"}[tag]


def _counts(cases: Iterator[list[dict[str, Any]]]) -> dict[str, int]:
    counts = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for group in cases:
        worst = str(_worst_first(group)[0].get("status"))
        counts["tests"] += 1
        tag = _ELEMENT.get(worst)
        if tag:
            counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[tag]] += 1
    return counts


def _suite_key(f: dict[str, Any]) -> tuple[str, str]:
    return (str(f.get("policy_id")), _case_key(f))


def _suites(doc: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The findings of each policy (policies in order), sorted by case: a list of references
    sorted in runs (lean_sorted), no table of every case held."""
    ordered = lean_sorted(doc.get("findings") or [], _suite_key)
    return [(policy, list(members)) for policy, members in
            itertools.groupby(ordered, key=lambda f: str(f.get("policy_id")))]


def _groups(members: list[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    for key, group in itertools.groupby(members, key=_case_key):
        yield key, list(group)


def _policy_cases(name: str, members: list[dict[str, Any]]) -> Iterator[ET.Element]:
    for key, group in _groups(members):
        yield _case(name, key, group)[0]


def _input_cases(errors: list[dict[str, Any]]) -> Iterator[ET.Element]:
    for e in errors:
        where = f"{e.get('path')}:{e['line']}" if e.get("line") else str(e.get("path"))
        case = ET.Element("testcase", {"classname": xml_text("gpuaudit.inputs"),
                                       "name": xml_text(where)})
        _sub(
            case, "error", message=e.get("reason"), type=e.get("kind", "input")
        ).text = xml_text(f"[{e.get('kind', 'input')}] {where}: {e.get('reason')}")
        yield case


def _coverage_case(doc: dict[str, Any]) -> ET.Element | None:
    """The report's coverage line as a testcase of its own (its ``system-out``); skipped when
    module calls were not read and no GPU resource was judged: nothing judged is no pass."""
    from reports.common import coverage, coverage_line

    line, cov = coverage_line(doc), coverage(doc)
    if line is None or cov is None:
        return None
    case = ET.Element("testcase", {"classname": "gpuaudit.coverage", "name": "coverage"})
    if cov.unread_module_calls and not cov.gpu_resources:
        _sub(case, "skipped", message=line)
    ET.SubElement(case, "system-out").text = xml_text(line)
    return case


def _plan(doc: dict[str, Any]) -> list[tuple[ET.Element, Iterator[ET.Element]]]:
    """Each suite's element (attributes, no children yet) and its cases, made when iterated."""
    out: list[tuple[ET.Element, Iterator[ET.Element]]] = []
    for policy, members in _suites(doc):
        suite = ET.Element("testsuite", {"name": xml_text(policy)})
        for k, v in _counts(group for _, group in _groups(members)).items():
            suite.set(k, str(v))
        out.append((suite, _policy_cases(policy, members)))
    covered = _coverage_case(doc)
    if covered is not None:
        skipped = int(covered.find("skipped") is not None)
        suite = ET.Element("testsuite", {k: xml_text(v) for k, v in (
            ("name", "coverage"), ("tests", 1), ("failures", 0), ("errors", 0),
            ("skipped", skipped))})
        out.append((suite, iter([covered])))
    errors = doc.get("errors") or []
    if errors:
        suite = ET.Element("testsuite", {k: xml_text(v) for k, v in (
            ("name", "inputs"), ("tests", len(errors)), ("failures", 0),
            ("errors", len(errors)), ("skipped", 0))})
        out.append((suite, _input_cases(errors)))
    return out


def _root(suites: list[tuple[ET.Element, Iterator[ET.Element]]]) -> ET.Element:
    root = ET.Element("testsuites", {"name": "gpuaudit"})
    for k in ("tests", "failures", "errors", "skipped"):
        root.set(k, str(sum(int(s.get(k, 0)) for s, _ in suites)))
    return root


_MARK = "\ue000gpuaudit-children\ue000"  # a private-use mark: where an element's children go


def _open_close(element: ET.Element) -> tuple[str, str]:
    """``<tag attrs>`` and ``</tag>`` as ElementTree writes them."""
    element.text = _MARK
    text = ET.tostring(element, encoding="unicode")
    element.text = None
    head, tail = text.split(_MARK)
    return head, tail


def write(doc: dict[str, Any], out: TextIO) -> None:
    """The JUnit XML of ``doc`` to ``out``, a testcase at a time, byte for byte what
    ``ET.indent`` and ``ET.tostring`` of the whole tree give."""
    suites = _plan(doc)
    root = _root(suites)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    if not suites:
        out.write(ET.tostring(root, encoding="unicode") + "\n")
        return
    head, tail = _open_close(root)
    out.write(head)
    for suite, cases in suites:
        shead, stail = _open_close(suite)
        out.write("\n  " + shead)
        for case in cases:
            ET.indent(case, level=2)
            out.write("\n    " + ET.tostring(case, encoding="unicode"))
        out.write("\n  " + stail)
    out.write("\n" + tail + "\n")


def build(doc: dict[str, Any]) -> ET.Element:
    """The whole tree (for tests and small reports; :func:`write` streams it)."""
    suites = _plan(doc)
    root = _root(suites)
    for suite, cases in suites:
        root.append(suite)
        suite.extend(cases)
    return root


def render(doc: dict[str, Any]) -> str:
    buf = io.StringIO()
    write(doc, buf)
    return buf.getvalue()
