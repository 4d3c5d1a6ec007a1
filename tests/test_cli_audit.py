# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""`gpuaudit audit` and `gpuaudit iam-policy` end to end, against a moto server on 127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from policies import all_policies
from scanner.aws.collectors.ebs import EBS_KMS
from scanner.aws.iam_policy import policy_document
from scanner.aws.registry import selected
from scanner.aws.targets import Target
from scanner.cli.audit import Progress, needed_kinds
from scanner.cli.main import cli
from scanner.findings.schema import validate_report
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    REGION,
    MotoServer,
    aws_env,
    client,
    declared_only,
    moto_server,
    moto_server_module,
)

WEST = "us-west-2"


def seed(url: str) -> dict[str, str]:
    """A small GPU estate in us-east-1, and a well-configured us-west-2."""
    ec2 = client("ec2", endpoint_url=url)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24", AvailabilityZone="us-east-1a")[
        "Subnet"
    ]["SubnetId"]
    inst = ec2.run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge", SubnetId=sub
    )["Instances"][0]
    data = ec2.create_volume(
        Size=10,
        AvailabilityZone="us-east-1a",
        Encrypted=True,
        TagSpecifications=[{"ResourceType": "volume", "Tags": [{"Key": "Name", "Value": "data"}]}],
    )["VolumeId"]
    scratch = ec2.create_volume(
        Size=10,
        AvailabilityZone="us-east-1a",
        TagSpecifications=[
            {
                "ResourceType": "volume",
                "Tags": [
                    {"Key": "Name", "Value": "scratch"},
                    {"Key": "gpuaudit:skip", "Value": "EBS-001:wiped nightly"},
                ],
            }
        ],
    )["VolumeId"]
    lt = ec2.create_launch_template(
        LaunchTemplateName="spot-lt",
        LaunchTemplateData={
            "ImageId": AMI,
            "InstanceType": "g5.xlarge",
            "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "0.95"}},
        },
    )["LaunchTemplate"]["LaunchTemplateId"]
    # the group's spot share is its mixed instances policy's: its template requests no spot
    # (AWS rejects a spot template there)
    ec2.create_launch_template(LaunchTemplateName="gpu-lt", LaunchTemplateData={
        "ImageId": AMI, "InstanceType": "g5.xlarge"})
    client("autoscaling", endpoint_url=url).create_auto_scaling_group(
        AutoScalingGroupName="gpu-asg",
        MinSize=0,
        MaxSize=4,  # at most 2 would be too small to hold a split in the band: a notice
        DesiredCapacity=0,
        VPCZoneIdentifier=sub,
        MixedInstancesPolicy={
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {
                    "LaunchTemplateName": "gpu-lt",
                    "Version": "$Default",
                },
                "Overrides": [{"InstanceType": "g5.xlarge"}],
            },
            "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 50},
        },
    )
    west = client("ec2", region=WEST, endpoint_url=url)
    west.enable_ebs_encryption_by_default()
    west_vol = west.create_volume(Size=5, AvailabilityZone="us-west-2a", Encrypted=True)["VolumeId"]
    return {
        "vpc": vpc,
        "subnet": sub,
        "instance": inst["InstanceId"],
        "root": inst["BlockDeviceMappings"][0]["Ebs"]["VolumeId"],
        "data": data,
        "scratch": scratch,
        "lt": lt,
        "west_volume": west_vol,
    }


EAST = f"{ACCOUNT}/{REGION}"


def expected_results(ids: dict[str, str]) -> set[tuple[str, str, str]]:
    """(policy, resource id, status) of every non-PASS result, reasoned from the seed."""
    return {
        ("EBS-001", ids["root"], "FAIL"),  # moto creates the root volume unencrypted
        ("EBS-001", ids["scratch"], "SUPPRESSED"),  # the gpuaudit:skip tag, with its reason
        ("EBS-002", EAST, "FAIL"),  # default encryption off in us-east-1 (on in us-west-2)
        ("VPC-001", ids["vpc"], "FAIL"),  # hosts a g5 instance, no S3 gateway endpoint
        ("SPOT-001", ids["lt"], "FAIL"),  # 0.95 > 0.7 x 1.006 $/h
        ("SPOT-001", "gpu-asg", "FAIL"),  # spot share > 0 and no SpotMaxPrice (= on-demand)
        ("ASG-001", "gpu-asg", "FAIL"),  # 2 of 4 on demand at MaxSize: 50% > 40%
        ("ASG-002", "gpu-asg", "FAIL"),  # one instance type, lowest-price by default
        ("RS-003", ids["instance"], "FAIL"),  # a running g5 that publishes no GPU metrics
        # spot GPU capacity, and no EventBridge rule, capacity rebalance or termination hook
        ("SPOT-003", "gpu-asg", "FAIL"),
        ("COST-002", f"budgets:{ACCOUNT}", "FAIL"),  # GPU compute, and no budget at all
    }


def not_passing(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {
        (f["policy_id"], f["resource"]["id"], f["status"])
        for f in doc["findings"]
        if f["status"] != "PASS"
    }


def invoke(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(tmp_path)  # no project config from the checkout
    return CliRunner().invoke(cli, ["audit", *args])


def test_audit_end_to_end(
    moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = seed(moto_server.url)
    out = tmp_path / "report.json"
    args = [
        "--endpoint-url",
        moto_server.url,
        "--regions",
        f"{REGION},{WEST}",
        "--format",
        "json",
        "--output",
        str(out),
        "--deterministic",
        "--include-passed",
    ]
    res = invoke(args, tmp_path, monkeypatch)
    assert res.exit_code == 1, res.output  # failing findings at or above the default fail-on
    doc = json.loads(out.read_text())
    assert validate_report(doc) == []
    assert doc["inputs"] == {"accounts": [ACCOUNT], "regions": [REGION, WEST]}
    assert doc["errors"] == []
    assert not_passing(doc) == expected_results(ids)
    passing = {
        (f["policy_id"], f["resource"]["id"]) for f in doc["findings"] if f["status"] == "PASS"
    }
    assert {
        ("EBS-001", ids["data"]),
        ("EBS-001", ids["west_volume"]),
        ("EBS-002", f"{ACCOUNT}/{WEST}"),
        ("VPC-004", ids["instance"]),
    } <= passing
    # identity: account, region, id, name and ARN
    scratch = next(f for f in doc["findings"] if f["resource"]["id"] == ids["scratch"])
    assert scratch["resource"] == {
        "kind": "ec2.volume",
        "id": ids["scratch"],
        "name": "scratch",
        "address": None,
        "arn": f"arn:aws:ec2:{REGION}:{ACCOUNT}:volume/{ids['scratch']}",
        "account": ACCOUNT,
        "region": REGION,
        "tags": {"Name": "scratch", "gpuaudit:skip": "EBS-001:wiped nightly"},
    }
    assert {k: scratch["suppression"][k] for k in ("by", "reason", "expires")} == {
        "by": "tag gpuaudit:skip",
        "reason": "wiped nightly",
        "expires": None,
    }
    assert scratch["location"] is None
    # coverage: every (account, region, service) that ran, all readable
    cov = {(c["region"], c["service"]): c for c in doc["coverage"]}
    services = {c.name for c in selected(needed_kinds(None, (), ()))}  # what policies need
    assert {"ebs", "instances", "launch_templates", "autoscaling", "spot", "vpc"} <= services
    assert set(cov) == {(r, s) for r in (REGION, WEST) for s in services} | {("*", "budgets")}
    assert all(c["status"] == "ok" and c["account"] == ACCOUNT for c in cov.values())
    assert cov[(REGION, "vpc")]["calls"] == 5
    # progress went to stderr, one plain line per pair (not a terminal)
    assert res.stderr.splitlines() == [
        "gpuaudit: auditing 2 account/region pair(s)",
        *sorted(res.stderr.splitlines()[1:]),
    ]
    assert {line.split("] ")[1] for line in res.stderr.splitlines()[1:]} == {
        f"{ACCOUNT}/{REGION} ok",
        f"{ACCOUNT}/{WEST} ok",
    }
    # the same account state gives byte-identical JSON
    first = out.read_bytes()
    assert invoke(args, tmp_path, monkeypatch).exit_code == 1
    assert out.read_bytes() == first


def test_an_ebs_audit_reads_the_volumes_only(
    moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live EBS policies judge the volumes themselves: an EBS-only audit does not read
    instances, templates, groups or spot requests, and finds what the whole audit finds."""
    ids = seed(moto_server.url)
    out = tmp_path / "report.json"
    args = ["--endpoint-url", moto_server.url, "--regions", f"{REGION},{WEST}",
            "--format", "json", "--output", str(out), "--policy", "EBS-001",
            "--policy", "EBS-002"]
    res = invoke(args, tmp_path, monkeypatch)
    assert res.exit_code == 1, res.output
    doc = json.loads(out.read_text())
    assert doc["errors"] == []
    assert {(c["region"], c["service"], c["calls"]) for c in doc["coverage"]} == {
        (REGION, "ebs", 2), (WEST, "ebs", 2)}  # GetEbsEncryptionByDefault, DescribeVolumes
    assert not_passing(doc) == {r for r in expected_results(ids) if r[0].startswith("EBS-")}
    assert doc["summary"]["by_policy"]["EBS-001"]["PASS"] == 2  # data, west_volume
    res = CliRunner().invoke(cli, ["iam-policy", "--policy", "EBS-001"])
    assert json.loads(res.stdout)["Statement"][0]["Action"] == [
        "ec2:DescribeVolumes", "ec2:GetEbsEncryptionByDefault"]


def test_console_script_quiet_json_on_stdout(moto_server: MotoServer, tmp_path: Path) -> None:
    ids = seed(moto_server.url)
    exe = Path(sys.executable).with_name("gpuaudit")
    if not exe.exists():
        pytest.skip("the gpuaudit console script is not installed in this environment")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
    proc = subprocess.run(
        [
            str(exe),
            "audit",
            "--endpoint-url",
            moto_server.url,
            "--regions",
            REGION,
            "--format",
            "json",
            "--quiet",
            "--deterministic",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""  # --quiet: no progress
    doc = json.loads(proc.stdout)
    assert not_passing(doc) == expected_results(ids)
    assert doc["inputs"] == {"accounts": [ACCOUNT], "regions": [REGION]}


def test_unreachable_service_gives_errors_error_results_and_exit_2(
    moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = seed(moto_server.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.url)  # boto3's own setting...
    monkeypatch.setenv("AWS_ENDPOINT_URL_AUTO_SCALING", "http://127.0.0.1:1")  # ...per service
    out = tmp_path / "report.json"
    res = invoke(
        ["--regions", REGION, "--format", "json", "--output", str(out), "--max-attempts", "1"],
        tmp_path,
        monkeypatch,
    )
    assert res.exit_code == 2, res.output
    assert out.exists()  # the report is still written
    doc = json.loads(out.read_text())
    assert validate_report(doc) == []
    assert {e["path"] for e in doc["errors"]} == {
        f"{EAST}/autoscaling:DescribeAutoScalingGroups",
        f"{EAST}/autoscaling:DescribeLaunchConfigurations",
        f"{EAST}/autoscaling:DescribePolicies",  # ASG-003's scaling policies
        f"{EAST}/autoscaling:DescribeLifecycleHooks",  # SPOT-003's: never read without groups
    }
    assert all(e["kind"] == "aws" and "endpoint unreachable" in e["reason"] for e in doc["errors"])
    errors = {f["policy_id"] for f in doc["findings"] if f["status"] == "ERROR"}
    assert {"ASG-001", "ASG-002"} <= errors  # never "no Auto Scaling groups"
    # every policy that reads groups or launch configurations judges nothing in the region:
    # its results there are ERROR, each naming the call that failed
    groups = {"autoscaling.group", "autoscaling.launch_configuration"}
    readers = {p.id for p in all_policies().values()  # of the policies a default audit runs
               if p.enabled_by_default and groups & set(p.observed_needs)}
    assert errors == readers
    for f in doc["findings"]:
        # COST-002's verdict on the account stands on what was read: a GPU instance runs and
        # no budget covers it, whatever the unread groups hold; the region still has its ERROR
        if f["policy_id"] in readers and f["resource"]["kind"] != "budgets.account":
            assert f["status"] == "ERROR", f
            assert "autoscaling:DescribeAutoScalingGroups: endpoint unreachable" in f["message"]
    assert ("SPOT-001", ids["lt"], "ERROR") in not_passing(doc)  # it may launch through a group
    # what could be read is still judged by the policies that read nothing missing
    assert {("EBS-002", EAST, "FAIL"), ("EBS-001", ids["root"], "FAIL")} <= not_passing(doc)
    row = next(c for c in doc["coverage"] if c["service"] == "autoscaling")
    assert row["status"] == "error" and "endpoint unreachable" in row["error"]


def test_ebs_003_needs_the_default_key_and_moto_lacks_it(
    moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert EBS_KMS in all_policies()["EBS-003"].observed_needs
    seed(moto_server.url)
    out = tmp_path / "report.json"
    res = invoke(
        [
            "--endpoint-url",
            moto_server.url,
            "--regions",
            REGION,
            "--format",
            "json",
            "--output",
            str(out),
            "--policy",
            "EBS-002",
            "--policy",
            "EBS-003",
            "--max-attempts",
            "1",
        ],
        tmp_path,
        monkeypatch,
    )
    assert res.exit_code == 2
    doc = json.loads(out.read_text())
    assert [e["path"] for e in doc["errors"]] == [f"{EAST}/ec2:GetEbsDefaultKmsKeyId"]
    # without the default key EBS-003 judges no volume of the region; EBS-002 still does
    assert {f["policy_id"] for f in doc["findings"] if f["status"] == "ERROR"} == {"EBS-003"}
    ebs_003 = [f for f in doc["findings"] if f["policy_id"] == "EBS-003"]
    assert {f["resource"]["kind"] for f in ebs_003} == {"ec2.volume"}
    assert all(f["status"] == "ERROR" and "ec2:GetEbsDefaultKmsKeyId" in f["message"]
               for f in ebs_003)
    assert ("EBS-002", EAST, "FAIL") in not_passing(doc)


def test_shards_split_the_pairs(
    moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each shard audits its own pairs; `report merge` of the shards is the unsharded audit."""
    ids = seed(moto_server.url)
    regions = []
    for k in ("1/2", "2/2", None):
        out = tmp_path / f"shard{(k or 'all').replace('/', 'of')}.json"
        shard = ["--shard", k] if k else []
        res = invoke(
            [
                "--endpoint-url",
                moto_server.url,
                "--regions",
                f"{WEST},{REGION}",
                *shard,
                "--format",
                "json",
                "--output",
                str(out),
                "--deterministic",
                "-q",
            ],
            tmp_path,
            monkeypatch,
        )
        assert res.exit_code in (0, 1), res.output
        doc = json.loads(out.read_text())
        regions.append(doc["inputs"]["regions"])
        # "*": what is read once per account (AWS Budgets)
        assert {c["region"] for c in doc["coverage"]} - {"*"} == set(doc["inputs"]["regions"])
    assert regions == [[REGION], [WEST], [REGION, WEST]]
    merged = tmp_path / "merged.json"
    res = CliRunner().invoke(
        cli,
        ["report", "merge", str(tmp_path / "shard1of2.json"), str(tmp_path / "shard2of2.json"),
         "--format", "json", "-o", str(merged), "--deterministic", "-q"],
    )
    whole = json.loads((tmp_path / "shardall.json").read_text())
    assert res.exit_code == 1, res.output  # the seed's high FAIL (EBS-001 on the root volume)
    doc = json.loads(merged.read_text())
    assert validate_report(doc) == []
    assert doc == whole
    assert not_passing(doc) == expected_results(ids)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--org"], "--org needs --role-name"),
        (["--shard", "3/2"], "K must be between 1 and N"),
        (["--shard", "half"], "expected K/N"),
        (["--regions", "narnia"], "not a region name"),
        (["--role-arn", "arn:aws:iam::1:root"], "not an IAM role ARN"),
        (["--policy", "NOPE-001", "--regions", REGION], "unknown policy id NOPE-001"),
    ],
)
def test_usage_errors_exit_2_before_any_call(
    aws_env: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    res = invoke(["--endpoint-url", "http://127.0.0.1:1", *args], tmp_path, monkeypatch)
    assert res.exit_code == 2
    assert message in res.output


def test_progress_bar_on_a_terminal_plain_lines_otherwise_none_when_quiet() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty = Tty()
    bar = Progress(tty)
    bar.start(2)
    bar(1, 2, Target(ACCOUNT, REGION), "ok")
    bar(2, 2, Target(ACCOUNT, WEST), "error")
    text = tty.getvalue()
    assert text.startswith("\r[" + "#" * 12 + "-" * 12 + f"] 1/2 {ACCOUNT}/{REGION} ok")
    assert f"\r[{'#' * 24}] 2/2 {ACCOUNT}/{WEST} error" in text and text.endswith("\n")
    assert text.count("\n") == 1

    plain = io.StringIO()
    lines = Progress(plain)
    lines.start(1)
    lines(1, 1, Target(ACCOUNT, REGION), "ok")
    assert plain.getvalue() == (
        f"gpuaudit: auditing 1 account/region pair(s)\ngpuaudit: [1/1] {ACCOUNT}/{REGION} ok\n"
    )

    quiet = io.StringIO()
    off = Progress(quiet, enabled=False)
    off.start(1)
    off(1, 1, Target(ACCOUNT, REGION), "ok")
    assert quiet.getvalue() == ""


def test_iam_policy_command() -> None:
    runner = CliRunner()
    res = runner.invoke(cli, ["iam-policy"])
    assert res.exit_code == 0
    assert json.loads(res.stdout) == policy_document()
    res = runner.invoke(cli, ["iam-policy", "--policy", "EBS-002"])
    assert res.exit_code == 0
    actions = json.loads(res.stdout)["Statement"][0]["Action"]
    assert actions == ["ec2:GetEbsEncryptionByDefault"]
    res = runner.invoke(cli, ["iam-policy", "--policy", "NOPE-1"])
    assert res.exit_code == 2 and "unknown policy id NOPE-1" in res.output
