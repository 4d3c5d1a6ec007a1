"""--warn-on: the terminal table lists the failing findings at or above it and counts the rest;
the report files keep everything, an ERROR is always listed, and the exit code is --fail-on's.
The pre-commit hook passes --warn-on medium (a passing commit shows what matters)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from scanner.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
TF = '''resource "aws_launch_template" "gpu" {
  name_prefix   = "gpu"
  instance_type = "g5.xlarge"
  instance_market_options {
    market_type = "spot"
    spot_options { max_price = "5.0" }
  }
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs { encrypted = true }
  }
}
'''


def _scan(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "main.tf").write_text(TF)
    res = CliRunner().invoke(cli, ["scan", str(tmp_path / "main.tf"), "--policy",
                                   "SPOT-001,EBS-003", *args])
    return res.exit_code, res.output


def test_findings_below_warn_on_are_counted_not_listed(tmp_path: Path) -> None:
    code, out = _scan(tmp_path, "--warn-on", "high")
    assert code == 0
    assert "SPOT-001" not in out.split("Not listed")[0]  # medium, below high
    assert "Not listed, below --warn-on high: 1 medium, 1 low" in " ".join(out.split())
    code, out = _scan(tmp_path, "--warn-on", "medium")
    assert "SPOT-001" in out and "EBS-003" not in out.split("Not listed")[0]
    assert "1 low" in out


def test_without_warn_on_everything_is_listed_and_files_keep_all(tmp_path: Path) -> None:
    _, out = _scan(tmp_path)
    assert "SPOT-001" in out and "EBS-003" in out and "Not listed" not in out
    report = tmp_path / "r.json"
    _scan(tmp_path, "--warn-on", "critical", "--format", "json", "--output",
                      str(report))
    assert {f["policy_id"] for f in json.loads(report.read_text())["findings"]} == {
        "SPOT-001", "EBS-003"}


def test_the_exit_code_is_fail_on_s(tmp_path: Path) -> None:
    code, _ = _scan(tmp_path, "--warn-on", "critical", "--fail-on", "medium")
    assert code == 1  # SPOT-001 fails at medium, whether or not it is listed


def test_the_hook_passes_warn_on_medium() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["args"] == ["--warn-on", "medium"] and hook["verbose"] is True
