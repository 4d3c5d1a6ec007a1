"""Utilization files written on the GPU hosts: nvidia-smi CSV logs and DCGM exporter scrapes.

- nvidia-smi: ``nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,
  memory.total --format=csv -l 60 >> gpu.csv``. Units in the header (``[%]``, ``[MiB]``) and in
  the values are stripped; ``[N/A]`` / ``[Not Supported]`` leave that value out; a repeated
  header (several runs appended) is skipped; ``--format=csv,noheader,nounits`` is read in the
  documented column order. Timestamps without a zone are UTC.
- nvidia-smi dmon: ``nvidia-smi dmon -o DT -s um >> dmon.log`` (``scanner.telemetry.dmon``).
- DCGM exporter: Prometheus text exposition or OpenMetrics with a timestamp on every sample
  (append scrapes: ``curl -s host:9400/metrics | awk -v t=$(date +%s%3N) '/^DCGM_FI_/
  {print $0, t}' >> dcgm.prom``, or a Prometheus export). Streamed line by line
  (``scanner.telemetry.dcgm``: MIG, time-slicing, host labels, profiling fields).

Text is decoded by its byte-order mark (UTF-8, UTF-8 with BOM, UTF-16 LE/BE as Windows writes).
A malformed file raises :class:`TelemetryFileError` naming the file and line.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from scanner.telemetry.aggregate import GpuHours, plausible_time
from scanner.telemetry.members import Members, TelemetryFileError

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


def read_text(path: Path) -> str:
    """The text of a telemetry file (UTF-8, UTF-8 with BOM, UTF-16/32 by BOM, as Windows hosts
    write logs), within the byte budget; a FIFO or device is refused, never waited on."""
    from scanner.inputs.safe_read import ReadError, decode_text, read_regular

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise TelemetryFileError(str(path), f"{size} bytes: larger than the "
                                                f"{MAX_FILE_BYTES} byte budget of a telemetry file")
        # a regular file only: a FIFO named gpu.csv would block the run forever
        return decode_text(read_regular(path, limit=MAX_FILE_BYTES))
    except ReadError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.reason}") from None
    except OSError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TelemetryFileError(str(path), f"not text in {exc.encoding}: {exc.reason}") from exc


def stream_lines(path: Path) -> tuple[Iterator[str], bool]:
    """The lines of a large telemetry file, decoded by BOM as they are read (never the whole
    file in memory), and whether it is OpenMetrics (it ends in ``# EOF``: seconds, not
    milliseconds). A line longer than the DCGM line budget is returned cut (and refused)."""
    from scanner.inputs.safe_read import ReadError, encoding_of, read_head
    from scanner.inputs.safe_read import _open as open_regular
    from scanner.telemetry.dcgm import MAX_LINE_CHARS

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise TelemetryFileError(str(path), f"{size} bytes: larger than the "
                                                f"{MAX_FILE_BYTES} byte budget of a telemetry file")
        codec, skip = encoding_of(read_head(path, 512))
        fd = open_regular(path)
    except ReadError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.reason}") from None
    except OSError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    raw = os.fdopen(fd, "rb")
    try:
        raw.seek(max(skip, size - 64 - (size - skip) % 2))
        openmetrics = raw.read().decode(codec, errors="ignore").rstrip().endswith("# EOF")
        raw.seek(skip)
    except OSError as exc:
        raw.close()
        raise TelemetryFileError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    text = io.TextIOWrapper(raw, encoding=codec, newline=None)

    def lines() -> Iterator[str]:
        with text:
            read = 0
            while True:
                try:
                    line = text.readline(MAX_LINE_CHARS + 1)
                except UnicodeDecodeError as exc:
                    raise TelemetryFileError(str(path), f"not text in {codec}: "
                                                        f"{exc.reason}") from exc
                if not line:
                    return
                read += len(line)
                if read > MAX_FILE_BYTES:  # grew while being read
                    raise TelemetryFileError(str(path), "grew past the byte budget while read")
                yield line

    return lines(), openmetrics


def sniff(text: str) -> str | None:
    """"dcgm", "nvidia-smi" or None, from the first lines of a file."""
    head = text[:4096]
    if '"metric_stream_name"' in head and '"metric_name"' in head:
        return "cloudwatch-metric-stream"
    if head.lstrip("\ufeff \t\r\n0123456789.:TZ+-")[:1] in ("{", "[") and (
            "neuron_runtime_data" in head or "neuron_hardware_info" in head
            or "instance_info" in head):
        return "neuron-monitor"
    if "DCGM_FI_" in head:
        return "dcgm"
    if re.search(r"^#\s*(date\s+)?(time\s+)?gpu\s", head, re.I | re.M):
        return "nvidia-smi-dmon"
    first = head.lstrip("\ufeff \t\r\n").split("\n", 1)[0].lower()
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
    header = _Header()
    rows = csv.reader(io.StringIO(text), skipinitialspace=True)
    while True:
        start = rows.line_num + 1
        try:
            row = next(rows)
        except StopIteration:
            break
        except csv.Error as exc:  # an unterminated quote swallowing the rest of the file
            raise TelemetryFileError(path, f"not CSV from this line on: {exc} (an unterminated "
                                           "quote?)", start) from None
        if rows.line_num > start:
            # nvidia-smi writes one sample a line: a record spanning lines is a quote left open
            # (whatever csv's process-wide field size limit happens to be)
            raise TelemetryFileError(path, f"not CSV from this line on: a quoted field runs "
                                           f"over {rows.line_num - start + 1} lines (an "
                                           "unterminated quote?)", start)
        _nvidia_row(row, start, path, gpus, counts, header)
    if not gpus:
        raise TelemetryFileError(path, "no nvidia-smi samples")
    return {"": gpus}


@dataclass
class _Header:
    columns: dict[str, int] | None = None
    units: dict[str, str] = field(default_factory=dict)


def _nvidia_row(row: list[str], line: int, path: str, gpus: dict[str, GpuHours],
                counts: dict[str, dict[int, int]], header: _Header) -> None:
    if not row or all(not c.strip() for c in row):
        return
    names = [_HEADER_UNIT.sub("", c).strip().lower() for c in row]
    if "timestamp" in names:
        missing = [c for c in ("timestamp", "index", "utilization.gpu") if c not in names]
        if missing:
            raise TelemetryFileError(path, f"header lacks {', '.join(missing)}", line)
        header.columns = {name: i for i, name in enumerate(names)}
        header.units = {name: m.group(1).strip().lower()
                        for name, c in zip(names, row, strict=True)
                        if name in _UNITS_OF and (m := _HEADER_UNIT.search(c))
                        and m.group(1).strip()}
        wrong = [f"{n} [{u}]" for n, u in header.units.items() if u not in _UNITS_OF[n]]
        if wrong:
            raise TelemetryFileError(path, f"header unit not one of its column: "
                                           f"{', '.join(wrong)}", line)
        return
    cols = header.columns or {name: i for i, name in enumerate(NVIDIA_COLUMNS)}
    units = header.units
    if len(row) < len(cols):
        raise TelemetryFileError(path, f"{len(row)} fields where the header has "
                                       f"{len(cols)}", line)

    def cell(name: str) -> str | None:
        i = cols.get(name)
        return row[i] if i is not None else None

    try:
        t = _timestamp(cell("timestamp") or "")
        index = str(int(_number(cell("index") or "") or 0))
        util = _number(cell("utilization.gpu") or "", "utilization.gpu",
                       units.get("utilization.gpu"))
        used = _number(cell("memory.used") or "", "memory.used", units.get("memory.used"))
        total = _number(cell("memory.total") or "", "memory.total", units.get("memory.total"))
    except ValueError as exc:
        raise TelemetryFileError(path, f"not a nvidia-smi sample: {exc}", line) from exc
    if util is not None and util > 100:
        raise TelemetryFileError(path, f"utilization {util:g} % is above 100", line)
    gpu = gpus.setdefault(index, GpuHours(index, name=(cell("name") or "").strip() or None))
    gpu.add_sample(t, util, used, total, counts.setdefault(index, {}))


def parse_dcgm(text: str, path: str) -> Members:
    """A DCGM exporter exposition held in memory (``scanner.telemetry.dcgm``)."""
    return read_dcgm(io.StringIO(text), path, openmetrics=text.rstrip().endswith("# EOF"))


def read_dcgm(lines: Iterable[str], path: str, *, openmetrics: bool) -> Members:
    from scanner.telemetry.dcgm import DcgmError, read_lines

    try:
        return read_lines(lines, seconds=openmetrics)
    except DcgmError as exc:
        raise TelemetryFileError(path, exc.reason, exc.line) from None


def parse_file(path: Path, fmt: str | None = None) -> tuple[str, Members]:
    """(format, members) of a DCGM, nvidia-smi CSV or dmon file; the format is sniffed when
    not given. A DCGM file is streamed (its budgets apply as it is read)."""
    kind = fmt or sniff(_head(path))
    if kind == "dcgm":
        lines, openmetrics = stream_lines(path)
        return kind, read_dcgm(lines, str(path), openmetrics=openmetrics)
    if kind == "nvidia-smi":
        return kind, parse_nvidia_smi(read_text(path), str(path))
    if kind == "cloudwatch-metric-stream":
        from scanner.telemetry.metric_stream import parse_metric_stream

        return kind, parse_metric_stream(read_text(path), str(path))
    if kind == "neuron-monitor":
        from scanner.telemetry.neuron import parse_neuron_monitor

        return kind, parse_neuron_monitor(read_text(path), str(path), _mtime(path))
    if kind == "nvidia-smi-dmon":
        from scanner.telemetry.dmon import parse_dmon

        return kind, parse_dmon(read_text(path), str(path), _mtime(path))
    raise TelemetryFileError(str(path), "not a DCGM exporter scrape, an nvidia-smi CSV or dmon "
                                        "log, a neuron-monitor capture or a CloudWatch metric "
                                        "stream (format not recognised)", 1)


def _head(path: Path) -> str:
    from scanner.inputs.safe_read import ReadError, decode_head, read_head

    try:
        return decode_head(read_head(path, 8192))
    except ReadError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.reason}") from None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError as exc:
        raise TelemetryFileError(str(path), f"cannot read: {exc.strerror or exc}") from exc
