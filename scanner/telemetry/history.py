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
    plausible_time,
    usage_record,
)
from scanner.telemetry.files import Members, TelemetryFileError, parse_file

SCHEMA_FILE = Path(__file__).with_name("history.schema.json")
MAX_SAMPLES = 1_000_000  # budget over all inline samples of one file (counted before parsing)
MAX_RESOURCES = 100_000  # budget of entries of one file (counted before parsing)
MAX_FILE_BYTES = 256 * 1024 * 1024  # a history file (1,000,000 samples are ~40 MB)


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
        t = float(value)
    else:
        stamp = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=dt.timezone.utc)
        t = stamp.timestamp()
    return plausible_time(t, value)


def _line_of(text: str, needle: Any) -> int | None:
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


def inside(base: Path, name: str, path: str, key: str, text: str) -> Path:
    """The file an entry names, relative to the history file's directory, symlinks resolved;
    a name that leads outside that directory (``..``, an absolute path, a symlink out) is an
    input error, and the file is never opened."""
    root = base.resolve()
    try:
        target = (root / name).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a NUL byte
        raise TelemetryFileError(path, f"resources.{key}.file: cannot be resolved: {exc}",
                                 _line_of(text, key)) from None
    if Path(name).is_absolute() or not target.is_relative_to(root):
        raise TelemetryFileError(path, f"resources.{key}.file: leads outside the directory of "
                                       "the history file (a path relative to it, inside it, is "
                                       "expected); not read", _line_of(text, key))
    return target


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
        fmt, members = parse_file(inside(base, entry["file"], path, key, text),
                                  entry.get("format"))
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
                                                   f"{sample[0]!r}: {exc}",
                                             _line_of(text, sample[0])) from exc
                used = sample[2] if len(sample) > 2 else None
                gpu.add_sample(t, float(sample[1]), used, total, counts)
        members[m["id"] if "members" in entry else ""] = gpus
    return _record("history", members, key, days, end)


def _count(data: bytes) -> tuple[int, int]:
    """(samples, resources) of a history file, streamed (ijson: nothing is built), stopping as
    soon as either budget is passed; a document that is not JSON is left to ``json.loads``
    (whose error names the line)."""
    import ijson

    samples = resources = 0
    try:
        for prefix, event, _ in ijson.parse(data):
            if event == "start_array" and prefix.endswith(".samples.item"):
                samples += 1
                if samples > MAX_SAMPLES:
                    break
            elif event == "map_key" and prefix == "resources":
                resources += 1
                if resources > MAX_RESOURCES:
                    break
    except ijson.JSONError:
        pass
    return samples, resources


def _skeleton(doc: Any) -> Any:
    """The document with every GPU's samples cut to the first (for jsonschema: validating
    samples there costs ~80 us each, a million of them over a minute)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("resources"), dict):
        return doc

    def gpus(items: Any) -> Any:
        if not isinstance(items, list):
            return items
        return [g | {"samples": g["samples"][:1]} if isinstance(g, dict)
                and isinstance(g.get("samples"), list) else g for g in items]

    resources = {}
    for key, entry in doc["resources"].items():
        if isinstance(entry, dict):
            entry = dict(entry)
            if "gpus" in entry:
                entry["gpus"] = gpus(entry["gpus"])
            if isinstance(entry.get("members"), list):
                entry["members"] = [m | {"gpus": gpus(m["gpus"])} if isinstance(m, dict)
                                    and "gpus" in m else m for m in entry["members"]]
        resources[key] = entry
    return doc | {"resources": resources}


def _sample_problem(sample: Any) -> tuple[int | None, str] | None:
    """What is wrong with one sample (the schema's rule: [time, percent, MiB or null]), with
    the position of the bad item; None when it is right."""
    if not isinstance(sample, list):
        return None, f"{sample!r:.40} is not of type 'array'"
    if not 2 <= len(sample) <= 3:
        return None, f"{len(sample)} items where a sample has 2 or 3"
    t, util, *mem = sample
    if isinstance(t, bool) or not isinstance(t, str | int | float):
        return 0, f"{t!r:.40} is not of type 'string', 'number'"
    if isinstance(util, bool) or not isinstance(util, int | float) or not 0 <= util <= 100:
        return 1, f"{util!r:.40} is not a percentage (a number from 0 to 100)"
    if mem and mem[0] is not None and (isinstance(mem[0], bool) or not isinstance(
            mem[0], int | float) or mem[0] < 0):
        return 2, f"{mem[0]!r:.40} is not a memory size in MiB (a number >= 0) or null"
    return None


def _problems(doc: Any) -> list[tuple[list[str | int], str]]:
    """Every (path, message) of the document against the schema: jsonschema on its skeleton,
    then the samples by the same rule, in one pass at C-loop speed."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema())
    out = [(list(e.absolute_path), e.message) for e in validator.iter_errors(_skeleton(doc))]
    if out or not isinstance(doc, dict):
        return out
    for key, entry in doc["resources"].items():
        for m, member in enumerate(entry.get("members") or [entry]):
            for g, gpu in enumerate(member.get("gpus") or []):
                for i, sample in enumerate(gpu.get("samples") or []):
                    problem = _sample_problem(sample)
                    if problem is not None:
                        where: list[str | int] = ["resources", key]
                        where += ["members", m] if "members" in entry else []
                        where += ["gpus", g, "samples", i]
                        where += [problem[0]] if problem[0] is not None else []
                        out.append((where, problem[1]))
                        break
    return out


def load_history(path: Path, lookback_days: float) -> Loaded:
    """A history file; a file that cannot be used is one error (its keys, if any, unreadable).
    The sample and resource budgets are counted on the raw bytes, streamed, before the file is
    parsed or validated."""
    from scanner.inputs.safe_read import ReadError, decode_text, encoding_of, read_regular

    out = Loaded(files=[str(path)])
    try:
        data = read_regular(path, limit=MAX_FILE_BYTES)
        text = decode_text(data)
    except ReadError as exc:
        out.errors.append(InputError(str(path), f"cannot read: {exc.reason}"))
        return out
    except UnicodeDecodeError as exc:
        out.errors.append(InputError(str(path), f"not text in {exc.encoding}: {exc.reason}"))
        return out
    samples, resources = _count(data if encoding_of(data) == ("utf-8", 0)
                                else text.encode("utf-8"))
    if samples > MAX_SAMPLES or resources > MAX_RESOURCES:
        what = (f"more than {MAX_SAMPLES:,} samples" if samples > MAX_SAMPLES
                else f"more than {MAX_RESOURCES:,} resources")
        out.errors.append(InputError(str(path), f"{what}: over the budget of a utilization "
                                                "history (aggregate them first); not read"))
        return out
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        constant = str(exc).split(" ", 1)[0]
        if line is None and constant in ("NaN", "Infinity", "-Infinity") and constant in text:
            line = text.count("\n", 0, text.index(constant)) + 1
        out.errors.append(InputError(str(path), f"not a utilization history: not valid JSON: "
                                                f"{getattr(exc, 'msg', exc)}", line))
        return out
    problems = sorted(_problems(doc), key=lambda e: list(map(str, e[0])))
    if problems:
        where_list, message = problems[0]
        where = ".".join(str(p) for p in where_list) or "(top level)"
        resource = (str(where_list[1]) if len(where_list) > 1
                    and where_list[0] == "resources" else None)
        line = _line_of(text, resource) if resource else None
        out.errors.append(InputError(str(path), f"not a utilization history: key '{where}': "
                                                f"{message}", line))
        if resource is None or not isinstance(doc, dict):
            return out
        bad = {str(p[1]) for p, _ in problems if len(p) > 1 and p[0] == "resources"}
    else:
        bad = set()
    days = float(doc.get("lookback_days") or lookback_days)
    try:
        end = _epoch(doc["end"]) if doc.get("end") else None
    except (TypeError, ValueError) as exc:
        out.errors.append(InputError(str(path), f"not a utilization history: key 'end': {exc}",
                                     _line_of(text, "end")))
        return out
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


def load_prometheus(url: str, lookback_days: float) -> Loaded:
    """``--prometheus-url``: every host's DCGM utilization, keyed by host and by group label
    (``scanner.telemetry.prometheus``); a server that cannot be read is one error."""
    from scanner.telemetry.aggregate import telemetry_end
    from scanner.telemetry.dcgm import DcgmError
    from scanner.telemetry.prometheus import (
        PrometheusError,
        client_from_env,
        read_prometheus,
        shown_url,
    )

    shown = shown_url(url)
    out = Loaded(files=[shown])
    end = telemetry_end()
    window = Window.ending(end, lookback_days)
    try:
        fetched = read_prometheus(client_from_env(url), window)
    except PrometheusError as exc:
        out.errors.append(InputError(shown, f"cannot read Prometheus: {exc.reason}"))
        return out
    except DcgmError as exc:
        out.errors.append(InputError(shown, f"not DCGM exporter data: {exc.reason}"))
        return out
    for host, gpus in fetched.members.items():
        if host:
            out.records[host] = _record("prometheus", {host: gpus}, host, lookback_days,
                                        window.end)
    for key, hosts in sorted(fetched.groups.items()):
        if key not in out.records:
            members = {h: fetched.members[h] for h in sorted(hosts) if h in fetched.members}
            out.records[key] = _record("prometheus", members, key, lookback_days, window.end)
    return out


def load_utilization(specs: Sequence[str], lookback_days: float,
                     prometheus_url: str | None = None) -> Loaded:
    """Every ``--utilization`` value: FILE (a history file) or KEY=FILE (a DCGM/nvidia-smi file),
    and ``--prometheus-url``."""
    out = Loaded()
    if prometheus_url:
        out.extend(load_prometheus(prometheus_url, lookback_days))
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
