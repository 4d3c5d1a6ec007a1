"""``neuron-monitor`` captures (AWS Inferentia / Trainium): ``neuron-monitor >> neuron.jsonl``.

One JSON document per line (or one document, or a list of them, for a file written by other
tools), optionally preceded on its line by its time (epoch seconds or RFC 3339, as
``neuron-monitor | while read -r l; do echo "$(date +%s) $l"; done`` writes). Read:

- the instance from ``instance_info.instance_id`` (the member; else the file's one host);
- NeuronCore utilization (%) from every runtime's ``neuroncore_counters.neuroncores_in_use``;
  a core no runtime uses is idle (0 %), so an idle instance is measured, never silent; a
  document with a runtime whose counters carry an ``error`` (or none) gives no utilization
  point (what its cores did is not known: never 0 %); the
  cores come from ``neuron_hardware_info`` (``neuron_device_count`` x
  ``neuroncore_per_device_count``);
- one entry per Neuron device: its busiest core's utilization, the runtimes' device memory
  (``memory_used.neuron_runtime_used_bytes.neuron_device``, on a one-device instance), and its
  size (``neuron_hardware_info.neuron_device_memory_size``).

Time: a line's own time where given; else neuron-monitor writes none, and the documents are dated
back from the file's modification time (UTC), one ``period`` (from the document, else 5 s) each.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Any

from scanner.telemetry.aggregate import GpuHours, plausible_time
from scanner.telemetry.members import Members, TelemetryFileError

DEFAULT_PERIOD = 5.0
MIB = 1048576.0
_STAMPED = re.compile(r"^\s*(\d{9,11}(?:\.\d+)?|\d{4}-\d{2}-\d{2}[T ][0-9:.]+(?:Z|[+-]\d\d:?\d\d)?)"
                      r"\s+(\{.*)$")


def _documents(text: str, path: str) -> list[tuple[int, float | None, dict[str, Any]]]:
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n" in stripped.strip()
                                    and not stripped.split("\n", 1)[0].rstrip().endswith("}")):
        try:
            whole = json.loads(text)
        except ValueError as exc:
            raise TelemetryFileError(path, f"not neuron-monitor JSON: {getattr(exc, 'msg', exc)}",
                                     getattr(exc, "lineno", None)) from None
        docs = whole if isinstance(whole, list) else [whole]
        return [(1, None, d) for d in docs if isinstance(d, dict)]
    out: list[tuple[int, float | None, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        stamp: float | None = None
        m = _STAMPED.match(line)
        if m:
            stamp = _time(m.group(1), path, number)
            line = m.group(2)
        try:
            doc = json.loads(line)
        except ValueError as exc:
            raise TelemetryFileError(path, f"not neuron-monitor JSON: {getattr(exc, 'msg', exc)}",
                                     number) from None
        if not isinstance(doc, dict):
            raise TelemetryFileError(path, "not a neuron-monitor document (a JSON object)",
                                     number)
        out.append((number, stamp, doc))
    return out


def _time(text: str, path: str, line: int) -> float:
    try:
        if re.fullmatch(r"\d+(\.\d+)?", text):
            return plausible_time(float(text), text)
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return plausible_time(value.timestamp(), text)
    except ValueError as exc:
        raise TelemetryFileError(path, f"neuron-monitor line time: {exc}", line) from None


def _number(value: Any, what: str, path: str, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or value < 0:
        raise TelemetryFileError(path, f"neuron-monitor {what}: {value!r:.30} is not a "
                                       "measurement", line)
    return float(value)


def parse_neuron_monitor(text: str, path: str, mtime: float) -> Members:
    docs = _documents(text, path)
    if not docs:
        raise TelemetryFileError(path, "no neuron-monitor documents")
    times = _times(docs, mtime)
    members: Members = {}
    counts: dict[tuple[str, str], dict[int, int]] = {}
    for (number, _, doc), t in zip(docs, times, strict=True):
        info = got if isinstance(got := doc.get("instance_info"), dict) else {}
        host = str(info.get("instance_id") or "")
        hardware = doc.get("neuron_hardware_info")
        hardware = hardware if isinstance(hardware, dict) else {}
        devices = int(_number(hardware.get("neuron_device_count", 1), "neuron_device_count",
                              path, number) or 1)
        per_device = int(_number(hardware.get("neuroncore_per_device_count", 1),
                                 "neuroncore_per_device_count", path, number) or 1)
        size = hardware.get("neuron_device_memory_size")
        total = _number(size, "neuron_device_memory_size", path, number) / MIB \
            if size is not None else None
        cores: dict[int, float] = {}
        unread = False  # a runtime whose counters neuron-monitor could not read
        device_bytes = 0.0
        runtimes = doc.get("neuron_runtime_data") or []
        if not isinstance(runtimes, list):
            raise TelemetryFileError(path, "neuron_runtime_data is not a list", number)
        for runtime in runtimes:
            report = runtime.get("report") if isinstance(runtime, dict) else None
            if not isinstance(report, dict):
                continue
            counters = report.get("neuroncore_counters")
            if runtime.get("error") or not isinstance(counters, dict) or counters.get("error"):
                unread = True  # its cores' use is not known: never read as idle
                continue
            in_use = counters.get("neuroncores_in_use") or {}
            if not isinstance(in_use, dict):
                raise TelemetryFileError(path, "neuroncores_in_use is not an object", number)
            for core, values in in_use.items():
                if not str(core).isdigit() or not isinstance(values, dict):
                    raise TelemetryFileError(path, f"neuroncores_in_use entry {core!r:.20} is "
                                                   "not a core", number)
                util = _number(values.get("neuroncore_utilization", 0.0),
                               "neuroncore_utilization", path, number)
                if util > 100.0 + 1e-6:
                    raise TelemetryFileError(path, f"neuroncore_utilization {util:g} is above "
                                                   "100 %", number)
                cores[int(core)] = min(cores.get(int(core), 0.0) + util, 100.0)
            memory = report.get("memory_used")
            used = memory.get("neuron_runtime_used_bytes") if isinstance(memory, dict) else None
            if isinstance(used, dict) and used.get("neuron_device") is not None:
                device_bytes += _number(used["neuron_device"], "neuron_device bytes", path,
                                        number)
        gpus = members.setdefault(host, {})
        for device in range(max(devices, 1 + max(cores, default=0) // per_device)):
            index = str(device)
            busiest = max((cores.get(device * per_device + c, 0.0) for c in range(per_device)),
                          default=0.0)
            gpu = gpus.get(index) or gpus.setdefault(index, GpuHours(
                index, name=str(hardware.get("neuron_device_type") or "") or None))
            mem = device_bytes / MIB if devices == 1 and not unread else None
            gpu.add_sample(t, None if unread else busiest, mem, total,
                           counts.setdefault((host, index), {}))
    return members


def _times(docs: list[tuple[int, float | None, dict[str, Any]]], mtime: float) -> list[float]:
    if all(stamp is not None for _, stamp, _ in docs):
        # arg-type: no stamp is None here (the all() above)
        return [float(stamp) for _, stamp, _ in docs]  # type: ignore[arg-type]
    out: list[float] = []
    t = mtime
    for _, _, doc in reversed(docs):
        out.append(t)
        t -= _period(doc)
    out.reverse()
    return [plausible_time(x, "a neuron-monitor time dated by the file's modification time")
            for x in out]


def _period(doc: dict[str, Any]) -> float:
    for runtime in doc.get("neuron_runtime_data") or []:
        report = runtime.get("report") if isinstance(runtime, dict) else None
        counters = report.get("neuroncore_counters") if isinstance(report, dict) else None
        period = counters.get("period") if isinstance(counters, dict) else None
        if isinstance(period, int | float) and 0 < period < 3600:
            return float(period)
    return DEFAULT_PERIOD
