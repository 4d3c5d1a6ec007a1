"""From hourly points to the statistics RS-* read: p50, p95 and max utilization per GPU, peak
memory used, hours of data, and a trend of at most ``MAX_TREND_POINTS`` aggregates.

Every source is first brought to hourly points per GPU: the mean utilization of the hour, its
maximum, and the peak memory used in it (CloudWatch gives them directly with the Average and
Maximum statistics; files are bucketed here). Percentiles are over the hourly means (linear
interpolation, as numpy's default); the maximum is over the hourly maxima.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

HOUR = 3600
MAX_TREND_POINTS = 56  # 14 days of 6-hour points
# A time GPU utilization can have been measured at: 2000-01-01 to 2100-01-01 (UTC). Outside it
# is a unit mistake (milliseconds where seconds are meant, or microseconds for milliseconds).
EARLIEST, LATEST = 946684800.0, 4102444800.0


def plausible_time(t: float, shown: object = None) -> float:
    """``t`` (seconds since the epoch) when it lies in 2000-2100; else ValueError saying so."""
    if not (math.isfinite(t) and EARLIEST <= t < LATEST):
        unit = " (a unit too small: milliseconds or microseconds where seconds are meant?)" \
            if t >= LATEST * 100 else ""
        what = shown if isinstance(shown, str) else repr(shown if shown is not None else t)
        raise ValueError(f"{what} is not a time between 2000 and 2100{unit}")
    return t


END_ENV = "GPUAUDIT_TELEMETRY_END"


def telemetry_end() -> float:
    """Now, or ``GPUAUDIT_TELEMETRY_END`` (RFC 3339; reproducible runs and tests): where a live
    read's window ends."""
    import os
    import time

    text = os.environ.get(END_ENV, "").strip()
    if not text:
        return time.time()
    stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.timestamp()


def percentile(ordered: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of an ascending sequence, linear interpolation."""
    if not ordered:
        raise ValueError("percentile of nothing")
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class GpuHours:
    """Hourly points of one GPU: ``{hour start (epoch s): value}``."""

    index: str
    util_mean: dict[int, float] = field(default_factory=dict)
    util_max: dict[int, float] = field(default_factory=dict)
    mem_used_max: dict[int, float] = field(default_factory=dict)
    mem_total: float | None = None
    name: str | None = None
    # DCGM: hourly points of each profiling field (in %), what utilization was read from, the
    # MIG profiles of the GPU's instances, and how many workloads shared it (time-slicing)
    extra: dict[str, GpuHours] = field(default_factory=dict)
    source: str | None = None
    mig: list[str] = field(default_factory=list)
    shared_by: int = 0

    def add_sample(self, t: float, util: float | None, mem_used: float | None,
                   mem_total: float | None, counts: dict[int, int]) -> None:
        """One raw sample (seconds since the epoch): folded into its hour."""
        hour = int(t // HOUR) * HOUR
        if util is not None:
            n = counts.get(hour, 0)
            mean = self.util_mean.get(hour, 0.0)
            self.util_mean[hour] = mean + (util - mean) / (n + 1)
            counts[hour] = n + 1
            self.util_max[hour] = max(self.util_max.get(hour, util), util)
        if mem_used is not None:
            self.mem_used_max[hour] = max(self.mem_used_max.get(hour, mem_used), mem_used)
        if mem_total is not None:
            self.mem_total = max(self.mem_total or 0.0, mem_total)


@dataclass(frozen=True)
class Window:
    start: int  # epoch s, inclusive
    end: int  # epoch s, exclusive

    @property
    def hours(self) -> int:
        return max((self.end - self.start) // HOUR, 0)

    def bucket_seconds(self) -> int:
        """6 hours, or more when the window is longer than 14 days (at most 56 points)."""
        per_point = max(6, math.ceil(self.hours / MAX_TREND_POINTS / 6) * 6)
        return per_point * HOUR

    @classmethod
    def ending(cls, end: float, days: float) -> Window:
        stop = math.ceil(end / HOUR) * HOUR
        return cls(stop - int(days * 86400), stop)


class Trend:
    """Per trend point: the busiest GPU's maximum and the p95 of the hourly means."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.step = window.bucket_seconds()
        self.n = max(1, math.ceil((window.end - window.start) / self.step))
        self.maxima: list[float | None] = [None] * self.n
        self.means: list[list[float]] = [[] for _ in range(self.n)]

    def add(self, times: Sequence[int], means: Sequence[float],
            maxima: Sequence[float] | None) -> None:
        start, step, n = self.window.start, self.step, self.n
        if isinstance(times, range) and times.step > 0 and len(times) == len(means) and (
                maxima is None or len(maxima) == len(means)):
            self._add_slices(times, means, maxima)
            return
        buckets_max = self.maxima
        buckets_mean = self.means
        for t, v in zip(times, means, strict=False):
            b = (t - start) // step
            if 0 <= b < n:
                buckets_mean[b].append(v)
                if maxima is None:
                    cur = buckets_max[b]
                    buckets_max[b] = v if cur is None or v > cur else cur
        if maxima is not None:
            for t, v in zip(times, maxima, strict=False):
                b = (t - start) // step
                if 0 <= b < n:
                    cur = buckets_max[b]
                    buckets_max[b] = v if cur is None or v > cur else cur

    def _add_slices(self, times: range, means: Sequence[float],
                    maxima: Sequence[float] | None) -> None:
        """Regular points: whole slices per trend point (C speed, no loop per point)."""
        start, step, every = self.window.start, self.step, times.step
        first_b = max((times.start - start) // step, 0)
        last_b = min((times[-1] - start) // step, self.n - 1) if len(times) else -1
        tops = maxima if maxima is not None else means
        for b in range(first_b, last_b + 1):
            lo_t, hi_t = start + b * step, start + (b + 1) * step
            lo = max(0, -(-(lo_t - times.start) // every))
            hi = min(len(times), -(-(hi_t - times.start) // every))
            if lo >= hi:
                continue
            self.means[b].extend(means[lo:hi])
            top = max(tops[lo:hi])
            cur = self.maxima[b]
            self.maxima[b] = top if cur is None or top > cur else cur

    def as_dict(self) -> dict[str, Any]:
        p95 = [round(percentile(sorted(m), 95), 2) if m else None for m in self.means]
        return {"Start": iso(self.window.start), "HoursPerPoint": self.step // HOUR,
                "UtilMax": [None if v is None else round(v, 2) for v in self.maxima],
                "UtilP95": p95}


def gpu_stats(index: str, means: Sequence[float], maxima: Sequence[float],
              mem_used: Sequence[float], mem_total: float | None,
              name: str | None = None) -> dict[str, Any]:
    """The statistics of one GPU from its hourly points (``means`` drives hours of data)."""
    ordered = sorted(means)
    out: dict[str, Any] = {"Index": index, "Hours": len(ordered)}
    if ordered:
        top = max(maxima) if maxima else ordered[-1]
        # RS-001 decides on a high percentile (Compute Optimizer's P99.5): of the hourly
        # maxima, not the means, so that a short burst inside an hour still counts
        peaks = sorted(maxima) if maxima else ordered
        out |= {"UtilP50": round(percentile(ordered, 50), 2),
                "UtilP95": round(percentile(ordered, 95), 2),
                "UtilP99.5": round(max(percentile(peaks, 99.5), percentile(ordered, 99.5)), 2),
                "UtilMax": round(max(top, ordered[-1]), 2)}
    out["MemUsedMaxMiB"] = round(max(mem_used), 1) if mem_used else None
    out["MemTotalMiB"] = round(mem_total, 1) if mem_total else None
    if name:
        out["Name"] = name
    return out


def member_stats(member_id: str, gpus: Iterable[GpuHours], window: Window,
                 trend: Trend | None = None) -> dict[str, Any]:
    """One instance's GPUs inside ``window`` (points outside it are dropped)."""
    stats = []
    for g in sorted(gpus, key=lambda g: _index_key(g.index)):
        hours = sorted(h for h in g.util_mean if window.start <= h < window.end)
        means = [g.util_mean[h] for h in hours]
        maxima = [g.util_max.get(h, g.util_mean[h]) for h in hours]
        mem = [v for h, v in g.mem_used_max.items() if window.start <= h < window.end]
        stats.append(gpu_stats(g.index, means, maxima, mem, g.mem_total, g.name)
                     | _dcgm_stats(g, window))
        if trend is not None:
            trend.add(hours, means, maxima)
    return {"Id": member_id, "Hours": max((s["Hours"] for s in stats), default=0),
            "Gpus": stats}


def _dcgm_stats(g: GpuHours, window: Window) -> dict[str, Any]:
    """What DCGM adds about one GPU: p95/max of each profiling field, the utilization's field,
    its MIG instances, the workloads sharing it."""
    out: dict[str, Any] = {}
    if g.source:
        out["UtilSource"] = g.source
    for label, series in sorted(g.extra.items()):
        hours = [h for h in series.util_mean if window.start <= h < window.end]
        if hours:
            ordered = sorted(series.util_mean[h] for h in hours)
            out[f"{label}P95"] = round(percentile(ordered, 95), 2)
            out[f"{label}Max"] = round(max(series.util_max.get(h, 0.0) for h in hours), 2)
    if g.mig:
        out["MigInstances"] = list(g.mig)
    if g.shared_by > 1:
        out["SharedBy"] = g.shared_by
    return out


def usage_record(source: str, members: list[dict[str, Any]], window: Window,
                 trend: Trend, lookback_days: float) -> dict[str, Any]:
    """The attributes of a ``telemetry.gpu_utilization`` resource."""
    return {"Source": source, "Start": iso(window.start), "End": iso(window.end),
            "LookbackDays": lookback_days,
            "Hours": max((m["Hours"] for m in members), default=0),
            "Members": members, "Trend": trend.as_dict()}


def _index_key(index: str) -> tuple[int, str]:
    return (int(index), "") if index.isdigit() else (1 << 30, index)
