"""Utilization files written on the GPU hosts: nvidia-smi CSV logs and DCGM exporter scrapes.

- nvidia-smi: ``nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,
  memory.total --format=csv -l 60 >> gpu.csv``. Units in the header (``[%]``, ``[MiB]``) and in
  the values are stripped; ``[N/A]`` / ``[Not Supported]`` leave that value out; a repeated
  header (several runs appended) is skipped; ``--format=csv,noheader,nounits`` is read in the
  documented column order. Timestamps without a zone are UTC.
- DCGM exporter: Prometheus text exposition with a timestamp on every sample (append scrapes:
  ``curl -s host:9400/metrics | awk -v t=$(date +%s%3N) '/^DCGM_FI_DEV_(GPU_UTIL|FB_USED|FB_FREE)/
  {print $0, t}' >> dcgm.prom``). Read with prometheus-client's parser; ``gpu`` is the index,
  ``Hostname`` the member (several hosts of a group in one file); total memory = used + free
  (+ reserved).

A malformed file raises :class:`TelemetryFileError` naming the file and line.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

from scanner.telemetry.aggregate import GpuHours, plausible_time

MAX_FILE_BYTES = 512 * 1024 * 1024  # a budget: a month of 1-minute samples of 8 GPUs is ~30 MB
NVIDIA_COLUMNS = ("timestamp", "index", "name", "utilization.gpu", "memory.used", "memory.total")
_NA = re.compile(r"^\[(n/a|not supported|unknown error|gpu is lost)\]$", re.I)
_UNIT = re.compile(r"\s*(%|[kmgt]i?b|b|w)\s*$", re.I)
_HEADER_UNIT = re.compile(r"\s*\[([^\]]*)\]\s*$")
# What one unit of each is in MiB. nvidia-smi writes MiB; "MB"/"GB" are read as MiB/GiB, as GPU
# tools (and the CloudWatch agent's "Megabytes") use them.
_MIB = {"b": 1 / 1048576, "kib": 1 / 1024, "kb": 1 / 1024, "mib": 1.0, "mb": 1.0,
        "gib": 1024.0, "gb": 1024.0, "tib": 1048576.0, "tb": 1048576.0}
_UNITS_OF = {"utilization.gpu": {"%": 1.0}, "memory.used": _MIB, "memory.total": _MIB}
_DEFAULT_UNIT = {"utilization.gpu": "%", "memory.used": "mib", "memory.total": "mib"}
DCGM_UTIL, DCGM_USED, DCGM_FREE, DCGM_RESERVED = (
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED")
_DCGM = (DCGM_UTIL, DCGM_USED, DCGM_FREE, DCGM_RESERVED)

# member id ("" when the file is one host) -> GPU index -> hourly points
Members = dict[str, dict[str, GpuHours]]


@dataclass
class TelemetryFileError(Exception):
    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.reason}"


def read_text(path: Path) -> str:
    from scanner.safe_read import ReadError, read_regular

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise TelemetryFileError(str(path), f"{size} bytes: larger than the "
                                                f"{MAX_FILE_BYTES} byte budget of a telemetry file")
        # a regular file only: a FIFO named gpu.csv would block the run forever
        return read_regular(path, limit=MAX_FILE_BYTES).decode("utf-8")
    except ReadError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.reason}") from None
    except OSError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TelemetryFileError(str(path), f"not UTF-8 text: {exc.reason}") from exc


def sniff(text: str) -> str | None:
    """"dcgm", "nvidia-smi" or None, from the first lines of a file."""
    head = text[:4096]
    if "DCGM_FI_DEV_" in head:
        return "dcgm"
    first = head.lstrip().split("\n", 1)[0].lower()
    if first.startswith("timestamp") and "utilization.gpu" in first:
        return "nvidia-smi"
    if re.match(r"^\d{4}[/-]\d{2}[/-]\d{2}[ t]\d{2}:\d{2}", first):
        return "nvidia-smi"
    return None


def _timestamp(text: str) -> float:
    text = text.strip()
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S"):
        try:
            return plausible_time(dt.datetime.strptime(text, fmt).replace(
                tzinfo=dt.timezone.utc).timestamp(), text)
        except ValueError as exc:
            if "not a time" in str(exc):
                raise
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return plausible_time(value.timestamp(), text)


def _number(text: str, column: str | None = None, header_unit: str | None = None) -> float | None:
    """The value of a cell; for a measured ``column``, in % or MiB, from the cell's unit, else
    the header's, else nvidia-smi's."""
    text = text.strip()
    if not text or _NA.match(text):
        return None
    unit = _UNIT.search(text)
    value = float(_UNIT.sub("", text))
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{text!r} is not a measurement")
    if column not in _UNITS_OF:
        return value
    name = (unit.group(1) if unit else header_unit or _DEFAULT_UNIT[column]).lower()
    scale = _UNITS_OF[column].get(name)
    if scale is None:
        raise ValueError(f"{column} in {name!r}, not a unit of it")
    return value * scale


def parse_nvidia_smi(text: str, path: str) -> Members:
    gpus: dict[str, GpuHours] = {}
    counts: dict[str, dict[int, int]] = {}
    columns: dict[str, int] | None = None
    units: dict[str, str] = {}
    rows = csv.reader(io.StringIO(text), skipinitialspace=True)
    for row in rows:
        line = rows.line_num
        if not row or all(not c.strip() for c in row):
            continue
        names = [_HEADER_UNIT.sub("", c).strip().lower() for c in row]
        if "timestamp" in names:
            missing = [c for c in ("timestamp", "index", "utilization.gpu") if c not in names]
            if missing:
                raise TelemetryFileError(path, f"header lacks {', '.join(missing)}", line)
            columns = {name: i for i, name in enumerate(names)}
            units = {name: m.group(1).strip().lower() for name, c in zip(names, row, strict=True)
                     if name in _UNITS_OF and (m := _HEADER_UNIT.search(c)) and m.group(1).strip()}
            wrong = [f"{n} [{u}]" for n, u in units.items() if u not in _UNITS_OF[n]]
            if wrong:
                raise TelemetryFileError(path, f"header unit not one of its column: "
                                               f"{', '.join(wrong)}", line)
            continue
        cols = columns or {name: i for i, name in enumerate(NVIDIA_COLUMNS)}
        if len(row) < len(cols):
            raise TelemetryFileError(path, f"{len(row)} fields where the header has "
                                           f"{len(cols)}", line)

        def cell(name: str, row: list[str] = row, cols: dict[str, int] = cols) -> str | None:
            i = cols.get(name)
            return row[i] if i is not None else None

        try:
            t = _timestamp(cell("timestamp") or "")
            index = str(int(_number(cell("index") or "") or 0))
            util = _number(cell("utilization.gpu") or "", "utilization.gpu",
                           units.get("utilization.gpu"))
            used = _number(cell("memory.used") or "", "memory.used", units.get("memory.used"))
            total = _number(cell("memory.total") or "", "memory.total",
                            units.get("memory.total"))
        except ValueError as exc:
            raise TelemetryFileError(path, f"not a nvidia-smi sample: {exc}", line) from exc
        if util is not None and util > 100:
            raise TelemetryFileError(path, f"utilization {util:g} % is above 100", line)
        gpu = gpus.setdefault(index, GpuHours(index, name=(cell("name") or "").strip() or None))
        gpu.add_sample(t, util, used, total, counts.setdefault(index, {}))
    if not gpus:
        raise TelemetryFileError(path, "no nvidia-smi samples")
    return {"": gpus}


def _find_bad_line(text: str) -> tuple[int, str]:
    from prometheus_client.parser import text_string_to_metric_families

    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            list(text_string_to_metric_families(line + "\n"))
        except Exception as exc:
            return n, str(exc)
    return 0, "not Prometheus text"




def parse_dcgm(text: str, path: str) -> Members:
    from prometheus_client.parser import text_string_to_metric_families

    try:
        families = list(text_string_to_metric_families(text))
    except Exception as exc:
        line, reason = _find_bad_line(text)
        raise TelemetryFileError(path, f"not Prometheus text: {reason or exc}",
                                 line or None) from exc
    points: dict[tuple[str, str], dict[float, dict[str, float]]] = {}
    for family in families:
        for sample in family.samples:
            if sample.name not in _DCGM:
                continue
            if sample.timestamp is None:
                line = _line_of(text, sample.name, sample.labels.get("gpu"), untimed=True)
                raise TelemetryFileError(path, f"{sample.name} sample without a timestamp "
                                               "(append the scrape time to each sample)", line)
            index = sample.labels.get("gpu")
            try:
                plausible_time(float(sample.timestamp),
                               f"timestamp {float(sample.timestamp) * 1000:.0f} (ms)")
            except ValueError as exc:
                raise TelemetryFileError(path, f"{sample.name}: {exc}", _line_of(
                    text, sample.name, index, stamp=sample.timestamp)) from exc
            if index is None:
                raise TelemetryFileError(path, f"{sample.name} sample without a gpu label",
                                         _line_of(text, sample.name, None))
            member = sample.labels.get("Hostname") or sample.labels.get("instance") or ""
            slot = points.setdefault((member, index), {}).setdefault(float(sample.timestamp), {})
            if not math.isfinite(float(sample.value)) or sample.value < 0:
                raise TelemetryFileError(path, f"{sample.name} {sample.value} is not a "
                                               "measurement", _line_of(text, sample.name, index))
            slot[sample.name] = float(sample.value)
            if "modelName" in sample.labels:
                slot["_name"] = sample.labels["modelName"]  # type: ignore[assignment]
    members: Members = {}
    for (member, index), by_time in sorted(points.items()):
        gpu = members.setdefault(member, {}).setdefault(index, GpuHours(index))
        counts: dict[int, int] = {}
        for t, values in sorted(by_time.items()):
            used = values.get(DCGM_USED)
            free = values.get(DCGM_FREE)
            total = (used + free + values.get(DCGM_RESERVED, 0.0)
                     if used is not None and free is not None else None)
            util = values.get(DCGM_UTIL)
            if util is not None and not 0 <= util <= 100:
                raise TelemetryFileError(path, f"{DCGM_UTIL} {util:g} is not a percentage",
                                         _line_of(text, DCGM_UTIL, index))
            gpu.add_sample(t, util, used, total, counts)
            name = values.get("_name")
            if isinstance(name, str):
                gpu.name = name
    if not members:
        raise TelemetryFileError(path, f"no {DCGM_UTIL} / {DCGM_USED} samples")
    return members


def _line_of(text: str, name: str, index: str | None, *, untimed: bool = False,
             stamp: object = None) -> int | None:
    """The first line of sample ``name`` (of GPU ``index``; without a timestamp if
    ``untimed``; with a timestamp of ``stamp`` seconds): where a problem the parser cannot place
    was found."""
    needle = f'gpu="{index}"' if index is not None else None
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if needle is not None and needle not in line:
            continue
        fields = line.rsplit("}", 1)[-1].split()
        if untimed and len(fields) >= 2:
            continue
        if stamp is not None and not (len(fields) >= 2 and _same_ms(fields[1], stamp)):
            continue
        return n
    return None


def _same_ms(field: str, stamp: object) -> bool:
    try:
        return abs(float(field) / 1000.0 - float(str(stamp))) < 1e-3 * max(1.0, abs(
            float(field) / 1000.0))
    except ValueError:
        return False


def parse_file(path: Path, fmt: str | None = None) -> tuple[str, Members]:
    """(format, members) of a DCGM or nvidia-smi file; the format is sniffed when not given."""
    text = read_text(path)
    kind = fmt or sniff(text)
    if kind == "dcgm":
        return kind, parse_dcgm(text, str(path))
    if kind == "nvidia-smi":
        return kind, parse_nvidia_smi(text, str(path))
    raise TelemetryFileError(str(path), "not a DCGM exporter scrape or an nvidia-smi CSV log "
                                        "(format not recognised)", 1)
