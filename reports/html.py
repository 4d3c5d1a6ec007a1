"""Self-contained HTML report: one jinja2 template, autoescaped, inline CSS, no script, no network.

Every string from the document goes through :func:`reports.common.reveal` (bidi overrides and
control characters become visible ``<U+202E>`` marks) and then through jinja2's autoescaping, so
names, tags and messages can only ever be text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from reports.common import (
    NOT_PASSING,
    SEVERITIES,
    STATUSES,
    by_status,
    counted,
    live_name,
    location_label,
    money,
    money_class,
    resource_label,
    reveal,
    suppression_text,
)
from reports.sparkline import sparkline
from scanner.pricing.money import HOURS_PER_MONTH

TEMPLATE = "report.html.j2"
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
_ANCHOR = re.compile(r"[^A-Za-z0-9_-]")


def _enum(value: Any, allowed: tuple[str, ...]) -> str:
    """A CSS-class-safe copy of an enum value (anything else becomes ``other``)."""
    return str(value) if value in allowed else "other"


def _value(value: Any) -> str:
    if isinstance(value, str):
        return reveal(value)
    return reveal(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


def _trend_view(evidence: dict[str, Any]) -> tuple[Any, str]:
    """The inline SVG of a right-sizing finding's utilization trend, and its caption."""
    trend = evidence.get("utilization_trend")
    if not isinstance(trend, dict) or not isinstance(trend.get("UtilMax"), list):
        return "", ""
    from markupsafe import Markup

    def numbers(key: str) -> list[float | None]:
        values = trend.get(key) if isinstance(trend.get(key), list) else []
        return [float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
                for v in values[:200]]

    step = trend.get("HoursPerPoint")
    step_text = f"{step}-hour" if isinstance(step, int) else "per-period"
    caption = f"GPU utilization, {step_text} max (solid) and p95 (dashed), 0-100 %"
    # only numbers reach the SVG; the caption is escaped by the template
    return Markup(sparkline(numbers("UtilMax"), numbers("UtilP95"), label=caption)), caption


def _finding_view(f: dict[str, Any]) -> dict[str, Any]:
    res = f.get("resource") or {}
    rem = f.get("remediation") or {}
    sav = f.get("savings") or None
    live = not (f.get("location") or {}).get("file")
    return {
        "anchor": "f-" + _ANCHOR.sub("", str(f.get("id") or ""))[:64],
        "severity": _enum(f.get("severity"), SEVERITIES),
        "status": _enum(f.get("status"), STATUSES),
        "policy_id": reveal(f.get("policy_id")),
        "title": reveal(f.get("title")),
        "message": reveal(f.get("message")),
        "resource": reveal(resource_label(res)),
        "kind": reveal(res.get("kind")),
        "fqn": reveal(live_name(res)) if live and (res.get("arn") or res.get("account")) else "",
        "tags": [(reveal(k), reveal(v)) for k, v in sorted((res.get("tags") or {}).items())],
        "location": reveal(location_label(f)),
        "evidence": [(reveal(k), _value(v)) for k, v in sorted((f.get("evidence") or {}).items())
                     if not (k == "utilization_trend" and _trend_view(f.get("evidence") or {})[0])],
        "remediation": {
            "text": reveal(rem.get("text")),
            "snippets": [
                (label, reveal(rem[key]))
                for key, label in (("terraform", "Terraform"), ("cloudformation", "CloudFormation"))
                if rem.get(key)
            ],
        },
        "saving": money(sav.get("usd_month")) if sav else "",
        "basis": reveal(sav.get("basis")) if sav else "",
        "saving_kind": reveal(sav.get("kind")) if sav else "",
        "exposure": money_class(f) == "exposure",
        "not_counted": bool(sav) and not counted(f),
        "sparkline": _trend_view(f.get("evidence") or {})[0],
        "sparkline_caption": reveal(_trend_view(f.get("evidence") or {})[1]),
        "suppression": reveal(suppression_text(f.get("suppression"))),
    }


def _pick(obj: Any, keys: tuple[str, ...]) -> dict[str, str]:
    obj = obj if isinstance(obj, dict) else {}
    return {k: reveal(obj.get(k) or "") for k in keys}


def _where(item: dict[str, Any]) -> str:
    return reveal(f"{item.get('path')}:{item['line']}" if item.get("line") else item.get("path"))


def context(doc: dict[str, Any]) -> dict[str, Any]:
    """Everything the template shows, already neutralised and ordered."""
    summary = doc.get("summary") or {}
    inputs = doc.get("inputs") or {}
    findings = doc.get("findings") or []
    if inputs.get("paths"):
        scope = ", ".join(map(str, inputs["paths"]))
    else:
        scope = " × ".join(
            ", ".join(map(str, inputs.get(k) or [])) or f"(no {k})" for k in ("accounts", "regions")
        )
    statuses = [str(f.get("status")) for f in findings]
    coverage = doc.get("coverage") or []
    return {
        "csp": CSP,
        "tool": _pick(doc.get("tool"), ("name", "version")),
        "generated_at": reveal(doc.get("generated_at") or ""),
        "scope": reveal(scope),
        "catalog": _pick(doc.get("catalog"), ("source", "as_of", "note")),
        "by_status": [(s, (summary.get("by_status") or {}).get(s, 0)) for s in STATUSES],
        "by_severity": [(s, (summary.get("by_severity") or {}).get(s, 0)) for s in SEVERITIES],
        "saving": money(summary.get("savings_usd_month") or 0),
        "exposure": money(summary.get("exposure_usd_month") or 0),
        "overlapping": int(summary.get("overlapping_not_counted") or 0),
        "hours_per_month": HOURS_PER_MONTH,
        "resources": summary.get("resources"),
        "errors": [
            {"kind": reveal(e.get("kind")), "where": _where(e), "reason": reveal(e.get("reason"))}
            for e in doc.get("errors") or []
        ],
        "notices": [
            {"where": _where(n), "message": reveal(n.get("message"))}
            for n in doc.get("notices") or []
        ],
        "coverage_ok": sum(1 for c in coverage if c.get("status") == "ok"),
        "coverage_bad": [
            {k: reveal(c.get(k) or "") for k in ("account", "region", "service", "status", "error")}
            for c in coverage
            if c.get("status") != "ok"
        ],
        "findings": [_finding_view(f) for f in by_status(findings)],
        "counts": {
            "attention": sum(1 for s in statuses if s in NOT_PASSING),
            "all": len(statuses),
            **{s: statuses.count(s) for s in STATUSES},
        },
    }


def render(doc: dict[str, Any]) -> str:
    import jinja2  # lazy: only the HTML report needs it

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.get_template(TEMPLATE).render(**context(doc))
