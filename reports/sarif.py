"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run. A rule per policy seen in the findings, with the catalogue's description, a link to the
policy's page (docs/policies/) and, for security policies only, a ``security-severity``; cost
policies (SPOT, ASG, RS) are tagged ``cost`` so code scanning does not file them as security
alerts. Results: FAIL (level from the severity) and SUPPRESSED (with ``suppressions``) under
the policy's rule; UNKNOWN and ERROR under the policy's ``<ID>/undecided`` rule, level
``note`` and no ``security-severity`` (code scanning gives a result its rule's severity), the
reason in the message. Input errors, ERROR results and notices are also tool execution
notifications (an error makes the run unsuccessful).

Each result's ``partialFingerprints`` is gpuaudit's finding id (policy, resource identity,
attribute path, root module relative to its git work tree): the same when lines move or the
scan runs from another directory; ``primaryLocationLineHash`` is built from it, not from the
line.

Code scanning rejects a whole upload when a result has no physical location, and places a
result by its path relative to the repository root. So every result here has one: the file's
path relative to ``root`` (no ``file://``, no ``..``), and line 1 when the finding has no line.
No result is dropped for its path: a file outside the root is placed by its path in its own
repository (see :func:`placed`) and a warning notification names it. A finding of a live
resource has no file and is left out, with a notification that counts them: an alert must
point at a file and a commit of the repository it is filed in, and a live resource has
neither (the JSON, HTML and Markdown reports carry those findings).
"""

from __future__ import annotations

import io
import json
import os
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any, TextIO

from reports.common import (
    by_severity,
    live_name,
    money,
    money_class,
    resource_label,
    suppression_kind,
)
from reports.policy_meta import describe
from scanner import __url__ as PROJECT_URL
from scanner.compliance import finding_controls
from scanner.findings.paths import repo_relative, uri

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# GitHub reads a score: over 9.0 critical, 7.0-8.9 high, 4.0-6.9 medium, 0.1-3.9 low.
SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0"}
LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}
FINGERPRINT_KEY = "gpuaudit/v1"
RESULT_STATUSES = ("FAIL", "SUPPRESSED", "UNKNOWN", "ERROR")
UNDECIDED = ("UNKNOWN", "ERROR")  # results of the policy's "/undecided" rule: level note
UNDECIDED_RULE = "{}/undecided"
# GitHub's limits (docs: "SARIF support for code scanning"): over these an upload is rejected.
MAX_RESULTS = 25_000
MAX_TEXT = 1024  # shortDescription / fullDescription
MAX_NAME = 255
LISTED = 5  # paths named in a notification about left-out results


def artifact_uri(
    path: str, *, root: Path | None = None, base: Path | None = None
) -> tuple[str, str] | None:
    """``(uri, "%SRCROOT%")`` for a file under the repository root, else None."""
    rel = repo_relative(path, root=root, base=base)
    return None if rel is None else (uri(rel), "%SRCROOT%")


def _rule_name(title: str, policy_id: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", title)
    name = "".join(w[:1].upper() + w[1:] for w in words) or policy_id.replace("-", "")
    return name[:MAX_NAME]


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _rule(finding: dict[str, Any]) -> dict[str, Any]:
    pid = str(finding.get("policy_id"))
    sev = str(finding.get("severity"))
    title = str(finding.get("title") or pid)
    meta = describe(pid, title=title, severity=sev)
    rem = finding.get("remediation") or {}
    level = LEVEL.get(sev, "warning")
    description = meta.description or title
    full = f"{description} Severity {sev}; {meta.category} policy."
    help_text = f"{description}\n\nRemediation: {rem.get('text') or 'see ' + meta.help_uri}"
    markdown = f"{description}\n\n**Remediation.** {rem.get('text') or ''}"
    for key, label, lang in (("terraform", "Terraform", "hcl"),
                             ("cloudformation", "CloudFormation", "yaml")):
        if rem.get(key):
            markdown += f"\n\n{label}:\n\n```{lang}\n{rem[key]}\n```"
    markdown += f"\n\n[{pid} in the gpuaudit policy catalogue]({meta.help_uri})"
    properties: dict[str, Any] = {
        "tags": [meta.category, "gpuaudit", "aws", sev],
        "precision": "high",
    }
    if meta.category == "security" and sev in SECURITY_SEVERITY:
        properties["security-severity"] = SECURITY_SEVERITY[sev]
    else:
        properties["problem.severity"] = PROBLEM_SEVERITY[level]
    return {
        "id": pid,
        "name": _rule_name(title, pid),
        "shortDescription": {"text": _cut(title)},
        "fullDescription": {"text": _cut(full)},
        "helpUri": meta.help_uri,
        "help": {"text": help_text, "markdown": markdown},
        "defaultConfiguration": {"level": level},
        "properties": properties,
    }


def _undecided_rule(finding: dict[str, Any]) -> dict[str, Any]:
    """The rule of a policy's UNKNOWN and ERROR results: level ``note`` and no
    ``security-severity`` (code scanning gives every result its rule's severity, and an
    undecided result is not a high security alert), the policy's page for help."""
    rule = _rule(finding)
    pid = rule["id"]
    title = rule["shortDescription"]["text"]
    rule["id"] = UNDECIDED_RULE.format(pid)
    rule["name"] = (rule["name"] + "Undecided")[:MAX_NAME]
    rule["shortDescription"] = {"text": _cut(f"{title} (not decided)")}
    rule["fullDescription"] = {"text": _cut(
        f"Results of {pid} that gpuaudit could not decide: UNKNOWN (a value not known before "
        "apply, or not read) or ERROR (the resource could not be evaluated). They need "
        f"review; they are not alerts of the policy's severity. {rule['fullDescription']['text']}")}
    rule["defaultConfiguration"] = {"level": "note"}
    rule["properties"] = {"tags": [*rule["properties"]["tags"], "undecided"],
                          "precision": "low", "problem.severity": PROBLEM_SEVERITY["note"]}
    return rule


def _rule_id(finding: dict[str, Any]) -> str:
    pid = str(finding.get("policy_id"))
    return UNDECIDED_RULE.format(pid) if finding.get("status") in UNDECIDED else pid


def _logical(finding: dict[str, Any], root: Path | None, base: Path | None) -> dict[str, Any]:
    res = finding.get("resource") or {}
    if (finding.get("location") or {}).get("file"):
        # the root module (or template / plan) it was read from, then its address: one module
        # used by two root modules is two resources
        address = str(res.get("address") or res.get("id"))
        where = _root_module(res.get("root"), root, base)
        return {"name": resource_label(res),
                "fullyQualifiedName": f"{where}:{address}" if where else address,
                "kind": "resource"}
    return {"name": str(res.get("id") or "?"), "fullyQualifiedName": live_name(res),
            "kind": "resource"}


def _root_module(given: Any, root: Path | None, base: Path | None) -> str:
    """The root module directory (or template, plan) relative to the repository root like the
    artifact paths ("." for the repository root itself); as the report gives it when it lies
    outside the repository."""
    if not given:
        return ""
    rel = repo_relative(f"{str(given).rstrip('/')}/_", root=root, base=base)
    if rel is None:
        return str(given)
    return "." if rel == "_" else rel[:-2]


def placed(path: str, *, root: Path | None = None, base: Path | None = None) -> str:
    """The repository path a result is filed under: relative to ``root``; for a file outside
    it, relative to the file's own git work tree (or its directory); at worst the path itself
    without its drive, leading ``/`` and ``..`` steps. A result is never dropped for its path
    (code scanning needs one; the run's notification says which were placed so)."""
    rel = repo_relative(path, root=root, base=base)
    if rel is not None:
        return rel
    from scanner.inputs.repo_root import path_root  # no AWS: the parents walked for a .git

    posix = path.replace("\\", "/").replace("\x00", "")
    drive = PureWindowsPath(posix).drive
    posix = posix[len(drive):] if drive else posix
    if not drive:
        absolute = posix if posix.startswith("/") else os.path.join(base or os.getcwd(), posix)
        try:
            rel = repo_relative(absolute, root=path_root(Path(absolute)), base=base)
        except (OSError, ValueError):
            rel = None
        if rel is not None:
            return rel
    parts = [p for p in posixpath.normpath("/" + posix).split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or "unknown"


def _physical(path: Any, start: Any, end: Any, root: Path | None,
              base: Path | None, *, strict: bool = False) -> dict[str, Any] | None:
    """A physical location under %SRCROOT% (see :func:`placed`); None without a path, and
    ``strict``: None when the path is not under the root (a notification's location)."""
    if not path:
        return None
    art = (artifact_uri(str(path), root=root, base=base) if strict
           else (uri(placed(str(path), root=root, base=base)), "%SRCROOT%"))
    if art is None:
        return None
    first = start if isinstance(start, int) and not isinstance(start, bool) and start >= 1 else 1
    last = end if isinstance(end, int) and not isinstance(end, bool) and end >= first else first
    return {"artifactLocation": {"uri": art[0], "uriBaseId": art[1]},
            "region": {"startLine": first, "endLine": last}}


def _message(finding: dict[str, Any]) -> str:
    text = str(finding.get("message") or finding.get("title") or finding.get("policy_id"))
    if finding.get("status") == "UNKNOWN":
        return f"UNKNOWN (not decided, needs review): {text}"
    if finding.get("status") == "ERROR":
        return f"ERROR (could not evaluate, needs review): {text}"
    sav = finding.get("savings")
    if sav:
        word = ("Worst-case exposure" if money_class(finding) == "exposure"
                else "Estimated saving")
        text += f" {word} {money(sav.get('usd_month'))}/month: {sav.get('basis')}."
    return text


def _result(finding: dict[str, Any], rule_index: int, physical: dict[str, Any],
            root: Path | None = None, base: Path | None = None) -> dict[str, Any]:
    sev = str(finding.get("severity"))
    status = finding.get("status")
    fid = str(finding.get("id"))
    result: dict[str, Any] = {
        "ruleId": _rule_id(finding),
        "ruleIndex": rule_index,
        "level": "note" if status in UNDECIDED else LEVEL.get(sev, "warning"),
        "message": {"text": _message(finding)},
        "locations": [{"physicalLocation": physical,
                       "logicalLocations": [_logical(finding, root, base)]}],
        # Our fingerprint (policy, resource identity, attribute path) is stable across edits
        # and runs; code scanning matches alerts on primaryLocationLineHash only.
        "partialFingerprints": {FINGERPRINT_KEY: fid, "primaryLocationLineHash": f"{fid}:1"},
        "properties": {
            "severity": sev,
            "status": status,
            "resourceKind": (finding.get("resource") or {}).get("kind"),
            "evidence": finding.get("evidence") or {},
        },
    }
    if finding.get("savings"):
        result["properties"]["savings"] = finding["savings"]
    controls = finding_controls(finding)
    if controls:  # {framework: [control ids]}, as in the JSON report
        result["properties"]["compliance"] = controls
    if status == "SUPPRESSED":
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


def _notification(level: str, text: str, rule: str,
                  location: dict[str, Any] | None = None) -> dict[str, Any]:
    note: dict[str, Any] = {"level": level, "message": {"text": text}, "descriptor": {"id": rule}}
    if location:
        note["locations"] = [location]
    return note


def _where(path: Any, line: Any, root: Path | None, base: Path | None) -> dict[str, Any] | None:
    physical = _physical(path, line, line, root, base, strict=True)
    return {"physicalLocation": physical} if physical else None


def _left_out(live: list[dict[str, Any]], outside: list[dict[str, Any]],
              over: list[dict[str, Any]], root: Path | None) -> list[dict[str, Any]]:
    notes = []
    if live:
        counts = Counter(str(f.get("status")) for f in live)
        said = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        notes.append(_notification(
            "note",
            f"{len(live)} finding(s) of live AWS resources ({said}) are not SARIF results: "
            "code scanning files a result in a file of the repository, and a live resource has "
            "none. The JSON, HTML and Markdown reports list them.",
            "sarif/live-findings-left-out"))
    if outside:
        paths = sorted({str((f.get("location") or {}).get("file")) for f in outside})
        more = f" (+{len(paths) - LISTED} more)" if len(paths) > LISTED else ""
        where = f"the repository root {root}" if root else "the repository root"
        notes.append(_notification(
            "warning",
            f"{len(outside)} result(s) name a file that is not under {where}: they are placed "
            f"by the file's path in its own repository (give --repo-root): "
            f"{', '.join(paths[:LISTED])}{more}",
            "sarif/outside-root"))
    if over:
        notes.append(_notification(
            "warning",
            f"{len(over)} less severe finding(s) are not SARIF results: code scanning rejects "
            f"a run of more than {MAX_RESULTS} results. The JSON report lists them.",
            "sarif/too-many-results"))
    return notes


class _Lazy:
    """A JSON array whose items are made while it is written (results, notifications)."""

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)


def _write_json(out: TextIO, value: Any, level: int = 0) -> None:
    """``value`` as ``json.dumps(value, indent=2)`` would write it at nesting ``level``, byte
    for byte, with each :class:`_Lazy` array's items made and written one at a time."""
    pad = "  " * (level + 1)
    if isinstance(value, _Lazy):
        first = True
        for item in value.items:
            out.write("[\n" + pad if first else ",\n" + pad)
            first = False
            _write_json(out, item, level + 1)
        out.write("[]" if first else "\n" + "  " * level + "]")
    elif isinstance(value, dict) and value and _has_lazy(value):
        out.write("{\n")
        for i, (key, item) in enumerate(value.items()):
            out.write(("" if i == 0 else ",\n") + pad + json.dumps(key, ensure_ascii=False)
                      + ": ")
            _write_json(out, item, level + 1)
        out.write("\n" + "  " * level + "}")
    elif isinstance(value, list) and value and any(isinstance(v, _Lazy | dict | list)
                                                   and _has_lazy(v) for v in value):
        out.write("[\n")
        for i, item in enumerate(value):
            out.write(("" if i == 0 else ",\n") + pad)
            _write_json(out, item, level + 1)
        out.write("\n" + "  " * level + "]")
    else:
        out.write(_dump(value).replace("\n", "\n" + "  " * level))


def _has_lazy(value: Any) -> bool:
    if isinstance(value, _Lazy):
        return True
    if isinstance(value, dict):
        return any(_has_lazy(v) for v in value.values() if isinstance(v, _Lazy | dict | list))
    if isinstance(value, list):
        return any(_has_lazy(v) for v in value if isinstance(v, _Lazy | dict | list))
    return False


@dataclass
class _Placement:
    """Which findings are results and which are left out (each list kept in severity order)."""

    placed: list[dict[str, Any]] = field(default_factory=list)  # results
    live: list[dict[str, Any]] = field(default_factory=list)  # no file: left out
    outside: list[dict[str, Any]] = field(default_factory=list)  # results, file outside the root
    over: list[dict[str, Any]] = field(default_factory=list)  # past MAX_RESULTS: left out


def _placement(findings: list[dict[str, Any]], root: Path | None,
               base: Path | None) -> _Placement:
    """The findings of a result status, most severe first, sorted into :class:`_Placement`."""
    out = _Placement()
    for f in findings:
        if f.get("status") not in RESULT_STATUSES:
            continue
        loc = f.get("location") or {}
        if not loc.get("file"):
            out.live.append(f)
        elif len(out.placed) < MAX_RESULTS:  # most severe first (by_severity)
            out.placed.append(f)
            if repo_relative(str(loc["file"]), root=root, base=base) is None:
                out.outside.append(f)  # still a result: placed by its own repository's path
        else:
            out.over.append(f)
    return out


def _rules(findings: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The rules by id, sorted: one per policy seen, and one ``<ID>/undecided`` per policy
    with an UNKNOWN or ERROR finding in a file; a rule is made of its first finding."""
    first: dict[str, dict[str, Any]] = {}
    for f in findings:
        first.setdefault(str(f.get("policy_id")), f)
        if f.get("status") in UNDECIDED and (f.get("location") or {}).get("file"):
            first.setdefault(_rule_id(f), f)
    return {rid: _rule(first[rid]) if rid == str(first[rid].get("policy_id"))
            else _undecided_rule(first[rid]) for rid in sorted(first)}


def _results(placed: list[dict[str, Any]], index: dict[str, int], root: Path | None,
             base: Path | None) -> Iterator[dict[str, Any]]:
    for f in placed:
        loc = f.get("location") or {}
        physical = _physical(loc["file"], loc.get("start_line"), loc.get("end_line"), root, base)
        yield _result(f, index[_rule_id(f)], physical or {}, root, base)


def _notifications(doc: dict[str, Any], findings: list[dict[str, Any]], placement: _Placement,
                   root: Path | None, base: Path | None) -> Iterator[dict[str, Any]]:
    """The tool execution notifications: input errors, ERROR results, notices, and what was
    left out of the results."""
    for e in doc.get("errors") or []:
        yield _notification(
            "error",
            f"[{e.get('kind', 'input')}] {e.get('path')}: {e.get('reason')}",
            f"input-error/{e.get('kind', 'input')}",
            _where(e.get("path"), e.get("line"), root, base)
            if e.get("kind") != "aws" else None)
    for f in findings:
        if f.get("status") == "ERROR":
            loc = f.get("location") or {}
            yield _notification(
                "error",
                f"{f.get('policy_id')} could not evaluate "
                f"{resource_label(f.get('resource') or {})}: {f.get('message')}",
                str(f.get("policy_id")),
                _where(loc.get("file"), loc.get("start_line"), root, base))
    for n in doc.get("notices") or []:
        yield _notification(
            "note", f"{n.get('path')}: {n.get('message')}", "notice",
            _where(n.get("path"), n.get("line"), root, base) if n.get("line") else None)
    yield from _left_out(placement.live, placement.outside, placement.over, root)


def _driver(tool: dict[str, Any], rules: list[dict[str, Any]]) -> dict[str, Any]:
    version = str(tool.get("version") or "0")
    driver: dict[str, Any] = {
        "name": str(tool.get("name") or "gpuaudit"),
        "version": version,
        "informationUri": PROJECT_URL,
        "rules": rules,
    }
    if re.fullmatch(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?", version):
        driver["semanticVersion"] = version
    return driver


def _log(doc: dict[str, Any], root: Path | None, base: Path | None) -> dict[str, Any]:
    """The SARIF log of ``doc`` with its results and notifications as :class:`_Lazy` arrays:
    the findings are classified first (which are results, which are left out and why), then
    each result and notification is made as it is written."""
    findings = by_severity(doc.get("findings") or [])
    rules = _rules(findings)
    index = {rule_id: i for i, rule_id in enumerate(rules)}
    placement = _placement(findings, root, base)
    failed = bool(doc.get("errors")) or any(f.get("status") == "ERROR" for f in findings)
    run: dict[str, Any] = {
        "tool": {"driver": _driver(doc.get("tool") or {}, list(rules.values()))},
        "invocations": [{
            "executionSuccessful": not failed,
            "toolExecutionNotifications": _Lazy(
                _notifications(doc, findings, placement, root, base)),
        }],
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root"}}},
        "columnKind": "unicodeCodePoints",
        "results": _Lazy(_results(placement.placed, index, root, base)),
        "properties": {
            "catalog": doc.get("catalog") or {},
            "summary": doc.get("summary") or {},
            **_coverage(doc),
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _coverage(doc: dict[str, Any]) -> dict[str, Any]:
    """The run's ``coverage`` property: the report's numbers and its coverage line."""
    from reports.common import coverage_line

    line = coverage_line(doc)
    if line is None:
        return {}
    return {"coverage": {**(doc.get("summary") or {}).get("coverage", {}), "text": line}}


def _materialized(value: Any) -> Any:
    if isinstance(value, _Lazy):
        return [_materialized(v) for v in value.items]
    if isinstance(value, dict):
        return {k: _materialized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_materialized(v) for v in value]
    return value


def build(doc: dict[str, Any], *, root: Path | None = None,
          base: Path | None = None) -> dict[str, Any]:
    """The SARIF log of ``doc`` as one object (for tests and small reports; :func:`write`
    streams it). File paths in ``doc`` are relative to ``base`` (default: the working
    directory) or absolute; results carry them relative to ``root`` (default: the paths are
    taken as relative to the repository root already)."""
    log: dict[str, Any] = _materialized(_log(doc, root, base))
    return log


def write(doc: dict[str, Any], out: TextIO, *, root: Path | None = None,
          base: Path | None = None) -> None:
    """The SARIF log of ``doc`` to ``out``, a result and a notification at a time."""
    _write_json(out, _log(doc, root, base))
    out.write("\n")


def render(doc: dict[str, Any], *, root: Path | None = None, base: Path | None = None) -> str:
    buf = io.StringIO()
    write(doc, buf, root=root, base=base)
    return buf.getvalue()
