# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""Failures are reported, never hidden: denied, throttled, unreachable, unreadable, malformed.

Each fault is injected with a botocore ``before-send`` handler on gpuaudit's own sessions (the
request is built and signed, then answered with a real HTTP error response that botocore parses
and retries as it would AWS's), or with an endpoint that refuses connections.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.collectors.ebs import EBS_KMS
from scanner.aws.registry import DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.model import Gap, SourceResult
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    REGION,
    Fault,
    aws,
    aws_env,
    by_kind,
    client,
    declared_only,
    ec2_error,
    http_response,
    moto_server,
    moto_server_module,
    query_error,
    session_maker,
)

SCOPE = f"{ACCOUNT}/{REGION}"


def seed() -> dict[str, str]:
    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    vol = ec2.create_volume(Size=1, AvailabilityZone="us-east-1a")["VolumeId"]
    inst = ec2.run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge", SubnetId=subnet
    )["Instances"][0]["InstanceId"]
    asg = client("autoscaling")
    asg.create_launch_configuration(
        LaunchConfigurationName="lc", ImageId=AMI, InstanceType="g5.xlarge"
    )
    asg.create_auto_scaling_group(
        AutoScalingGroupName="grp",
        LaunchConfigurationName="lc",
        MinSize=0,
        MaxSize=1,
        VPCZoneIdentifier=subnet,
    )
    return {"vpc": vpc, "subnet": subnet, "volume": vol, "instance": inst}


def run(faults: dict[str, Any], kinds: Any = DEFAULT_KINDS, **kw: Any) -> SourceResult:
    return collect(
        TargetSpec(regions=(REGION,)),
        kinds=kinds,
        max_workers=2,
        session_maker=session_maker(faults),
        **kw,
    )


def kinds_of(result: SourceResult) -> set[str]:
    return {r.kind for r in result.resources}


def row(result: SourceResult, service: str) -> dict[str, Any]:
    return next(c for c in result.coverage if c["service"] == service)


def test_denied_list_call_is_an_error_and_a_gap_and_the_rest_completes(aws: None) -> None:
    ids = seed()
    fault = Fault(
        403, ec2_error("UnauthorizedOperation", "You are not authorized to perform this operation.")
    )
    result = run({"before-send.ec2.DescribeRouteTables": fault})

    assert fault.attempts == 1  # a denial is not retried
    assert [e.as_dict() for e in result.errors] == [
        {
            "kind": "aws",
            "path": f"{SCOPE}/ec2:DescribeRouteTables",
            "reason": "access denied (UnauthorizedOperation): You are not authorized to perform "
            "this operation.",
        }
    ]
    assert result.gaps == [
        Gap(
            scope=SCOPE,
            kinds=("ec2.route_table",),
            reason="ec2:DescribeRouteTables: " + result.errors[0].reason,
            account=ACCOUNT,
            region=REGION,
        )
    ]
    # never "no route tables": none are reported, and the rest of the region is there
    assert by_kind(result.resources, "ec2.route_table") == []
    assert {
        "ec2.vpc",
        "ec2.subnet",
        "ec2.volume",
        "ec2.instance",
        "autoscaling.group",
        "autoscaling.launch_configuration",
        "ec2.ebs_defaults",
    } <= kinds_of(result)
    assert ids["subnet"] in {r.id for r in by_kind(result.resources, "ec2.subnet")}
    vpc_row = row(result, "vpc")
    assert vpc_row["status"] == "error"
    assert vpc_row["error"].startswith("ec2:DescribeRouteTables: access denied")
    assert vpc_row["calls"] == 5
    assert all(c["status"] == "ok" for c in result.coverage if c["service"] != "vpc")


def test_denied_auto_scaling_call_leaves_the_other_auto_scaling_lists(aws: None) -> None:
    seed()
    fault = Fault(403, query_error("AccessDenied", "User is not authorized"))
    result = run({"before-send.auto-scaling.DescribeAutoScalingGroups": fault})
    # the lifecycle hooks are read per group: without the groups they are not read either
    assert [e.path for e in result.errors] == [f"{SCOPE}/autoscaling:DescribeAutoScalingGroups",
                                               f"{SCOPE}/autoscaling:DescribeLifecycleHooks"]
    assert result.errors[0].reason == "access denied (AccessDenied): User is not authorized"
    assert [g.kinds for g in result.gaps] == [("autoscaling.group", "autoscaling.lifecycle_hook"),
                                              ("autoscaling.lifecycle_hook",)]
    assert by_kind(result.resources, "autoscaling.group") == []
    assert [r.id for r in by_kind(result.resources, "autoscaling.launch_configuration")] == ["lc"]


def test_throttling_is_retried_then_reported(aws: None) -> None:
    ids = seed()
    client("ec2").create_vpc_endpoint(VpcId=ids["vpc"], ServiceName=f"com.amazonaws.{REGION}.s3")
    fault = Fault(503, ec2_error("RequestLimitExceeded", "Request limit exceeded."))
    # the last EC2 call of the region, so that the adaptive rate limiter slows nothing else
    result = run({"before-send.ec2.DescribeVpcEndpoints": fault}, max_attempts=2)

    assert fault.attempts == 2  # adaptive retries tried again before giving up
    assert [e.as_dict() for e in result.errors] == [
        {
            "kind": "aws",
            "path": f"{SCOPE}/ec2:DescribeVpcEndpoints",
            "reason": "throttled (RequestLimitExceeded) after 2 attempts",
        }
    ]
    assert [g.kinds for g in result.gaps] == [("ec2.vpc_endpoint",)]
    assert by_kind(result.resources, "ec2.vpc_endpoint") == []
    assert ids["vpc"] in {r.id for r in by_kind(result.resources, "ec2.vpc")}
    assert row(result, "vpc")["calls"] == 5  # a retried call is one call


def test_throttled_volumes_leave_instances_unjoined(aws: None) -> None:
    ids = seed()
    fault = Fault(400, ec2_error("Throttling", "Rate exceeded"))
    result = run(
        {"before-send.ec2.DescribeVolumes": fault},
        kinds={"ec2.volume", "ec2.instance"},
        max_attempts=1,
    )
    assert fault.attempts == 1
    assert result.errors[0].reason == "throttled (Throttling) after 1 attempt"
    assert by_kind(result.resources, "ec2.volume") == []
    (inst,) = by_kind(result.resources, "ec2.instance")
    assert inst.id == ids["instance"]
    # the volume join could not happen: the block device says nothing it does not know
    assert "Encrypted" not in inst.attrs["BlockDeviceMappings"][0]["Ebs"]


def test_unreadable_response_is_reported(aws: None) -> None:
    seed()
    html = "<html><body><h1>500 Internal Server Error</h1></body></html>"
    fault = Fault(500, html, "text/html")
    result = run({"before-send.ec2.GetEbsEncryptionByDefault": fault}, max_attempts=1)
    assert [e.path for e in result.errors] == [f"{SCOPE}/ec2:GetEbsEncryptionByDefault"]
    assert [g.kinds for g in result.gaps] == [("ec2.ebs_defaults",)]
    assert by_kind(result.resources, "ec2.ebs_defaults") == []
    assert by_kind(result.resources, "ec2.volume")


def test_malformed_items_fail_their_collector_only(aws: None) -> None:
    seed()
    body = (
        '<DescribeVolumesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
        "<volumeSet><item><size>1</size></item></volumeSet></DescribeVolumesResponse>"
    )
    result = run({"before-send.ec2.DescribeVolumes": Fault(200, body)})
    assert [e.path for e in result.errors] == [f"{SCOPE}/ebs"]
    assert result.errors[0].reason.startswith("collector failed: KeyError")
    assert [g.kinds for g in result.gaps] == [("ec2.ebs_defaults", "ec2.volume")]
    assert by_kind(result.resources, "ec2.instance")
    assert row(result, "ebs")["status"] == "error"


def test_list_calls_follow_next_token(aws: None) -> None:
    pages: list[str] = []

    def two_pages(request: Any = None, **_: Any) -> Any:
        body = request.body.decode() if isinstance(request.body, bytes) else str(request.body)
        second = "NextToken=page2" in body
        pages.append("2" if second else "1")
        vid, token = (
            ("vol-00000000000000002", "")
            if second
            else ("vol-00000000000000001", "<nextToken>page2</nextToken>")
        )
        return http_response(
            200,
            (
                '<DescribeVolumesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
                f"<volumeSet><item><volumeId>{vid}</volumeId><size>4</size>"
                "<encrypted>true</encrypted></item></volumeSet>"
                f"{token}</DescribeVolumesResponse>"
            ),
        )

    result = run({"before-send.ec2.DescribeVolumes": two_pages}, kinds={"ec2.volume"})
    assert pages == ["1", "2"]
    assert [r.id for r in result.resources] == ["vol-00000000000000001", "vol-00000000000000002"]
    assert result.coverage[0]["calls"] == 2


def test_unreachable_service_endpoint(moto_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """boto3's own per-service endpoint setting applies when --endpoint-url is not given."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.url)
    seed()
    monkeypatch.setenv("AWS_ENDPOINT_URL_AUTO_SCALING", "http://127.0.0.1:1")
    result = run({}, max_attempts=1)
    assert sorted(e.path for e in result.errors) == [
        f"{SCOPE}/autoscaling:DescribeAutoScalingGroups",
        f"{SCOPE}/autoscaling:DescribeLaunchConfigurations",
        f"{SCOPE}/autoscaling:DescribeLifecycleHooks",
        f"{SCOPE}/autoscaling:DescribePolicies",
    ]
    first, *rest = result.errors
    assert first.reason.startswith("endpoint unreachable: http://127.0.0.1:1")
    # the other calls of the unreachable service are not sent (each would wait through its
    # retries), but each is reported with its own gap
    assert sorted(e.reason for e in rest) == [
        f"not attempted after an earlier failure: {first.reason}"
    ] * 2 + [f"not attempted: the Auto Scaling groups could not be read ({first.reason})"]
    assert sorted(g.kinds for g in result.gaps) == [
        ("autoscaling.group", "autoscaling.lifecycle_hook"),
        ("autoscaling.launch_configuration",),
        ("autoscaling.lifecycle_hook",),
        ("autoscaling.scaling_policy",),
    ]
    assert {"ec2.volume", "ec2.instance", "ec2.subnet"} <= kinds_of(result)
    assert row(result, "autoscaling")["status"] == "error"


def test_unreachable_endpoint_for_everything(aws_env: None) -> None:
    result = collect(
        TargetSpec(regions=(REGION, "eu-west-1")),
        kinds=DEFAULT_KINDS,
        endpoint_url="http://127.0.0.1:1",
        max_attempts=1,
    )
    # the identity call fails first: one error, one gap with every kind, per requested region
    assert [e.path for e in result.errors] == [
        "default credentials/eu-west-1/sts:GetCallerIdentity",
        "default credentials/us-east-1/sts:GetCallerIdentity",
    ]
    assert {g.kinds for g in result.gaps} == {tuple(sorted(DEFAULT_KINDS))}
    assert result.resources == []
    assert [c["status"] for c in result.coverage] == ["error", "error"]


def test_default_kms_key_html_500_from_a_server_is_an_ebs_kms_gap(moto_server: Any) -> None:
    client("ec2", endpoint_url=moto_server.url).create_volume(Size=1, AvailabilityZone="us-east-1a")
    result = collect(
        TargetSpec(regions=(REGION,)),
        kinds={"ec2.volume", "ec2.ebs_defaults", EBS_KMS},
        endpoint_url=moto_server.url,
        max_attempts=1,
    )
    assert [e.path for e in result.errors] == [f"{SCOPE}/ec2:GetEbsDefaultKmsKeyId"]
    assert [g.kinds for g in result.gaps] == [(EBS_KMS,)]
    assert by_kind(result.resources, "ec2.volume")
    assert by_kind(result.resources, "ec2.ebs_defaults")[0].attrs["EbsEncryptionByDefault"] is False


def test_region_wide_refusal_stops_the_service_but_reports_every_kind(aws: None) -> None:
    seed()
    refused = Fault(401, ec2_error("AuthFailure", "AWS was not able to validate the credentials"))
    result = run({"before-send.ec2": refused})
    assert refused.attempts == 1  # the first EC2 call; the others were not sent
    gapped = {k for g in result.gaps for k in g.kinds}
    assert {
        "ec2.volume",
        "ec2.ebs_defaults",
        "ec2.instance",
        "ec2.launch_template",
        "ec2.vpc",
        "ec2.subnet",
        "ec2.route_table",
        "ec2.vpc_endpoint",
    } <= gapped
    reasons = [e.reason for e in result.errors]
    assert sum(r.startswith("access denied (AuthFailure)") for r in reasons) == 1
    assert all("access denied (AuthFailure)" in r for r in reasons)
    assert {r.kind for r in result.resources} == {
        "autoscaling.group",
        "autoscaling.launch_configuration",
        "budgets.account",  # the account-wide read (AWS Budgets) is another endpoint
    }


def test_at_the_deadline_what_was_read_stays_and_the_rest_is_a_gap(aws: None) -> None:
    """DescribeVpcEndpoints in us-east-1 never answers; one pair at a time, so us-west-2 has not
    started when the deadline passes. us-east-1 keeps everything it read (the VPC collector's
    other walks included) with an error and a gap for the stalled call; us-west-2 is one error
    and a gap for every kind."""
    seed()
    release = threading.Event()

    def stall(**_: Any) -> None:
        release.wait(60)
        raise RuntimeError("released after the test")

    try:
        result = collect(
            TargetSpec(regions=(REGION, "us-west-2")),
            kinds=DEFAULT_KINDS,
            max_workers=1,
            session_maker=session_maker({"before-send.ec2.DescribeVpcEndpoints": stall}),
            timeout=5,
        )
    finally:
        release.set()
    reason = "not read: the audit deadline passed first (--timeout 5 s)"
    assert [e.as_dict() for e in result.errors] == [
        {"kind": "aws", "path": f"{SCOPE}/ec2:DescribeVpcEndpoints", "reason": reason},
        {"kind": "aws", "path": f"{ACCOUNT}/us-west-2/deadline", "reason": reason},
    ]
    assert [(g.scope, g.kinds) for g in result.gaps] == [
        (SCOPE, ("ec2.vpc_endpoint",)),
        (f"{ACCOUNT}/us-west-2", tuple(sorted(DEFAULT_KINDS))),
    ]
    east = {r.kind for r in result.resources if r.scope == SCOPE}
    assert east >= {"ec2.vpc", "ec2.subnet", "ec2.route_table", "ec2.volume", "ec2.instance",
                    "autoscaling.group", "ec2.ebs_defaults"}
    assert "ec2.vpc_endpoint" not in east
    # the account-wide read (AWS Budgets) comes before the regions' and is whole
    assert {r.scope for r in result.resources} == {SCOPE, f"{ACCOUNT}/*"}
    rows = {(c["region"], c["service"]): c for c in result.coverage}
    assert rows[(REGION, "vpc")]["status"] == "error"
    assert rows[(REGION, "vpc")]["error"] == f"ec2:DescribeVpcEndpoints: {reason}"
    assert rows[(REGION, "ebs")]["status"] == "ok"
    assert rows[("us-west-2", "deadline")]["status"] == "error"


def test_running_out_of_file_descriptors_is_said_so(moto_server: Any, tmp_path: Any) -> None:
    """A process at its open-file limit cannot open a socket: that is "too many open files",
    not "endpoint unreachable", and the endpoint is not written off for the region."""
    client("ec2", endpoint_url=moto_server.url).create_volume(Size=1,
                                                              AvailabilityZone="us-east-1a")
    script = tmp_path / "exhaust.py"
    script.write_text(EXHAUST.format(url=moto_server.url, region=REGION))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    errors = json.loads(proc.stdout)
    assert errors, "nothing failed: the limit was not reached"
    for path, reason in errors:
        assert reason.startswith("too many open files: gpuaudit ran out of file descriptors"), (
            path, reason)
        assert "unreachable" not in reason and "not attempted" not in reason


EXHAUST = """
import json, resource
from scanner.aws.clients import ClientFactory
from scanner.aws.collect import collect_targets, plan
from scanner.aws.targets import TargetSpec

factory = ClientFactory(endpoint_url="{url}", max_attempts=1)
targets = plan(TargetSpec(regions=("{region}",)), factory)
# the limit of a crowded CI runner: every descriptor this process may open is open
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256), hard))
held = []
try:
    while True:
        held.append(open("/dev/null"))
except OSError:
    pass
result = collect_targets(targets, kinds={{"ec2.volume", "ec2.ebs_defaults"}}, factory=factory)
for f in held:
    f.close()
print(json.dumps([[e.path, e.reason] for e in result.errors]))
"""
