"""Small things a user meets on the command line: policy selection by comma lists and globs,
unknown --cfn-param names, what --region changes, and an audit with no AWS credentials."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "scanner" / "cli" / "demo" / "examples"
CFN = EXAMPLES / "cloudformation" / "gpu-training.yaml"


def scan_json(*args: str) -> tuple[int, dict, str]:
    res = CliRunner().invoke(cli, ["scan", *args, "--format", "json", "--deterministic"])
    doc = json.loads(res.stdout) if res.stdout.startswith("{") else {}
    return res.exit_code, doc, res.stderr


@pytest.mark.parametrize(("args", "policies"), [
    (["--policy", "spot-*,EBS-00[12]"], {"EBS-001", "EBS-002", "SPOT-001", "SPOT-002"}),
    (["--policy", "VPC-001", "--policy", "asg-*"], {"VPC-001", "ASG-001", "ASG-002",
                                                      "ASG-004"}),
    (["--policy", "EBS-*", "--skip-policy", "EBS-002,EBS-003"], {"EBS-001"}),
    (["--skip-policy", "SPOT-*,VPC-*", "--skip-policy", "ASG-00?"], {"EBS-001", "EBS-002"}),
])
def test_policy_selection_takes_comma_lists_and_globs(args: list[str], policies: set[str]) -> None:
    code, doc, _ = scan_json(str(EXAMPLES), *args)
    assert code in (0, 1)
    assert set(doc["summary"]["by_policy"]) == policies


def test_a_glob_or_id_matching_no_policy_is_a_usage_error() -> None:
    res = CliRunner().invoke(cli, ["scan", str(EXAMPLES), "--skip-policy", "SPOT-001,XYZ-*"])
    assert res.exit_code == 2
    assert "'XYZ-*' matches no policy (known: ASG-001" in res.stderr
    glob = CliRunner().invoke(cli, ["iam-policy", "--policy", "EBS-*"])
    listed = CliRunner().invoke(cli, ["iam-policy", "--policy", "EBS-001,EBS-002",
                                      "--policy", "EBS-003"])
    assert glob.exit_code == listed.exit_code == 0 and glob.stdout == listed.stdout
    assert "ec2:DescribeVolumes" in glob.stdout and "DescribeInstances" not in glob.stdout


def test_an_unknown_cfn_param_is_an_error_naming_the_template_parameters(tmp_path: Path) -> None:
    code, doc, err = scan_json(str(CFN), "--cfn-param", "GpuTyp=p4d.24xlarge", "-q")
    assert code == 2
    assert doc["errors"] == [{"kind": "config", "path": "--cfn-param GpuTyp", "reason":
                              "unknown parameter: the scanned template(s) declare "
                              "GpuInstanceType, TrainingNodes"}]
    assert "gpuaudit: error: --cfn-param GpuTyp: unknown parameter" in err  # even with -q
    code, doc, err = scan_json(str(CFN), "--cfn-param", "GpuInstanceType=p4d.24xlarge")
    assert code == 1 and doc["errors"] == [] and err == ""
    # several templates: a parameter that one of them declares is fine
    other = tmp_path / "other.yaml"
    other.write_text("Resources:\n  V:\n    Type: AWS::EC2::Volume\n"
                     "    Properties: {AvailabilityZone: a, Size: 1, Encrypted: true}\n")
    code, doc, _ = scan_json(str(CFN), str(other), "--cfn-param", "TrainingNodes=2")
    assert doc["errors"] == []
    code, doc, _ = scan_json(str(other), "--cfn-param", "TrainingNodes=2")
    assert code == 2 and "declare no parameters" in doc["errors"][0]["reason"]


def test_region_help_says_what_it_changes() -> None:
    res = CliRunner().invoke(cli, ["scan", "--help"], terminal_width=200)
    text = " ".join(res.stdout.split())
    assert "pseudo-parameter AWS::Region" in text
    assert "the region CloudFormation resources are priced in" in text


def test_an_audit_without_any_credentials_says_so_in_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_EC2_METADATA_DISABLED": "true",
                "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "PYTHONPATH": str(ROOT)})
    run = [sys.executable, "-m", "scanner", "audit", "--regions", "us-east-1,us-west-2"]
    proc = subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("gpuaudit: error: no AWS credentials found") and "--profile" in line
    # a report that was asked for is still written, saying why it is empty
    proc = subprocess.run([*run, "--format", "json", "--output-dir", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {e["reason"] for e in doc["errors"]} == {"no credentials found"}


def test_the_price_note_is_printed_only_when_there_is_money_to_show(tmp_path: Path) -> None:
    volume = tmp_path / "volume.tf"
    volume.write_text('resource "aws_ebs_volume" "v" {\n  availability_zone = "a"\n'
                      "  size = 1\n}\n")
    res = CliRunner().invoke(cli, ["scan", str(volume)])
    assert res.exit_code == 1 and "EBS-001" in res.stdout
    assert "Estimated saving" not in res.stdout and "Prices:" not in res.stdout
    res = CliRunner().invoke(cli, ["scan", str(CFN)])  # spot caps and the on-demand mix: money
    assert "Estimated saving: $" in res.stdout and "Prices: " in res.stdout
