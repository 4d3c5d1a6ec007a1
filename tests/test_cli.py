"""End-to-end `gpuaudit` runs as a user runs them: a new process, real files, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.findings.schema import validate_report

ROOT = Path(__file__).resolve().parents[1]
CFN_EXAMPLE = ROOT / "scanner" / "cli" / "demo" / "examples" / "cloudformation" / "gpu-training.yaml"
TF_EXAMPLE = ROOT / "scanner" / "cli" / "demo" / "examples" / "terraform"


def gpuaudit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def json_report(*args: str, cwd: Path | None = None) -> tuple[int, dict]:
    proc = gpuaudit("scan", *args, "--format", "json", "--deterministic", cwd=cwd)
    assert proc.stdout, proc.stderr
    doc = json.loads(proc.stdout)
    assert validate_report(doc) == []
    return proc.returncode, doc


def fails(doc: dict) -> set[tuple[str, str]]:
    return {(f["policy_id"], f["resource"]["id"]) for f in doc["findings"]
            if f["status"] == "FAIL"}


def test_cfn_example_findings_and_exit_code():
    code, doc = json_report(str(CFN_EXAMPLE))
    assert code == 1  # VPC-004 is high
    assert fails(doc) >= {
        ("EBS-001", "ScratchVolume"), ("VPC-001", "Vpc"), ("VPC-004", "TrainingGroup"),
        ("SPOT-001", "GpuTemplate"), ("ASG-001", "TrainingGroup")}
    suppressed = [f for f in doc["findings"] if f["status"] == "SUPPRESSED"]
    assert [(f["policy_id"], f["resource"]["id"]) for f in suppressed] == [
        ("EBS-001", "DatasetVolume")]
    assert suppressed[0]["suppression"]["reason"].startswith("public dataset mirror")
    scratch = next(f for f in doc["findings"] if f["resource"]["id"] == "ScratchVolume")
    assert scratch["location"]["file"].endswith("gpu-training.yaml")
    assert scratch["location"]["start_line"] > 1
    assert doc["summary"]["savings_usd_month"] > 0


def test_deterministic_json_is_byte_identical():
    a = gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "--deterministic").stdout
    b = gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "--deterministic").stdout
    assert a == b and "generated_at" not in json.loads(a)


def test_fail_on_and_skip_policy_change_exit_code():
    assert gpuaudit("scan", str(CFN_EXAMPLE), "--fail-on", "none").returncode == 0
    assert gpuaudit("scan", str(CFN_EXAMPLE), "--fail-on", "critical").returncode == 0
    medium = gpuaudit("scan", str(CFN_EXAMPLE), "--policy", "ASG-001", "--fail-on", "medium")
    assert medium.returncode == 1, medium.stdout
    high = gpuaudit("scan", str(CFN_EXAMPLE), "--policy", "ASG-001", "--fail-on", "high")
    assert high.returncode == 0, high.stdout
    skipped = gpuaudit("scan", str(CFN_EXAMPLE), "--skip-policy", "VPC-004")
    assert skipped.returncode == 1  # EBS-001 (high) still fails


def test_table_fits_100_columns():
    proc = gpuaudit("scan", str(CFN_EXAMPLE))
    lines = proc.stdout.splitlines()
    assert any("EBS-001" in line for line in lines)
    assert max(len(line) for line in lines) <= 100


def test_unreadable_iac_is_error_exit_2_and_rest_still_scanned(tmp_path: Path):
    (tmp_path / "good.yaml").write_text(CFN_EXAMPLE.read_text())
    (tmp_path / "broken.yaml").write_text("AWSTemplateFormatVersion: '2010-09-09'\n"
                                          "Resources:\n  A: [unclosed\n")
    (tmp_path / "notes.yaml").write_text("just: [some, yaml]\n")  # not IaC: ignored
    (tmp_path / "binary.json").write_bytes(b"\x00\x01\x02\xff" * 100)
    code, doc = json_report(str(tmp_path))
    assert code == 2
    assert [Path(e["path"]).name for e in doc["errors"]] == ["broken.yaml"]
    assert ("EBS-001", "ScratchVolume") in fails(doc)


def test_missing_path_is_error(tmp_path: Path):
    code, doc = json_report(str(tmp_path / "nope.tf"))
    assert code == 2 and "no such file" in doc["errors"][0]["reason"]


def test_bad_config_names_key_and_file(tmp_path: Path):
    cfg = tmp_path / ".gpuaudit.yaml"
    cfg.write_text("policies:\n  SPOT-001:\n    max_price_ratio: lots\n")
    proc = gpuaudit("scan", str(CFN_EXAMPLE), cwd=tmp_path)
    assert proc.returncode == 2
    assert "policies.SPOT-001.max_price_ratio" in proc.stderr and str(cfg.name) in proc.stderr
    cfg.write_text("polices: {}\n")
    proc = gpuaudit("scan", str(CFN_EXAMPLE), cwd=tmp_path)
    assert proc.returncode == 2 and "polices" in proc.stderr


def test_config_in_pyproject_enables_policy_and_changes_params(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.gpuaudit.policies.SPOT-001]\nmax_price_ratio = 1.5\n")
    _, doc = json_report(str(CFN_EXAMPLE), "--include-passed", cwd=tmp_path)
    spot = [f for f in doc["findings"] if f["policy_id"] == "SPOT-001"]
    assert spot and all(f["status"] == "PASS" for f in spot)


def test_passed_results_are_counted_and_listed_on_request():
    _, lean = json_report(str(CFN_EXAMPLE))
    _, full = json_report(str(CFN_EXAMPLE), "--include-passed")
    assert lean["summary"] == full["summary"] and lean["summary"]["by_status"]["PASS"] > 0
    assert not any(f["status"] == "PASS" for f in lean["findings"])
    assert sum(f["status"] == "PASS" for f in full["findings"]) == (
        full["summary"]["by_status"]["PASS"])


def test_baseline_only_new_findings_fail(tmp_path: Path):
    base = tmp_path / "base.json"
    proc = gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "--output", str(base))
    assert proc.returncode == 1
    again = gpuaudit("scan", str(CFN_EXAMPLE), "--baseline", str(base))
    assert again.returncode == 0, again.stdout


def test_output_dir_writes_every_format(tmp_path: Path):
    proc = gpuaudit("scan", str(CFN_EXAMPLE), "--output-dir", str(tmp_path / "out"),
                    "--format", "json", "--format", "html", "--format", "sarif", "--quiet")
    assert proc.returncode == 1
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["report.html", "report.json", "report.sarif"]


def test_policies_list_and_show():
    listing = gpuaudit("policies", "list").stdout
    for pid in ("EBS-001", "EBS-003", "VPC-004", "SPOT-002", "ASG-002"):
        assert pid in listing
    shown = gpuaudit("policies", "show", "spot-001")
    assert shown.returncode == 0 and "max_price_ratio: 0.7" in shown.stdout
    assert "advises against" in shown.stdout
    assert gpuaudit("policies", "show", "NOPE-9").returncode == 2


def test_report_render_roundtrip(tmp_path: Path):
    report = tmp_path / "r.json"
    gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "-o", str(report))
    proc = gpuaudit("report", "render", str(report), "--format", "markdown")
    assert proc.returncode == 0 and "EBS-001" in proc.stdout


def test_cfn_params_and_region(tmp_path: Path):
    _, doc = json_report(str(CFN_EXAMPLE), "--cfn-param", "GpuInstanceType=m5.large",
                            "--cfn-param", "TrainingNodes=10")
    asg = next(f for f in doc["findings"]
               if f["policy_id"] == "ASG-001" and f["resource"]["id"] == "TrainingGroup")
    assert asg["evidence"]["desired"] == 10


@pytest.mark.parametrize("target", [TF_EXAMPLE])
def test_terraform_example(target: Path):
    _, doc = json_report(str(target))
    assert ("EBS-001", "aws_ebs_volume.models") in fails(doc)
    assert ("EBS-002", "aws_ebs_encryption_by_default.this") in fails(doc)
    assert ("SPOT-001", "aws_launch_template.inference") in fails(doc)
    assert ("VPC-002", "aws_subnet.gpu") in fails(doc)
    assert ("ASG-002", "aws_autoscaling_group.inference") in fails(doc)


def test_directory_with_tf_and_its_plan_reports_each_finding_once():
    _, doc = json_report("tests/fixtures/terraform/gpu_estate_a")
    ids = [f["id"] for f in doc["findings"]]
    assert ids and len(ids) == len(set(ids))
    assert any("reported from the plan" in n["message"] for n in doc["notices"])


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)


def test_named_tf_file_reports_its_findings_and_those_its_change_caused(tmp_path: Path):
    volume = ('resource "aws_ebs_volume" "{}" {{\n'
              '  availability_zone = "us-east-1a"\n  size = 1\n}}\n')
    (tmp_path / "a.tf").write_text(volume.format("a"))
    (tmp_path / "b.tf").write_text(volume.format("b"))
    # outside git nothing says what changed: anything in the module may depend on a.tf
    _, named = json_report(str(tmp_path / "a.tf"))
    assert fails(named) == {("EBS-001", "aws_ebs_volume.a"), ("EBS-001", "aws_ebs_volume.b")}
    b = next(f for f in named["findings"] if f["resource"]["id"] == "aws_ebs_volume.b")
    assert b["message"].endswith(f"[may depend on {tmp_path / 'a.tf'}]")
    # in git: b's finding was there before the change, so only a's own findings count
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "volumes")
    _, named = json_report(str(tmp_path / "a.tf"))
    assert fails(named) == {("EBS-001", "aws_ebs_volume.a")}
    # a change in a.tf that makes b fail (encryption by default turned off) is reported on b
    (tmp_path / "b.tf").write_text(volume.format("b").replace("size = 1", "size = 1\n"
                                                                 "  encrypted = var.enc"))
    (tmp_path / "a.tf").write_text('variable "enc" {\n  default = true\n}\n')
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "encrypt b")
    (tmp_path / "a.tf").write_text('variable "enc" {\n  default = false\n}\n')
    _, named = json_report(str(tmp_path / "a.tf"))
    assert fails(named) == {("EBS-001", "aws_ebs_volume.b")}
    (b,) = named["findings"]
    assert b["location"]["file"].endswith("b.tf") and b["location"]["start_line"] == 1
    assert b["message"].endswith(f"[new with this change, caused by {tmp_path / 'a.tf'}]")
    _, whole = json_report(str(tmp_path))
    assert fails(whole) == {("EBS-001", "aws_ebs_volume.b")}
    _, plan = json_report("tests/fixtures/terraform/gpu_estate_a/plan.json")
    assert fails(plan)  # a named plan counts whole, though its resources point into .tf files


def test_output_with_several_formats_is_a_usage_error(tmp_path: Path):
    proc = gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "--format", "html",
                    "--output", str(tmp_path / "r"))
    assert proc.returncode == 2 and "--output-dir" in proc.stderr


def test_unwritable_report_paths_are_errors_naming_the_path(tmp_path: Path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file where a directory is expected\n")
    proc = gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "-o", str(blocker / "r.json"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"cannot write {blocker / 'r.json'}: {blocker} is a file" in proc.stderr
    assert "EBS-001" in proc.stdout  # the table summary still reaches the user

    # several formats: the one that cannot be written is named, the others are written
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").mkdir()
    proc = gpuaudit("scan", str(CFN_EXAMPLE), "--output-dir", str(out), "--format", "json",
                    "--format", "html", "--format", "sarif", "--quiet")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"cannot write {out / 'report.html'}: it is a directory" in proc.stderr
    assert json.loads((out / "report.json").read_text())["findings"]
    assert (out / "report.sarif").is_file()

    report = tmp_path / "r.json"
    gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "-o", str(report))
    for args in (("render", str(report), "--format", "markdown"),
                 ("diff", str(report), str(report))):
        proc = gpuaudit("report", *args, "-o", str(blocker / "x.md"))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{blocker} is a file" in proc.stderr


@pytest.mark.parametrize(("code", "status", "stderr"),
                         [("None", 0, ""), ("2", 2, ""), ("'no such file'", 2, "no such file\n")])
def test_hard_exit_flushes_and_keeps_the_exit_status(code: str, status: int, stderr: str):
    script = ("import sys\nfrom scanner.cli.main import hard_exit\n"
              "sys.stdout.write('report text')  # unflushed: hard_exit must flush it\n"
              f"hard_exit({code})\nprint('not reached')\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (proc.returncode, proc.stdout, proc.stderr) == (status, "report text", stderr)


def test_named_files_that_are_no_infrastructure_are_ignored_quietly(tmp_path: Path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not infrastructure\n")
    k8s = tmp_path / "deploy.yaml"
    k8s.write_text("apiVersion: apps/v1\nkind: Deployment\n")
    hooks = tmp_path / ".pre-commit-config.yaml"
    hooks.write_text("repos:\n  - repo: local\n    hooks: []\n")
    code, doc = json_report(str(notes), str(k8s), str(hooks), str(CFN_EXAMPLE))
    assert code == 1  # the template's findings; the others are no error, and not mentioned
    assert doc["notices"] == [] and doc["errors"] == []
    # when nothing named is IaC, that is said once (nothing was scanned at all)
    code, doc = json_report(str(notes), str(hooks))
    assert code == 0 and doc["errors"] == []
    assert [n["message"].split(":")[0] for n in doc["notices"]] == ["nothing scanned"]
    # found while walking a directory, the same files are passed over quietly
    _, walked = json_report(str(tmp_path))
    assert walked["notices"] == [] and walked["errors"] == []
