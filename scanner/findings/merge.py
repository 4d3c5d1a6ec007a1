"""`gpuaudit report merge`: one report from the JSON reports of shards (or of several runs).

``gpuaudit audit --shard K/N`` splits the (account, region) pairs; each shard writes its JSON
report and this joins them: findings listed once each (by fingerprint) in report order (where
two reports give one finding different verdicts, the worse is kept and a note says so: see
CONFLICT_ORDER), the
summary recomputed (PASS results that a shard counted without listing them are carried over),
inputs, errors, notices and coverage combined, the spends of ``audit --with-spend`` added
(scanner.findings.spend.merged_spend). An input that cannot be read is an error in the
merged report (exit 2), and the others are still merged: nothing is dropped silently.
"""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.findings.report import (
    SCHEMA_VERSION,
    assemble,
    merged_coverage,
    with_unpriced_regions,
)
from scanner.findings.spend import merged_spend, with_saving_share


class ReportReadError(Exception):
    """A file that is not a readable gpuaudit JSON report: ``path``, and ``reason`` (why); the
    message is "PATH: REASON"."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


MAX_REPORT_BYTES = 1 << 30  # a JSON report read back (--baseline, report merge/render/diff)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_json_report_text(path: Path) -> Any:
    """A JSON document from a regular file of at most 1 GiB (strict JSON: no NaN/Infinity).
    Raises ReadError (unreadable) or ValueError (not JSON)."""
    from scanner.inputs.safe_read import read_regular

    return json.loads(read_regular(path, limit=MAX_REPORT_BYTES).decode("utf-8-sig"),
                      parse_constant=_not_json)


def read_report(path: Path) -> dict[str, Any]:
    """A JSON report, validated against the shipped schema."""
    from scanner.findings.schema import plain_problems
    from scanner.inputs.safe_read import ReadError

    try:
        doc = read_json_report_text(path)
    except ReadError as exc:
        raise ReportReadError(path, f"cannot read: {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise ReportReadError(
            path, f"not a JSON report: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
            f"offset {exc.start})") from None
    except ValueError as exc:
        raise ReportReadError(path, f"not a JSON report: {exc}") from None
    except RecursionError:
        raise ReportReadError(path, "not a JSON report: nested too deeply") from None
    if not isinstance(doc, dict):
        raise ReportReadError(path, "not a JSON report: the top level is not an object")
    version = doc.get("schema_version")
    if version is None:
        raise ReportReadError(path, "not a gpuaudit JSON report: it has no schema_version")
    if version != SCHEMA_VERSION:
        shown = json.dumps(version)[:40]
        raise ReportReadError(
            path,
            f"schema_version {shown} is not supported: this gpuaudit reads schema_version "
            f"{SCHEMA_VERSION}",
        )
    problems = plain_problems(doc)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ReportReadError(path, f"not a valid gpuaudit report: {problems[0]}{more}")
    # a report read back is rendered, merged or diffed into new reports: the same last step as
    # a scan's (a report of an older version, or edited by hand, may hold a credential)
    from scanner.findings.redact import redact_document

    return redact_document(doc)


@dataclass
class Part:
    """One input of the merge: its name (as given) and its document."""

    name: str
    doc: dict[str, Any]


def scope(doc: dict[str, Any]) -> set[str]:
    """What a report covers: ``aws:ACCOUNT/REGION`` pairs (its coverage rows, else its inputs'
    accounts x regions) and ``path:P`` for the IaC paths it scanned."""
    units = {f"aws:{c.get('account')}/{c.get('region')}" for c in doc.get("coverage") or []}
    inputs = doc.get("inputs") or {}
    if not units:
        units = {f"aws:{a}/{r}" for a in inputs.get("accounts") or []
                 for r in inputs.get("regions") or []}
    units |= {f"path:{posixpath.normpath(str(p).replace(chr(92), '/'))}"
              for p in inputs.get("paths") or []}
    return units


def _covers(outer: str, inner: str) -> bool:
    if outer == inner:
        return True
    if outer.startswith("path:") and inner.startswith("path:"):
        top, path = outer[5:], inner[5:]
        if top == ".":
            return not path.startswith(("/", ".."))
        return path.startswith(top.rstrip("/") + "/")
    return False


def _covered(units: set[str], by: set[str]) -> bool:
    return bool(units) and all(any(_covers(o, u) for o in by) for u in units)


def counted_parts(parts: Sequence[Part], warn: Callable[[str], None]) -> list[Part]:
    """The parts whose resource and PASS counts the merge adds up: a part that covers only
    what another already covers (the same report twice, a shard run again, a scan of a
    directory and of its parent) is counted once. Partial overlaps are counted and said."""
    kept: list[tuple[Part, set[str]]] = []
    for part in parts:
        units = scope(part.doc)
        twin = next((k for k, u in kept if _covered(units, u)), None)
        if twin is not None:
            warn(f"{part.name} covers nothing that {twin.name} does not: its resources and "
                 "PASS results are counted once")
            continue
        for other, other_units in list(kept):
            if _covered(other_units, units):
                warn(f"{other.name} covers nothing that {part.name} does not: its resources and "
                     "PASS results are counted once")
                kept.remove((other, other_units))
        for other, other_units in kept:
            shared = sorted(u for u in units if any(_covers(o, u) or _covers(u, o)
                                                    for o in other_units))
            if shared:
                warn(f"{part.name} and {other.name} both cover {', '.join(shared[:5])}: their "
                     "findings are listed once, but resource and PASS counts there may be "
                     "counted twice")
        kept.append((part, units))
    return [k for k, _ in kept]


@dataclass
class _Gathered:
    """What the parts of a merge hold together: each finding once (the worse verdict where
    two parts disagree), the passes not listed, resources, errors, notices, coverage rows."""

    errors: list[dict[str, Any]] = field(default_factory=list)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    first_seen: dict[str, str] = field(default_factory=dict)
    duplicates: Counter[str] = field(default_factory=Counter)
    conflicts: list[tuple[dict[str, Any], str, dict[str, Any], str]] = field(
        default_factory=list)
    passed: Counter[str] = field(default_factory=Counter)
    notices: list[dict[str, Any]] = field(default_factory=list)
    coverage: list[dict[str, Any]] = field(default_factory=list)
    resources: int = 0

    def add(self, part: Part, *, counted: bool) -> None:
        doc = part.doc
        listed_pass: Counter[str] = Counter()
        for f in doc["findings"]:
            if f["status"] == "PASS":
                listed_pass[f["policy_id"]] += 1
            self._finding(f, part.name)
        if counted:
            for pid, counts in doc["summary"]["by_policy"].items():
                unlisted = int(counts.get("PASS", 0)) - listed_pass[pid]
                if unlisted > 0:
                    self.passed[pid] += unlisted
            self.resources += int(doc["summary"].get("resources", 0))
        self.errors.extend(doc["errors"])
        self.notices.extend(doc.get("notices", []))
        self.coverage.extend(doc.get("coverage", []))

    def _finding(self, f: dict[str, Any], name: str) -> None:
        kept = self.findings.get(f["id"])
        if kept is None:
            self.findings[f["id"]] = f
            self.first_seen[f["id"]] = name
        elif kept["status"] == f["status"]:
            self.duplicates[self.first_seen[f["id"]] + " and " + name] += 1
        else:
            self.conflicts.append((kept, self.first_seen[f["id"]], f, name))
            if worse(f["status"], kept["status"]):
                self.findings[f["id"]] = f
                self.first_seen[f["id"]] = name


def merge_reports(
    parts: Sequence[Part],
    *,
    unreadable: Sequence[tuple[str, str]] = (),
    deterministic: bool = False,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The merged document. ``unreadable`` is (path, reason) for inputs that could not be read;
    ``warn`` hears of overlapping inputs (they are notices of the merged report too)."""
    from scanner.engine.evaluate import report_order

    overlaps: list[str] = []

    def said(message: str) -> None:
        overlaps.append(message)
        if warn is not None:
            warn(message)

    counted = {id(p) for p in counted_parts(parts, said)}
    acc = _Gathered(errors=[{"kind": "input", "path": path, "reason": reason}
                            for path, reason in unreadable])
    for part in parts:
        acc.add(part, counted=id(part) in counted)
    findings, duplicates, conflicts = acc.findings, acc.duplicates, acc.conflicts
    errors, notices, coverage = acc.errors, acc.notices, acc.coverage
    for pair, n in sorted(duplicates.items()):
        message = f"{n} finding(s) appear in both reports and are listed once (the reports overlap)"
        notices.append({"path": pair, "message": message})
        if warn is not None:
            warn(f"{pair}: {message}")
    for notice in _conflict_notices(conflicts):
        notices.append(notice)
        if warn is not None:
            warn(f"{notice['path']}: {notice['message']}")
    notices += [{"path": "report merge", "message": m} for m in overlaps]
    catalog = _catalog(parts, notices)
    _versions(parts, notices)
    ordered = sorted(
        findings.values(),
        key=lambda f: report_order(f.get("location"), f["policy_id"], f["resource"], f["id"]),
    )
    merged = assemble(
        findings=ordered,
        errors=_unique(errors),
        notices=_unique(notices),
        inputs=_inputs(parts),
        catalog=catalog,
        coverage=_one_row_per_service(coverage),
        passed=acc.passed,
        resources=acc.resources,
        deterministic=deterministic,
    )
    cov = merged_coverage([p.doc["summary"].get("coverage") for p in parts if id(p) in counted],
                          merged["findings"])
    if cov is not None:
        merged["summary"]["coverage"] = cov
    spend = merged_spend([(p.name, p.doc) for p in parts])
    if spend is not None:
        from scanner.findings.redact import redact_document

        merged["spend"] = redact_document(
            {"spend": with_saving_share(spend, merged["summary"])})["spend"]
    return merged


# Where two reports give one finding (same fingerprint) different verdicts, the merge keeps
# the first of these. ERROR first: a run could not read the resource, and the merged report
# must not claim more than its least sure input (exit 2, the note names the other verdict);
# then FAIL, a violation seen; UNKNOWN, a verdict nobody could make; SUPPRESSED, a failure
# that one run's mute list or baseline accepts (another run's mute does not silence a FAIL or
# an UNKNOWN); PASS last: never kept over anything else, so a conflict is never a false PASS.
CONFLICT_ORDER = ("ERROR", "FAIL", "UNKNOWN", "SUPPRESSED", "PASS")
LISTED_CONFLICTS = 5  # conflicts named in the note; the rest counted


def worse(status: str, than: str) -> bool:
    """Whether ``status`` is kept over ``than`` (CONFLICT_ORDER; an unknown word is worst)."""
    def rank(s: str) -> int:
        return CONFLICT_ORDER.index(s) if s in CONFLICT_ORDER else -1

    return rank(status) < rank(than)


def _conflict_notices(
    conflicts: Sequence[tuple[dict[str, Any], str, dict[str, Any], str]],
) -> list[dict[str, Any]]:
    """One note per pair of reports that disagree: how many findings, which verdict was kept,
    and the first few by policy and resource."""
    pairs: dict[str, list[str]] = {}
    for a, a_name, b, b_name in conflicts:
        kept = a if not worse(b["status"], a["status"]) else b
        res = kept.get("resource") or {}
        what = (f"{kept['policy_id']} {res.get('address') or res.get('id')}: "
                f"{a['status']} in {a_name}, {b['status']} in {b_name}, kept {kept['status']}")
        pairs.setdefault(f"{a_name} and {b_name}", []).append(what)
    notes = []
    for pair, said in sorted(pairs.items()):
        more = f" (+{len(said) - LISTED_CONFLICTS} more)" if len(said) > LISTED_CONFLICTS else ""
        notes.append({"path": pair, "message": (
            f"{len(said)} finding(s) have different verdicts in the two reports; the merge "
            f"keeps the worse ({' > '.join(CONFLICT_ORDER)}): "
            f"{'; '.join(said[:LISTED_CONFLICTS])}{more}")})
    return notes


def _inputs(parts: Sequence[Part]) -> dict[str, Any]:
    """The union of the inputs' ``paths`` / ``accounts`` / ``regions`` (always at least one)."""
    from scanner.findings.schema import known_inputs

    merged: dict[str, set[str]] = {}
    for part in parts:
        for key, values in known_inputs(part.doc).items():
            merged.setdefault(key, set()).update(str(v) for v in values)
    if not merged:
        return {"paths": []}
    out: dict[str, Any] = {key: sorted(values) for key, values in sorted(merged.items())}
    roots = {part.doc["inputs"].get("root") for part in parts}
    if len(roots) == 1 and isinstance(next(iter(roots)), str):
        out["root"] = roots.pop()  # one repository root: its paths stay relative to it
    return out


def _catalog(parts: Sequence[Part], notices: list[dict[str, Any]]) -> dict[str, Any]:
    if not parts:
        from scanner.catalog import default_catalog

        return default_catalog().describe()
    first = {k: v for k, v in parts[0].doc["catalog"].items()
             if k not in ("note", "unpriced_regions")}
    regions = sorted({r for part in parts for r in part.doc["catalog"].get("unpriced_regions", [])})
    for part in parts[1:]:
        other = part.doc["catalog"]
        if (other.get("source"), other.get("as_of")) != (first.get("source"), first.get("as_of")):
            notices.append(
                {
                    "path": part.name,
                    "message": f"priced with catalogue {other.get('source')} as of "
                    f"{other.get('as_of')}, not {first.get('source')} as of "
                    f"{first.get('as_of')} like {parts[0].name}: savings mix both",
                }
            )
    return with_unpriced_regions(first, regions)


def _versions(parts: Sequence[Part], notices: list[dict[str, Any]]) -> None:
    from scanner import __version__

    for part in parts:
        version = part.doc["tool"].get("version")
        if version != __version__:
            notices.append(
                {
                    "path": part.name,
                    "message": f"written by gpuaudit {version}; merged by {__version__}",
                }
            )


def _one_row_per_service(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One coverage row per (account, region, service); where two runs disagree, the failed
    one stays (a gap is never hidden by a duplicate that went well)."""
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        key = (str(row.get("account")), str(row.get("region")), str(row.get("service")))
        if key not in seen or (row.get("status") != "ok" and seen[key].get("status") == "ok"):
            seen[key] = row
    return list(seen.values())


def _unique(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        seen.setdefault(json.dumps(row, sort_keys=True), row)
    return list(seen.values())
