"""Small helpers shared by the renderers: ordering, labels, money, and neutralising text.

Renderers read only the report document (a plain dict); nothing here knows about AWS or sources.
"""

from __future__ import annotations

import datetime as dt
import functools
import heapq
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

STATUSES = ("FAIL", "ERROR", "UNKNOWN", "SUPPRESSED", "PASS")
SEVERITIES = ("critical", "high", "medium", "low", "info")
NOT_PASSING = frozenset({"FAIL", "ERROR", "UNKNOWN", "SUPPRESSED"})
SUPPRESSION_KINDS = ("inSource", "external")

_SEV_RANK = {sev: i for i, sev in enumerate(SEVERITIES)}
_STATUS_RANK = {st: i for i, st in enumerate(STATUSES)}

# C0/C1 controls (except tab and newline), DEL, bidi embeddings/overrides/isolates, marks and the
# zero-width characters that can hide or reorder text on a terminal or a page (Trojan Source).
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
    "\ufff9-\ufffb\ud800-\udfff]"
)


def reveal(text: Any, *, keep_newlines: bool = True) -> str:
    """``text`` as a str with invisible and reordering characters shown as ``<U+202E>``."""
    s = "" if text is None else str(text)
    if not (s.isascii() and s.isprintable()):  # printable ASCII has nothing to show (4x faster)
        s = _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", s)
    elif not keep_newlines and "  " not in s:
        return s.strip()  # already one line, single-spaced
    return s if keep_newlines else " ".join(s.split())


def severity_rank(finding: dict[str, Any]) -> int:
    return _SEV_RANK.get(str(finding.get("severity")), len(SEVERITIES))


def location_key(finding: dict[str, Any]) -> tuple[Any, ...]:
    loc = finding.get("location") or {}
    res = finding.get("resource") or {}
    return (
        str(loc.get("file") or ""),
        int(loc.get("start_line") or 0),
        str(res.get("account") or ""),
        str(res.get("region") or ""),
        str(res.get("root") or ""),  # IaC: one module under two root modules
        resource_label(res),
        str(finding.get("policy_id") or ""),
        str(finding.get("id") or ""),
    )


SORT_RUN = 8192  # findings sorted at once; longer lists are sorted in runs and merged


def lean_sorted(items: Iterable[T], key: Callable[[T], Any]) -> list[T]:
    """``sorted(items, key=key)``, the same order (stable), holding the keys of at most
    SORT_RUN items at once: a key (a tuple of strings) weighs more than the reference sorted,
    so sorting 200,000 findings in one go held ~40 MiB of keys. Longer lists are sorted in
    runs, and the runs merged (``heapq.merge`` keeps ties in run order: stable)."""
    seq = items if isinstance(items, list) else list(items)
    if len(seq) <= SORT_RUN:
        return sorted(seq, key=key)
    runs = [sorted(seq[i:i + SORT_RUN], key=key) for i in range(0, len(seq), SORT_RUN)]
    return list(heapq.merge(*runs, key=key))


def _severity_key(f: dict[str, Any]) -> tuple[Any, ...]:
    return (severity_rank(f), location_key(f))


def _status_key(f: dict[str, Any]) -> tuple[Any, ...]:
    return (_STATUS_RANK.get(str(f.get("status")), len(STATUSES)), severity_rank(f),
            location_key(f))


def by_severity(findings: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Most severe first, then by location (file:line, or account/region/resource)."""
    return lean_sorted(findings, _severity_key)


def by_status(findings: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """FAIL, ERROR, UNKNOWN, SUPPRESSED, PASS; then by severity and location."""
    return lean_sorted(findings, _status_key)


def not_passing(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in doc.get("findings") or [] if f.get("status") in NOT_PASSING]


def resource_label(resource: dict[str, Any]) -> str:
    """Terraform address / CloudFormation logical id / live id; with the name when it differs."""
    ident = str(resource.get("address") or resource.get("id") or "?")
    name = resource.get("name")
    return f"{ident} ({name})" if name and name != ident else ident


def lines_label(loc: dict[str, Any]) -> str:
    start, end = loc.get("start_line"), loc.get("end_line")
    if not start:
        return ""
    return f"{start}-{end}" if end and end != start else str(start)


def location_label(finding: dict[str, Any]) -> str:
    """``file:12-20`` for IaC, ``account/region`` for live, ``-`` when neither is known."""
    loc = finding.get("location") or {}
    if loc.get("file"):
        lines = lines_label(loc)
        return f"{loc['file']}:{lines}" if lines else str(loc["file"])
    res = finding.get("resource") or {}
    parts = [str(p) for p in (res.get("account"), res.get("region")) if p]
    return "/".join(parts) or "-"


def live_name(resource: dict[str, Any]) -> str:
    """Fully qualified name of a live resource: its ARN, else account/region/id."""
    if resource.get("arn"):
        return str(resource["arn"])
    parts = [resource.get("account"), resource.get("region"), resource.get("id")]
    return "/".join(str(p) for p in parts if p)


def saving(finding: dict[str, Any]) -> float:
    sav = finding.get("savings") or {}
    try:
        return float(sav.get("usd_month") or 0.0)
    except (TypeError, ValueError):
        return 0.0


def money_class(finding: dict[str, Any]) -> str:
    """"saving" or "exposure" (worst-case overspend a setting allows; never added to savings);
    "" without money."""
    sav = finding.get("savings")
    if not isinstance(sav, dict):
        return ""
    cls = sav.get("class")
    if cls in ("saving", "exposure"):
        return str(cls)
    return "exposure" if sav.get("kind") == "overspend_cap" else "saving"


def counted(finding: dict[str, Any]) -> bool:
    """False for an amount left out of the totals (its capacity is counted by another)."""
    sav = finding.get("savings")
    return not (isinstance(sav, dict) and sav.get("counted") is False)


def money_summary(summary: dict[str, Any]) -> str:
    """The totals of a report, the two kinds of money apart."""
    text = (f"Estimated saving: {money(summary.get('savings_usd_month') or 0)}/month. "
            f"Exposure (worst-case overspend the settings allow, not a saving): "
            f"{money(summary.get('exposure_usd_month') or 0)}/month.")
    left = int(summary.get("overlapping_not_counted") or 0)
    if left:
        text += (f" {left} amount{'s' if left != 1 else ''} on capacity already counted "
                 "left out of the totals.")
    return text


def spend_line(doc: dict[str, Any]) -> str:
    """The actual GPU spend beside the estimated saving (audit --with-spend); "" without it.
    A spend not read (whole) says so and why, never an amount of 0; what was read of it is
    named as a part, never as the total."""
    spend = doc.get("spend")
    if not isinstance(spend, dict):
        return ""
    period = spend.get("period") if isinstance(spend.get("period"), dict) else {}
    span = f"{period.get('start', '?')} to {period.get('end', '?')}" if period else ""
    when = f" ({span})" if span else ""
    if spend.get("error"):
        text = f"Actual GPU spend{when}: not read: {spend['error']}"
        part = spend.get("read_usd")
        if isinstance(part, int | float) and spend.get("read"):
            text += (f"; the accounts read spent {money(part)}, which is not the total "
                     "(no share of it is given)")
        return text
    if spend.get("no_data"):
        return f"Actual GPU spend{when}: Cost Explorer has no data for the period"
    source = f"{span}, Cost Explorer" if span else "Cost Explorer"
    text = f"Actual GPU spend ({source}): {money(spend.get('total_usd'))}"
    share = spend.get("saving_share")
    if isinstance(share, int | float):
        text += f"; the estimated monthly saving is {share:.1%} of it"
    return text


def money(amount: Any) -> str:
    try:
        return f"${float(amount):,.2f}"
    except (TypeError, ValueError):
        return "$?"


def suppression_kind(suppression: dict[str, Any]) -> str:
    """``inSource`` for a skip written next to the resource (HCL comment, CloudFormation Metadata,
    a resource tag), ``external`` for a config mute list or a baseline."""
    kind = suppression.get("kind")
    if kind in SUPPRESSION_KINDS:
        return str(kind)
    by = str(suppression.get("by") or "").lower()
    inline = any(word in by for word in ("comment", "metadata", "tag", "inline"))
    return "inSource" if inline else "external"


def suppression_text(suppression: dict[str, Any] | None) -> str:
    if not suppression:
        return ""
    text = f"by {suppression.get('by') or '?'}"
    if suppression.get("reason"):
        text += f": {suppression['reason']}"
    if suppression.get("expires"):
        text += f" (expires {suppression['expires']})"
    return text


def count_line(counts: dict[str, Any], order: Iterable[str]) -> str:
    return ", ".join(f"{counts.get(k, 0)} {k}" for k in order if counts.get(k))


# Markdown (GitHub-flavoured) inline text
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
# @user / @org/team would notify them from a pull-request comment (a tag value, a resource name)
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def cell(value: Any) -> str:
    """Inline text safe in a table cell: markdown and HTML specials backslash-escaped, ``|`` too,
    ``&`` as an entity, line breaks as spaces, hidden characters made visible, and mentions
    broken with a zero-width space (``@&#8203;user``: shown as @user, notifies nobody)."""
    text = reveal(value, keep_newlines=False).replace("&", "&amp;")
    return _MENTION.sub("@&#8203;", _SPECIAL.sub(r"\\\1", text))


def write_json_array(items: Iterable[Any], out: Any) -> None:
    """``json.dumps(list(items), indent=2, sort_keys=True, ensure_ascii=False)`` + a newline,
    written an item at a time (the whole array is never built as one string)."""
    import json

    first = True
    for item in items:
        text = json.dumps(item, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        out.write(("[\n  " if first else ",\n  ") + text.replace("\n", "\n  "))
        first = False
    out.write("[]\n" if first else "\n]\n")


@functools.cache
def run_time() -> dt.datetime:
    """The time of a report that carries none (--deterministic), for the formats that must
    stamp one (ASFF, OCSF): once per run, so that two renderings of a report agree."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)



def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


@dataclass(frozen=True)
class Coverage:
    """A report's ``summary.coverage`` (scanner.findings.report.coverage_summary), numbers
    checked."""

    gpu_resources: int = 0
    maybe_gpu_resources: int = 0
    files: int = 0
    places: int = 0
    unread_module_calls: int = 0
    unread_module_sources: tuple[tuple[str, int], ...] = ()
    unknown: int = 0

    @property
    def sources_text(self) -> str:
        return ", ".join(f"{n} {k}" for k, n in self.unread_module_sources)


def coverage(doc: dict[str, Any]) -> Coverage | None:
    """The report's coverage (None when it has none: a report of an older gpuaudit, or a merged
    one)."""
    cov = (doc.get("summary") or {}).get("coverage")
    if not isinstance(cov, dict):
        return None

    def num(value: Any) -> int:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return value if ok else 0

    raw = cov.get("unread_module_sources")
    sources = tuple((str(k), num(v)) for k, v in sorted(raw.items()) if num(v)) \
        if isinstance(raw, dict) else ()
    return Coverage(
        **{k: num(cov.get(k)) for k in ("gpu_resources", "maybe_gpu_resources", "files",
                                         "places", "unread_module_calls", "unknown")},
        unread_module_sources=sources)


def coverage_line(doc: dict[str, Any]) -> str | None:
    """One line that says what the run judged and what it could not:
    ``judged 3 GPU resources in 12 files; 2 module calls not read (sources: 1 registry, 1 git);
    4 unknown``. Nothing judged while module calls were not read says so: never a silent
    green. None when the report has no coverage (:func:`coverage`)."""
    cov = coverage(doc)
    if cov is None:
        return None
    where = [_count(cov.files, "file")] if cov.files or not cov.places else []
    if cov.places:
        where.append(_count(cov.places, "account/region", "account/regions"))
    text = f"judged {_count(cov.gpu_resources, 'GPU resource')}"
    if cov.maybe_gpu_resources:
        text += f" (and {cov.maybe_gpu_resources} that may be GPU compute)"
    text += f" in {' and '.join(where)}; {_count(cov.unread_module_calls, 'module call')} not read"
    if cov.unread_module_calls and cov.unread_module_sources:
        text += f" (sources: {cov.sources_text})"
    text += f"; {cov.unknown} unknown"
    templates = templates_not_read(doc)
    if templates:
        text += f"; {_count(templates, 'template')} not read (render first; see the notices)"
    if cov.unread_module_calls and not cov.gpu_resources:
        text += (" - nothing judged is not a pass: the GPU resources may be declared in the "
                 "modules not read")
    return text


def templates_not_read(doc: dict[str, Any]) -> int:
    """The templated files (a Helm chart template, a Jinja configuration) the run did not read
    (the notices that say so: scanner.model.TEMPLATE_NOT_READ)."""
    from scanner.model import TEMPLATE_NOT_READ

    return sum(1 for n in doc.get("notices") or []
               if isinstance(n, dict) and str(n.get("message", "")).startswith(TEMPLATE_NOT_READ))


def input_errors(doc: dict[str, Any]) -> int:
    """The report's errors: what could not be read (files, AWS calls, options)."""
    errors = doc.get("errors")
    return len(errors) if isinstance(errors, list) else 0
