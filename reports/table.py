"""Plain-text table for terminals, readable at 100 columns. Standard library only."""

from __future__ import annotations

import unicodedata
from typing import Any

from reports.common import (
    SEVERITIES,
    STATUSES,
    by_severity,
    count_line,
    location_label,
    money,
    not_passing,
    resource_label,
    reveal,
    saving,
    suppression_text,
)

WIDTH = 100
# (header, width, keep): keep="end" truncates on the left, where paths carry the least information.
COLUMNS = (
    ("SEVERITY", 8, "start"),
    ("STATUS", 10, "start"),
    ("POLICY", 8, "start"),
    ("LOCATION", 28, "end"),
    ("RESOURCE", 26, "end"),
    ("SAVING/MO", 10, "start"),
)
INDENT = "  "
_COLORS = {
    "critical": "1;35",
    "high": "1;31",
    "medium": "33",
    "low": "36",
    "info": "2",
    "FAIL": "31",
    "ERROR": "35",
    "UNKNOWN": "33",
    "SUPPRESSED": "2",
    "PASS": "32",
}


def char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str) -> int:
    if text.isascii():  # the common case, and 100x faster than a per-character look-up
        return len(text)
    return sum(char_width(ch) for ch in text)


def fit(text: str, width: int, keep: str = "start") -> str:
    """``text`` cut to ``width`` display columns (with an ellipsis) and padded to it."""
    if text_width(text) > width:
        chars = list(text if keep == "start" else reversed(text))
        out, used = [], 1
        for ch in chars:
            if used + char_width(ch) > width:
                break
            out.append(ch)
            used += char_width(ch)
        text = "".join(out) + "…" if keep == "start" else "…" + "".join(reversed(out))
    return text + " " * (width - text_width(text))


def _prefix(text: str, room: int) -> str:
    """The longest prefix of ``text`` at most ``room`` display columns wide (at least 1 char)."""
    used = 0
    for i, ch in enumerate(text):
        used += char_width(ch)
        if used > room:
            return text[: max(i, 1)]
    return text


def wrap(text: str, indent: str = INDENT, width: int = WIDTH) -> list[str]:
    """Word-wrap to ``width`` display columns (wide characters count double); long words break."""
    room = width - text_width(indent)
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        cur = ""
        for word in para.split():
            while text_width(word) > room:
                if cur:
                    lines.append(cur)
                    cur = ""
                head = _prefix(word, room)
                lines.append(head)
                word = word[len(head) :]
            if not word:
                continue
            joined = f"{cur} {word}" if cur else word
            if text_width(joined) <= room:
                cur = joined
            else:
                lines.append(cur)
                cur = word
        lines.append(cur)
    return [(indent + line).rstrip() for line in lines]


def _paint(text: str, key: str, color: bool) -> str:
    code = _COLORS.get(key)
    return f"\x1b[{code}m{text}\x1b[0m" if color and code else text


def _money(amount: float) -> str:
    return f"${amount:,.0f}" if amount >= 10_000 else money(amount)


def _resource(resource: dict[str, Any]) -> str:
    """The identity; with the name in brackets only when both fit the column."""
    label = reveal(resource_label(resource), keep_newlines=False)
    if text_width(label) <= COLUMNS[4][1]:
        return label
    return reveal(resource.get("address") or resource.get("id") or "?", keep_newlines=False)


def _row(finding: dict[str, Any], color: bool) -> str:
    sav = saving(finding)
    values = (
        reveal(finding.get("severity"), keep_newlines=False),
        reveal(finding.get("status"), keep_newlines=False),
        reveal(finding.get("policy_id"), keep_newlines=False),
        reveal(location_label(finding), keep_newlines=False),
        _resource(finding.get("resource") or {}),
        _money(sav) if sav else "-",
    )
    cells = []
    for value, (_, width, keep) in zip(values, COLUMNS, strict=True):
        cells.append(fit(value, width, keep))
    cells[-1] = cells[-1].strip().rjust(COLUMNS[-1][1])
    cells[0] = _paint(cells[0], str(finding.get("severity")), color)
    cells[1] = _paint(cells[1], str(finding.get("status")), color)
    return "  ".join(cells).rstrip()


def render(doc: dict[str, Any], *, color: bool = False) -> str:
    out: list[str] = []
    findings = by_severity(not_passing(doc))
    if findings:
        out.append("  ".join(fit(h, w) for h, w, _ in COLUMNS).rstrip())
        out.append("-" * WIDTH)
        for f in findings:
            out.append(_row(f, color))
            out.extend(wrap(reveal(f.get("message"))))
            if f.get("status") == "SUPPRESSED":
                out.extend(wrap("suppressed " + reveal(suppression_text(f.get("suppression")))))
    else:
        out.append("No failing, unknown, errored or suppressed findings.")
    errors = doc.get("errors") or []
    if errors:
        out += ["", _paint(f"Errors ({len(errors)}):", "FAIL", color)]
        for e in errors:
            where = f"{e.get('path')}:{e['line']}" if e.get("line") else str(e.get("path"))
            out.extend(wrap(reveal(f"[{e.get('kind', 'input')}] {where}: {e.get('reason')}")))
    notices = doc.get("notices") or []
    if notices:
        out += ["", f"Notices ({len(notices)}):"]
        for line in notice_lines(notices):
            out.extend(wrap(reveal(line)))
    out.append("")
    for line in summary_lines(doc):
        out.extend(wrap(reveal(line), indent=""))
    return "\n".join(out) + "\n"


GROUP_AT = 3  # this many notices with one message (and no line) are said once
LISTED = 5  # paths listed in such a group


def notice_lines(notices: list[dict[str, Any]]) -> list[str]:
    """One line a notice, except that a message said of several paths (the YAML files of a
    commit that are not infrastructure, say) is said once, with its paths."""
    groups: dict[str, list[str]] = {}
    for n in notices:
        if not n.get("line"):
            groups.setdefault(str(n.get("message")), []).append(str(n.get("path")))
    lines: list[str] = []
    said: set[str] = set()
    for n in notices:
        message = str(n.get("message"))
        paths = groups.get(message, [])
        if n.get("line") or len(paths) < GROUP_AT:
            where = f"{n.get('path')}:{n['line']}" if n.get("line") else str(n.get("path"))
            lines.append(f"{where}: {message}")
        elif message not in said:
            said.add(message)
            more = f" (+{len(paths) - LISTED} more)" if len(paths) > LISTED else ""
            lines.append(f"{len(paths)} paths: {message}: {', '.join(paths[:LISTED])}{more}")
    return lines


def summary_lines(doc: dict[str, Any]) -> list[str]:
    summary = doc.get("summary") or {}
    line = f"Summary: {count_line(summary.get('by_status') or {}, STATUSES) or 'no findings'}"
    severities = count_line(summary.get("by_severity") or {}, SEVERITIES)
    if severities:
        line += f" (failing: {severities})"
    line += f". Resources: {summary['resources']}." if "resources" in summary else "."
    cat = doc.get("catalog") or {}
    if not summary.get("savings_usd_month"):
        return [line]  # no money to show: no price note either
    money_line = f"Estimated saving: {money(summary.get('savings_usd_month') or 0)}/month"
    if cat:
        money_line += f". Prices: {cat.get('source', '?')}, as of {cat.get('as_of', '?')}."
        if cat.get("note"):
            money_line += f" Note: {cat['note']}."
    return [line, money_line]
