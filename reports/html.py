"""Self-contained HTML report: one jinja2 template, autoescaped, inline CSS and SVG, one inline
script allowed by its hash in the content security policy, nothing fetched.

Findings are grouped by policy (count, statuses and saving per group; the remediation said once
per group), sortable by severity or saving, filterable by status (CSS only) and searchable (the
script; the page works without it). Evidence renders as tables. A finding's file is a link,
relative to the report, when the file is under the repository root.

Every string from the document goes through :func:`reports.common.reveal` (bidi overrides and
control characters become visible ``<U+202E>`` marks) and then through HTML escaping, so names,
tags and messages can only ever be text.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from markupsafe import Markup

from reports.common import (
    NOT_PASSING,
    SEVERITIES,
    STATUSES,
    counted,
    coverage_line,
    lean_sorted,
    live_name,
    location_label,
    money,
    money_class,
    resource_label,
    reveal,
    saving,
    severity_rank,
    spend_line,
    suppression_text,
)
from reports.compliance_report import html_section
from reports.policy_meta import describe
from reports.sparkline import sparkline
from scanner.compliance import finding_controls, short_label
from scanner.findings.paths import repo_relative
from scanner.model.money import HOURS_PER_MONTH

TEMPLATE = "report.html.j2"
SCRIPT = "report.js"
OPEN_UP_TO = 50  # a policy group of more findings starts closed (the page stays light)
STATIC_ROWS = 100  # findings of a group written as HTML; the rest as data the script lists
EVIDENCE_ROWS = 50  # rows of an evidence list shown; the rest counted
EVIDENCE_DEPTH = 4
CHART_WIDTH, CHART_BAR, CHART_LABEL, CHART_VALUE = 640, 22, 96, 110
_ANCHOR = re.compile(r"[^A-Za-z0-9_-]")
_STATUS_RANK = {s: i for i, s in enumerate(STATUSES)}


@lru_cache(maxsize=1)
def script() -> str:
    """The page's one script (static: no data is ever written into it)."""
    return resources.files("reports").joinpath(f"templates/{SCRIPT}").read_text(encoding="utf-8")


def script_hash() -> str:
    digest = hashlib.sha256(script().encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src '{script_hash()}'; base-uri 'none'; form-action 'none'"
)


def _enum(value: Any, allowed: tuple[str, ...]) -> str:
    """A CSS-class-safe copy of an enum value (anything else becomes ``other``)."""
    return str(value) if value in allowed else "other"


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return reveal(value)
    return reveal(json.dumps(value, ensure_ascii=False, default=str))


# abbreviations an evidence key's words are written in capitals (report.js UPPER is the same)
UPPER = {"gpu": "GPU", "gpus": "GPUs", "usd": "USD", "id": "ID", "ids": "IDs", "ami": "AMI",
         "ebs": "EBS", "kms": "KMS", "vpc": "VPC", "az": "AZ", "ip": "IP", "arn": "ARN",
         "s3": "S3", "asg": "ASG", "eks": "EKS", "iam": "IAM", "cpu": "CPU", "sku": "SKU",
         "url": "URL", "ok": "OK"}
_SNAKE = re.compile(r"[a-z0-9_]+")


def label(key: Any) -> str:
    """An evidence key as a reader says it: ``purchase_option_from`` -> "Purchase option from",
    ``gpu_count`` -> "GPU count"; AWS's own CamelCase names (``InstanceId``) as AWS writes them
    (report.js label() is the same rule, for the rows it lists)."""
    k = str(key)
    if not _SNAKE.fullmatch(k) or ("_" not in k and k not in UPPER):
        return k[0].upper() + k[1:] if re.fullmatch(r"[a-z][a-z0-9]*", k) else k
    text = " ".join(UPPER.get(w, w) for w in k.split("_") if w)
    return text[:1].upper() + text[1:]


def evidence_html(value: Any, depth: int = 0) -> Markup:
    """Evidence as HTML: an object is a key/value table, a list of objects a table with a
    column per key, a list of values a list; everything escaped."""
    if depth >= EVIDENCE_DEPTH and isinstance(value, dict | list):
        return Markup('<span class="mono">{}</span>').format(
            _scalar(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)))
    if isinstance(value, dict):
        if not value:
            return Markup('<span class="sub">{}</span>').format("{}")
        rows = Markup("").join(
            Markup("<tr><th>{}</th><td>{}</td></tr>").format(reveal(label(k)),
                                                             evidence_html(v, depth + 1))
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        )
        return Markup('<table class="ev">{}</table>').format(rows)
    if isinstance(value, list):
        if not value:
            return Markup('<span class="sub">(none)</span>')
        shown, more = value[:EVIDENCE_ROWS], len(value) - EVIDENCE_ROWS
        tail = Markup('<div class="sub">… and {} more</div>').format(more) if more > 0 else ""
        if all(isinstance(v, dict) for v in shown):
            keys: dict[str, None] = {}
            for item in shown:
                keys.update(dict.fromkeys(str(k) for k in item))
            head = Markup("").join(Markup("<th>{}</th>").format(reveal(label(k))) for k in keys)
            body = Markup("").join(
                Markup("<tr>{}</tr>").format(Markup("").join(
                    Markup("<td>{}</td>").format(
                        evidence_html(item[k], depth + 1) if k in item else "")
                    for k in keys))
                for item in shown
            )
            return Markup('<table class="ev list"><tr>{}</tr>{}</table>{}').format(head, body, tail)
        items = Markup("").join(
            Markup("<li>{}</li>").format(evidence_html(v, depth + 1)) for v in shown)
        return Markup('<ul class="ev">{}</ul>{}').format(items, tail)
    return Markup('<span class="mono">{}</span>').format(_scalar(value))


def _remediation(rem: Any) -> dict[str, Any]:
    rem = rem if isinstance(rem, dict) else {}
    return {
        "text": reveal(rem.get("text")),
        "snippets": [
            (label, reveal(rem[key]))
            for key, label in (("terraform", "Terraform"), ("cloudformation", "CloudFormation"))
            if rem.get(key)
        ],
    }


def file_link(path: Any, *, root: Path | None, base: Path | None,
              report_dir: Path | None) -> str:
    """The href of a finding's file relative to the report, when the file is under the
    repository root and the report is written to a file; else ""."""
    if not path or root is None or report_dir is None:
        return ""
    rel = repo_relative(str(path), root=root, base=base)
    if rel is None:
        return ""
    target = os.path.join(os.path.realpath(root), rel)
    href = os.path.relpath(target, os.path.realpath(report_dir)).replace(os.sep, "/")
    return quote(href, safe="/-._~")  # ":" encoded: never read as a scheme


def _trend_view(evidence: dict[str, Any]) -> tuple[Any, str]:
    """The inline SVG of a right-sizing finding's utilization trend, and its caption."""
    trend = evidence.get("utilization_trend")
    if not isinstance(trend, dict) or not isinstance(trend.get("UtilMax"), list):
        return "", ""

    def numbers(key: str) -> list[float | None]:
        got = trend.get(key)
        values: list[Any] = got if isinstance(got, list) else []
        return [float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
                for v in values[:200]]

    step = trend.get("HoursPerPoint")
    step_text = f"{step}-hour" if isinstance(step, int) else "per-period"
    caption = f"GPU utilization, {step_text} max (solid) and p95 (dashed), 0-100 %"
    # only numbers reach the SVG; the caption is escaped by the template
    return Markup(sparkline(numbers("UtilMax"), numbers("UtilP95"), label=caption)), caption


def _finding_view(f: dict[str, Any], links: dict[str, Any]) -> dict[str, Any]:
    res = f.get("resource") or {}
    sav = f.get("savings") or None
    loc = f.get("location") or {}
    live = not loc.get("file")
    amount = saving(f)
    exposure = money_class(f) == "exposure"
    svg, caption = _trend_view(f.get("evidence") or {})
    return {
        "anchor": "f-" + _ANCHOR.sub("", str(f.get("id") or ""))[:64],
        "severity": _enum(f.get("severity"), SEVERITIES),
        "status": _enum(f.get("status"), STATUSES),
        "rank": severity_rank(f),
        "message": reveal(f.get("message")),
        "resource": reveal(resource_label(res)),
        "kind": reveal(res.get("kind")),
        "fqn": reveal(live_name(res)) if live and (res.get("arn") or res.get("account")) else "",
        "tags": [(reveal(k), reveal(v)) for k, v in sorted((res.get("tags") or {}).items())],
        "location": reveal(location_label(f)),
        "href": file_link(loc.get("file"), **links) if not live else "",
        "evidence": "",  # the HTML of the evidence, for the findings written as HTML
        "remediation": _remediation(f.get("remediation")),
        "saving_value": round(amount, 2),
        "saving": (("≤ " if exposure else "") + money(sav.get("usd_month"))) if sav else "",
        "basis": reveal(sav.get("basis")) if sav else "",
        "saving_kind": (reveal(("exposure: " if exposure else "") + str(sav.get("kind")))
                        if sav else ""),
        "exposure": exposure,
        "not_counted": bool(sav) and not counted(f),
        "sparkline": svg,
        "sparkline_caption": reveal(caption),
        "suppression": reveal(suppression_text(f.get("suppression"))),
    }


def _revealed(value: Any, depth: int = 0) -> Any:
    """Evidence for the page's data: every string neutralised (keys too), structure kept."""
    if depth > 32:
        return reveal(json.dumps(value, default=str))
    if isinstance(value, str):
        return reveal(value)
    if isinstance(value, dict):
        return {reveal(k): _revealed(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_revealed(v, depth + 1) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return reveal(str(value))


def _record(view: dict[str, Any], evidence: Any) -> list[Any]:
    """A finding as the script's row data (the fields of ``_finding_view``, in a fixed order;
    report.js ``FIELDS`` names them)."""
    rem = view["remediation"] if view["own_remediation"] else None
    return [view[k] for k in RECORD_FIELDS] + [
        [list(t) for t in view["tags"]],
        _revealed(evidence) if evidence else None,
        [rem["text"], [list(s) for s in rem["snippets"]]] if rem else None,
    ]


RECORD_FIELDS = ("anchor", "status", "severity", "rank", "order", "saving_value", "saving",
                 "resource", "kind", "fqn", "location", "href", "message", "basis",
                 "saving_kind", "suppression")


def data_block(records: list[list[Any]]) -> Markup:
    """JSON for a ``<script type="application/json">`` data block: never executed, and with
    ``<``, ``>`` and ``&`` escaped it can never close its element."""
    text = json.dumps(records, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _member_key(f: dict[str, Any]) -> tuple[Any, ...]:
    return (_STATUS_RANK.get(str(f.get("status")), 9), -saving(f), location_label(f),
            str(f.get("id")))


def _ordered(view: dict[str, Any], order: int, group_rem: dict[str, Any]) -> dict[str, Any]:
    """A finding's view with its place in the group, and whether its remediation is its own
    (said once a group; a finding whose remediation differs keeps its own)."""
    view["order"] = order
    view["own_remediation"] = view["remediation"] != group_rem
    return view


def _rest_block(members: list[dict[str, Any]], links: dict[str, Any],
                group_rem: dict[str, Any]) -> Iterator[Markup]:
    """The data block of a group's findings past the first STATIC_ROWS, made a record at a
    time while the page is written (the same text :func:`data_block` makes of them all)."""
    yield Markup("[")
    for i in range(STATIC_ROWS, len(members)):
        f = members[i]
        view = _ordered(_finding_view(f, links), i + 1, group_rem)
        text = data_block([_record(view, f.get("evidence"))])
        yield Markup(("" if i == STATIC_ROWS else ",") + text[1:-1])
    yield Markup("]")


def _group_money(findings: list[dict[str, Any]], kind: str = "saving") -> float:
    """The saving (or exposure) of a policy group: its FAIL findings' amounts of that kind that
    the summary counts (an amount on capacity counted elsewhere is left out, as there)."""
    return round(sum(saving(f) for f in findings if f.get("status") == "FAIL"
                     and money_class(f) == kind and counted(f)), 2)


def groups(findings: list[dict[str, Any]], links: dict[str, Any]) -> list[dict[str, Any]]:
    """One group per policy, most severe first, then by saving; findings within a group by
    status (FAIL first), then saving, then location."""
    by_policy: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        by_policy.setdefault(str(f.get("policy_id")), []).append(f)
    out = []
    for pid, listed in by_policy.items():
        members = lean_sorted(listed, _member_key)
        first = members[0]
        meta = describe(pid, title=str(first.get("title") or pid),
                        severity=str(first.get("severity")))
        group_rem = _finding_view(first, links)["remediation"]
        views = [_ordered(_finding_view(f, links), i, group_rem)
                 for i, f in enumerate(members[:STATIC_ROWS], start=1)]
        for view, f in zip(views, members, strict=False):
            evidence = dict(f.get("evidence") or {})
            if view["sparkline"]:
                evidence.pop("utilization_trend", None)  # drawn as the sparkline
            view["evidence"] = evidence_html(evidence) if evidence else ""
        rest = max(len(members) - STATIC_ROWS, 0)
        statuses = Counter(str(f.get("status")) for f in members)
        amount = _group_money(members)
        exposure = _group_money(members, "exposure")
        out.append({
            "anchor": "p-" + _ANCHOR.sub("", pid)[:64],
            "policy_id": reveal(pid),
            "title": reveal(first.get("title") or pid),
            "severity": _enum(first.get("severity"), SEVERITIES),
            "rank": severity_rank(first),
            "category": meta.category,
            "counts": [(s, statuses[s]) for s in STATUSES if statuses[s]],
            "attention": sum(n for s, n in statuses.items() if s in NOT_PASSING),
            "saving_value": amount,
            "saving": money(amount) if amount else "",
            "exposure_value": exposure,
            "exposure": money(exposure) if exposure else "",
            "remediation": group_rem,
            "controls": reveal(short_label(finding_controls(first))),
            "findings": views,
            "total": len(members),
            "rest": rest,
            "data": _rest_block(members, links, group_rem) if rest else (),
            "open": len(members) <= OPEN_UP_TO,
        })
    out.sort(key=lambda g: (g["rank"], -g["saving_value"], g["policy_id"]))
    return out


def chart(group_list: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Saving by policy as horizontal bars (an inline SVG drawn by the template)."""
    bars = sorted((g for g in group_list if g["saving_value"] > 0),
                  key=lambda g: (-g["saving_value"], g["policy_id"]))
    if not bars:
        return None
    top = bars[0]["saving_value"]
    room = CHART_WIDTH - CHART_LABEL - CHART_VALUE
    return {
        "width": CHART_WIDTH,
        "height": CHART_BAR * len(bars) + 4,
        "label_x": CHART_LABEL - 8,
        "bar_x": CHART_LABEL,
        "bars": [
            {
                "y": i * CHART_BAR + 2,
                "text_y": i * CHART_BAR + 2 + CHART_BAR * 0.68,
                "w": max(round(room * g["saving_value"] / top, 1), 1),
                "value_x": CHART_LABEL + max(round(room * g["saving_value"] / top, 1), 1) + 6,
                "label": g["policy_id"],
                "title": g["title"],
                "money": g["saving"],
                "anchor": g["anchor"],
            }
            for i, g in enumerate(bars)
        ],
    }


def _pick(obj: Any, keys: tuple[str, ...]) -> dict[str, str]:
    obj = obj if isinstance(obj, dict) else {}
    return {k: reveal(obj.get(k) or "") for k in keys}


def _where(item: dict[str, Any]) -> str:
    return reveal(f"{item.get('path')}:{item['line']}" if item.get("line") else item.get("path"))


def _show_all_label(statuses: Counter[str], summary: dict[str, Any]) -> tuple[str, int]:
    """The label of the "everything" filter, and the PASS results counted but not listed: it
    says "incl. passing" only when the page holds passing results."""
    counted = int((summary.get("by_status") or {}).get("PASS") or 0)
    unlisted = max(counted - statuses["PASS"], 0)
    if statuses["PASS"]:
        return "All incl. passing", unlisted
    return "All listed", unlisted


def _judged_nothing(doc: dict[str, Any]) -> bool:
    """Module calls were not read and no GPU resource was judged: never shown as green."""
    from reports.common import coverage

    cov = coverage(doc)
    return bool(cov and cov.unread_module_calls and not cov.gpu_resources)


def context(doc: dict[str, Any], *, root: Path | None = None, base: Path | None = None,
            report_dir: Path | None = None) -> dict[str, Any]:
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
    statuses = Counter(str(f.get("status")) for f in findings)
    coverage = doc.get("coverage") or []
    links = {"root": root, "base": base, "report_dir": report_dir}
    group_list = groups(findings, links)
    all_label, unlisted = _show_all_label(statuses, summary)
    return {
        "csp": CSP,
        "script": Markup(script()),
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
        "judged": reveal(coverage_line(doc) or ""),
        "judged_nothing": _judged_nothing(doc),
        # audit --with-spend: the line the table and Markdown say ("" without a spend)
        "spend": reveal(spend_line(doc)),
        "spend_error": isinstance(doc.get("spend"), dict) and bool(doc["spend"].get("error")),
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
        "groups": group_list,
        "chart": chart(group_list),
        "counts": {
            "attention": sum(n for s, n in statuses.items() if s in NOT_PASSING),
            "all": len(findings),
            **{s: statuses[s] for s in STATUSES},
        },
        "all_label": all_label,
        "unlisted_pass": unlisted,
        # scan/audit --compliance: each section's HTML, every value escaped by html_section
        "compliance": [Markup(html_section(c)) for c in doc.get("compliance") or []],
    }


@lru_cache(maxsize=1)
def _template() -> Any:
    import jinja2  # lazy: only the HTML report needs it

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.get_template(TEMPLATE)


def write(doc: dict[str, Any], out: TextIO, *, root: Path | None = None,
          base: Path | None = None, report_dir: Path | None = None) -> None:
    """The page to ``out`` as the template makes it (a group's data rows a record at a time)."""
    for chunk in _template().generate(**context(doc, root=root, base=base,
                                                report_dir=report_dir)):
        out.write(chunk)


def render(doc: dict[str, Any], *, root: Path | None = None, base: Path | None = None,
           report_dir: Path | None = None) -> str:
    buf = io.StringIO()
    write(doc, buf, root=root, base=base, report_dir=report_dir)
    return buf.getvalue()
