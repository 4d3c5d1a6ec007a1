# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""No secret leaves the account: user data and credential-looking strings never reach resources,
findings or any report format."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scanner.aws.collect import collect
from scanner.aws.registry import ALL_KINDS
from scanner.aws.secrets import REDACTED, looks_like_credential, scrub
from scanner.aws.targets import TargetSpec
from scanner.cli.audit import audit
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    REGION,
    aws,
    aws_env,
    client,
    declared_only,
)

ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PASSWORD = "hunter2-correct-horse"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAexample\n-----END RSA PRIVATE KEY-----"
)
DB_URL = "postgres://admin:s3cr3t-db-pass@db.internal:5432/train"
USER_DATA = (
    "#!/bin/bash\n"
    f"export AWS_ACCESS_KEY_ID={ACCESS_KEY}\n"
    f"export AWS_SECRET_ACCESS_KEY={SECRET_KEY}\n"
    "echo plain-user-data-marker\n"
)
USER_DATA_B64 = base64.b64encode(USER_DATA.encode()).decode()
MARKERS = (
    ACCESS_KEY,
    SECRET_KEY,
    "hunter2",
    "BEGIN RSA PRIVATE KEY",
    "MIIEowIBAAKCAQEAexample",
    "s3cr3t-db-pass",
    "plain-user-data-marker",
    USER_DATA_B64[:40],
)


def test_scrub_drops_user_data_and_redacts_credentials() -> None:
    value = {
        "UserData": USER_DATA_B64,
        "LaunchTemplateData": {"UserData": "x", "InstanceType": "g5.xlarge"},
        "Specs": [{"userData": "y", "ImageId": AMI}],
        "Description": f"key {ACCESS_KEY}",
        "Note": f"password = {PASSWORD}",
        "Pem": PRIVATE_KEY,
        "Url": DB_URL,
        "Ok": "token-bucket arn:aws:ec2:us-east-1:123456789012:volume/vol-1 s3:GetObject",
        "Count": 3,
    }
    out = scrub(value)
    assert out == {
        "LaunchTemplateData": {"InstanceType": "g5.xlarge"},
        "Specs": [{"ImageId": AMI}],
        "Description": REDACTED,
        "Note": REDACTED,
        "Pem": REDACTED,
        "Url": REDACTED,
        "Ok": value["Ok"],
        "Count": 3,
    }
    for text in (f"aws_secret_access_key={SECRET_KEY}", "ASIAABCDEFGHIJKLMNOP", "api_key: abc"):
        assert looks_like_credential(text)
    for text in ("g5.xlarge", "price-capacity-optimized", "com.amazonaws.us-east-1.s3", "team=ml"):
        assert not looks_like_credential(text)


def seed_secrets() -> None:
    ec2 = client("ec2")
    asg = client("autoscaling")
    secret_tags = [
        {"Key": "Name", "Value": "gpu"},
        {"Key": "bootstrap", "Value": f"password={PASSWORD}"},
        {"Key": "deploy-key", "Value": PRIVATE_KEY},
        {"Key": "note", "Value": f"rotated {ACCESS_KEY}"},
    ]
    ec2.create_volume(
        Size=1,
        AvailabilityZone="us-east-1a",
        TagSpecifications=[{"ResourceType": "volume", "Tags": secret_tags}],
    )
    ec2.create_launch_template(
        LaunchTemplateName="leaky",
        LaunchTemplateData={
            "InstanceType": "g5.xlarge",
            "ImageId": AMI,
            "UserData": USER_DATA_B64,
            "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "9"}},
        },
        TagSpecifications=[{"ResourceType": "launch-template", "Tags": secret_tags}],
    )
    ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType="g5.xlarge",
        UserData=USER_DATA,
        TagSpecifications=[{"ResourceType": "instance", "Tags": secret_tags}],
    )
    asg.create_launch_configuration(
        LaunchConfigurationName="leaky-lc",
        ImageId=AMI,
        InstanceType="g5.xlarge",
        UserData=USER_DATA,
        SpotPrice="9.00",
    )
    asg.create_auto_scaling_group(
        AutoScalingGroupName="leaky-asg",
        LaunchConfigurationName="leaky-lc",
        MinSize=0,
        MaxSize=1,
        AvailabilityZones=["us-east-1a"],
        Tags=[{"Key": "db", "Value": DB_URL, "PropagateAtLaunch": False}],
    )
    ec2.request_spot_instances(
        SpotPrice="9.00",
        LaunchSpecification={
            "ImageId": AMI,
            "InstanceType": "g5.xlarge",
            "UserData": USER_DATA_B64,
        },
    )
    ec2.request_spot_fleet(
        SpotFleetRequestConfig={
            "IamFleetRole": f"arn:aws:iam::{ACCOUNT}:role/fleet",
            "SpotPrice": "9.00",
            "TargetCapacity": 1,
            "AllocationStrategy": "lowestPrice",
            "LaunchSpecifications": [
                {"ImageId": AMI, "InstanceType": "g5.xlarge", "UserData": USER_DATA_B64}
            ],
        }
    )


def walk_keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {str(k) for k in value} | {k for v in value.values() for k in walk_keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in walk_keys(v)}
    return set()


def test_no_secret_reaches_resources(aws: None) -> None:
    seed_secrets()
    result = collect(TargetSpec(regions=(REGION,)), kinds=ALL_KINDS)
    kinds = {r.kind for r in result.resources}
    assert {
        "ec2.volume",
        "ec2.launch_template",
        "ec2.instance",
        "autoscaling.group",
        "autoscaling.launch_configuration",
        "ec2.spot_request",
        "ec2.spot_fleet",
    } <= kinds
    text = repr(result)
    for marker in MARKERS:
        assert marker not in text
    for r in result.resources:
        assert not {k.lower() for k in walk_keys(r.attrs)} & {"userdata"}
    vol = next(r for r in result.resources if r.kind == "ec2.volume" and r.tags)
    assert vol.tags == {"Name": "gpu", "bootstrap": REDACTED, "deploy-key": REDACTED,
                        "note": REDACTED}
    assert vol.name == "gpu"


def test_no_secret_reaches_any_report(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_secrets()
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    formats = ["json", "html", "sarif", "junit", "markdown", "csv", "table"]
    args = [
        "--regions",
        REGION,
        "--output-dir",
        str(out),
        "--deterministic",
        "--policy",
        "EBS-001",
        "--policy",
        "SPOT-001",
        "--policy",
        "ASG-002",
        "--policy",
        "VPC-004",
    ]
    for fmt in formats:
        args += ["--format", fmt]
    res = CliRunner().invoke(audit, args)
    assert res.exit_code in (1, 2), res.output
    files = sorted(out.iterdir())
    assert len(files) == len(formats)
    report = (out / "report.json").read_text()
    assert '"SPOT-001"' in report and '"FAIL"' in report  # the leaky resources were audited
    assert "leaky" in report
    for path in files:
        text = path.read_text()
        for marker in MARKERS:
            assert marker not in text, f"{marker!r} leaked into {path.name}"
    for marker in MARKERS:
        assert marker not in res.output


def test_scrub_remembers_verdicts_without_changing_them() -> None:
    """The verdict cache must give the same answer on every look, credential or not."""
    for _ in range(3):
        assert scrub({"Description": f"key {ACCESS_KEY}", "State": "in-use"}) == {
            "Description": REDACTED,
            "State": "in-use",
        }
        assert scrub({"userData": USER_DATA_B64, "Size": 8}) == {"Size": 8}
