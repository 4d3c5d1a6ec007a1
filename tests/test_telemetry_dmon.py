"""``nvidia-smi dmon`` logs (tests/fixtures/telemetry/dmon, in the layout dmon prints): the
columns from the repeated header, ``-o DT`` and ``-o T`` times, ``-`` values, and the logs that
cannot be placed in time refused with the line."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from pathlib import Path

import pytest

from scanner.telemetry.dmon import parse_dmon
from scanner.telemetry.files import TelemetryFileError, parse_file
from scanner.telemetry.history import load_utilization

DMON = Path(__file__).resolve().parent / "fixtures" / "telemetry" / "dmon"


def _utc(text: str) -> float:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp()


def test_dmon_date_time_with_utilization_and_memory_columns() -> None:
    fmt, members = parse_file(DMON / "g5-12xlarge-DT-um.log")
    gpus = members[""]
    assert fmt == "nvidia-smi-dmon" and sorted(gpus) == ["0", "1", "2", "3"]
    busy = gpus["1"]
    assert len(busy.util_mean) == 36 and min(busy.util_mean) == _utc("2026-01-14T00:00:00")
    assert max(busy.util_max.values()) == 62 + 25 and min(busy.util_mean.values()) == 62
    assert max(busy.mem_used_max.values()) == 18211  # fb (MiB), not the mem (bus) column
    assert set(gpus["3"].util_mean.values()) == {0.0}  # jpg "-" left out, sm still read


def test_dmon_time_of_day_only_is_dated_back_from_the_file_time(tmp_path: Path) -> None:
    path = tmp_path / "dmon.log"
    shutil.copy(DMON / "g4dn-T-u.log", path)
    stamp = _utc("2026-01-15T06:30:00")
    os.utime(path, (stamp, stamp))
    gpu = parse_file(path)[1][""]["0"]
    hours = sorted(gpu.util_mean)
    assert len(hours) == 34  # across midnight, one day later at each time that goes back
    assert hours[0] == _utc("2026-01-13T20:00:00") and hours[-1] == _utc("2026-01-15T05:00:00")
    assert set(gpu.util_max.values()) == {1.0, 2.0}


def test_dmon_without_time_is_refused_naming_the_line() -> None:
    with pytest.raises(TelemetryFileError) as err:
        parse_file(DMON / "g4dn-u.log")
    assert err.value.line == 3 and "-o DT" in err.value.reason


@pytest.mark.parametrize(("text", "line", "words"), [
    ("#Date Time gpu sm fb\n#YYYYMMDD HH:MM:SS Idx % MB\n 20260114 10:00:00 0 5\n", 3,
     "4 fields"),
    ("#Date Time gpu sm fb\n 20260114 10:00:00 0 500 1\n", 2, "above 100"),
    ("#Date Time gpu sm fb\n 20260114 25:00:00 0 5 1\n", 2, "HH:MM:SS"),
    ("#Date Time gpu sm fb\n 19700101 10:00:00 0 5 1\n", 2, "between 2000 and 2100"),
    ("#Date Time gpu enc dec\n 20260114 10:00:00 0 5 1\n", 2, "-s um"),
    (" 20260114 10:00:00 0 5 1\n#Date Time gpu sm fb\n", 1, "before any header"),
])
def test_bad_dmon_rows_are_input_errors(text: str, line: int, words: str) -> None:
    with pytest.raises(TelemetryFileError) as err:
        parse_dmon(text, "dmon.log", _utc("2026-01-15T00:00:00"))
    assert err.value.line == line and words in err.value.reason


def test_dmon_log_by_key(tmp_path: Path) -> None:
    loaded = load_utilization([f"aws_instance.big={DMON / 'g5-12xlarge-DT-um.log'}"], 14)
    assert loaded.errors == []
    gpus = loaded.records["aws_instance.big"]["Members"][0]["Gpus"]
    assert [g["Hours"] for g in gpus] == [36] * 4
    assert gpus[1]["UtilMax"] == 87.0 and gpus[1]["MemUsedMaxMiB"] == 18211.0
    assert loaded.records["aws_instance.big"]["Source"] == "nvidia-smi-dmon"
