"""``nvidia-smi dmon`` logs: ``nvidia-smi dmon -o DT -s um >> dmon.log``.

The columns come from the header line (``# gpu sm mem enc dec ...``; ``#Date Time gpu ...``
with ``-o DT``; ``#Time gpu ...`` with ``-o T``), repeated every few screens and after each
restart; the units line under it (``# Idx % % ...``) is skipped. Read: ``sm`` (the share of time
a kernel ran, in %) as utilization and ``fb`` (frame buffer used, MiB, with ``-s m``) as memory
used; ``mem`` there is memory-bus activity, not occupancy. ``-`` is a value not supported.

Time: ``-o DT`` (``YYYYMMDD HH:MM:SS``) is read as UTC, as nvidia-smi's CSV timestamps are. With
``-o T`` (the time of day only) the rows are dated backwards from the file's modification time
(UTC), a day earlier at each time that goes back; without ``-o`` a row has no time and the log is
refused (it cannot be placed in any window).
"""

from __future__ import annotations

import datetime as dt
import math

from scanner.telemetry.aggregate import GpuHours, plausible_time
from scanner.telemetry.members import Members, TelemetryFileError

_DAY = 86400


def _header(line: str) -> list[str] | None:
    """The column names of a header line (``gpu`` and after, with date/time first), or None."""
    words = line.lstrip("#").split()
    lower = [w.lower() for w in words]
    if "gpu" not in lower[:3]:
        return None
    return lower


def _value(text: str, column: str, path: str, line: int) -> float | None:
    if text == "-":
        return None
    try:
        value = float(text)
    except ValueError:
        raise TelemetryFileError(path, f"dmon column {column}: {text[:20]!r} is not a number",
                                 line) from None
    if not math.isfinite(value) or value < 0:
        raise TelemetryFileError(path, f"dmon column {column}: {text[:20]!r} is not a "
                                       "measurement", line)
    return value


def parse_dmon(text: str, path: str, mtime: float) -> Members:
    columns: list[str] | None = None
    rows: list[tuple[int, str | None, str | None, dict[str, str]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            names = _header(line)
            if names is not None:
                columns = names
            continue  # the units line (# Idx % % ...) and other comments
        if columns is None:
            raise TelemetryFileError(path, "dmon row before any header line (# gpu ...)", number)
        cells = line.split()
        if len(cells) != len(columns):
            raise TelemetryFileError(path, f"{len(cells)} fields where the header has "
                                           f"{len(columns)}", number)
        row = dict(zip(columns, cells, strict=True))
        if "sm" not in row and "fb" not in row:
            raise TelemetryFileError(path, "dmon log without the sm or fb column (run it with "
                                           "-s um)", number)
        if "time" not in row:
            raise TelemetryFileError(path, "dmon rows without a time: run nvidia-smi dmon with "
                                           "-o DT (or -o T) to place them in time", number)
        rows.append((number, row.get("date"), row["time"], row))
    if not rows:
        raise TelemetryFileError(path, "no nvidia-smi dmon samples")
    times = _times(rows, path, mtime)
    gpus: dict[str, GpuHours] = {}
    counts: dict[str, dict[int, int]] = {}
    for (number, _, _, row), t in zip(rows, times, strict=True):
        index = row["gpu"]
        if not index.isdigit():
            raise TelemetryFileError(path, f"dmon gpu {index[:20]!r} is not an index", number)
        util = _value(row["sm"], "sm", path, number) if "sm" in row else None
        used = _value(row["fb"], "fb", path, number) if "fb" in row else None
        if util is not None and util > 100:
            raise TelemetryFileError(path, f"dmon sm {util:g} % is above 100", number)
        gpu = gpus.setdefault(index, GpuHours(index))
        gpu.add_sample(t, util, used, None, counts.setdefault(index, {}))
    return {"": gpus}


def _clock(text: str, path: str, line: int) -> int:
    try:
        h, m, s = (int(p) for p in text.split(":"))
    except ValueError:
        raise TelemetryFileError(path, f"dmon time {text[:20]!r} is not HH:MM:SS", line) from None
    if not (0 <= h < 24 and 0 <= m < 60 and 0 <= s < 61):
        raise TelemetryFileError(path, f"dmon time {text[:20]!r} is not HH:MM:SS", line)
    return h * 3600 + m * 60 + s


def _times(rows: list[tuple[int, str | None, str | None, dict[str, str]]], path: str,
           mtime: float) -> list[float]:
    out: list[float] = []
    if all(date is not None for _, date, _, _ in rows):
        for number, date, clock, _ in rows:
            try:
                day_start = dt.datetime.strptime(str(date), "%Y%m%d").replace(
                    tzinfo=dt.timezone.utc)
                t = day_start.timestamp() + _clock(str(clock), path, number)
                out.append(plausible_time(t, f"{date} {clock}"))
            except ValueError as exc:
                raise TelemetryFileError(path, f"dmon date {str(date)[:20]!r}: {exc}",
                                         number) from None
        return out
    # -o T: the time of day only; a day more each time the clock goes back
    offsets: list[int] = []
    day = 0
    previous = -1
    for number, _, clock, _ in rows:
        seconds = _clock(str(clock), path, number)
        if seconds < previous:
            day += 1
        previous = seconds
        offsets.append(day * _DAY + seconds)
    midnight = math.floor(mtime / _DAY) * _DAY
    last_day = midnight if offsets[-1] % _DAY <= mtime - midnight else midnight - _DAY
    base = last_day - (offsets[-1] // _DAY) * _DAY
    try:
        return [plausible_time(base + o, "a dmon time dated by the file's modification time")
                for o in offsets]
    except ValueError as exc:
        raise TelemetryFileError(path, str(exc), rows[0][0]) from None
