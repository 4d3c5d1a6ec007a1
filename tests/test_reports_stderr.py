"""Errors are said on stderr (stdout may be piped), and the table on stdout lists them as the
table written to a file does: a run that could not read something never prints a clean table; a
report written to files still prints the table, whichever formats the files are."""

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


def test_a_path_that_does_not_exist_is_said_on_stderr_and_in_the_table(tmp_path: Path) -> None:
    proc = gpuaudit("scan", "/nope", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "gpuaudit: error: /nope: no such file or directory\n"
    # the table on stdout lists it, and says nothing of a clean run
    assert "Errors (1):\n  [input] /nope: no such file or directory" in proc.stdout
    assert proc.stdout.startswith("Not everything was read: 1 input error (see Errors)")
    assert "No failing" not in proc.stdout and "1 input error (not read)" in proc.stdout
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
    # the table printed is the table written: the ERROR verdict and the input error's section
    written = (out / "report.txt").read_text(encoding="utf-8")
    assert "Errors (1):" in written and "[input] bad.tf:2: syntax error" in written
    assert proc.stdout == written and "ERROR       EBS-001" in proc.stdout


NODE_POOL_BAD = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: [gpu\nspec: {}\n"


def test_the_table_on_stdout_lists_every_input_error_as_the_file_does(tmp_path: Path) -> None:
    """More input errors than stderr says one by one: the table on stdout is the table written
    to a file (its Errors section whole), and stderr's count names where they are listed."""
    (tmp_path / "main.tf").write_text(VOLUME)
    for i in range(23):
        (tmp_path / f"pool{i:02}.yaml").write_text(NODE_POOL_BAD)
    proc = gpuaudit("scan", ".", "--fail-on", "none", "--include-passed", "--deterministic",
                    cwd=tmp_path)
    assert proc.returncode == 2
    assert "Errors (23):" in proc.stdout and proc.stdout.count("[input] pool") == 23
    assert "No failing, unknown, errored" not in proc.stdout
    assert "Summary: 1 FAIL (failing: 1 high); 23 input errors (not read)." in proc.stdout
    said = proc.stderr.splitlines()
    assert len(said) == 21 and said[-1] == ("gpuaudit: error: ... and 3 more input errors "
                                            "(the table's Errors section lists them all)")
    written = tmp_path / "report.txt"
    to_file = gpuaudit("scan", ".", "--fail-on", "none", "--include-passed", "--deterministic",
                       "-o", str(written), cwd=tmp_path)
    assert to_file.returncode == 2 and to_file.stdout == proc.stdout
    assert written.read_text(encoding="utf-8") == proc.stdout
    assert to_file.stderr.splitlines()[-1].endswith("(the report lists them all)")
    # --quiet prints no table: stderr does not say that one lists them
    quiet = gpuaudit("scan", ".", "-q", cwd=tmp_path)
    assert quiet.returncode == 2 and quiet.stdout == ""
    assert quiet.stderr.splitlines()[-1].endswith(
        "(run without --quiet, or with --output, to list them all)")
    # another format on stdout: the report itself lists them
    as_json = gpuaudit("scan", ".", "--format", "json", cwd=tmp_path)
    assert as_json.returncode == 2 and as_json.stdout.count('"kind": "input"') == 23
    assert as_json.stderr.splitlines()[-1].endswith("(the report on stdout lists them all)")


def test_a_clean_run_still_says_so(tmp_path: Path) -> None:
    """The negative: nothing unread, nothing failing: the clean line, no Errors section."""
    (tmp_path / "x.yaml").write_text("just: data\n")
    proc = gpuaudit("scan", ".", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("No failing, unknown, errored or suppressed findings.")
    assert "Errors (" not in proc.stdout and "input error" not in proc.stdout
