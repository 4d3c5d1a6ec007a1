"""neuron-monitor captures (tests/fixtures/telemetry/neuron, one document each, repeated as a
capture appends them): per Neuron device its busiest core, idle cores measured as 0 %, an idle
inf2 said (never silent) when scanned, and the bad inputs refused with file and line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from scanner.model import Provenance, Resource, SourceKind, SourceResult
from scanner.telemetry import TELEMETRY
from scanner.telemetry.files import TelemetryFileError, parse_file
from scanner.telemetry.history import attach, load_utilization
from scanner.telemetry.neuron import parse_neuron_monitor

NEURON = Path(__file__).resolve().parent / "fixtures" / "telemetry" / "neuron"
END = 1768435200  # 2026-01-15T00:00:00Z
HOURS = 36


def capture(name: str, *, stamped: bool = True, every: int = 600) -> str:
    line = (NEURON / name).read_text().strip()
    start = END - HOURS * 3600
    return "".join((f"{t} " if stamped else "") + line + "\n"
                   for t in range(start, END, every))


def test_an_idle_inf2_is_measured_at_zero() -> None:
    members = parse_neuron_monitor(capture("inf2-idle.json"), "n.jsonl", END)
    (device,) = members["i-0dd3c47dea213fd30"].values()
    assert len(device.util_mean) == HOURS and set(device.util_max.values()) == {0.0}
    assert max(device.mem_used_max.values()) == 2048.0 and device.mem_total == 32768.0
    assert device.name == "inferentia2"


def test_trn1_devices_take_their_busiest_core_and_unused_devices_are_idle() -> None:
    members = parse_neuron_monitor(capture("trn1-busy.json"), "n.jsonl", END)
    devices = members["i-01db7a16f4c054239"]
    assert sorted(devices, key=int) == [str(d) for d in range(16)]
    assert set(devices["0"].util_max.values()) == {97.1}
    assert set(devices["1"].util_max.values()) == {91.0}  # cores 2 and 3: 91 and 0
    assert {max(devices[str(d)].util_max.values()) for d in range(2, 16)} == {0.0}
    assert devices["0"].mem_used_max == {}  # 16 devices: the runtime's bytes are not per device


def test_unstamped_documents_are_dated_back_from_the_file_time(tmp_path: Path) -> None:
    path = tmp_path / "neuron.jsonl"
    line = (NEURON / "inf2-idle.json").read_text().strip()
    path.write_text((line + "\n") * 200)
    os.utime(path, (END + 600, END + 600))
    fmt, members = parse_file(path)
    device = members["i-0dd3c47dea213fd30"]["0"]
    # one period (5.0007 s) per document, the last at the file's time (00:10): the first 995 s
    # before it, in the hour before
    assert fmt == "neuron-monitor" and sorted(device.util_mean) == [END - 3600, END]


def test_an_idle_inf2_scanned_with_its_capture_is_said(tmp_path: Path) -> None:
    path = tmp_path / "inf2.jsonl"
    path.write_text(capture("inf2-idle.json"))
    result = SourceResult(resources=[Resource(
        "ec2.instance", "aws_instance.infer", {"InstanceType": "inf2.xlarge"},
        Provenance(SourceKind.TERRAFORM_HCL, file="main.tf"), "stack", name=None,
        aliases=("aws_instance.infer",))])
    attach(result, load_utilization([f"aws_instance.infer={path}"], 14))
    assert result.errors == []
    assert [r.get("Source") for r in result.resources if r.kind == TELEMETRY] == [
        "neuron-monitor"]
    assert [n.message for n in result.notices] == [
        f"aws_instance.infer: NeuronCore utilization at most 0 % over {HOURS} hours "
        "(neuron-monitor); the right-sizing policies do not judge Neuron instances"]


@pytest.mark.parametrize(("edit", "words"), [
    (lambda d: d["neuron_runtime_data"][0]["report"]["neuroncore_counters"][
        "neuroncores_in_use"]["0"].update(neuroncore_utilization=250.0), "above 100"),
    (lambda d: d["neuron_runtime_data"][0]["report"]["neuroncore_counters"][
        "neuroncores_in_use"]["0"].update(neuroncore_utilization="high"), "not a measurement"),
    (lambda d: d.update(neuron_runtime_data={"pid": 1}), "not a list"),
])
def test_bad_documents_are_input_errors_naming_the_line(edit: object, words: str) -> None:
    doc = json.loads((NEURON / "inf2-idle.json").read_text())
    edit(doc)  # type: ignore[operator]
    text = (f"{END - 7200} " + (NEURON / "inf2-idle.json").read_text()
            + f"{END - 3600} " + json.dumps(doc) + "\n")
    with pytest.raises(TelemetryFileError) as err:
        parse_neuron_monitor(text, "n.jsonl", END)
    assert err.value.line == 2 and words in err.value.reason


def test_a_line_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "n.jsonl"
    shutil.copy(NEURON / "trn1-busy.json", path)
    with path.open("a") as f:
        f.write('{"neuron_runtime_data": [\n')
    with pytest.raises(TelemetryFileError) as err:
        parse_file(path)
    assert err.value.line == 2 and "not neuron-monitor JSON" in err.value.reason
