"""neuron-monitor captures (tests/fixtures/telemetry/neuron, one document each, repeated as a
capture appends them): per Neuron device its busiest core, idle cores measured as 0 %, an idle
inf2 judged idle by RS-002 at its full price when scanned (a busy trn1 not), and the bad inputs
refused with file and line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.telemetry import TELEMETRY
from scanner.telemetry.files import TelemetryFileError, parse_file
from scanner.telemetry.history import attach, load_utilization
from scanner.telemetry.neuron import parse_neuron_monitor

ROOT = Path(__file__).resolve().parents[1]
NEURON = ROOT / "tests" / "fixtures" / "telemetry" / "neuron"
RS = ("RS-001", "RS-002", "RS-003")
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


def _scan(tmp_path: Path, captures: dict[str, str]) -> dict[tuple[str, str], Any]:
    result = load_terraform_dir([NEURON])
    assert result.errors == []
    specs = []
    for key, name in captures.items():
        path = tmp_path / f"{key.rsplit('.', 1)[-1]}.jsonl"
        path.write_text(capture(name))
        specs.append(f"{key}={path}")
    attach(result, load_utilization(specs, 14))
    assert result.errors == [] and result.notices == []
    assert {r.get("Source") for r in result.resources if r.kind == TELEMETRY} == {
        "neuron-monitor"}
    return {(f.policy_id, f.resource["id"]): f for f in evaluate(result.resources,
                                                                 policy_ids=RS)}


def test_an_idle_inf2_is_idle_and_a_busy_trn1_is_not(tmp_path: Path) -> None:
    """RS-002 judges Neuron devices as it judges GPUs: the inf2 whose cores stayed at 0 % is idle
    at its full price; the trn1 with two busy devices of 16 is not; the inf1 without a capture
    has no data (RS-003). RS-001 computes no move between Neuron types (none is given)."""
    found = _scan(tmp_path, {"aws_instance.infer": "inf2-idle.json",
                             "aws_instance.train": "trn1-busy.json"})
    status = {k: f.status.value for k, f in found.items()}
    assert status == {("RS-002", "aws_instance.infer"): "FAIL",
                      ("RS-003", "aws_instance.infer"): "PASS",
                      ("RS-002", "aws_instance.train"): "PASS",
                      ("RS-003", "aws_instance.train"): "PASS",
                      ("RS-003", "aws_instance.unmeasured"): "FAIL"}
    idle = found[("RS-002", "aws_instance.infer")]
    assert idle.savings is not None and idle.savings.usd_month == pytest.approx(0.7582 * 730,
                                                                                abs=0.01)
    assert "on-demand inf2.xlarge us-east-1" in idle.savings.basis
    assert f"every Neuron device at or below 5% for {HOURS} hours" in idle.message
    busy = found[("RS-002", "aws_instance.train")]
    assert busy.savings is None and "reached 97%" in busy.message
    assert "no accelerator utilization" in found[("RS-003", "aws_instance.unmeasured")].message


def test_a_neuron_capture_too_short_is_rs003_not_idle(tmp_path: Path) -> None:
    path = tmp_path / "inf2.jsonl"
    line = (NEURON / "inf2-idle.json").read_text().strip()
    path.write_text("".join(f"{t} {line}\n" for t in range(END - 10 * 3600, END, 600)))
    result = load_terraform_dir([NEURON])
    attach(result, load_utilization([f"aws_instance.infer={path}"], 14))
    found = {(f.policy_id, f.resource["id"]): f.status.value
             for f in evaluate(result.resources, policy_ids=RS)}
    assert found[("RS-003", "aws_instance.infer")] == "FAIL"
    assert ("RS-002", "aws_instance.infer") not in found  # 10 hours: not judged idle


def test_scan_cli_books_the_idle_inf2_at_its_full_price(tmp_path: Path) -> None:
    path = tmp_path / "inf2.jsonl"
    path.write_text(capture("inf2-idle.json"))
    out = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "-m", "scanner", "scan", str(NEURON),
                          "--utilization", f"aws_instance.infer={path}", "--format", "json",
                          "-o", str(out)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert run.returncode == 1, run.stderr  # high FAILs (RS-002 among them)
    report = json.loads(out.read_text())
    rs = {(f["policy_id"], f["resource"]["id"]): f for f in report["findings"]
          if f["policy_id"].startswith("RS-")}
    assert rs[("RS-002", "aws_instance.infer")]["status"] == "FAIL"
    assert rs[("RS-002", "aws_instance.infer")]["savings"]["usd_month"] == 553.49
    assert report["summary"]["savings_usd_month"] == 553.49
    # the trn1 without a capture: not measured (said by RS-003), never idle
    assert ("RS-002", "aws_instance.train") not in rs
    assert rs[("RS-003", "aws_instance.train")]["status"] == "FAIL"
    assert report["notices"] == []


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


def test_a_runtime_whose_counters_failed_is_not_read_as_idle() -> None:
    """neuron-monitor writes ``error`` where it could not read a runtime's counters: that
    document says nothing of the cores' use, so it gives no point (the hours it covers are not
    idle hours); the documents that read well still count."""
    doc = json.loads((NEURON / "trn1-busy.json").read_text())
    for runtime in doc["neuron_runtime_data"]:
        runtime["report"]["neuroncore_counters"] = {
            "period": 5.0, "error": "failed to get neuroncore counters"}
    failed = json.dumps(doc)
    good = (NEURON / "trn1-busy.json").read_text().strip()
    text = "".join(f"{t} {failed if (t // 3600) % 2 else good}\n"
                   for t in range(END - 4 * 3600, END, 600))
    devices = parse_neuron_monitor(text, "n.jsonl", END)["i-01db7a16f4c054239"]
    hours = sorted(devices["0"].util_mean)
    assert len(hours) == 2 and all((h // 3600) % 2 == 0 for h in hours)
    assert set(devices["0"].util_max.values()) == {97.1}
    only_failed = "".join(f"{t} {failed}\n" for t in range(END - 4 * 3600, END, 600))
    devices = parse_neuron_monitor(only_failed, "n.jsonl", END)["i-01db7a16f4c054239"]
    assert all(d.util_mean == {} for d in devices.values())  # not measured, never 0 %
