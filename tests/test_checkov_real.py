"""The real checkov (3.3, in .venv-checkov, which `make test` creates) in both directions:
gpuaudit's policies as checkov checks, and checkov's checks in gpuaudit's report."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scanner.findings.schema import validate_report
from scanner.integrations.checkov.findings import SAME_FACT

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "checkov"
GPUAUDIT = [sys.executable, "-m", "scanner"]
ENV = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "LOG_LEVEL": "WARNING"}


def _checkov() -> Path:
    given = os.environ.get("GPUAUDIT_TEST_CHECKOV")
    path = (ROOT / given).resolve() if given else ROOT / ".venv-checkov" / "bin" / "checkov"
    if not path.is_file():
        if given:  # `make test` names it: it must be there
            pytest.fail(f"GPUAUDIT_TEST_CHECKOV={given} does not exist")
        pytest.skip("no checkov virtualenv: run `make checkov-venv` (make test does)")
    return path


CHECKOV = pytest.fixture(scope="module")(lambda: _checkov())

# What gpuaudit's exported checks must say on the fixture, and nothing else.
EXPECTED = {
    ("CKV_GPUAUDIT_EBS_002", "aws_ebs_encryption_by_default.off"): "FAILED",
    ("CKV_GPUAUDIT_EBS_001", "aws_ebs_volume.unencrypted"): "FAILED",
    ("CKV_GPUAUDIT_EBS_001", "aws_ebs_volume.encrypted"): "PASSED",
    ("CKV_GPUAUDIT_EBS_001", "aws_instance.root_unencrypted"): "FAILED",
    ("CKV_GPUAUDIT_EBS_001", "aws_launch_template.spot_over_cap"): "PASSED",
    ("CKV_GPUAUDIT_EBS_001", "aws_launch_template.spot_ok"): "PASSED",
    ("CKV_GPUAUDIT_EBS_001", "aws_launch_template.spot_too_low"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_001", "aws_launch_template.spot_over_cap"): "FAILED",
    ("CKV_GPUAUDIT_EBS_001", "aws_launch_template.on_demand"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_001", "aws_launch_template.spot_ok"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_001", "aws_launch_template.spot_too_low"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_001", "aws_autoscaling_group.balanced"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_002", "aws_launch_template.spot_over_cap"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_002", "aws_launch_template.spot_ok"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_002", "aws_launch_template.spot_too_low"): "FAILED",
    ("CKV_GPUAUDIT_SPOT_002", "aws_autoscaling_group.balanced"): "PASSED",
    ("CKV_GPUAUDIT_ASG_001", "aws_autoscaling_group.all_on_demand"): "FAILED",
    ("CKV_GPUAUDIT_ASG_001", "aws_autoscaling_group.balanced"): "PASSED",
    ("CKV_GPUAUDIT_ASG_002", "aws_autoscaling_group.balanced"): "PASSED",
    ("CKV_GPUAUDIT_EBS_001", "UnencryptedVolume"): "FAILED",
    ("CKV_GPUAUDIT_EBS_001", "EncryptedVolume"): "PASSED",
    ("CKV_GPUAUDIT_EBS_001", "SpotOverCap"): "PASSED",
    ("CKV_GPUAUDIT_EBS_001", "OnDemandTemplate"): "PASSED",
    ("CKV_GPUAUDIT_SPOT_001", "SpotOverCap"): "FAILED",
    ("CKV_GPUAUDIT_SPOT_002", "SpotOverCap"): "PASSED",
    ("CKV_GPUAUDIT_ASG_001", "AllOnDemand"): "FAILED",
}


def _resource_id(resource: str) -> str:
    """checkov names a CloudFormation resource ``AWS::EC2::Volume.Vol``; gpuaudit ``Vol``."""
    return resource.partition(".")[2] if resource.startswith("AWS::") else resource


def _results(report: Any) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    for part in report if isinstance(report, list) else [report]:
        for key in ("passed_checks", "failed_checks"):
            for check in part["results"][key]:
                yield (check["check_id"], _resource_id(check["resource"]),
                       check["check_result"]["result"], check)


@functools.cache
def _checks_dir() -> str:
    out = subprocess.run([*GPUAUDIT, "checkov-dir"], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    return out.stdout.strip()


def _gpuaudit_verdicts() -> dict[tuple[str, str], str]:
    out = subprocess.run([*GPUAUDIT, "scan", str(FIXTURE), "--format", "json",
                          "--include-passed", "--quiet", "--deterministic"],
                         capture_output=True, text=True, cwd=ROOT)
    doc = json.loads(out.stdout)
    return {(f["policy_id"], f["resource"]["id"]): f["status"] for f in doc["findings"]}


def _run_checkov(cmd: list[str], tmp: Path, target: Path = FIXTURE
                 ) -> dict[tuple[str, str], str]:
    args = ["-d", str(target), "--external-checks-dir", _checks_dir(), "-o", "json",
            "--framework", "terraform", "cloudformation", "--skip-download"]
    out = subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=tmp, env=ENV,
                         timeout=600)
    assert out.returncode in (0, 1), out.stderr[-3000:]
    assert "Cannot load external check" not in out.stderr, out.stderr[-3000:]
    report = json.loads(out.stdout)
    return {(cid, rid): result for cid, rid, result, _ in _results(report)
            if cid.startswith("CKV_GPUAUDIT_")}


@pytest.fixture(scope="module")
def on_the_fixture(CHECKOV: Path, tmp_path_factory: pytest.TempPathFactory,
                   ) -> dict[tuple[str, str], str]:
    """checkov with gpuaudit's checks on the fixture, from an environment of its own (pipx, a
    venv): checkov's site-packages are put on the path without their .pth files, so the
    editable gpuaudit installed there is not importable and the checks must use the gpuaudit
    they belong to. One run (~3 s of CPU) for the tests that read its verdicts; checkov with
    gpuaudit importable gives verdicts in the plan and maybe-resource tests below."""
    python = CHECKOV.parent / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    boot = ("import sys; sys.path.append(sys.argv.pop(1)); sys.argv[0] = 'checkov'\n"
            "try:\n    import scanner\nexcept ImportError:\n    pass\n"
            "else:\n    raise SystemExit('gpuaudit is importable: the test proves nothing')\n"
            "from checkov.main import Checkov; sys.exit(Checkov().run())")
    return _run_checkov([str(python), "-S", "-c", boot, site.stdout.strip()],
                        tmp_path_factory.mktemp("checkov"))


def test_checkov_runs_gpuaudit_policies_on_the_fixture(
        on_the_fixture: dict[tuple[str, str], str]) -> None:
    assert on_the_fixture == EXPECTED


def test_checkov_and_gpuaudit_agree_wherever_checkov_gives_a_verdict(
        on_the_fixture: dict[tuple[str, str], str]) -> None:
    """A verdict the adapters give on one resource is the one gpuaudit gives with the whole
    configuration in view (never a PASS or FAIL that the related resources would change)."""
    got = on_the_fixture
    ours = _gpuaudit_verdicts()
    words = {"PASSED": "PASS", "FAILED": "FAIL"}
    for (check_id, rid), result in got.items():
        pid = check_id.removeprefix("CKV_GPUAUDIT_").replace("_", "-")
        assert ours.get((pid, rid)) == words[result], (pid, rid)
    # and where one resource cannot decide, checkov gets no verdict at all
    for rid in ("aws_ebs_volume.unset", "aws_autoscaling_group.from_template"):
        assert not [k for k in got if k[1] == rid]
        assert any(k[1] == rid and v == "FAIL" for k, v in ours.items())


OTHER_TF = ('resource "aws_ebs_volume" "other" {\n  availability_zone = "us-east-1a"\n'
            '  size = 1\n  encrypted = false\n}\n')


@pytest.fixture(scope="module")
def with_checkov(CHECKOV: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`scan --with-checkov` of the fixture and of a second directory (a name with a space),
    run once for the tests that read its report (checkov starts in 3 s of CPU a directory)."""
    out_dir = tmp_path_factory.mktemp("with-checkov")
    other = tmp_path_factory.mktemp("infra") / "other infra"
    other.mkdir()
    (other / "main.tf").write_text(OTHER_TF)
    run = subprocess.run([*GPUAUDIT, "scan", str(FIXTURE), str(other), "--with-checkov",
                          "--format", "json",
                          "--format", "table", "--output-dir", str(out_dir)],
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "GPUAUDIT_CHECKOV": str(CHECKOV)}, timeout=900)
    return {"code": run.returncode, "stderr": run.stderr,
            "doc": json.loads((out_dir / "report.json").read_text()),
            "table": (out_dir / "report.txt").read_text() if (out_dir / "report.txt").exists()
            else run.stdout}


def test_scan_with_checkov_has_both_tools_findings(with_checkov: dict[str, Any]) -> None:
    doc = with_checkov["doc"]
    assert with_checkov["code"] == 1, with_checkov["stderr"]
    assert validate_report(doc) == []
    assert doc["errors"] == []
    theirs = [f for f in doc["findings"] if f.get("source") == "checkov"]
    ours = [f for f in doc["findings"] if "source" not in f]
    assert {f["policy_id"] for f in theirs} >= {"CKV_AWS_79"}  # IMDSv1 on the templates
    assert all(f["policy_id"].startswith(("CKV_", "CKV2_")) for f in theirs)
    assert all(f["status"] == "FAIL" and f["location"]["file"] and f["location"]["start_line"]
               for f in theirs)
    assert {f["policy_id"] for f in ours if f["status"] == "FAIL"} >= {
        "EBS-001", "EBS-002", "SPOT-001", "SPOT-002", "ASG-001"}


def test_scan_with_checkov_merges_the_same_fact_into_one_finding(
        with_checkov: dict[str, Any]) -> None:
    doc = with_checkov["doc"]
    merged = {(f["policy_id"], f["resource"]["id"]): f.get("also_reported_by")
              for f in doc["findings"] if f.get("also_reported_by")}
    assert merged == {
        ("EBS-002", "aws_ebs_encryption_by_default.off"): ["CKV_AWS_106"],
        ("EBS-001", "aws_ebs_volume.unencrypted"): ["CKV_AWS_3"],
        ("EBS-001", "aws_ebs_volume.unset"): ["CKV_AWS_3"],
        ("EBS-001", "aws_instance.root_unencrypted"): ["CKV_AWS_8"],
        ("EBS-001", "UnencryptedVolume"): ["CKV_AWS_3"],
        ("EBS-001", "aws_ebs_volume.other"): ["CKV_AWS_3"],  # in the second directory
    }
    failing = {(f["policy_id"], f["resource"]["id"]) for f in doc["findings"]
               if f["status"] == "FAIL"}
    for f in doc["findings"]:  # no same-fact pair is left as two findings
        target = SAME_FACT.get(f["policy_id"])
        assert target is None or (target, f["resource"]["id"]) not in failing, f
    assert doc["summary"]["checkov"]["merged"] == 6
    assert doc["summary"]["checkov"]["failed"] == 6 + len(
        [f for f in doc["findings"] if f.get("source") == "checkov"])


def test_the_summary_says_how_long_checkov_took(with_checkov: dict[str, Any]) -> None:
    checkov = with_checkov["doc"]["summary"]["checkov"]
    assert checkov["version"].startswith("3.")
    assert checkov["seconds"] > 0
    table = " ".join(with_checkov["table"].split())
    assert f"checkov {checkov['version']} took {checkov['seconds']:.1f} s: " in table


def test_a_bad_gpuaudit_config_is_loud_in_checkov(CHECKOV: Path, tmp_path: Path) -> None:
    (tmp_path / ".gpuaudit.yaml").write_text("policies:\n  SPOT-001:\n"
                                             "    max_price_ratio: lots\n")
    args = ["-d", str(FIXTURE), "--external-checks-dir", _checks_dir(), "-o", "json",
            "--framework", "terraform", "--skip-download"]
    out = subprocess.run([str(CHECKOV), *args], capture_output=True, text=True, cwd=tmp_path,
                         env=ENV, timeout=600)
    assert "policies.SPOT-001.max_price_ratio" in out.stderr
    assert str(tmp_path / ".gpuaudit.yaml") in out.stderr
    report = json.loads(out.stdout)
    assert not [r for r in _results(report) if r[0].startswith("CKV_GPUAUDIT_")]


ESTATES = ("gpu_estate_a", "gpu_estate_b")


@pytest.fixture(scope="module")
def on_the_plans(CHECKOV: Path, tmp_path_factory: pytest.TempPathFactory
                 ) -> dict[str, dict[tuple[str, str], str]]:
    """checkov's plan framework on both plans in one run: {estate: {(check, address): result}}
    (checkov tells the plans apart by their file path)."""
    plans = [ROOT / "tests" / "fixtures" / "terraform" / estate / "plan.json"
             for estate in ESTATES]
    out = subprocess.run([str(CHECKOV), *(a for p in plans for a in ("-f", str(p))),
                          "--external-checks-dir", _checks_dir(), "-o", "json",
                          "--framework", "terraform_plan", "--skip-download"],
                         capture_output=True, text=True, cwd=tmp_path_factory.mktemp("plans"),
                         env=ENV, timeout=600)
    assert out.returncode in (0, 1), out.stderr[-3000:]
    got: dict[str, dict[tuple[str, str], str]] = {estate: {} for estate in ESTATES}
    for cid, rid, result, check in _results(json.loads(out.stdout)):
        if cid.startswith("CKV_GPUAUDIT_"):
            got[Path(check["file_path"]).parent.name][(cid, rid)] = result
    return got


@pytest.mark.parametrize("estate", ESTATES)
def test_on_real_terraform_plans_checkov_and_gpuaudit_agree(
        on_the_plans: dict[str, dict[tuple[str, str], str]], estate: str) -> None:
    """checkov's plan framework hands the checks plan values: every verdict the checks give
    is gpuaudit's own on the whole plan (made by real terraform, tests/fixtures/terraform)."""
    plan = ROOT / "tests" / "fixtures" / "terraform" / estate / "plan.json"
    got = on_the_plans[estate]
    scan = subprocess.run([*GPUAUDIT, "scan", str(plan), "--format", "json", "--include-passed",
                           "--quiet", "--deterministic"], capture_output=True, text=True, cwd=ROOT)
    ours = {(f["policy_id"], f["resource"]["id"]): f["status"]
            for f in json.loads(scan.stdout)["findings"]}
    words = {"PASSED": "PASS", "FAILED": "FAIL"}
    assert len(got) >= 10 and "FAILED" in got.values() and "PASSED" in got.values()
    for (check_id, rid), result in got.items():
        pid = check_id.removeprefix("CKV_GPUAUDIT_").replace("_", "-")
        assert ours.get((pid, rid)) == words[result], (pid, rid, result)


MAYBE_TF = """
variable "create" {}

resource "aws_ebs_volume" "always" {
  availability_zone = "us-east-1a"
  size              = 1
  encrypted         = false
}

resource "aws_ebs_volume" "maybe" {
  count             = var.create ? 1 : 0
  availability_zone = "us-east-1a"
  size              = 1
  encrypted         = false
}

resource "aws_ebs_volume" "per_name" {
  for_each          = toset([])
  availability_zone = "us-east-1a"
  size              = 1
  encrypted         = false
}
"""
MAYBE_CFN = """AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Env: {Type: String}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
Resources:
  Always:
    Type: AWS::EC2::Volume
    Properties: {AvailabilityZone: us-east-1a, Size: 1, Encrypted: false}
  OnlyInProd:
    Type: AWS::EC2::Volume
    Condition: IsProd
    Properties: {AvailabilityZone: us-east-1a, Size: 1, Encrypted: false}
"""


def test_resources_that_may_not_be_created_get_no_verdict_in_checkov(
        CHECKOV: Path, tmp_path: Path) -> None:
    """checkov hands a check a resource whose count / for_each it could not expand, and a
    CloudFormation resource without its Condition: no PASS or FAIL on them, as in gpuaudit's
    scan (UNKNOWN), while the resources that are created are judged."""
    iac = tmp_path / "iac"
    iac.mkdir()
    (iac / "main.tf").write_text(MAYBE_TF)
    (iac / "stack.yaml").write_text(MAYBE_CFN)
    run = tmp_path / "run"
    run.mkdir()
    got = _run_checkov([str(CHECKOV)], run, iac)
    assert got == {("CKV_GPUAUDIT_EBS_001", "aws_ebs_volume.always"): "FAILED",
                   ("CKV_GPUAUDIT_EBS_001", "Always"): "FAILED"}


def test_scan_with_checkov_of_several_directories(with_checkov: dict[str, Any]) -> None:
    """With several -d directories checkov prints one JSON report per directory, a later one
    repeating results of the earlier ones: all of them are read, each result once (before:
    'checkov failed (exit 0)', none of its checks in the report)."""
    doc = with_checkov["doc"]
    assert doc["errors"] == [], doc["errors"]
    theirs = [f for f in doc["findings"] if f.get("source") == "checkov"]
    keys = [(f["policy_id"], f["location"]["file"], f["location"]["start_line"],
             f["resource"]["id"]) for f in theirs]
    assert len(keys) == len(set(keys))  # each checkov result once
    assert {Path(f["location"]["file"]).parent.name for f in theirs} == {"checkov", "other infra"}
    assert doc["summary"]["checkov"]["failed"] == len(theirs) + doc["summary"]["checkov"][
        "merged"]


def test_a_checkov_that_raises_is_an_error_not_a_hang(CHECKOV: Path, tmp_path: Path) -> None:
    """checkov's fork-parallel runner hangs when its CloudFormation runner raises (a resource
    whose Type is an intrinsic) while the Terraform worker still has results to send
    (bridgecrewio/checkov#7186): before, the scan waited out the whole time budget (900 s by
    default). Now checkov's exception is the error, and the rest of the report is there."""
    # beside it, a Terraform module with more results than a pipe holds (150 volumes: 450 KB
    # of JSON): with CHECKOV_PARALLELIZATION_TYPE=fork this directory hangs to the time budget
    both = tmp_path / "iac"
    both.mkdir()
    (both / "odd.yaml").write_text(
        'AWSTemplateFormatVersion: "2010-09-09"\nResources:\n  Odd:\n'
        '    Type: {"Fn::If": [IsProd, "AWS::EC2::Volume", "AWS::EC2::Volume"]}\n'
        '    Properties: {AvailabilityZone: us-east-1a, Size: 1}\n')
    (both / "main.tf").write_text("".join(
        f'resource "aws_ebs_volume" "v{i}" {{\n  availability_zone = "us-east-1a"\n'
        f'  size = 1\n}}\n' for i in range(150)))
    run = subprocess.run([*GPUAUDIT, "scan", str(both), "--with-checkov",
                          "--format", "json", "--quiet", "--fail-on", "none"],
                         capture_output=True, text=True, cwd=ROOT, timeout=900,
                         env={**os.environ, "GPUAUDIT_CHECKOV": str(CHECKOV),
                              "GPUAUDIT_CHECKOV_TIMEOUT": "240"})
    doc = json.loads(run.stdout)
    [error] = [e for e in doc["errors"] if e["path"] == "checkov"]
    assert "checkov failed" in error["reason"] and "TypeError" in error["reason"], error
    # gpuaudit's own reading is there: its error on the template, the module's resources
    assert any(e["path"].endswith("odd.yaml") for e in doc["errors"]), doc["errors"]
    assert doc["summary"]["resources"] == 150
