"""`gpuaudit report diff OLD.json NEW.json`: what a nightly audit changed.

Findings are matched by their fingerprint (``id``: policy, resource identity, attribute path),
which is the same on every run. A FAIL of the new report is ``new`` when the old one did not
fail it, ``unchanged`` when it did; a FAIL of the old report is ``fixed`` when the new report no
longer fails it, ``suppressed`` when the new report mutes it. Where the new report could not
read something (errors, ERROR results), a finding that disappeared there is not proof of a fix:
the diff says so instead of counting it silently.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from reports.common import reveal
from reports.markdown import cell
from scanner.findings.schema import known_inputs

FAILING = "FAIL"


def diff_reports(
    old: dict[str, Any], new: dict[str, Any], *, old_name: str, new_name: str
) -> dict[str, Any]:
    """The diff document: counts, and the new / fixed / suppressed findings (new's order)."""
    before = {f["id"]: f for f in old["findings"]}
    after = {f["id"]: f for f in new["findings"]}
    new_fails = [f for f in new["findings"] if f["status"] == FAILING
                 and before.get(f["id"], {}).get("status") != FAILING]
    unchanged = [f for f in new["findings"] if f["status"] == FAILING
                 and before.get(f["id"], {}).get("status") == FAILING]
    fixed, suppressed = [], []
    for f in old["findings"]:
        if f["status"] != FAILING:
            continue
        now = after.get(f["id"], {}).get("status")
        if now == "SUPPRESSED":
            suppressed.append(after[f["id"]])
        elif now != FAILING:
            fixed.append(f)
    warnings = []
    if known_inputs(old) != known_inputs(new):
        warnings.append(
            f"the reports cover different inputs ({_inputs(old)} / {_inputs(new)}): a finding of "
            "an input only the old report read shows as fixed"
        )
    unread = len(new["errors"]) + int(new["summary"]["by_status"].get("ERROR", 0))
    if unread and fixed:
        warnings.append(
            f"{new_name} has {len(new['errors'])} error(s) and "
            f"{new['summary']['by_status'].get('ERROR', 0)} ERROR result(s): a finding in what "
            "it could not read shows as fixed without being fixed"
        )
    return {
        "old": old_name,
        "new": new_name,
        "counts": {
            "new": len(new_fails),
            "fixed": len(fixed),
            "suppressed": len(suppressed),
            "unchanged": len(unchanged),
        },
        "new_by_severity": dict(sorted(Counter(f["severity"] for f in new_fails).items())),
        "savings_usd_month": {
            "old": old["summary"].get("savings_usd_month", 0),
            "new": new["summary"].get("savings_usd_month", 0),
        },
        "exposure_usd_month": {  # worst-case overspend, never added to savings
            "old": old["summary"].get("exposure_usd_month", 0),
            "new": new["summary"].get("exposure_usd_month", 0),
        },
        "warnings": warnings,
        "new_findings": new_fails,
        "fixed_findings": fixed,
        "suppressed_findings": suppressed,
    }


def _inputs(doc: dict[str, Any]) -> str:
    return "; ".join(f"{k} {', '.join(map(str, v))}" for k, v in sorted(known_inputs(doc).items()))


def render_diff_table(diff: dict[str, Any]) -> str:
    """A short text report: counts, then one line per new, fixed and newly suppressed finding."""
    c = diff["counts"]
    lines = [
        f"{diff['old']} -> {diff['new']}: {c['new']} new, {c['fixed']} fixed, "
        f"{c['suppressed']} newly suppressed, {c['unchanged']} unchanged failing finding(s)",
    ]
    money = diff["savings_usd_month"]
    lines.append(f"estimated saving: ${money['old']:,.2f}/month -> ${money['new']:,.2f}/month")
    exposure = diff.get("exposure_usd_month") or {"old": 0, "new": 0}
    lines.append(f"exposure (worst case, not a saving): ${exposure['old']:,.2f}/month -> "
                 f"${exposure['new']:,.2f}/month")
    for title, key in (("new", "new_findings"), ("fixed", "fixed_findings"),
                       ("suppressed", "suppressed_findings")):
        if diff[key]:
            lines.append("")
            lines.append(f"{title}:")
            lines.extend(f"  {_line(f)}" for f in diff[key])
    for warning in diff["warnings"]:
        lines.append("")
        lines.append(f"warning: {warning}")
    return "\n".join(lines) + "\n"


def render_diff_markdown(diff: dict[str, Any]) -> str:
    c = diff["counts"]
    out = [
        "## gpuaudit: changes",
        "",
        f"`{diff['old']}` → `{diff['new']}`: **{c['new']} new**, {c['fixed']} fixed, "
        f"{c['suppressed']} newly suppressed, {c['unchanged']} unchanged failing finding(s).",
    ]
    for title, key in (("New", "new_findings"), ("Fixed", "fixed_findings"),
                       ("Newly suppressed", "suppressed_findings")):
        if diff[key]:
            out += ["", f"### {title}", "", "| severity | policy | resource | message |",
                    "|---|---|---|---|"]
            out += [f"| {f['severity']} | {f['policy_id']} | {cell(_where(f))} | "
                    f"{cell(f['message'])} |" for f in diff[key]]
    for warning in diff["warnings"]:
        out += ["", f"> {cell(warning)}"]
    return "\n".join(out) + "\n"


def _where(f: dict[str, Any]) -> str:
    r = f["resource"]
    loc = f.get("location") or {}
    if loc.get("file"):
        return f"{r.get('address') or r['id']} ({loc['file']}:{loc.get('start_line') or '?'})"
    scope = "/".join(x for x in (r.get("account"), r.get("region")) if x)
    return f"{r['id']} ({scope})" if scope else str(r["id"])


def _line(f: dict[str, Any]) -> str:
    text = f"{_where(f)}: {f['message']}"
    return f"{f['severity']:<8} {f['policy_id']:<9} {reveal(text, keep_newlines=False)}"


