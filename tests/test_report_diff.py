"""`gpuaudit report diff`: new, fixed, newly suppressed and unchanged failing findings between
two runs of the same configuration, matched by fingerprint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from scanner.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[1] / "scanner/cli/demo/examples/terraform/main.tf"


def gpuaudit(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def scan(repo: Path, out: Path) -> None:
    res = gpuaudit("scan", str(repo), "--format", "json", "-o", str(out), "-q")
    assert res.exit_code in (0, 1), res.output


def diff(old: Path, new: Path, *extra: str) -> tuple[Result, dict[str, Any]]:
    res = gpuaudit("report", "diff", str(old), str(new), "--format", "json", *extra)
    return res, json.loads(res.stdout)


def keys(findings: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(f["policy_id"], f["resource"]["address"]) for f in findings}


def test_a_night_of_changes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(EXAMPLE, repo / "main.tf")
    scan(repo, tmp_path / "monday.json")
    text = (repo / "main.tf").read_text()
    text = text.replace("  size              = 200\n",  # fixes EBS-001 on the volume
                        "  size              = 200\n  encrypted         = true\n")
    text = text.replace('max_price = "0.75"', 'max_price = "0.10"')  # SPOT-002: too low now
    text = text.replace(  # mutes ASG-002 with a reason
        'resource "aws_autoscaling_group" "inference" {',
        '# gpuaudit:skip=ASG-002:one type is all the quota allows (ticket CAP-7)\n'
        'resource "aws_autoscaling_group" "inference" {')
    (repo / "main.tf").write_text(text)
    scan(repo, tmp_path / "tuesday.json")

    res, d = diff(tmp_path / "monday.json", tmp_path / "tuesday.json")
    assert res.exit_code == 0, res.output  # the new FAIL is medium; --fail-on high
    assert keys(d["new_findings"]) == {("SPOT-002", "aws_launch_template.inference")}
    assert keys(d["fixed_findings"]) == {("EBS-001", "aws_ebs_volume.models"),
                                         ("SPOT-001", "aws_launch_template.inference")}
    assert keys(d["suppressed_findings"]) == {("ASG-002", "aws_autoscaling_group.inference")}
    # unchanged: EBS-002, VPC-002, VPC-003 and SPOT-001 on the group
    assert d["counts"] == {"new": 1, "fixed": 2, "suppressed": 1, "unchanged": 4}
    assert d["warnings"] == []
    # the fixed SPOT-001 was an exposure (worst-case overspend), never added to the savings;
    # the template is launched by the group whose own SPOT-001 stays, so the capacity was
    # counted once, at the group, before and after
    assert d["exposure_usd_month"]["old"] == d["exposure_usd_month"]["new"] > 0

    res, _ = diff(tmp_path / "monday.json", tmp_path / "tuesday.json", "--fail-on", "medium")
    assert res.exit_code == 1

    table = gpuaudit("report", "diff", str(tmp_path / "monday.json"),
                     str(tmp_path / "tuesday.json"))
    assert "1 new, 2 fixed, 1 newly suppressed, 4 unchanged" in table.stdout
    assert "SPOT-002" in table.stdout.split("fixed:")[0]
    md = gpuaudit("report", "diff", str(tmp_path / "monday.json"),
                  str(tmp_path / "tuesday.json"), "--format", "markdown")
    assert "### New" in md.stdout and "| medium | SPOT-002 |" in md.stdout

    # the other way round: what was fixed or muted comes back as new
    res, back = diff(tmp_path / "tuesday.json", tmp_path / "monday.json")
    assert keys(back["new_findings"]) == keys(d["fixed_findings"] + d["suppressed_findings"])
    assert keys(back["fixed_findings"]) == keys(d["new_findings"])
    assert res.exit_code == 1  # EBS-001 is high


def test_different_inputs_and_unreadable_reports(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(EXAMPLE, repo / "main.tf")
    scan(repo, tmp_path / "old.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    scan(empty, tmp_path / "new.json")
    _, d = diff(tmp_path / "old.json", tmp_path / "new.json")
    assert d["counts"]["fixed"] > 0
    assert any("cover different inputs" in w for w in d["warnings"])
    (tmp_path / "bad.json").write_text("[]")
    res = gpuaudit("report", "diff", str(tmp_path / "old.json"), str(tmp_path / "bad.json"))
    assert res.exit_code == 2
    assert "bad.json" in res.stderr and "Traceback" not in res.output
