"""What every utilization file reader returns (``Members``: member id, "" when the file is one
host, -> GPU index -> hourly points) and raises (``TelemetryFileError``, naming the file and
line). Its own module so that the format readers (nvidia-smi, DCGM, dmon, neuron-monitor,
Metric Streams) and the dispatcher in ``files`` that chooses among them do not import each
other."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.telemetry.aggregate import GpuHours

Members = dict[str, dict[str, GpuHours]]


@dataclass
class TelemetryFileError(Exception):
    path: str
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.reason}"
