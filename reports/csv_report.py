"""CSV: one row per finding, flat columns, for spreadsheets and ad-hoc analysis.

Text cells that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR at the
start, fullwidth forms too) get a leading apostrophe (OWASP "CSV injection"); numbers stay
numbers. Line breaks, carriage returns and other control or invisible characters never reach a
cell as they are: runs of whitespace become one space and the others are shown as ``<U+001B>``,
so no row is split and no control byte hides a formula behind it.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, TextIO

from reports.common import _HIDDEN, by_status, money_class, reveal

COLUMNS = (
    "id",
    "policy_id",
    "title",
    "severity",
    "status",
    "message",
    "resource_kind",
    "resource_id",
    "resource_name",
    "resource_address",
    "resource_arn",
    "account",
    "region",
    "file",
    "start_line",
    "end_line",
    "savings_usd_month",
    "savings_kind",
    "savings_class",
    "savings_basis",
    "suppressed_by",
    "suppression_reason",
    "suppression_expires",
    "remediation",
    "evidence",
    "tags",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def guard(value: Any) -> str | int | float:
    """A cell value on one line; text that would start a spreadsheet formula is prefixed with
    ``'``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return value
    text = reveal(value, keep_newlines=False)
    return "'" + text if text.startswith(_FORMULA_START) else text


def row(finding: dict[str, Any]) -> dict[str, Any]:
    res = finding.get("resource") or {}
    loc = finding.get("location") or {}
    sav = finding.get("savings") or {}
    sup = finding.get("suppression") or {}
    flat = {
        "id": finding.get("id"),
        "policy_id": finding.get("policy_id"),
        "title": finding.get("title"),
        "severity": finding.get("severity"),
        "status": finding.get("status"),
        "message": finding.get("message"),
        "resource_kind": res.get("kind"),
        "resource_id": res.get("id"),
        "resource_name": res.get("name"),
        "resource_address": res.get("address"),
        "resource_arn": res.get("arn"),
        "account": res.get("account"),
        "region": res.get("region"),
        "file": loc.get("file"),
        "start_line": loc.get("start_line"),
        "end_line": loc.get("end_line"),
        "savings_usd_month": sav.get("usd_month"),
        "savings_kind": sav.get("kind"),
        "savings_class": money_class(finding),
        "savings_basis": sav.get("basis"),
        "suppressed_by": sup.get("by"),
        "suppression_reason": sup.get("reason"),
        "suppression_expires": sup.get("expires"),
        "remediation": (finding.get("remediation") or {}).get("text"),
        "evidence": _json(finding.get("evidence")),
        "tags": _json(res.get("tags")),
    }
    return {k: guard(v) for k, v in flat.items()}


def _json(value: Any) -> str | None:
    """JSON on one line; invisible and reordering characters as \\uXXXX escapes (still JSON)."""
    if not value:
        return None
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)
    return _HIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def write(doc: dict[str, Any], out: TextIO) -> None:
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for finding in by_status(doc.get("findings") or []):
        writer.writerow(row(finding))


def render(doc: dict[str, Any]) -> str:
    buf = io.StringIO()
    write(doc, buf)
    return buf.getvalue()
