"""``gpuaudit scan --utilization``: utilization history for IaC resources.

``--utilization FILE`` reads a history file (``history.schema.json``); ``--utilization KEY=FILE``
reads one DCGM scrape or nvidia-smi log for the resource named KEY. Keys are instance ids, Auto
Scaling group names, Terraform addresses or CloudFormation logical ids; a key is matched against
each instance's and group's id, name and aliases, in every scope scanned.

A file that cannot be read is an input error naming the file (and line); its resources are
"unreadable" (RS-* say UNKNOWN there, never "no telemetry"), and everything else still runs.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from scanner.model import Gap, InputError, Notice, Resource, SourceResult
from scanner.telemetry import COVERAGE, TELEMETRY
from scanner.telemetry.aggregate import (
    GpuHours,
    Trend,
    Window,
    member_stats,
    usage_record,
)
from scanner.telemetry.files import Members, TelemetryFileError, parse_file, read_text

SCHEMA_FILE = Path(__file__).with_name("history.schema.json")
MAX_SAMPLES = 5_000_000  # budget over all inline samples of one file


@dataclass
class Loaded:
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> usage record
    unreadable: dict[str, str] = field(default_factory=dict)  # key -> why
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def extend(self, other: Loaded) -> None:
        self.records.update(other.records)
        self.unreadable.update(other.unreadable)
        self.errors.extend(other.errors)
        self.notices.extend(other.notices)
        self.files.extend(other.files)


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _epoch(value: Any) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    stamp = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.timestamp()


def _line_of(text: str, needle: str) -> int | None:
    at = text.find(json.dumps(needle))
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _record(source: str, members: Members, key: str, days: float,
            end: float | None) -> dict[str, Any]:
    latest = max((h for gpus in members.values() for g in gpus.values()
                  for h in g.util_mean), default=None)
    if end is None:
        end = (latest + 3600) if latest is not None else time.time()
    window = Window.ending(end, days)
    trend = Trend(window)
    out = [member_stats(mid or key, gpus.values(), window, trend)
           for mid, gpus in sorted(members.items())]
    return usage_record(source, out, window, trend, days)


def _aggregated_gpu(g: dict[str, Any]) -> dict[str, Any]:
    p95 = float(g["util_p95"])
    return {"Index": str(g["index"]), "Hours": int(g["hours"]),
            "UtilP50": float(g.get("util_p50", p95)), "UtilP95": p95,
            "UtilMax": max(float(g["util_max"]), p95),
            "MemUsedMaxMiB": g.get("memory_used_max_mib"),
            "MemTotalMiB": g.get("memory_total_mib"), **({"Name": g["name"]} if "name" in g
                                                        else {})}


def _entry_record(key: str, entry: dict[str, Any], base: Path, days: float,
                  end: float | None, path: str, text: str) -> dict[str, Any]:
    if "file" in entry:
        target = (base / entry["file"]).resolve()
        fmt, members = parse_file(target, entry.get("format"))
        return _record(fmt, members, key, days, end)
    member_docs = entry.get("members") or [{"id": key, "gpus": entry["gpus"]}]
    aggregated = all("samples" not in g for m in member_docs for g in m["gpus"])
    if aggregated:
        members_out = []
        for m in member_docs:
            gpus = [_aggregated_gpu(g) for g in m["gpus"]]
            members_out.append({"Id": m["id"], "Hours": max(g["Hours"] for g in gpus),
                                "Gpus": gpus})
        stop = end if end is not None else time.time()
        window = Window.ending(stop, days)
        record = usage_record("history", members_out, window, Trend(window), days)
        record["Trend"] = None  # aggregates carry no trend
        return record
    members: Members = {}
    for m in member_docs:
        gpus: dict[str, GpuHours] = {}
        for g in m["gpus"]:
            if "samples" not in g:
                raise TelemetryFileError(path, f"resources.{key}: mix of samples and aggregates",
                                         _line_of(text, key))
            gpu = gpus.setdefault(str(g["index"]), GpuHours(str(g["index"]), name=g.get("name")))
            counts: dict[int, int] = {}
            total = g.get("memory_total_mib")
            for sample in g["samples"]:
                try:
                    t = _epoch(sample[0])
                except (TypeError, ValueError) as exc:
                    raise TelemetryFileError(path, f"resources.{key}: bad timestamp "
                                                   f"{sample[0]!r}", _line_of(text, str(sample[0]))
                                             ) from exc
                used = sample[2] if len(sample) > 2 else None
                gpu.add_sample(t, float(sample[1]), used, total, counts)
        members[m["id"] if "members" in entry else ""] = gpus
    return _record("history", members, key, days, end)


def load_history(path: Path, lookback_days: float) -> Loaded:
    """A history file; a file that cannot be used is one error (its keys, if any, unreadable)."""
    import jsonschema

    out = Loaded(files=[str(path)])
    try:
        text = read_text(path)
        doc = json.loads(text, parse_constant=_no_constant)
    except TelemetryFileError as exc:
        out.errors.append(InputError(exc.path, exc.reason, exc.line))
        return out
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        constant = str(exc).split(" ", 1)[0]
        if line is None and constant in ("NaN", "Infinity", "-Infinity") and constant in text:
            line = text.count("\n", 0, text.index(constant)) + 1
        out.errors.append(InputError(str(path), f"not a utilization history: not valid JSON: "
                                                f"{getattr(exc, 'msg', exc)}", line))
        return out
    validator = jsonschema.Draft202012Validator(load_schema())
    problems = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    if problems:
        err = problems[0]
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        resource = (str(err.absolute_path[1]) if len(err.absolute_path) > 1
                    and err.absolute_path[0] == "resources" else None)
        line = _line_of(text, resource) if resource else None
        out.errors.append(InputError(str(path), f"not a utilization history: key '{where}': "
                                                f"{err.message}", line))
        if resource is None or not isinstance(doc, dict):
            return out
        bad = {resource}
    else:
        bad = set()
    samples = sum(len(g.get("samples") or []) for e in doc["resources"].values()
                  if isinstance(e, dict) for m in (e.get("members") or [e])
                  if isinstance(m, dict) for g in (m.get("gpus") or []) if isinstance(g, dict))
    if samples > MAX_SAMPLES:
        out.errors.append(InputError(str(path), f"{samples} samples: more than the budget of "
                                                f"{MAX_SAMPLES}; aggregate them first"))
        out.unreadable.update(dict.fromkeys(doc["resources"], f"{path}: too many samples"))
        return out
    days = float(doc.get("lookback_days") or lookback_days)
    end = _epoch(doc["end"]) if doc.get("end") else None
    for key, entry in sorted(doc["resources"].items()):
        if key in bad:
            out.unreadable[key] = f"{path}: entry does not match the schema"
            continue
        try:
            out.records[key] = _entry_record(key, entry, path.parent, days, end, str(path), text)
        except TelemetryFileError as exc:
            out.errors.append(InputError(exc.path, exc.reason, exc.line))
            out.unreadable[key] = str(exc)
    return out


def load_raw(key: str, path: Path, lookback_days: float) -> Loaded:
    out = Loaded(files=[str(path)])
    try:
        fmt, members = parse_file(path)
        out.records[key] = _record(fmt, members, key, lookback_days, None)
    except TelemetryFileError as exc:
        out.errors.append(InputError(exc.path, exc.reason, exc.line))
        out.unreadable[key] = str(exc)
    return out


def load_utilization(specs: Sequence[str], lookback_days: float) -> Loaded:
    """Every ``--utilization`` value: FILE (a history file) or KEY=FILE (a DCGM/nvidia-smi file)."""
    out = Loaded()
    for spec in specs:
        key, sep, file = spec.partition("=")
        if sep and key and not Path(spec).exists():
            out.extend(load_raw(key, Path(file), lookback_days))
        else:
            out.extend(load_history(Path(spec), lookback_days))
    return out


def attach(result: SourceResult, loaded: Loaded) -> None:
    """Telemetry resources beside the IaC resources they are about, and the coverage marker of
    every scope (RS-* judge only where utilization was looked for)."""
    from scanner.compute import MEASURED, kinds_with

    # what a history key names: the kinds right-sizing measures (instances, Auto Scaling
    # groups, EKS node groups)
    targets = frozenset(kinds_with(MEASURED))
    scopes: dict[str, Resource] = {}
    matched: set[str] = set()
    keys = set(loaded.records) | set(loaded.unreadable)
    unreadable_only = not loaded.records and not loaded.unreadable and loaded.errors
    for r in list(result.resources):
        scopes.setdefault(r.scope, r)
        if r.kind not in targets:
            continue
        names = [n for n in (r.id, r.name, *r.aliases) if isinstance(n, str)]
        key = next((n for n in names if n in keys), None)
        if key is None:
            continue
        matched.add(key)
        record = loaded.records.get(key)
        if record is not None:
            result.resources.append(Resource(TELEMETRY, f"telemetry:{r.id}",
                                             {"Target": r.id, **record}, r.provenance, r.scope,
                                             declared=False))
    for scope, sample in sorted(scopes.items()):
        if unreadable_only:
            result.gaps.append(Gap(scope, (TELEMETRY, COVERAGE),
                                   f"utilization not readable: {loaded.errors[0].path}"))
            continue
        result.resources.append(Resource(
            COVERAGE, f"telemetry-coverage:{scope}",
            {"Source": "files", "Files": loaded.files,
             "Unreadable": dict(sorted(loaded.unreadable.items()))},
            sample.provenance, scope, declared=False))
    for key in sorted(keys - matched):
        result.notices.append(Notice(loaded.files[0] if loaded.files else "--utilization",
                                     f"utilization for {key!r} matches no instance, Auto "
                                     "Scaling group or node group scanned"))
    result.errors.extend(loaded.errors)
    result.notices.extend(loaded.notices)
