# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""Declarative policies written by users (docs/user-policies.md): validated before the scan,
evaluated in three values over the compute view, the same on every source, and carried by the
reports, suppressions and selection like built-in ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from policies import discovery
from policies.declarative import PolicyFileError, load_policy_file
from policies.declarative.conditions import compile_condition
from scanner.engine.evaluate import evaluate
from scanner.findings.schema import validate_report
from scanner.model import Provenance, Resource, SourceKind, Unknown
from tests.aws_helpers import (  # noqa: F401 - fixtures
    MotoServer,
    aws,
    aws_env,
    declared_only,
    moto_server,
    moto_server_module,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "policies"
FIXTURES = EXAMPLES / "tests"
ALLOW_LIST = "ORG-GPU-001"


@pytest.fixture(autouse=True)
def no_user_policies_left() -> Iterator[None]:
    """Each test starts and ends with the built-in catalogue only."""
    discovery.use_policy_dirs([])
    yield
    discovery.use_policy_dirs([])


def gpuaudit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def scan_json(*args: str, cwd: Path | None = None) -> tuple[int, dict]:
    proc = gpuaudit("scan", *args, "--format", "json", "--deterministic", "--include-passed",
                    cwd=cwd)
    assert proc.stdout, proc.stderr
    doc = json.loads(proc.stdout)
    assert validate_report(doc) == []
    return proc.returncode, doc


def verdicts(doc: dict, policy_id: str) -> dict[str, str]:
    """{fixture file or directory name: status} of one policy's findings."""
    out: dict[str, str] = {}
    for f in doc["findings"]:
        if f["policy_id"] == policy_id:
            where = Path(f["location"]["file"])
            key = where.parent.name if where.name == "main.tf" else where.name
            out[f"{where.parent.parent.name if key == 'hcl' else where.parent.name}/{key}"] \
                = f["status"]
    return out


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


POLICY = """
id: ORG-T-001
title: GPU instances are g5
severity: high
category: cost
compute: {gpu: true}
condition:
  path: compute.gpu_families
  in: [g5]
remediation: Use g5.
"""


# -- the acceptance test: one rule, every source ------------------------------------------------

IAC_SOURCES = {
    "hcl": ("hcl", "hcl"),
    "plan": ("plan.json", "plan.json"),
    "cloudformation": ("cloudformation.yaml", "cloudformation.yaml"),
    "eksctl": ("eksctl.yaml", "eksctl.yaml"),
    "karpenter": ("karpenter.yaml", "karpenter.yaml"),
    "batch": ("batch.yaml", "batch.yaml"),
    "parallelcluster": ("parallelcluster.yaml", "parallelcluster.yaml"),
}


@pytest.mark.parametrize("source", sorted(IAC_SOURCES))
def test_p3_fails_and_g5_passes_the_allow_list_from_every_iac_source(source: str) -> None:
    fail_name, pass_name = IAC_SOURCES[source]
    failing = FIXTURES / ALLOW_LIST / "fail" / fail_name
    passing = FIXTURES / ALLOW_LIST / "pass" / pass_name
    assert "p3.8xlarge" in _text(failing) and "g5.xlarge" in _text(passing)
    code, doc = scan_json(str(failing), str(passing), "--policy-dir", str(EXAMPLES),
                          "--policy", ALLOW_LIST)
    found = verdicts(doc, ALLOW_LIST)
    assert found == {f"fail/{fail_name}": "FAIL", f"pass/{pass_name}": "PASS"}, doc["findings"]
    assert code == 1  # the allow-list is high
    fail = next(f for f in doc["findings"] if f["status"] == "FAIL")
    assert "'p3' is not in [g5, g6, p4d, p5]" in fail["message"]
    assert fail["title"] == "GPU compute uses an approved instance family"
    assert fail["severity"] == "high"
    assert fail["remediation"]["text"].startswith("Use an approved GPU family")


def _text(path: Path) -> str:
    if path.is_dir():
        return "".join(p.read_text() for p in sorted(path.glob("*.tf")))
    return path.read_text()


def test_examples_pass_their_own_fixtures() -> None:
    proc = gpuaudit("policies", "test", str(EXAMPLES))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "46 passed, 0 failed"
    for pid in ("ORG-GPU-001", "ORG-GPU-002", "ORG-GPU-003", "ORG-GPU-004"):
        assert f"ok   {pid} pass" in proc.stdout and f"ok   {pid} fail" in proc.stdout
    assert "has no fixtures" not in proc.stdout


def test_policies_test_names_a_fixture_that_gives_the_wrong_verdict(tmp_path: Path) -> None:
    write(tmp_path / "g5-only.yaml", POLICY)
    write(tmp_path / "tests" / "ORG-T-001" / "pass" / "main.tf", """
        resource "aws_instance" "a" {
          ami           = "ami-1"
          instance_type = "p3.2xlarge"
        }
        """)
    write(tmp_path / "tests" / "ORG-T-001" / "fail" / "ok.tf", """
        resource "aws_instance" "b" {
          ami           = "ami-1"
          instance_type = "p3.2xlarge"
        }
        """)
    proc = gpuaudit("policies", "test", str(tmp_path))
    assert proc.returncode == 1
    assert "FAIL ORG-T-001 pass:" in proc.stdout and "main.tf" in proc.stdout
    assert "'p3' is not in [g5]" in proc.stdout
    assert "ok   ORG-T-001 fail:" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "1 passed, 1 failed"


def test_policies_test_refuses_a_fixture_folder_for_no_policy(tmp_path: Path) -> None:
    write(tmp_path / "g5-only.yaml", POLICY)
    write(tmp_path / "tests" / "ORG-T-01" / "pass" / "main.tf", 'resource "aws_instance" "a" {}')
    proc = gpuaudit("policies", "test", str(tmp_path))
    assert proc.returncode == 1 and "names no policy of this directory" in proc.stdout


# -- live: the same rule on an account (moto in this process) ---------------------------------


def test_the_allow_list_on_live_instances(aws: None) -> None:
    from scanner.aws.collect import collect
    from scanner.aws.targets import TargetSpec
    from scanner.cli.audit import needed_kinds
    from tests.aws_helpers import AMI, REGION, client

    discovery.use_policy_dirs([EXAMPLES])
    ec2 = client("ec2")
    p3 = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                           InstanceType="p3.8xlarge")["Instances"][0]["InstanceId"]
    g5 = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                           InstanceType="g5.xlarge")["Instances"][0]["InstanceId"]
    cpu = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                            InstanceType="m5.large")["Instances"][0]["InstanceId"]
    kinds = needed_kinds(None, (ALLOW_LIST,), ())
    result = collect(TargetSpec(regions=(REGION,)), kinds=kinds)
    findings = evaluate(result.resources, policy_ids=[ALLOW_LIST], gaps=result.gaps)
    found = {f.resource["id"]: f.status.value for f in findings}
    assert found == {p3: "FAIL", g5: "PASS"}  # CPU compute is not selected: no result
    assert cpu not in found
    assert all(f.resource["region"] == REGION for f in findings)


def test_gpuaudit_audit_with_a_policy_dir_against_a_moto_server(
    moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from scanner.cli.main import cli
    from tests.aws_helpers import AMI, REGION, client

    ec2 = client("ec2", endpoint_url=moto_server.url)
    ids = {t: ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType=t)
           ["Instances"][0]["InstanceId"] for t in ("p3.8xlarge", "g5.xlarge")}
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.json"
    res = CliRunner().invoke(cli, [
        "audit", "--endpoint-url", moto_server.url, "--regions", REGION, "--policy-dir",
        str(EXAMPLES), "--policy", ALLOW_LIST, "--format", "json", "--output", str(out),
        "--deterministic", "--include-passed", "--quiet"])
    assert res.exit_code == 1, res.output
    doc = json.loads(out.read_text())
    assert validate_report(doc) == [] and doc["errors"] == []
    assert {f["resource"]["id"]: f["status"] for f in doc["findings"]} == {
        ids["p3.8xlarge"]: "FAIL", ids["g5.xlarge"]: "PASS"}


def test_audit_reads_only_what_enabled_user_policies_read(aws: None, tmp_path: Path) -> None:
    from scanner.aws.collect import collect
    from scanner.aws.targets import TargetSpec
    from scanner.cli.audit import needed_kinds
    from tests.aws_helpers import AMI, RECORDER, REGION, client

    write(tmp_path / "p" / "instances.yaml", """
        id: ORG-T-002
        title: instances are tagged
        severity: low
        category: operations
        kinds: [ec2.instance]
        condition: {path: tags.Owner, exists: true}
        remediation: Tag it.
        """)
    config = write(tmp_path / ".gpuaudit.yaml", "policy_dirs: [p]\n")
    kinds = needed_kinds(config, ("ORG-T-002",), ())
    assert kinds == {"ec2.instance"}
    everything = needed_kinds(config, (), ())
    assert "ec2.instance" in everything and "ec2.volume" in everything
    client("ec2").run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge")
    mark = RECORDER.mark()
    result = collect(TargetSpec(regions=(REGION,)), kinds=kinds)
    operations = {op for _service, op in RECORDER.since(mark)}
    assert "DescribeInstances" in operations
    assert operations <= {"DescribeInstances", "GetCallerIdentity"}, operations
    findings = evaluate(result.resources, policy_ids=["ORG-T-002"], gaps=result.gaps)
    assert [f.status.value for f in findings] == ["FAIL"]  # no Owner tag


def test_the_docs_name_every_compute_view_field() -> None:
    from policies.declarative.fields import FIELDS

    text = (ROOT / "docs" / "user-policies.md").read_text()
    for name in FIELDS:
        assert f"`{name}" in text, name


# -- three values -------------------------------------------------------------------------------


def _resource(**attrs: object) -> Resource:
    return Resource("ec2.instance", "i-1", dict(attrs), Provenance(SourceKind.AWS), "a/r")


def _holds(cond: dict, values: dict) -> bool | None:
    import re2

    node = compile_condition(cond, re2.compile)
    return node.evaluate(lambda p: values.get(p), {}).holds


U = Unknown("var.x has no value")


@pytest.mark.parametrize(("cond", "values", "want"), [
    ({"path": "a", "equals": "x"}, {"a": "x"}, True),
    ({"path": "a", "equals": "x"}, {"a": "y"}, False),
    ({"path": "a", "equals": "x"}, {"a": U}, None),
    ({"path": "a", "equals": 2}, {"a": "2"}, True),
    ({"path": "a", "equals": True}, {"a": "true"}, True),
    ({"path": "a", "in": ["g5", "g6"]}, {"a": ["g5", "g6"]}, True),
    ({"path": "a", "in": ["g5", "g6"]}, {"a": ["g5", "p3"]}, False),
    ({"path": "a", "in": ["g5"]}, {"a": ["g5", U]}, None),
    ({"path": "a", "in": ["g5"]}, {"a": ["p3", U]}, False),  # one known value fails: FAIL
    ({"path": "a", "not_in": ["p3"]}, {"a": None}, True),
    ({"path": "a", "in": ["p3"]}, {"a": None}, False),
    ({"path": "a", "exists": True}, {"a": None}, False),
    ({"path": "a", "exists": True}, {"a": U}, None),
    ({"path": "a", "exists": False}, {"a": None}, True),
    ({"path": "a", "le": 20}, {"a": "19.5"}, True),
    ({"path": "a", "le": 20}, {"a": [1.0, 25.0]}, False),
    ({"path": "a", "gt": 1}, {"a": "lots"}, False),
    ({"path": "a", "gt": 1}, {"a": True}, False),
    ({"path": "a", "matches": "^team-"}, {"a": "team-ml"}, True),
    ({"path": "a", "matches": "^team-"}, {"a": "ml"}, False),
    ({"all": [{"path": "a", "exists": True}, {"path": "b", "exists": True}]},
     {"a": 1, "b": U}, None),
    ({"all": [{"path": "a", "exists": True}, {"path": "b", "exists": True}]},
     {"a": None, "b": U}, False),
    ({"any": [{"path": "a", "exists": True}, {"path": "b", "exists": True}]},
     {"a": None, "b": U}, None),
    ({"any": [{"path": "a", "exists": True}, {"path": "b", "exists": True}]},
     {"a": 1, "b": U}, True),
    ({"not": {"path": "a", "exists": True}}, {"a": U}, None),
    ({"not": {"path": "a", "exists": True}}, {"a": None}, True),
])
def test_conditions_are_three_valued(cond: dict, values: dict, want: bool | None) -> None:
    assert _holds(cond, values) is want


def test_an_unknown_attribute_is_unknown_naming_the_path(tmp_path: Path) -> None:
    write(tmp_path / "p" / "owner.yaml", """
        id: ORG-T-003
        title: GPU compute has an Owner
        severity: low
        category: operations
        compute: {gpu: true}
        condition: {path: tags.Owner, exists: true}
        remediation: Tag it.
        """)
    write(tmp_path / "m" / "main.tf", """
        variable "tags" {
          type = map(string)
        }
        resource "aws_instance" "unknown_tags" {
          ami           = "ami-1"
          instance_type = "g5.xlarge"
          tags          = var.tags
        }
        resource "aws_instance" "untagged" {
          ami           = "ami-1"
          instance_type = "g5.xlarge"
        }
        variable "type" {
          type = string
        }
        resource "aws_instance" "unknown_type" {
          ami           = "ami-1"
          instance_type = var.type
        }
        """)
    _code, doc = scan_json(str(tmp_path / "m"), "--policy-dir", str(tmp_path / "p"),
                           "--policy", "ORG-T-003")
    by = {f["resource"]["id"]: f for f in doc["findings"]}
    assert {k: f["status"] for k, f in by.items()} == {
        "aws_instance.unknown_tags": "UNKNOWN", "aws_instance.untagged": "FAIL",
        "aws_instance.unknown_type": "UNKNOWN"}
    assert "tags.Owner is not known" in by["aws_instance.unknown_tags"]["message"]
    assert "var.tags" in by["aws_instance.unknown_tags"]["message"]
    assert "compute.gpu" in by["aws_instance.unknown_type"]["message"]


def test_attribute_paths_of_the_kind_schema_through_lists() -> None:
    from policies.declarative.fields import read_attribute

    r = _resource(BlockDeviceMappings=[{"Ebs": {"Encrypted": True}}, {"Ebs": {"Encrypted": U}},
                                       {"DeviceName": "/dev/sdb"}],
                  InstanceType="g5.xlarge")
    assert read_attribute(r, "InstanceType") == "g5.xlarge"
    assert read_attribute(r, "BlockDeviceMappings.Ebs.Encrypted") == [True, U]
    assert read_attribute(r, "Missing.Path") is None
    assert read_attribute(_resource(BlockDeviceMappings=U), "BlockDeviceMappings.Ebs") == U


# -- validation before the scan -----------------------------------------------------------------


def _error(tmp_path: Path, text: str) -> PolicyFileError:
    path = write(tmp_path / "bad.yaml", text)
    with pytest.raises(PolicyFileError) as info:
        load_policy_file(path, builtin=discovery.builtin_ids())
    assert str(info.value).startswith(f"{path}")
    return info.value


def test_a_path_no_kind_has_is_an_error_with_the_nearest_path(tmp_path: Path) -> None:
    err = _error(tmp_path, POLICY.replace("compute.gpu_families", "compute.gpu_familes"))
    assert err.line == 7 and "did you mean 'compute.gpu_families'" in err.reason
    err = _error(tmp_path, POLICY.replace("compute: {gpu: true}", "kinds: [ec2.instance]")
                 .replace("compute.gpu_families", "InstanceTyp"))
    assert err.line == 7 and "did you mean 'InstanceType'" in err.reason
    err = _error(tmp_path, POLICY.replace("compute: {gpu: true}", "kinds: [ec2.volume]")
                 .replace("compute.gpu_families", "LaunchTemplateData.InstanceType"))
    assert "not an attribute of ec2.volume" in err.reason


def test_schema_errors_name_the_key_and_line(tmp_path: Path) -> None:
    err = _error(tmp_path, POLICY.replace("severity: high", "severity: urgent"))
    assert err.line == 3 and "key severity" in err.reason
    err = _error(tmp_path, POLICY.replace("title:", "titel:"))
    assert err.line == 2 and "'titel' (did you mean 'title'?)" in err.reason
    err = _error(tmp_path, POLICY.replace("  in: [g5]", "  inn: [g5]"))
    assert err.line == 8 and "unknown operator 'inn'; did you mean 'in'?" in err.reason
    err = _error(tmp_path, POLICY.replace("kinds", "x").replace("compute: {gpu: true}\n", ""))
    assert "kinds (e.g. kinds: [ec2.instance]), or a compute view selector" in err.reason
    err = _error(tmp_path, POLICY + "docs_url: ftp://example.com\n")
    assert "docs_url" in err.reason and err.line == 10


def test_other_problems_name_the_file_and_line(tmp_path: Path) -> None:
    assert _error(tmp_path, POLICY.replace("ORG-T-001", "VPC-004")).reason.startswith(
        "id VPC-004 is a built-in policy's")
    assert _error(tmp_path, POLICY.replace("ORG-T-001", "org-1")).line == 1
    err = _error(tmp_path, POLICY.replace("compute: {gpu: true}", "kinds: [ec2.instanc]"))
    assert err.line == 5 and "did you mean 'ec2.instance'" in err.reason
    err = _error(tmp_path, POLICY.replace("  path: compute.gpu_families\n  in: [g5]",
                                          "  path: name\n  matches: '(unclosed'"))
    assert err.line == 8 and "not a valid RE2 expression" in err.reason
    err = _error(tmp_path, "id: &a ORG-T-001\ntitle: *a\n")
    assert "anchors and aliases" in err.reason and err.line == 1
    err = _error(tmp_path, POLICY + "title: again\n")
    assert "written twice" in err.reason and err.line == 10
    err = _error(tmp_path, "id: [unclosed\n")
    assert "not valid YAML" in err.reason
    err = _error(tmp_path, POLICY.replace("  in: [g5]", "  in: [g5]\n  equals: g5"))
    assert "one operator" in err.reason


def test_a_duplicate_id_in_a_directory_names_both_files(tmp_path: Path) -> None:
    from policies.declarative import load_policy_dir

    write(tmp_path / "a.yaml", POLICY)
    write(tmp_path / "b.yaml", POLICY)
    with pytest.raises(PolicyFileError) as info:
        load_policy_dir(tmp_path)
    assert "b.yaml:1: id ORG-T-001 is already declared by" in str(info.value)
    assert "a.yaml" in str(info.value)


def test_a_broken_policy_file_is_exit_2_and_nothing_is_scanned(tmp_path: Path) -> None:
    write(tmp_path / "p" / "good.yaml", POLICY)
    write(tmp_path / "p" / "bad.yaml", POLICY.replace("ORG-T-001", "ORG-T-009")
          .replace("compute.gpu_families", "compute.gpus"))
    proc = gpuaudit("scan", str(FIXTURES / ALLOW_LIST / "fail" / "hcl"), "--policy-dir",
                    str(tmp_path / "p"), "--format", "json")
    assert proc.returncode == 2
    assert proc.stdout == ""  # no report: nothing was scanned
    assert f"{tmp_path / 'p' / 'bad.yaml'}:7:" in proc.stderr
    assert "Traceback" not in proc.stderr
    # the same from the config's policy_dirs, and on audit (before any AWS call)
    write(tmp_path / ".gpuaudit.yaml", "policy_dirs: [p]\n")
    proc = gpuaudit("audit", "--regions", "us-east-1", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "bad.yaml:7:" in proc.stderr


def test_the_published_schema_is_valid_and_the_examples_follow_it() -> None:
    import jsonschema
    import yaml

    from policies.declarative import SCHEMA_FILE, policy_files

    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    files = policy_files(EXAMPLES)
    assert len(files) == 4
    for path in files:
        assert list(jsonschema.Draft202012Validator(schema).iter_errors(
            yaml.safe_load(path.read_text()))) == []


# -- config, selection, suppressions, reports -------------------------------------------------


def test_policy_dirs_in_the_config_are_relative_to_it(tmp_path: Path) -> None:
    write(tmp_path / "conf" / "policies" / "g5.yaml", POLICY)
    write(tmp_path / "conf" / ".gpuaudit.yaml", """
        policy_dirs: [policies]
        policies:
          ORG-T-001: {enabled: true}
        """)
    iac = FIXTURES / ALLOW_LIST / "fail" / "hcl"
    _code, doc = scan_json(str(iac), "--config", str(tmp_path / "conf" / ".gpuaudit.yaml"))
    assert verdicts(doc, "ORG-T-001") == {"fail/hcl": "FAIL"}


def test_policy_and_skip_policy_select_user_policies(tmp_path: Path) -> None:
    write(tmp_path / "p" / "g5.yaml", POLICY)
    iac = FIXTURES / ALLOW_LIST / "fail" / "hcl"
    _code, doc = scan_json(str(iac), "--policy-dir", str(tmp_path / "p"), "--policy", "ORG-T-*")
    assert {f["policy_id"] for f in doc["findings"]} == {"ORG-T-001"}
    _code, doc = scan_json(str(iac), "--policy-dir", str(tmp_path / "p"),
                           "--skip-policy", "ORG-T-001")
    ids = {f["policy_id"] for f in doc["findings"]}
    assert "ORG-T-001" not in ids and "VPC-004" in ids
    proc = gpuaudit("scan", str(iac), "--policy", "ORG-T-001")  # without its directory
    assert proc.returncode == 2 and "unknown policy id ORG-T-001" in proc.stderr


def test_inline_skips_and_mutes_suppress_user_policies(tmp_path: Path) -> None:
    write(tmp_path / "p" / "g5.yaml", POLICY)
    write(tmp_path / "m" / "main.tf", """
        # gpuaudit:skip=ORG-T-001:legacy training box, retired in Q3
        resource "aws_instance" "skipped" {
          ami           = "ami-1"
          instance_type = "p3.2xlarge"
        }
        resource "aws_instance" "muted" {
          ami           = "ami-1"
          instance_type = "p3.2xlarge"
        }
        resource "aws_instance" "failing" {
          ami           = "ami-1"
          instance_type = "p3.2xlarge"
        }
        """)
    config = write(tmp_path / ".gpuaudit.yaml", """
        mutes:
          - policy: ORG-T-*
            resource: aws_instance.muted
            reason: approved exception FIN-42
            expires: 2099-01-01
        """)
    _code, doc = scan_json(str(tmp_path / "m"), "--policy-dir", str(tmp_path / "p"),
                           "--policy", "ORG-T-001", "--config", str(config))
    by = {f["resource"]["id"]: f for f in doc["findings"]}
    assert {k: f["status"] for k, f in by.items()} == {
        "aws_instance.skipped": "SUPPRESSED", "aws_instance.muted": "SUPPRESSED",
        "aws_instance.failing": "FAIL"}
    assert by["aws_instance.skipped"]["suppression"]["reason"].startswith("legacy training")
    assert by["aws_instance.muted"]["suppression"]["by"] == "mute list"


def test_reports_carry_user_policy_metadata(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = gpuaudit("scan", str(FIXTURES / ALLOW_LIST / "fail" / "hcl"),
                    str(FIXTURES / "ORG-GPU-002" / "fail" / "hcl"), "--policy-dir",
                    str(EXAMPLES), "--policy", "ORG-GPU-*", "--deterministic", "-q",
                    "--output-dir", str(out), "--format", "sarif", "--format", "html",
                    "--format", "markdown", "--format", "junit", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    sarif = json.loads((out / "report.sarif").read_text())
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    docs = "https://github.com/gpuaudit/gpuaudit/blob/main/docs/user-policies.md#examples"
    assert rules[ALLOW_LIST]["helpUri"] == docs
    assert rules[ALLOW_LIST]["shortDescription"]["text"] == \
        "GPU compute uses an approved instance family"
    assert "cost" in rules[ALLOW_LIST]["properties"]["tags"]
    assert "operations" in rules["ORG-GPU-002"]["properties"]["tags"]
    assert "security-severity" not in rules[ALLOW_LIST]["properties"]
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == ALLOW_LIST]
    assert results and results[0]["level"] == "error"
    html = (out / "report.html").read_text()
    assert ('<span class="title">GPU compute uses an approved instance family</span> '
            '<span class="cat">cost</span>') in html
    assert '<span class="cat">operations</span>' in html
    # Markdown and JUnit show a user policy as they show a built-in one: id, severity,
    # message and remediation
    markdown = (out / "report.md").read_text()
    assert f"| high | {ALLOW_LIST} | aws\\_instance.trainer" in markdown
    assert "| medium | ORG-GPU-002 |" in markdown
    junit = (out / "report.junit.xml").read_text()
    assert f'<testsuite name="{ALLOW_LIST}"' in junit and 'type="FAIL high"' in junit
    assert "remediation: Use an approved GPU family" in junit


def test_policies_list_and_show_include_user_policies() -> None:
    proc = gpuaudit("policies", "list", "--policy-dir", str(EXAMPLES))
    assert proc.returncode == 0
    assert "ORG-GPU-004" in proc.stdout and "VPC-004" in proc.stdout
    proc = gpuaudit("policies", "list", "--format", "json", "--policy-dir", str(EXAMPLES))
    listed = {p["id"]: p for p in json.loads(proc.stdout)}
    assert listed["ORG-GPU-002"]["category"] == "operations"
    assert listed["ORG-GPU-002"]["compliance"] == {"finops": ["allocation"],
                                                   "nist-800-53-r5": ["CM-8"]}
    assert listed["ORG-GPU-002"]["origin"].endswith("gpu-required-tags.yaml")
    assert "category" not in listed["VPC-004"]
    proc = gpuaudit("policies", "show", "ORG-GPU-001", "--policy-dir", str(EXAMPLES))
    assert proc.returncode == 0 and "declared in:" in proc.stdout
    assert "GPU compute uses an approved instance family" in proc.stdout
    proc = gpuaudit("policies", "show", "ORG-GPU-001")
    assert proc.returncode == 2


def test_policies_paths_lists_compute_fields_and_kind_paths() -> None:
    proc = gpuaudit("policies", "paths", "--kind", "ec2.launch_template")
    assert proc.returncode == 0
    assert "compute.gpu_families" in proc.stdout
    assert "LaunchTemplateData.InstanceMarketOptions.SpotOptions.MaxPrice" in proc.stdout


def test_a_secret_a_user_policy_reads_never_reaches_the_report(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    write(tmp_path / "p" / "owner.yaml", """
        id: ORG-T-004
        title: the Owner tag is a team
        severity: low
        category: operations
        kinds: [ec2.instance]
        condition: {path: tags.Owner, matches: "^team-"}
        remediation: Tag it.
        """)
    write(tmp_path / "m" / "main.tf", f"""
        resource "aws_instance" "a" {{
          ami           = "ami-1"
          instance_type = "g5.xlarge"
          tags          = {{ Owner = "{token}" }}
        }}
        """)
    proc = gpuaudit("scan", str(tmp_path / "m"), "--policy-dir", str(tmp_path / "p"),
                    "--policy", "ORG-T-004", "--format", "json", "--deterministic")
    doc = json.loads(proc.stdout)
    assert [f["status"] for f in doc["findings"]] == ["FAIL"]
    assert token not in proc.stdout and "redacted" in proc.stdout


def test_tags_regions_and_spot_ceiling_on_live_resources(aws: None) -> None:
    from scanner.aws.collect import collect
    from scanner.aws.targets import TargetSpec
    from scanner.cli.audit import needed_kinds
    from tests.aws_helpers import AMI, REGION, client

    discovery.use_policy_dirs([EXAMPLES])
    east, far = client("ec2"), client("ec2", region="ap-southeast-1")
    tags = [{"Key": "CostCenter", "Value": "ml"}, {"Key": "Owner", "Value": "ml@example.com"}]

    def run(ec2: object, itype: str, tagged: list[dict[str, str]]) -> str:
        spec = [{"ResourceType": "instance", "Tags": tagged}] if tagged else []
        return ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType=itype,
                                 TagSpecifications=spec)["Instances"][0]["InstanceId"]

    tagged, untagged = run(east, "g5.xlarge", tags), run(east, "g5.xlarge", tags[:1])
    far_away = run(far, "g6.xlarge", tags)
    cheap = east.request_spot_instances(SpotPrice="0.50", InstanceCount=1, LaunchSpecification={
        "ImageId": AMI, "InstanceType": "g5.xlarge"})["SpotInstanceRequests"][0]
    dear = east.request_spot_instances(SpotPrice="45.00", InstanceCount=1, LaunchSpecification={
        "ImageId": AMI, "InstanceType": "p5.48xlarge"})["SpotInstanceRequests"][0]
    wanted = ("ORG-GPU-002", "ORG-GPU-003", "ORG-GPU-004")
    result = collect(TargetSpec(regions=(REGION, "ap-southeast-1")),
                     kinds=needed_kinds(None, wanted, ()))
    found = {(f.policy_id, f.resource["id"]): f.status.value
             for f in evaluate(result.resources, policy_ids=wanted, gaps=result.gaps)}
    assert found[("ORG-GPU-002", tagged)] == "PASS"
    assert found[("ORG-GPU-002", untagged)] == "FAIL"
    assert found[("ORG-GPU-003", tagged)] == "PASS"  # us-east-1
    assert found[("ORG-GPU-003", far_away)] == "FAIL"  # ap-southeast-1
    assert found[("ORG-GPU-004", cheap["SpotInstanceRequestId"])] == "PASS"
    assert found[("ORG-GPU-004", dear["SpotInstanceRequestId"])] == "FAIL"
    assert ("ORG-GPU-004", tagged) not in found  # on-demand: not selected
    assert "UNKNOWN" not in {s for (p, _r), s in found.items() if p == "ORG-GPU-003"}


def test_findings_carry_the_controls_a_user_policy_maps_to() -> None:
    _code, doc = scan_json(str(FIXTURES / "ORG-GPU-002" / "fail" / "hcl"), "--policy-dir",
                           str(EXAMPLES), "--policy", "ORG-GPU-002")
    (finding,) = doc["findings"]
    assert finding["compliance"]["finops"] == ["allocation"]
    assert finding["compliance"]["nist-800-53-r5"] == ["CM-8"]
