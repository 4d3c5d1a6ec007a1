"""Hostile and awkward utilization inputs: paths that lead out of the tree, budgets met before
the work, CSV that is not CSV, logs written by Windows hosts. Each is an input error naming the
file (and line), bounded in time, and the rest of the run goes on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scanner.telemetry.files import TelemetryFileError, parse_file, parse_nvidia_smi
from scanner.telemetry.history import MAX_SAMPLES, load_history
from tests.test_telemetry_dcgm import appended

ROOT = Path(__file__).resolve().parents[1]
TF = ROOT / "tests" / "fixtures" / "telemetry" / "tf"
SECRET = "SECRET-GPU-NAME-7731"
NVIDIA = ("timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
          + "".join(f"2026/01/14 {h:02d}:00:00.000, 0, {{name}}, 3 %, 100 MiB, 23028 MiB\n"
                    for h in range(24)))


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    """A scanned tree (the Terraform fixture, a history file under ops/, one good DCGM log) and,
    beside it, a file the history must never reach."""
    repo = tmp_path / "repo"
    shutil.copytree(TF, repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text(NVIDIA.replace("{name}", SECRET))
    (repo / "ops" / "logs").mkdir(parents=True)
    (repo / "ops" / "logs" / "shared.prom").write_text(appended("g5-timesliced.prom"))
    (repo / "ops" / "logs" / "link.csv").symlink_to(outside / "secret.csv")
    history = {"gpuaudit_utilization": 1, "resources": {
        "aws_instance.mig": {"file": "../../outside/secret.csv"},
        "aws_instance.prof": {"file": str(outside / "secret.csv")},
        "aws_instance.ghost": {"file": "logs/link.csv"},
        "aws_instance.passwd": {"file": "../../../../../../../../etc/passwd"},
        "aws_instance.shared": {"file": "logs/shared.prom"},
    }}
    path = repo / "ops" / "history.json"
    path.write_text(json.dumps(history, indent=1))
    return repo, path


def test_history_paths_out_of_the_tree_are_input_errors_never_read(tmp_path: Path) -> None:
    _, path = _repo(tmp_path)
    loaded = load_history(path, 14)
    assert set(loaded.records) == {"aws_instance.shared"}
    refused = {"aws_instance.mig", "aws_instance.prof", "aws_instance.ghost",
               "aws_instance.passwd"}
    assert set(loaded.unreadable) == refused
    assert len(loaded.errors) == 4
    for err in loaded.errors:
        assert err.path == str(path) and err.line is not None
        assert "outside the directory of the history file" in err.reason
    text = json.dumps([loaded.records, loaded.unreadable, [e.reason for e in loaded.errors]])
    assert SECRET not in text and "root:" not in text


def test_no_report_format_carries_what_an_escaping_path_names(tmp_path: Path) -> None:
    repo, history = _repo(tmp_path)
    out = tmp_path / "out"
    formats = [a for f in ("json", "html", "sarif", "markdown", "csv", "junit", "table")
               for a in ("--format", f)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "scanner", "scan", str(repo), "--utilization",
                           str(history), "--output-dir", str(out), "--include-passed", *formats],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr  # input errors
    written = sorted(out.iterdir())
    assert len(written) >= 6
    for report in written:
        body = report.read_text(errors="replace")
        assert SECRET not in body and "root:x:" not in body, report.name
    assert SECRET not in proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    status = {(f["policy_id"], f["resource"]["id"]): f["status"] for f in doc["findings"]
              if f["policy_id"].startswith("RS-")}
    # the refused entries are not judged as idle or unmeasured: UNKNOWN, never PASS/FAIL
    assert {s for (p, r), s in status.items() if r in ("aws_instance.mig",
                                                       "aws_instance.prof")} == {"UNKNOWN"}
    assert status[("RS-002", "aws_instance.shared")] == "PASS"  # the good entry still runs


def test_a_history_over_the_sample_budget_is_refused_before_it_is_validated(
        tmp_path: Path) -> None:
    per_gpu = 1_500_000 // 8
    samples = ",".join(f"[{1768384800 - 60 * i}, 5, 100]" for i in range(per_gpu))
    gpus = ",".join(f'{{"index": {g}, "samples": [{samples}]}}' for g in range(8))
    path = tmp_path / "history.json"
    path.write_text(f'{{"gpuaudit_utilization": 1, "resources": {{"i-0a": {{"gpus": [{gpus}]}}}}}}')
    start = time.perf_counter()
    loaded = load_history(path, 14)
    assert time.perf_counter() - start < 20  # jsonschema would take minutes
    assert [e.reason for e in loaded.errors] == [
        f"more than {MAX_SAMPLES:,} samples: over the budget of a utilization history "
        "(aggregate them first); not read"]
    assert loaded.records == {}


def test_a_bad_sample_deep_in_a_history_is_found_by_the_fast_check(tmp_path: Path) -> None:
    samples = [[1768384800 - 60 * i, 5, 100] for i in range(5000)]
    samples[4321] = [1768384800, 140, 100]
    doc = {"gpuaudit_utilization": 1, "resources": {
        "i-0a": {"gpus": [{"index": 0, "samples": samples}]},
        "i-0b": {"gpus": [{"index": 0, "samples": samples[:10]}]}}}
    path = tmp_path / "history.json"
    path.write_text(json.dumps(doc, indent=1))
    loaded = load_history(path, 14)
    assert set(loaded.records) == {"i-0b"} and set(loaded.unreadable) == {"i-0a"}
    assert "resources.i-0a.gpus.0.samples.4321.1" in loaded.errors[0].reason


def test_an_unterminated_quote_in_an_nvidia_smi_log_is_an_input_error_naming_its_line() -> None:
    """The quoted field runs to the end of the file, past csv's field limit."""
    text = NVIDIA.replace("{name}", "NVIDIA A10G")
    text += '2026/01/15 00:00:00.000, 0, "NVIDIA A10G, 3 %, 100 MiB, 23028 MiB\n' + text * 200
    with pytest.raises(TelemetryFileError) as err:
        parse_nvidia_smi(text, "gpu.csv")
    assert err.value.line == 26 and "not CSV" in err.value.reason
    assert "unterminated quote" in err.value.reason


def test_an_unterminated_quote_is_found_whatever_csv_s_field_limit() -> None:
    """csv's field size limit is process-wide (Terraform's csvdecode raises it): the open
    quote is still an error, at its line, with a short file and a large limit."""
    import csv

    text = NVIDIA.replace("{name}", "NVIDIA A10G")
    text += '2026/01/15 00:00:00.000, 0, "NVIDIA A10G, 3 %, 100 MiB, 23028 MiB\n' + text * 2
    old = csv.field_size_limit(64 * 1024 * 1024)
    try:
        with pytest.raises(TelemetryFileError) as err:
            parse_nvidia_smi(text, "gpu.csv")
    finally:
        csv.field_size_limit(old)
    assert err.value.line == 26 and "unterminated quote" in err.value.reason


@pytest.mark.parametrize(("bom", "codec"), [
    (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"), (b"\xef\xbb\xbf", "utf-8"),
])
def test_logs_written_by_windows_hosts_are_decoded_by_their_bom(tmp_path: Path, bom: bytes,
                                                                 codec: str) -> None:
    """PowerShell's ``nvidia-smi ... > gpu.csv`` writes UTF-16 with a BOM and CRLF lines."""
    path = tmp_path / "gpu.csv"
    path.write_bytes(bom + NVIDIA.replace("{name}", "NVIDIA A10G").replace(
        "\n", "\r\n").encode(codec))
    fmt, members = parse_file(path)
    gpu = members[""]["0"]
    assert fmt == "nvidia-smi" and len(gpu.util_mean) == 24 and gpu.name == "NVIDIA A10G"
    history = tmp_path / "history.json"
    history.write_bytes(bom + json.dumps({"gpuaudit_utilization": 1, "resources": {
        "i-0a": {"file": "gpu.csv"}}}).encode(codec))
    loaded = load_history(history, 14)
    assert loaded.errors == [] and set(loaded.records) == {"i-0a"}


def test_a_file_that_is_not_text_in_its_encoding_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "gpu.csv"
    path.write_bytes(b"timestamp, index, utilization.gpu\n2026/01/14 10:00:00, 0, \xff\xfe\xfd\n")
    with pytest.raises(TelemetryFileError) as err:
        parse_file(path)
    assert str(err.value).startswith(str(path)) and "not text" in err.value.reason
