"""Errors go to stderr, never stdout (where the table or a report may be piped); a report
written to files still prints the table, whichever formats the files are."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VOLUME = ('resource "aws_ebs_volume" "scratch" {\n  availability_zone = "us-east-1a"\n'
          '  size = 10\n}\n')


def gpuaudit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("COLUMNS", None)
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_path_that_does_not_exist_is_said_on_stderr_only(tmp_path: Path) -> None:
    proc = gpuaudit("scan", "/nope", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "gpuaudit: error: /nope: no such file or directory\n"
    assert "nope" not in proc.stdout and "Errors (" not in proc.stdout
    assert proc.stdout.startswith("No failing")  # the table itself still goes to stdout
    # a report asked for keeps the error: it is part of the document, not a message
    proc = gpuaudit("scan", "/nope", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2 and '"reason": "no such file or directory"' in proc.stdout
    assert proc.stderr == "gpuaudit: error: /nope: no such file or directory\n"


def test_table_to_output_dir_is_printed_too(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(VOLUME)
    out = tmp_path / "out"
    proc = gpuaudit("scan", "main.tf", "--format", "table", "--format", "json",
                    "--output-dir", str(out), "--deterministic", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    written = (out / "report.txt").read_text(encoding="utf-8")
    assert "EBS-001" in written and (out / "report.json").is_file()
    assert proc.stdout == written  # printed as well as written
    assert proc.stderr == ""
    # one format, the table, into a directory: printed too
    proc = gpuaudit("scan", "main.tf", "--format", "table", "--output-dir", str(out),
                    cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == written
    # --quiet prints nothing, and still writes
    (out / "report.txt").unlink()
    proc = gpuaudit("scan", "main.tf", "--format", "table", "--output-dir", str(out), "-q",
                    cwd=tmp_path)
    assert proc.stdout == "" and (out / "report.txt").read_text(encoding="utf-8") == written


def test_errors_of_a_scan_written_to_files(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(VOLUME)
    (tmp_path / "bad.tf").write_text('resource "aws_ebs_volume" {\n')
    out = tmp_path / "out"
    proc = gpuaudit("scan", ".", "--format", "table", "--output-dir", str(out), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "gpuaudit: error: bad.tf:2: syntax error: missing }\n"
    # the table printed: the ERROR verdict it caused, not the input error's own section
    assert "Errors (" not in proc.stdout and "ERROR       EBS-001" in proc.stdout
    written = (out / "report.txt").read_text(encoding="utf-8")
    assert "Errors (1):" in written and "[input] bad.tf:2: syntax error" in written
