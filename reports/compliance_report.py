"""The compliance report: one framework's controls, each with its status in a report.

A control's status comes from the results of the policies that check it (the framework files,
and what a finding's own ``compliance`` says): FAIL when one of them failed; else ERROR when one
could not evaluate; else UNKNOWN when one could not decide, when none was evaluated at all (no
resource in scope, or the policy did not run), or when the report has input errors (a PASS
could then rest on what was not read); else PASS. NOT_COVERED: no gpuaudit policy checks it. A
PASS of a control only partially covered says so (``coverage``): it is evidence for the
control, never its whole proof. The report counts PASS results it does not list, so the
status reads ``summary.by_policy``, and the failing resources read the listed findings.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any

from reports.common import cell, location_label, resource_label
from reports.policy_meta import help_uri
from scanner.compliance import Framework, finding_controls, framework

STATUSES = ("FAIL", "ERROR", "UNKNOWN", "PASS", "NOT_COVERED")
MAX_LISTED = 50  # failing resources shown per control in Markdown / HTML (JSON lists all)


def _status(counts: Counter[str], input_errors: int) -> tuple[str, str]:
    if counts["FAIL"]:
        return "FAIL", f"{counts['FAIL']} failing result(s)"
    if counts["ERROR"]:
        return "ERROR", f"{counts['ERROR']} result(s) could not be evaluated"
    if counts["UNKNOWN"]:
        return "UNKNOWN", f"{counts['UNKNOWN']} result(s) could not be decided"
    if not counts["PASS"] and not counts["SUPPRESSED"]:
        return "UNKNOWN", "not evaluated: no resource in scope, or the policy did not run"
    if input_errors:
        return "UNKNOWN", f"the report has {input_errors} input error(s): not everything was read"
    said = f"{counts['PASS']} passing result(s)"
    if counts["SUPPRESSED"]:
        said += f", {counts['SUPPRESSED']} suppressed (accepted exceptions)"
    return "PASS", said


def _evidence(f: dict[str, Any]) -> dict[str, Any]:
    res = f.get("resource") or {}
    return {
        "policy_id": f.get("policy_id"),
        "finding_id": f.get("id"),
        "status": f.get("status"),
        "resource": resource_label(res),
        "arn": res.get("arn"),
        "location": location_label(f),
        "message": f.get("message"),
        "link": help_uri(str(f.get("policy_id") or "")),
    }


def evaluate(doc: dict[str, Any], framework_id: str) -> dict[str, Any]:
    """The per-control section of ``doc`` for one framework (JSON values)."""
    fw: Framework = framework(framework_id)
    findings = doc.get("findings") or []
    by_policy = (doc.get("summary") or {}).get("by_policy") or {}
    input_errors = len(doc.get("errors") or [])
    related: dict[str, list[dict[str, Any]]] = {}
    declared: dict[str, list[str]] = {}
    for f in findings:
        pid = str(f.get("policy_id") or "")
        for cid in finding_controls(f).get(fw.id, []):
            related.setdefault(cid, []).append(f)
            if pid not in declared.setdefault(cid, []):
                declared[cid].append(pid)
    controls = []
    totals: Counter[str] = Counter()
    for control in fw.controls:
        policies = list(control.policies)
        policies += [p for p in declared.get(control.id, []) if p not in policies]
        counts: Counter[str] = Counter()
        for pid in policies:
            for status, n in (by_policy.get(pid) or {}).items():
                counts[str(status)] += int(n)
        if not policies:
            status, why = "NOT_COVERED", "no gpuaudit policy checks this control"
        else:
            status, why = _status(counts, input_errors)
        totals[status] += 1
        failing = [f for f in related.get(control.id, []) if f.get("status") == "FAIL"]
        controls.append({
            "id": control.id,
            "title": control.title,
            "status": status,
            "why": why,
            "coverage": control.coverage if control.mappings or not policies else "partial",
            "policies": policies,
            "mappings": [{"policy": m.policy, "coverage": m.coverage, "why": m.why}
                         for m in control.mappings],
            "results": dict(sorted(counts.items())),
            "failing": [_evidence(f) for f in failing],
        })
    return {"framework": fw.id, "name": fw.name, "version": fw.version, "url": fw.url,
            "scope": fw.scope, "counts": {s: totals[s] for s in STATUSES if totals[s]},
            "controls": controls}


def _count_line(section: dict[str, Any]) -> str:
    counts = section.get("counts") or {}
    return ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))


def markdown_section(section: dict[str, Any], *, level: int = 3) -> list[str]:
    head = "#" * level
    out = [f"{head} Compliance: {cell(section['name'])} {cell(section['version'])}", "",
           f"{cell(_count_line(section))}. Scope: {cell(section.get('scope', ''))}", "",
           "| Control | Title | Status | Coverage | Policies | Failing resources |",
           "|---|---|---|---|---|---|"]
    for c in section["controls"]:
        policies = ", ".join(f"[{cell(p)}]({help_uri(p)})" for p in c["policies"]) or "-"
        failing = "; ".join(f"{cell(e['resource'])} ({cell(e['policy_id'])}, "
                            f"{cell(e['location'])})" for e in c["failing"][:MAX_LISTED])
        if len(c["failing"]) > MAX_LISTED:
            failing += f"; … and {len(c['failing']) - MAX_LISTED} more"
        status = c["status"] if c["status"] != "NOT_COVERED" else "not covered"
        out.append(f"| {cell(c['id'])} | {cell(c['title'])} | **{status}** | "
                   f"{cell(c['coverage'])} | {policies} | {failing or '-'} |")
    return out


def render_markdown(section: dict[str, Any]) -> str:
    return "\n".join(markdown_section(section, level=2)) + "\n"


_STYLE = ("body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}"
          ".FAIL{color:#b00020;font-weight:bold}.PASS{color:#1b5e20;font-weight:bold}"
          ".UNKNOWN,.ERROR{color:#8a6d00;font-weight:bold}.NOT_COVERED{color:#666}")


def html_section(section: dict[str, Any]) -> str:
    """The section as an HTML fragment (every value escaped)."""
    e = html.escape
    rows = []
    for c in section["controls"]:
        policies = ", ".join(f'<a href="{e(help_uri(p))}">{e(p)}</a>' for p in c["policies"])
        failing = "".join(
            f"<li>{e(str(x['resource']))} ({e(str(x['policy_id']))}, "
            f"{e(str(x['location']))})</li>" for x in c["failing"][:MAX_LISTED])
        if len(c["failing"]) > MAX_LISTED:
            failing += f"<li>… and {len(c['failing']) - MAX_LISTED} more</li>"
        status = "not covered" if c["status"] == "NOT_COVERED" else c["status"]
        rows.append(
            f"<tr><td>{e(c['id'])}</td><td>{e(c['title'])}</td>"
            f'<td class="{e(c["status"])}" title="{e(c["why"])}">{e(status)}</td>'
            f"<td>{e(c['coverage'])}</td><td>{policies or '-'}</td>"
            f"<td>{'<ul>' + failing + '</ul>' if failing else '-'}</td></tr>")
    return (f'<section class="compliance"><h2>Compliance: {e(section["name"])} '
            f'{e(section["version"])}</h2><p>{e(_count_line(section))}. Scope: '
            f'{e(section.get("scope", ""))}</p><table><thead><tr><th>Control</th><th>Title</th>'
            "<th>Status</th><th>Coverage</th><th>Policies</th><th>Failing resources</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></section>")


def render_html(section: dict[str, Any]) -> str:
    title = html.escape(f"{section['name']} {section['version']}: gpuaudit compliance")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{_STYLE}</style></head><body>{html_section(section)}</body></html>\n")


def render_json(section: dict[str, Any]) -> str:
    return json.dumps(section, indent=2, sort_keys=True, ensure_ascii=False,
                      allow_nan=False) + "\n"


RENDERERS = {"markdown": render_markdown, "html": render_html, "json": render_json}


def render(doc: dict[str, Any], framework_id: str, fmt: str) -> str:
    return RENDERERS[fmt](evaluate(doc, framework_id))
