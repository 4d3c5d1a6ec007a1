"""Markdown for pull-request comments and job summaries (GitHub-flavoured tables)."""

from __future__ import annotations

from typing import Any, TextIO

from reports.common import (
    SEVERITIES,
    STATUSES,
    by_severity,
    cell,
    counted,
    coverage_line,
    lean_sorted,
    location_label,
    money,
    money_class,
    resource_label,
    saving,
    spend_line,
    suppression_text,
)
from scanner.compliance import finding_controls, short_label

MAX_ROWS = 100  # GitHub comments are limited to 65536 characters


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _capped(total: int) -> list[str]:
    if total <= MAX_ROWS:
        return []
    return ["", f"_… and {total - MAX_ROWS} more; see the full report._"]


def write(doc: dict[str, Any], out: TextIO) -> None:
    """Markdown is bounded (at most MAX_ROWS rows a table): built, then written."""
    out.write(render(doc))


def render(doc: dict[str, Any]) -> str:
    findings = doc.get("findings") or []
    failing = by_severity(f for f in findings if f.get("status") == "FAIL")
    tool = doc.get("tool") or {}
    out = ["## gpuaudit report", "", *_summary(doc)]
    out += _failing_section(failing)
    out += _undecided_section(findings)
    out += _money_sections(failing)
    for section in doc.get("compliance") or []:  # scan/audit --compliance
        from reports.compliance_report import markdown_section

        out += ["", *markdown_section(section)]
    out += _input_errors_section(doc.get("errors") or [])
    out += _notices_section(doc.get("notices") or [])
    out += ["", f"<sub>{cell(tool.get('name', 'gpuaudit'))} {cell(tool.get('version', ''))}</sub>"]
    return "\n".join(out) + "\n"


def _summary(doc: dict[str, Any]) -> list[str]:
    """The counts by status, the failing by severity, the money, and the lines of spend,
    coverage and the catalogue's note (each a Markdown line break after the one before)."""
    summary = doc.get("summary") or {}
    by_status = summary.get("by_status") or {}
    by_sev = summary.get("by_severity") or {}
    cat = doc.get("catalog") or {}
    out = _table(["Status", "Count"], [[s, str(by_status.get(s, 0))] for s in STATUSES])
    out += [
        "",
        "Failing by severity: "
        + (", ".join(f"**{by_sev[s]}** {s}" for s in SEVERITIES if by_sev.get(s)) or "none")
        + "  ",
        f"Estimated saving: **{money(summary.get('savings_usd_month') or 0)}/month**"
        f" (prices: {cell(cat.get('source', '?'))}, as of {cell(cat.get('as_of', '?'))})  ",
        f"Exposure (worst-case overspend the settings allow, not a saving): "
        f"**{money(summary.get('exposure_usd_month') or 0)}/month**",
    ]
    spent = spend_line(doc)
    covered = coverage_line(doc)
    for line in (cell(spent) if spent else None,
                 f"Coverage: {cell(covered)}" if covered else None,
                 f"Note: {cell(cat['note'])}" if cat.get("note") else None):
        if line is not None:
            out[-1] += "  "
            out.append(line)
    return out


def _failing_section(failing: list[dict[str, Any]]) -> list[str]:
    out = ["", f"### Failing findings ({len(failing)})", ""]
    if not failing:
        return [*out, "None."]
    rows = [
        [
            cell(f.get("severity")),
            cell(f.get("policy_id")),
            cell(resource_label(f.get("resource") or {})),
            cell(location_label(f)),
            cell(f.get("message")),
            money(saving(f)) if saving(f) and money_class(f) != "exposure" else "",
            money(saving(f)) if saving(f) and money_class(f) == "exposure" else "",
            cell(short_label(finding_controls(f))),
        ]
        for f in failing[:MAX_ROWS]
    ]
    out += _table(["Severity", "Policy", "Resource", "Location", "Message", "Saving/mo",
                   "Exposure/mo", "Compliance"], rows)
    return out + _capped(len(failing))


def _undecided_section(findings: list[dict[str, Any]]) -> list[str]:
    """The ERROR, UNKNOWN and SUPPRESSED findings, each with why (none: no section)."""
    others = [
        f for f in by_severity(findings) if f.get("status") in ("ERROR", "UNKNOWN", "SUPPRESSED")
    ]
    if not others:
        return []
    rows = [
        [
            cell(f.get("status")),
            cell(f.get("policy_id")),
            cell(resource_label(f.get("resource") or {})),
            cell(location_label(f)),
            cell(
                suppression_text(f.get("suppression"))
                if f.get("status") == "SUPPRESSED"
                else f.get("message")
            ),
        ]
        for f in others[:MAX_ROWS]
    ]
    out = ["", f"### Errored, unknown and suppressed ({len(others)})", ""]
    out += _table(["Status", "Policy", "Resource", "Location", "Why"], rows)
    return out + _capped(len(others))


def _money_sections(failing: list[dict[str, Any]]) -> list[str]:
    """The savings, then the exposure, of the failing findings, largest first."""
    out: list[str] = []
    for cls, heading in (("saving", "Savings"), ("exposure", "Exposure (worst case)")):
        savers = lean_sorted((f for f in failing if saving(f) and money_class(f) == cls),
                             key=lambda f: -saving(f))
        if not savers:
            continue
        out += ["", f"### {heading}", ""]
        rows = [
            [
                money(saving(f)) + ("" if counted(f) else " (overlaps, not in the total)"),
                cell(f.get("policy_id")),
                cell(resource_label(f.get("resource") or {})),
                cell((f.get("savings") or {}).get("basis")),
            ]
            for f in savers[:MAX_ROWS]
        ]
        out += _table(["$/month", "Policy", "Resource", "Basis"], rows)
        out += _capped(len(savers))
    return out


def _input_errors_section(errors: list[dict[str, Any]]) -> list[str]:
    if not errors:
        return []
    return ["", f"### Input errors ({len(errors)})", ""] + [
        f"- `{cell(e.get('kind', 'input'))}` {cell(e.get('path'))}"
        + (f":{e['line']}" if e.get("line") else "")
        + f": {cell(e.get('reason'))}"
        for e in errors
    ]


def _notices_section(notices: list[dict[str, Any]]) -> list[str]:
    if not notices:
        return []
    return ["", f"### Notices ({len(notices)})", ""] + [
        f"- {cell(n.get('path'))}"
        + (f":{n['line']}" if n.get("line") else "")
        + f": {cell(n.get('message'))}"
        for n in notices
    ]
