"""Plain-text table for terminals: the terminal's width (100 columns elsewhere), paths and
addresses folded onto more lines when long and never cut, colour only when asked.

Standard library only, on purpose: the table is what the pre-commit hook prints, and importing
rich (console + table) costs 60-170 ms on this machine, against a 0.2 s budget for the whole
one-file scan (measured; see the README).
"""

from __future__ import annotations

import io
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any, TextIO

from reports.common import (
    NOT_PASSING,
    SEVERITIES,
    STATUSES,
    by_severity,
    count_line,
    coverage_line,
    input_errors,
    location_label,
    money,
    money_class,
    money_summary,
    resource_label,
    reveal,
    saving,
    severity_rank,
    spend_line,
    suppression_text,
    templates_not_read,
)

WIDTH = 100  # when not on a terminal (and no $COLUMNS)
MIN_WIDTH = 80  # narrower terminals get each finding's fields one under the other
NARROW_MIN = 30  # and below this, lines of 30 columns (the terminal wraps them)
GAP = "  "
# (header, width): fixed columns; LOCATION and RESOURCE share the rest of the width.
FIXED = {"SEVERITY": 8, "STATUS": 10, "POLICY": 8, "SAVING/MO": 10}
HEADERS = ("SEVERITY", "STATUS", "POLICY", "LOCATION", "RESOURCE", "SAVING/MO")
MIN_FLEX = 16
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
# Where a long path, address or ARN is best folded onto the next line: after these.
_BREAK_AFTER = "/.:-_ ,)]"


def char_width(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def text_width(text: str) -> int:
    if text.isascii():  # the common case, and 100x faster than a per-character look-up
        return len(text)
    return sum(char_width(ch) for ch in text)


def pad(text: str, width: int) -> str:
    return text + " " * max(width - text_width(text), 0)


def fold(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` display columns, nothing cut: a line ends after a
    path separator or punctuation where one is near the end, else where the width runs out."""
    width = max(width, 2)
    lines: list[str] = []
    rest = text
    while text_width(rest) > width:
        head = _prefix(rest, width)
        cut = len(head)
        for i in range(len(head) - 1, max(len(head) * 2 // 5, 0), -1):
            if head[i] in _BREAK_AFTER:
                cut = i + 1
                break
        lines.append(rest[:cut])
        rest = rest[cut:]
    lines.append(rest)
    return lines


def _prefix(text: str, room: int) -> str:
    """The longest prefix of ``text`` at most ``room`` display columns wide (at least 1 char)."""
    if text.isascii():  # one column a character: as the loop below would cut it, 50x faster
        return text[: max(room, 1)] if len(text) > room else text
    used = 0
    for i, ch in enumerate(text):
        used += char_width(ch)
        if used > room:
            return text[: max(i, 1)]
    return text


def wrap(text: str, indent: str = INDENT, width: int = WIDTH) -> list[str]:
    """Word-wrap to ``width`` display columns (wide characters count double); long words fold."""
    room = width - text_width(indent)
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        cur = ""
        for word in para.split():
            pieces = fold(word, room)
            for piece in pieces[:-1]:
                if cur:
                    lines.append(cur)
                    cur = ""
                lines.append(piece)
            word = pieces[-1]
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


def _cells(finding: dict[str, Any]) -> dict[str, str]:
    sav = saving(finding)
    return {
        "SEVERITY": reveal(finding.get("severity"), keep_newlines=False),
        "STATUS": reveal(finding.get("status"), keep_newlines=False),
        "POLICY": reveal(finding.get("policy_id"), keep_newlines=False),
        "LOCATION": reveal(location_label(finding), keep_newlines=False),
        "RESOURCE": reveal(resource_label(finding.get("resource") or {}), keep_newlines=False),
        "SAVING/MO": ((("≤" if money_class(finding) == "exposure" else "") + _money(sav))
                      if sav else "-"),
    }


def _sized_cells(finding: dict[str, Any]) -> dict[str, str]:
    """The cells :func:`column_widths` reads (the others have fixed widths)."""
    return {
        "POLICY": reveal(finding.get("policy_id"), keep_newlines=False),
        "LOCATION": reveal(location_label(finding), keep_newlines=False),
        "RESOURCE": reveal(resource_label(finding.get("resource") or {}), keep_newlines=False),
    }


def column_widths(rows: Iterable[dict[str, str]], width: int) -> dict[str, int]:
    """Fixed columns as set; LOCATION and RESOURCE share what is left of ``width``: each its
    longest cell when both fit, else the split that folds the fewest lines (at least MIN_FLEX
    columns each). ``rows`` is read once (a generator of cells will do)."""
    sizes: Counter[tuple[int, int]] = Counter()
    longest = FIXED["POLICY"]
    for r in rows:
        sizes[(text_width(r["LOCATION"]), text_width(r["RESOURCE"]))] += 1
        longest = max(longest, text_width(r["POLICY"]))
    widths = dict(FIXED)
    room = max(width, MIN_WIDTH) - sum(FIXED.values()) - len(GAP) * (len(HEADERS) - 1)
    # a longer policy id (checkov's CKV2_AWS_41 with --with-checkov) widens its column when
    # the width allows, rather than folding the id
    extra = max(min(longest - FIXED["POLICY"], room - 2 * MIN_FLEX), 0)
    widths["POLICY"] += extra
    room -= extra
    want = {"LOCATION": max([a for a, _ in sizes] + [len("LOCATION")]),
            "RESOURCE": max([b for _, b in sizes] + [len("RESOURCE")])}
    if sum(want.values()) <= room:
        widths.update(want)
        return widths

    def lines(loc: int) -> tuple[int, int]:
        res = room - loc
        total = sum(n * max(-(-a // loc), -(-b // res)) for (a, b), n in sizes.items())
        return total, abs(loc - res)

    low, high = MIN_FLEX, room - MIN_FLEX  # room >= 2 * MIN_FLEX at MIN_WIDTH
    loc = min(range(low, max(low, min(high, want["LOCATION"])) + 1), key=lines)
    widths["LOCATION"], widths["RESOURCE"] = loc, room - loc
    return widths


def _row(cells: dict[str, str], widths: dict[str, int], finding: dict[str, Any],
         color: bool) -> list[str]:
    folded = {c: fold(cells[c], widths[c]) for c in HEADERS}
    height = max(len(v) for v in folded.values())
    out = []
    for i in range(height):
        parts = []
        for c in HEADERS:
            piece = folded[c][i] if i < len(folded[c]) else ""
            if c == "SAVING/MO":
                text = " " * (widths[c] - text_width(piece)) + piece
            else:
                text = pad(piece, widths[c])
            if c in ("SEVERITY", "STATUS") and piece:
                key = str(finding.get("severity" if c == "SEVERITY" else "status"))
                text = _paint(piece, key, color) + " " * (widths[c] - text_width(piece))
            parts.append(text)
        out.append(GAP.join(parts).rstrip())
    return out


def _stacked(cells: dict[str, str], width: int, finding: dict[str, Any],
             color: bool) -> list[str]:
    """One finding on a terminal too narrow for the columns: severity, status, policy and
    saving on a line, then the location and the resource, folded, never cut."""
    words = [(cells["SEVERITY"], "severity"), (cells["STATUS"], "status"),
             (cells["POLICY"], ""), *([(cells["SAVING/MO"] + "/mo", "")]
                                      if cells["SAVING/MO"] != "-" else [])]
    lines: list[str] = []
    used = 0
    for word, key in words:
        for piece in fold(word, width):
            gap = 1 if used else 0
            if used and used + gap + text_width(piece) > width:
                lines[-1] = lines[-1].rstrip()
                used, gap = 0, 0
            if not used:
                lines.append("")
            lines[-1] += " " * gap + (_paint(piece, str(finding.get(key)), color) if key
                                      else piece)
            used += gap + text_width(piece)
    for column in ("LOCATION", "RESOURCE"):
        lines += [INDENT + piece for piece in fold(cells[column], width - len(INDENT))]
    return lines


ELLIPSIS = "..."  # ASCII: a CI log or a pipe may not be UTF-8
MIN_MESSAGE = 24  # columns left to the finding's text on its row, else it goes on the next line
ROW_HEADERS = ("SEVERITY", "STATUS", "POLICY", "LOCATION", "FINDING")


def ellipsize(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` display columns, cut with ``...`` if longer."""
    text = " ".join(text.split())
    if text_width(text) <= width:
        return text
    if width <= len(ELLIPSIS):
        return _prefix(text, max(width, 1)) if width > 0 else ""
    return _prefix(text, width - len(ELLIPSIS)).rstrip() + ELLIPSIS


_TAG = re.compile(r"^(?P<text>.*\S)\s+(?P<tag>\[[^\[\]]+\])$")


def ellipsize_tagged(text: str, width: int) -> tuple[str, str | None]:
    """:func:`ellipsize`, but a closing ``[...]`` tag (what a change is answerable for: ``[new
    with this change, caused by gpu/terraform.tfvars]``) is kept whole: the text is cut before
    it, or, when the tag leaves the text too little room, the tag is returned to be said on a
    line of its own."""
    text = " ".join(text.split())
    m = _TAG.match(text)
    if text_width(text) <= width or m is None:
        return ellipsize(text, width), None
    tag = m.group("tag")
    room = width - text_width(tag) - 1
    if room >= MIN_MESSAGE:
        return f"{ellipsize(m.group('text'), room)} {tag}", None
    return ellipsize(m.group("text"), width), tag


def policy_url(policy_id: str) -> str | None:
    """The policy's page (reports.policy_meta); None for a policy gpuaudit does not know (a
    checkov check merged with --with-checkov)."""
    from reports.policy_meta import catalogue

    meta = catalogue().get(policy_id)
    return meta.help_uri if meta is not None else None


def hyperlink(text: str, url: str) -> str:
    """An OSC 8 terminal hyperlink (shown as ``text``; terminals without them show ``text``)."""
    safe = "".join(ch for ch in url if ch.isprintable() and ch not in "\x1b\x07")
    return f"\x1b]8;;{safe}\x1b\\{text}\x1b]8;;\x1b\\"


_CFN_SUFFIXES = (".yaml", ".yml", ".json", ".template")


def fix_text(finding: dict[str, Any]) -> str:
    """The remediation on one line: the setting to write in the finding's own language (the
    Terraform or CloudFormation snippet, when it is one line), then what it does."""
    rem = finding.get("remediation")
    if not isinstance(rem, dict):
        return reveal(rem or "", keep_newlines=False)
    file = str(((finding.get("location") or {}).get("file")) or "")
    tf = file.endswith((".tf", ".tf.json", ".tfvars", ".tfvars.json"))
    snippet = rem.get("terraform") if tf else (
        rem.get("cloudformation") if file.endswith(_CFN_SUFFIXES) else None)
    text = reveal(rem.get("text") or "", keep_newlines=False)
    if isinstance(snippet, str) and snippet.strip() and "\n" not in snippet.strip():
        code = reveal(snippet.strip(), keep_newlines=False)
        return f"{code} - {text}" if text else code
    return text


def money_text(finding: dict[str, Any]) -> str:
    """The finding's money, saving and exposure told apart ("" when it has none)."""
    amount = saving(finding)
    if not amount:
        return ""
    if money_class(finding) == "exposure":
        return f"exposure up to {_money(amount)}/mo (not a saving)"
    return f"saving {_money(amount)}/mo"


def _finding_lines(f: dict[str, Any], widths: dict[str, int], width: int, color: bool,
                   links: bool) -> list[str]:
    """A finding: its row (severity, status, policy, location whole, the finding's text cut to
    what is left of the width), then its fix, its money and its policy's page on one line each
    (on a terminal the policy id is a hyperlink to the page instead)."""
    sev = reveal(f.get("severity"), keep_newlines=False)
    status = reveal(f.get("status"), keep_newlines=False)
    pid = reveal(f.get("policy_id"), keep_newlines=False)
    loc = reveal(location_label(f), keep_newlines=False)
    url = policy_url(str(f.get("policy_id")))
    shown_pid = hyperlink(pid, url) if links and url else pid
    what = reveal(resource_label(f.get("resource") or {}), keep_newlines=False)
    text = f"{what}: {reveal(f.get('message'), keep_newlines=False)}" if what else \
        reveal(f.get("message"), keep_newlines=False)
    head = [_paint(sev, str(f.get("severity")), color) + " " * (widths["SEVERITY"] - len(sev)),
            _paint(status, str(f.get("status")), color) + " " * (widths["STATUS"] - len(status)),
            shown_pid + " " * max(widths["POLICY"] - text_width(pid), 0)]
    used = widths["SEVERITY"] + widths["STATUS"] + widths["POLICY"] + 3 * len(GAP)
    loc_width = max(widths["LOCATION"], text_width(loc))
    room = width - used - loc_width - len(GAP)
    lines: list[str] = []
    if room >= MIN_MESSAGE:
        cut, tag = ellipsize_tagged(text, room)
        lines.append(GAP.join([*head, pad(loc, widths["LOCATION"]), cut]))
    elif used + text_width(loc) <= width:  # longer than its column: whole, the text below
        lines.append(GAP.join([*head, loc]).rstrip())
        cut, tag = ellipsize_tagged(text, width - len(INDENT))
        lines.append(INDENT + cut)
    else:  # longer than the row has room for: the text on the row, the location below, whole
        cut, tag = ellipsize_tagged(text, width - used)
        lines.append(GAP.join([*head, cut]))
        lines.append(INDENT + loc)
    if tag:
        lines.append(INDENT + ellipsize(tag, width - len(INDENT)))
    return lines + _detail_lines(f, width, links, url)


def _detail_lines(f: dict[str, Any], width: int, links: bool, url: str | None) -> list[str]:
    room = width - len(INDENT)
    lines = []
    fix = fix_text(f)
    cash = money_text(f)
    detail = "; ".join(x for x in (cash, f"fix: {fix}" if fix else "") if x)
    if detail:
        lines.append(INDENT + ellipsize(detail, room))
    if f.get("also_reported_by"):
        lines.append(INDENT + ellipsize(
            "also reported by " + reveal(", ".join(f["also_reported_by"])), room))
    if f.get("status") == "SUPPRESSED":
        lines.append(INDENT + ellipsize(
            "suppressed " + reveal(suppression_text(f.get("suppression"))), room))
    if url and not links:
        lines.append(f"{INDENT}docs: {url}")  # whole: a cut URL is no link
    return lines


def row_widths(findings: list[dict[str, Any]], width: int) -> dict[str, int]:
    """SEVERITY, STATUS as set; POLICY its longest id; LOCATION its longest location when that
    leaves MIN_MESSAGE columns to the finding's text, else what does (longer ones are printed
    whole, their text on the next line)."""
    widths = {"SEVERITY": FIXED["SEVERITY"], "STATUS": FIXED["STATUS"],
              "POLICY": max([FIXED["POLICY"], *(text_width(reveal(f.get("policy_id"),
                                                                  keep_newlines=False))
                                                for f in findings)])}
    longest = max([len("LOCATION"), *(text_width(reveal(location_label(f), keep_newlines=False))
                                      for f in findings)])
    room = width - sum(widths.values()) - 4 * len(GAP) - MIN_MESSAGE
    widths["LOCATION"] = max(min(longest, room), len("LOCATION"))
    return widths


def listed_findings(doc: dict[str, Any], passed: bool = False) -> list[dict[str, Any]]:
    """The findings the table lists, worst first: all but PASS; PASS too with ``passed``
    (``--include-passed``; otherwise they are only counted)."""
    shown = NOT_PASSING | {"PASS"} if passed else NOT_PASSING
    return by_severity(f for f in doc.get("findings") or [] if f.get("status") in shown)


def write(doc: dict[str, Any], out: TextIO, *, color: bool = False,
          width: int | None = None, errors: bool = True, warn_on: str | None = None,
          links: bool = False, passed: bool = False) -> None:
    """The table at ``width`` columns (default 100), written as it goes: one row a finding
    (its location whole, the text cut to the width), then its fix, money and policy page;
    ``color`` paints severity and status; ``links``: the policy id is an OSC 8 hyperlink to
    its page (a terminal), else the page is a ``docs: URL`` line. Narrower than 80 columns,
    each finding's fields are printed one under the other instead of in columns. ``errors``:
    list the input errors (False: left out; scan and audit keep them, on stdout as in a file).
    ``passed``: list the PASS results the report lists too (``--include-passed``)."""
    narrow = (width or WIDTH) < MIN_WIDTH
    width = max(width or WIDTH, NARROW_MIN if narrow else MIN_WIDTH)
    findings = listed_findings(doc, passed)
    below: Counter[str] = Counter()
    if warn_on is not None and warn_on in SEVERITIES:
        # an ERROR is always listed: something could not be read, whatever the severity
        limit = SEVERITIES.index(warn_on)
        kept = [f for f in findings
                if f.get("status") == "ERROR" or severity_rank(f) <= limit]
        below = Counter(str(f.get("severity")) for f in findings if f not in kept)
        findings = kept

    def put(lines: Iterable[str]) -> None:
        for line in lines:
            out.write(line + "\n")

    if findings:
        widths = row_widths(findings, width)
        if not narrow:
            header = [pad(h, widths[h]) for h in ROW_HEADERS[:-1]] + [ROW_HEADERS[-1]]
            put([GAP.join(header).rstrip(), "-" * width])
        for f in findings:
            if narrow:
                url = policy_url(str(f.get("policy_id")))
                put(_stacked(_cells(f), width, f, color))
                put(wrap(reveal(f.get("message")), width=width))
                put(_detail_lines(f, width, links, url))
            else:
                put(_finding_lines(f, widths, width, color, links))
    elif not below:
        put(wrap(_nothing_found(doc, passed), indent="", width=width))
    if below:
        counts = ", ".join(f"{below[s]} {s}" for s in SEVERITIES if below[s])
        put(wrap(f"Not listed, below --warn-on {warn_on}: {counts} (in the summary and the "
                 "report files; --warn-on info lists them)", indent="", width=width))
    listed = doc.get("errors") or [] if errors else []
    if listed:
        put(["", _paint(f"Errors ({len(listed)}):", "FAIL", color)])
        for e in listed:
            where = f"{e.get('path')}:{e['line']}" if e.get("line") else str(e.get("path"))
            put(wrap(reveal(f"[{e.get('kind', 'input')}] {where}: {e.get('reason')}"),
                     width=width))
    notices = doc.get("notices") or []
    if notices:
        put(["", f"Notices ({len(notices)}):"])
        for line in notice_lines(notices):
            put(wrap(reveal(line), width=width))
    put([""])
    for line in summary_lines(doc):
        put(wrap(reveal(line), indent="", width=width))


def _nothing_found(doc: dict[str, Any], passed: bool) -> str:
    """The line of a table without findings: never a clean run where something was not read
    (input errors, templates not read)."""
    unread = []
    if input_errors(doc):
        unread.append(f"{_plural(input_errors(doc), 'input error')} (see Errors)")
    if templates_not_read(doc):
        unread.append(f"{_plural(templates_not_read(doc), 'template')} not read (see Notices)")
    if not unread:
        return "No failing, unknown, errored or suppressed findings." if not passed \
            else "No findings."
    return (f"Not everything was read: {' and '.join(unread)}; no "
            f"{'failing, unknown or suppressed ' if not passed else ''}findings in what was read.")


def _plural(n: int, one: str) -> str:
    return f"{n:,} {one}{'' if n == 1 else 's'}"


def render(doc: dict[str, Any], *, color: bool = False, width: int | None = None) -> str:
    """:func:`write` into a string."""
    buf = io.StringIO()
    write(doc, buf, color=color, width=width)
    return buf.getvalue()


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
    if input_errors(doc):  # what could not be read: never a summary of a clean run
        line += f"; {_plural(input_errors(doc), 'input error')} (not read)"
    line += f". Resources: {summary['resources']}." if "resources" in summary else "."
    covered = coverage_line(doc)
    first = [line, f"Coverage: {covered}."] if covered else [line]
    cat = doc.get("catalog") or {}
    if not summary.get("savings_usd_month") and not summary.get("exposure_usd_month"):
        out = first  # no money to show: no price note either
        spent = spend_line(doc)
        if spent:
            out.append(spent + ".")
        checkov = summary.get("checkov")
        if isinstance(checkov, dict):
            out.append(checkov_line(checkov, _checkov_failed(doc)))
        return out
    out = [*first, money_summary(summary)]
    spent = spend_line(doc)
    if spent:
        out.append(spent + ".")
    if cat:
        out.append(f"Prices: {cat.get('source', '?')}, as of {cat.get('as_of', '?')}.")
        if cat.get("note"):
            out.append(f"Note: {cat['note']}.")
    checkov = summary.get("checkov")
    if isinstance(checkov, dict):
        out.append(checkov_line(checkov, _checkov_failed(doc)))
    return out


def _checkov_failed(doc: dict[str, Any]) -> bool:
    """checkov did not report (failed, timed out): its error is in the report's errors."""
    return any(isinstance(e, dict) and e.get("path") == "checkov" for e in doc.get("errors") or [])


def checkov_line(checkov: dict[str, Any], failed: bool = False) -> str:
    """What `scan --with-checkov` added, and how long checkov took."""
    version = f" {checkov['version']}" if checkov.get("version") else ""
    took = f" took {checkov['seconds']:.1f} s" if isinstance(checkov.get("seconds"),
                                                              int | float) else ""
    if failed:  # no "0 failed checks": its checks did not run, or their report was not read
        secs = checkov.get("seconds")
        after = f" after {secs:.1f} s" if isinstance(secs, int | float) else ""
        return (f"checkov{version} did not report{after} (see Errors): its checks are not in "
                "this report.")
    return (f"checkov{version}{took}: {checkov.get('failed', 0)} failed checks, "
            f"{checkov.get('merged', 0)} of them merged into the gpuaudit findings that say "
            "the same.")
