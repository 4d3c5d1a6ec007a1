"""The three telemetry file formats (nvidia-smi CSV, DCGM exporter scrapes, the history file),
from samples written here, with their bad-input cases: an input error naming file and line, the
rest of the run going on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.model import Provenance, Resource, SourceKind, SourceResult
from scanner.telemetry import COVERAGE, TELEMETRY
from scanner.telemetry.aggregate import Window, percentile
from scanner.telemetry.files import TelemetryFileError, parse_dcgm, parse_file, parse_nvidia_smi
from scanner.telemetry.history import attach, load_history, load_utilization

NVIDIA = """timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]
2026/01/14 10:00:00.000, 0, Tesla T4, 10 %, 1000 MiB, 15360 MiB
2026/01/14 10:30:00.000, 0, Tesla T4, 30 %, 3000 MiB, 15360 MiB
2026/01/14 10:00:00.000, 1, Tesla T4, [N/A], [N/A], 15360 MiB
2026/01/14 11:00:00.000, 0, Tesla T4, 50 %, 2000 MiB, 15360 MiB
timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]
2026/01/14 12:00:00.000, 0, Tesla T4, 70 %, 2500 MiB, 15360 MiB
"""

DCGM = """# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",Hostname="node-1",modelName="A10G"} 40 1768384800000
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-b",Hostname="node-2",modelName="NVIDIA A10G"} 2 1768384800000
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-a",Hostname="node-1"} 8000 1768384800000
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-a",Hostname="node-1"} 14000 1768384800000
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a",Hostname="node-1",modelName="A10G"} 60 1768388400000
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-a",Hostname="node-1"} 1700 1768388400000
"""


def test_nvidia_smi_units_na_and_repeated_header() -> None:
    members = parse_nvidia_smi(NVIDIA, "gpu.csv")
    gpus = members[""]
    assert sorted(gpus) == ["0", "1"]
    g0 = gpus["0"]
    hours = sorted(g0.util_mean)
    assert [g0.util_mean[h] for h in hours] == [20.0, 50.0, 70.0]  # 10:00 and 10:30 averaged
    assert [g0.util_max[h] for h in hours] == [30.0, 50.0, 70.0]
    assert max(g0.mem_used_max.values()) == 3000.0 and g0.mem_total == 15360.0
    assert g0.name == "Tesla T4"
    assert gpus["1"].util_mean == {} and gpus["1"].mem_total == 15360.0  # [N/A] left out


def test_nvidia_smi_without_header_uses_the_documented_order() -> None:
    text = "2026/01/14 10:00:00.000, 0, Tesla T4, 12, 100, 15360\n"
    assert parse_nvidia_smi(text, "x.csv")[""]["0"].util_mean


@pytest.mark.parametrize(("text", "line", "words"), [
    (NVIDIA + "2026/01/14 13:00:00.000, 0, Tesla T4, lots %, 1 MiB, 2 MiB\n", 8, "not a nvidia"),
    (NVIDIA + "yesterday, 0, Tesla T4, 1 %, 1 MiB, 2 MiB\n", 8, "not a nvidia"),
    (NVIDIA + "2026/01/14 13:00:00.000, 0\n", 8, "fields"),
    (NVIDIA + "2026/01/14 13:00:00.000, 0, Tesla T4, 250 %, 1 MiB, 2 MiB\n", 8, "above 100"),
    (NVIDIA + "2026/01/14 13:00:00.000, 0, Tesla T4, nan %, 1 MiB, 2 MiB\n", 8, "measurement"),
    (NVIDIA + "2026/01/14 13:00:00.000, 0, Tesla T4, 5 %, inf MiB, 2 MiB\n", 8, "measurement"),
    ("timestamp, name\n", 1, "header lacks"),
    ("timestamp, index, utilization.gpu [%]\n", None, "no nvidia-smi samples"),
])
def test_nvidia_smi_bad_input_names_the_line(text: str, line: int | None, words: str) -> None:
    with pytest.raises(TelemetryFileError) as err:
        parse_nvidia_smi(text, "gpu.csv")
    assert err.value.line == line
    assert words in err.value.reason
    assert str(err.value).startswith("gpu.csv")


def test_dcgm_by_host_and_gpu_with_total_memory() -> None:
    members = parse_dcgm(DCGM, "dcgm.prom")
    assert sorted(members) == ["node-1", "node-2"]
    g = members["node-1"]["0"]
    assert sorted(g.util_mean.values()) == [40.0, 60.0]
    assert g.mem_used_max and max(g.mem_used_max.values()) == 8000.0
    assert g.mem_total == 22000.0 and g.name == "A10G"
    assert list(members["node-2"]["0"].util_mean.values()) == [2.0]


@pytest.mark.parametrize(("text", "line", "words"), [
    ('DCGM_FI_DEV_GPU_UTIL{gpu="0" 12 1768384800000\n', 1, "not Prometheus text"),
    ('# TYPE x gauge\nDCGM_FI_DEV_GPU_UTIL{gpu="0"} 12 1768384800000\n'
     'DCGM_FI_DEV_GPU_UTIL{gpu="0"} twelve 1768384800000\n', 3, "not Prometheus text"),
    ('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 12\n', 1, "without a timestamp"),
    ('DCGM_FI_DEV_GPU_UTIL{Hostname="a"} 12 1768384800000\n', 1, "without a gpu label"),
    ('DCGM_FI_DEV_GPU_UTIL{gpu="3"} 140 1768384800000\n', 1, "not a percentage"),
    ('DCGM_FI_DEV_GPU_UTIL{gpu="3"} NaN 1768384800000\n', 1, "not a measurement"),
    ('DCGM_FI_DEV_FB_USED{gpu="0"} +Inf 1768384800000\n', 1, "not a measurement"),
    ('DCGM_FI_DEV_SM_CLOCK{gpu="0"} 12 1768384800000\n', None, "no DCGM_FI_DEV_GPU_UTIL"),
])
def test_dcgm_bad_input_names_the_line(text: str, line: int | None, words: str) -> None:
    with pytest.raises(TelemetryFileError) as err:
        parse_dcgm(text, "dcgm.prom")
    assert err.value.line == line, err.value
    assert words in err.value.reason


def test_format_is_sniffed_and_an_unknown_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.prom").write_text(DCGM)
    (tmp_path / "b.csv").write_text(NVIDIA)
    (tmp_path / "c.txt").write_text("hello\n")
    assert parse_file(tmp_path / "a.prom")[0] == "dcgm"
    assert parse_file(tmp_path / "b.csv")[0] == "nvidia-smi"
    with pytest.raises(TelemetryFileError, match="not recognised"):
        parse_file(tmp_path / "c.txt")
    with pytest.raises(TelemetryFileError, match="cannot read"):
        parse_file(tmp_path / "missing.csv")


def test_percentile_is_linear_interpolation() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)
    assert percentile([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_window_trend_has_at_most_56_points() -> None:
    assert Window.ending(1768435200, 14).bucket_seconds() == 6 * 3600
    assert Window.ending(1768435200, 60).bucket_seconds() // 3600 * 56 >= 60 * 24


# -- the history file --------------------------------------------------------------------------


def _history(tmp_path: Path, doc: object, name: str = "history.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=1) if not isinstance(doc, str) else doc)
    return path


def _samples(values: list[float]) -> list[list[object]]:
    return [[f"2026-01-14T{h:02d}:10:00Z", v, 1000.0] for h, v in enumerate(values)]


def test_history_samples_aggregates_members_and_files(tmp_path: Path) -> None:
    (tmp_path / "node.csv").write_text(NVIDIA)
    doc = {"gpuaudit_utilization": 1, "resources": {
        "aws_instance.a": {"gpus": [{"index": 0, "memory_total_mib": 16000,
                                     "samples": _samples([10, 20, 30, 40])}]},
        "i-0123": {"gpus": [{"index": 0, "hours": 300, "util_p95": 40, "util_max": 60,
                             "memory_used_max_mib": 4000, "memory_total_mib": 16000}]},
        "workers": {"members": [{"id": "i-1", "gpus": [{"index": 0, "samples": _samples([5])}]},
                                {"id": "i-2", "gpus": [{"index": 0, "samples": _samples([9])}]}]},
        "Trainer": {"file": "node.csv"},
    }}
    loaded = load_history(_history(tmp_path, doc), 14)
    assert loaded.errors == [] and loaded.unreadable == {}
    a = loaded.records["aws_instance.a"]
    gpu = a["Members"][0]["Gpus"][0]
    assert (gpu["Hours"], gpu["UtilMax"], gpu["UtilP50"], gpu["MemUsedMaxMiB"]) == (4, 40, 25, 1000)
    assert a["Hours"] == 4 and a["Trend"]["HoursPerPoint"] == 6
    assert loaded.records["i-0123"]["Members"][0]["Gpus"][0]["UtilP95"] == 40
    assert [m["Id"] for m in loaded.records["workers"]["Members"]] == ["i-1", "i-2"]
    assert loaded.records["Trainer"]["Source"] == "nvidia-smi"


@pytest.mark.parametrize(("text", "line", "words"), [
    ('{"gpuaudit_utilization": 1,\n "resources": {\n  "x": [}\n}', 3, "not valid JSON"),
    ('{"gpuaudit_utilization": 2, "resources": {}}', None, "gpuaudit_utilization"),
    ('{"gpuaudit_utilization": 1, "resources": {"a": {"gpus": [{"index": 0,\n'
     ' "samples": [[1768384800, NaN]]}]}}}', 2, "NaN is not a number"),
])
def test_history_that_cannot_be_read_is_one_error(tmp_path: Path, text: str, line: int | None,
                                                  words: str) -> None:
    path = _history(tmp_path, text)
    loaded = load_history(path, 14)
    assert len(loaded.errors) == 1
    err = loaded.errors[0]
    assert err.path == str(path) and err.line == line and words in err.reason
    assert loaded.records == {}


def test_a_bad_entry_is_unreadable_and_the_others_still_load(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text(NVIDIA + "2026/01/14 13:00:00.000, 0, T4, x %, 1, 2\n")
    doc = {"gpuaudit_utilization": 1, "resources": {
        "good": {"gpus": [{"index": 0, "samples": _samples([50])}]},
        "broken": {"gpus": [{"index": 0, "samples": [["2026-01-14T00:00:00Z", 140]]}]},
        "fromfile": {"file": "bad.csv"},
    }}
    loaded = load_history(_history(tmp_path, doc), 14)
    assert set(loaded.records) == {"good"}
    assert set(loaded.unreadable) == {"broken", "fromfile"}
    reasons = {(e.path.rsplit("/", 1)[-1], e.line) for e in loaded.errors}
    assert ("bad.csv", 8) in reasons
    schema_error = next(e for e in loaded.errors if e.path.endswith("history.json"))
    assert "resources.broken" in schema_error.reason and schema_error.line is not None


def _iac(rid: str, kind: str = "ec2.instance", scope: str = "stack") -> Resource:
    return Resource(kind, rid, {"InstanceType": "g5.xlarge"},
                    Provenance(SourceKind.TERRAFORM_HCL, file="main.tf"), scope,
                    name=None, aliases=(rid,))


def test_attach_puts_utilization_beside_its_resource_and_marks_every_scope(
        tmp_path: Path) -> None:
    doc = {"gpuaudit_utilization": 1, "resources": {
        "aws_instance.a": {"gpus": [{"index": 0, "samples": _samples([50])}]},
        "aws_instance.nowhere": {"gpus": [{"index": 0, "samples": _samples([50])}]}}}
    result = SourceResult(resources=[_iac("aws_instance.a"), _iac("aws_instance.b"),
                                     _iac("aws_instance.c", scope="other")])
    attach(result, load_utilization([str(_history(tmp_path, doc))], 14))
    telemetry = [r for r in result.resources if r.kind == TELEMETRY]
    assert [(r.scope, r.get("Target")) for r in telemetry] == [("stack", "aws_instance.a")]
    assert sorted(r.scope for r in result.resources if r.kind == COVERAGE) == ["other", "stack"]
    assert any("aws_instance.nowhere" in n.message for n in result.notices)


def test_attach_of_an_unreadable_file_leaves_a_gap_not_coverage(tmp_path: Path) -> None:
    result = SourceResult(resources=[_iac("aws_instance.a")])
    attach(result, load_utilization([str(_history(tmp_path, "{"))], 14))
    assert not [r for r in result.resources if r.kind in (COVERAGE, TELEMETRY)]
    assert result.gaps and TELEMETRY in result.gaps[0].kinds
    assert result.errors and result.errors[0].line == 1


def test_key_equals_file_form(tmp_path: Path) -> None:
    (tmp_path / "d.prom").write_text(DCGM)
    loaded = load_utilization([f"aws_autoscaling_group.w={tmp_path / 'd.prom'}"], 14)
    record = loaded.records["aws_autoscaling_group.w"]
    assert [m["Id"] for m in record["Members"]] == ["node-1", "node-2"]
