"""DCGM exporter metrics (Prometheus text or OpenMetrics), read one sample at a time.

What dcgm-exporter writes, and how it becomes one utilization per physical GPU:

- The device is ``(host, gpu)``: the host is the ``Hostname`` label (dcgm-exporter), else
  ``hostname``, else ``instance`` (the scrape target Prometheus adds); ``gpu`` is the index.
- MIG: a series with ``GPU_I_ID`` is one GPU instance (``GPU_I_PROFILE`` e.g. ``3g.40gb``) of
  that device. The device's utilization is its busiest instance's (the parent's own
  ``DCGM_FI_DEV_GPU_UTIL`` reads 0 under MIG: one busy slice is a busy GPU, never an idle one);
  its memory used is the sum of its instances' (or the device's own figure, if larger).
- Time-slicing / MPS: several series of one device (or GPU instance) that differ only in the
  workload labels (``pod``/``namespace``/``container``, ``exported_*`` once Prometheus scraped
  them, ``vgpu``) are the device's consumers: their utilizations at one time add up (at most
  100 %); memory is a device figure (the largest is kept).
- Utilization: the profiling fields (ratios 0-1, shown in %) are preferred over
  ``DCGM_FI_DEV_GPU_UTIL`` (the share of time any kernel ran, 100 % for one tiny kernel
  always running) where present: a sample's utilization is the largest of
  ``DCGM_FI_PROF_SM_ACTIVE``, ``_PIPE_TENSOR_ACTIVE`` and ``_DRAM_ACTIVE`` (a GPU busy moving
  memory is busy), else ``_GR_ENGINE_ACTIVE`` (what MIG instances report). Each one's p95/max
  is kept beside (``SmActiveP95`` ...).
- Memory: ``DCGM_FI_DEV_FB_USED`` (MiB); total = ``FB_TOTAL`` or used + free (+ reserved).
- Time: every sample needs its timestamp: milliseconds (Prometheus text), seconds (OpenMetrics,
  a file ending in ``# EOF``).

Budgets, applied while reading (before anything is built from the lines): ``MAX_SERIES``
distinct series, ``MAX_DEVICES`` GPUs, ``MAX_POINTS`` distinct (device, GPU instance, field, time)
points, ``MAX_LINE_CHARS`` per line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from scanner.telemetry.aggregate import GpuHours, plausible_time

UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED, FB_FREE, FB_RESERVED, FB_TOTAL = (
    "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_FB_TOTAL")
# profiling fields (ratios 0-1) -> the name of their statistics in the report
PROF = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE": "GrEngineActive",
        "DCGM_FI_PROF_SM_ACTIVE": "SmActive",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "TensorActive",
        "DCGM_FI_PROF_DRAM_ACTIVE": "DramActive"}
_ENGINE = ("DCGM_FI_PROF_GR_ENGINE_ACTIVE",)
_DETAILED = ("DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
             "DCGM_FI_PROF_DRAM_ACTIVE")
MEMORY = (FB_USED, FB_FREE, FB_RESERVED, FB_TOTAL)
FIELDS = frozenset((UTIL, *MEMORY, *PROF))
HOST_LABELS = ("Hostname", "hostname", "instance")
# the workload a series is attributed to (time-slicing): exported_* once Prometheus scraped the
# exporter (its own pod/namespace/container then name the exporter), else the plain ones
_WORKLOAD = ("pod", "namespace", "container")
_EXPORTED = ("exported_pod", "exported_namespace", "exported_container")

MAX_SERIES = 500_000  # distinct DCGM series of one input (10,000 hosts x 8 GPUs x 6 fields)
MAX_DEVICES = 100_000  # GPUs (host, index) of one input: 10,000 hosts of 8 GPUs, and room
MAX_POINTS = 3_000_000  # distinct (device, GPU instance, field, time) points of one input
MAX_LINE_CHARS = 65_536

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*(,|(?=\}))')
_FAST = re.compile(r'(DCGM_FI_[A-Z0-9_]+)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*",?)*)\}'
                   r"[ \t]+(\S+)(?:[ \t]+(\S+))?[ \t]*$")
_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\\n]*)"')
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPE = {"n": "\n", "\\": "\\", '"': '"'}


class DcgmError(ValueError):
    """A line that is not a DCGM sample: the reason and the line number (None: the input)."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float
    time: float  # seconds since the epoch


def parse_line(line: str, number: int, *, seconds: bool) -> Sample | None:
    """One exposition line: a DCGM sample of a field read here, or None (any other line)."""
    if not line.startswith("DCGM_FI_"):
        if line.startswith("#") or not line.strip():
            return None
        if not _NAME.match(line):
            raise DcgmError("not Prometheus text: a line that is neither a sample nor a "
                            "comment", number)
        return None
    fast = _FAST.match(line)
    if fast is not None:  # labels without escapes, as dcgm-exporter writes them
        name = fast.group(1)
        if name not in FIELDS:
            return None
        labels = dict(_PAIR.findall(fast.group(2)))
        rest = [fast.group(3)] + ([fast.group(4)] if fast.group(4) else [])
    else:
        name, labels, rest = _slow_line(line, number)
        if name not in FIELDS:
            return None
    if not rest or len(rest) > 2:
        raise DcgmError(f"not Prometheus text: {name} needs a value and a timestamp", number)
    try:
        value = float(rest[0])
    except ValueError:
        raise DcgmError(f"not Prometheus text: {name} value {rest[0][:30]!r} is not a number",
                        number) from None
    if len(rest) < 2:
        raise DcgmError(f"{name} sample without a timestamp (append the scrape time to each "
                        "sample)", number)
    try:
        stamp = float(rest[1])
        t = stamp if seconds else stamp / 1000.0
        shown = f"timestamp {rest[1][:30]}" + ("" if seconds else " (ms)")
        plausible_time(t, shown)
    except ValueError as exc:
        raise DcgmError(f"{name}: {exc}", number) from None
    check_value(name, value, number, rest[0])
    if "gpu" not in labels:
        raise DcgmError(f"{name} sample without a gpu label", number)
    return Sample(name, labels, value, t)


def _slow_line(line: str, number: int) -> tuple[str, dict[str, str], list[str]]:
    m = _NAME.match(line)
    assert m is not None
    name, at = m.group(0), m.end()
    labels: dict[str, str] = {}
    if name in FIELDS and at < len(line) and line[at] == "{":
        at += 1
        while True:
            while at < len(line) and line[at] in " \t":
                at += 1
            if at < len(line) and line[at] == "}":
                at += 1
                break
            lm = _LABEL.match(line, at)
            if lm is None:
                raise DcgmError(f"not Prometheus text: bad labels in a {name} sample", number)
            value = lm.group(2)
            labels[lm.group(1)] = _ESCAPE.sub(lambda e: _UNESCAPE.get(e.group(1), e.group(0)),
                                              value) if "\\" in value else value
            at = lm.end()
    return name, labels, line[at:].split()


def check_value(name: str, value: float, number: int | None = None,
                shown: str | None = None) -> None:
    """DcgmError when ``value`` cannot be a sample of field ``name``."""
    if not math.isfinite(value) or value < 0:
        raise DcgmError(f"{name} {shown or value} is not a measurement", number)
    if name == UTIL and value > 100:
        raise DcgmError(f"{UTIL} {value:g} is not a percentage", number)
    if name in PROF and value > 1.0 + 1e-9:
        raise DcgmError(f"{name} {value:g} is not a ratio between 0 and 1", number)


def host_of(labels: dict[str, str]) -> str:
    for key in HOST_LABELS:
        value = labels.get(key)
        if value:
            return value
    return ""


def workload_of(labels: dict[str, str]) -> tuple[str, ...]:
    keys = _EXPORTED if any(k in labels for k in _EXPORTED) else _WORKLOAD
    return (*(labels.get(k, "") for k in keys), labels.get("vgpu", ""))


# (host, gpu index, GPU instance id or "") -> field -> time -> combined value
Points = dict[str, dict[float, float]]


@dataclass(slots=True)
class Device:
    name: str | None = None
    profiles: dict[str, str] = field(default_factory=dict)  # GPU instance id -> profile
    parts: dict[str, Points] = field(default_factory=dict)  # GPU instance id ("": device) ->
    workloads: set[tuple[str, ...]] | None = None  # the consumers sharing it


class Reader:
    """Folds DCGM samples into per-device points, within the budgets."""

    def __init__(self, max_series: int = MAX_SERIES, max_points: int = MAX_POINTS,
                 max_devices: int = MAX_DEVICES) -> None:
        self.devices: dict[tuple[str, str], Device] = {}
        self.last: dict[int, float] = {}  # series (its hash) -> time of its latest sample
        self.max_series, self.max_points = max_series, max_points
        self.max_devices = max_devices
        self.points = 0

    def add(self, s: Sample, number: int | None = None) -> None:
        labels = s.labels
        host, gpu = host_of(labels), labels["gpu"]
        gi = labels.get("GPU_I_ID", "")
        workload = workload_of(labels)
        key = hash((s.name, host, gpu, gi, workload))
        previous = self.last.get(key)
        if previous is None and len(self.last) >= self.max_series:
            raise DcgmError(f"more than {self.max_series:,} DCGM series: over the budget of "
                            "one input (split the export by host)", number)
        self.last[key] = s.time
        device = self.devices.get((host, gpu))
        if device is None:
            if len(self.devices) >= self.max_devices:
                raise DcgmError(f"more than {self.max_devices:,} GPUs: over the budget of one "
                                "input (split the export by host)", number)
            device = self.devices[(host, gpu)] = Device()
        if device.name is None and labels.get("modelName"):
            device.name = labels["modelName"]
        if gi and gi not in device.profiles:
            device.profiles[gi] = labels.get("GPU_I_PROFILE", "")
        part = device.parts.get(gi)
        if part is None:
            part = device.parts[gi] = {}
        by_time = part.get(s.name)
        if by_time is None:
            by_time = part[s.name] = {}
        value = s.value * 100.0 if s.name in PROF else s.value
        have = by_time.get(s.time)
        if s.name not in MEMORY and any(workload):
            if device.workloads is None:
                device.workloads = set()
            device.workloads.add(workload)
        if have is None:
            if self.points >= self.max_points:
                raise DcgmError(f"more than {self.max_points:,} DCGM points: over the budget "
                                "of one input (aggregate or split it first)", number)
            self.points += 1
            by_time[s.time] = value
        elif s.name in MEMORY or previous == s.time:
            # memory is a device figure (copied to each consumer); the same series at the same
            # time again is a repeated scrape
            by_time[s.time] = max(have, value)
        else:
            by_time[s.time] = min(have + value, 100.0)  # the consumers of one device add up

    def result(self) -> dict[str, dict[str, GpuHours]]:
        """``{host: {gpu index: hourly points}}``."""
        members: dict[str, dict[str, GpuHours]] = {}
        for (host, gpu), device in sorted(self.devices.items()):
            hours = _device_hours(gpu, device)
            if hours is not None:
                members.setdefault(host, {})[gpu] = hours
        return members


def _activity(part: Points) -> tuple[dict[float, float], str | None]:
    """Utilization in % by time of one part (a device or GPU instance), and what it came from:
    the largest of SM, tensor and DRAM activity where one was sampled, else graphics-engine
    activity (what MIG instances report), else GPU_UTIL."""
    out: dict[float, float] = dict(part.get(UTIL, {}))
    source = UTIL if UTIL in part else None
    for tier in (_ENGINE, _DETAILED):
        sampled = [f for f in tier if f in part]
        if not sampled:
            continue
        source = "+".join(sampled)
        replaced: set[float] = set()
        for f in sampled:
            for t, v in part[f].items():
                if t in replaced:
                    out[t] = max(out[t], v)
                else:
                    replaced.add(t)  # a profiling figure replaces a coarser one at that time
                    out[t] = v
    return out, source


def _memory(part: Points) -> tuple[dict[float, float], dict[float, float]]:
    used = part.get(FB_USED, {})
    free = part.get(FB_FREE, {})
    reserved = part.get(FB_RESERVED, {})
    total = dict(part.get(FB_TOTAL, {}))
    for t, u in used.items():
        if t in free:
            total[t] = max(total.get(t, 0.0), u + free[t] + reserved.get(t, 0.0))
    return dict(used), total


def _device_hours(gpu: str, device: Device) -> GpuHours | None:
    util: dict[float, float] = {}
    used: dict[float, float] = {}
    total: dict[float, float] = {}
    sources: set[str] = set()
    extras: dict[str, dict[float, float]] = {}
    mig_used: dict[float, float] = {}
    mig_total: dict[float, float] = {}
    for gi, part in sorted(device.parts.items()):
        act, source = _activity(part)
        if source:
            sources.add(source)
        for t, v in act.items():
            util[t] = max(util.get(t, v), v)  # the busiest GPU instance is the device's
        for f, label in PROF.items():
            for t, v in part.get(f, {}).items():
                extra = extras.setdefault(label, {})
                extra[t] = max(extra.get(t, v), v)
        u, tot = _memory(part)
        into_used, into_total = (mig_used, mig_total) if gi else (used, total)
        for t, v in u.items():
            into_used[t] = into_used.get(t, 0.0) + v if gi else max(into_used.get(t, v), v)
        for t, v in tot.items():
            into_total[t] = into_total.get(t, 0.0) + v if gi else max(into_total.get(t, v), v)
    for t, v in mig_used.items():  # MIG: the instances' memory together
        used[t] = max(used.get(t, v), v)
    for t, v in mig_total.items():
        total[t] = max(total.get(t, v), v)
    if not util and not used:
        return None
    hours = GpuHours(gpu, name=device.name)
    counts: dict[int, int] = {}
    for t in sorted(set(util) | set(used)):
        hours.add_sample(t, util.get(t), used.get(t), total.get(t), counts)
    if total and hours.mem_total is None:
        hours.mem_total = max(total.values())
    for label, by_time in extras.items():
        extra_counts: dict[int, int] = {}
        series = hours.extra.setdefault(label, GpuHours(gpu))
        for t, v in sorted(by_time.items()):
            series.add_sample(t, v, None, None, extra_counts)
    hours.source = "; ".join(sorted(sources)) or None
    hours.mig = [device.profiles[g] or g for g in sorted(device.profiles, key=_gi_key)]
    hours.shared_by = len(device.workloads or ())
    return hours


def _gi_key(gi: str) -> tuple[int, str]:
    return (int(gi), "") if gi.isdigit() else (1 << 30, gi)


def read_lines(lines: Iterable[str], *, seconds: bool, reader: Reader | None = None
               ) -> dict[str, dict[str, GpuHours]]:
    """Every DCGM sample of an exposition, one line at a time; DcgmError names the line."""
    reader = reader or Reader()
    number = 0
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            raise DcgmError(f"a line of more than {MAX_LINE_CHARS:,} characters", number)
        sample = parse_line(line.rstrip("\r\n"), number, seconds=seconds)
        if sample is not None:
            reader.add(sample, number)
    members = reader.result()
    if not members:
        raise DcgmError(f"no {UTIL} / {FB_USED} / DCGM_FI_PROF_* samples")
    return members
