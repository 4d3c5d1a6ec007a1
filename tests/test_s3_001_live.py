# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""S3-001 on live buckets: collected from moto (S3 and CloudWatch), evaluated by the engine."""

from __future__ import annotations

import datetime as dt
from typing import Any

from scanner.aws.collect import collect
from scanner.aws.collectors.s3 import lifecycle_rules, tiering_configs
from scanner.aws.iam_policy import policy_document
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import evaluate
from scanner.model import Finding, SourceResult
from tests.aws_helpers import (  # noqa: F401 - fixtures
    REGION,
    Fault,
    aws,
    aws_env,
    client,
    declared_only,
    session_maker,
)

GIB = 1 << 30


def results(result: SourceResult) -> dict[str, Finding]:
    findings = evaluate(result.resources, policy_ids=("S3-001",), gaps=result.gaps)
    return {f.resource["id"]: f for f in findings}


def buckets() -> None:
    s3 = client("s3")
    for name in ("acme-ckpt", "acme-models-tiered", "acme-logs", "acme-checkpoints-nosize"):
        s3.create_bucket(Bucket=name)
    s3.create_bucket(Bucket="acme-ckpt-west",
                     CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_bucket_lifecycle_configuration(Bucket="acme-models-tiered", LifecycleConfiguration={
        "Rules": [{"ID": "tier", "Status": "Enabled", "Filter": {"Prefix": ""},
                   "Transitions": [{"Days": 0, "StorageClass": "INTELLIGENT_TIERING"}]}]})
    cw = client("cloudwatch")
    cw.put_metric_data(Namespace="AWS/S3", MetricData=[{
        "MetricName": "BucketSizeBytes", "Value": 2048 * GIB, "Unit": "Bytes",
        "Timestamp": dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=20),
        "Dimensions": [{"Name": "BucketName", "Value": "acme-ckpt"},
                       {"Name": "StorageType", "Value": "StandardStorage"}]}])


def _kinds() -> frozenset[str]:
    from policies.discovery import all_policies

    return frozenset(all_policies()["S3-001"].observed_needs)


def test_live_checkpoint_buckets(aws: None) -> None:
    buckets()
    result = collect(TargetSpec(regions=(REGION,)), kinds=_kinds())
    found = results(result)
    # the bucket of another region is not read here (ListBuckets BucketRegion)
    assert "acme-ckpt-west" not in found
    # a bucket whose name says nothing gives no result; never PASS or FAIL
    assert "acme-logs" not in found
    assert found["acme-models-tiered"].status.value == "PASS"
    fail = found["acme-ckpt"]
    assert fail.status.value == "FAIL"
    assert fail.savings is not None and fail.savings.kind == "storage_tiering"
    assert round(fail.savings.usd_month, 2) == round(2048 * (0.023 - 0.0125), 2)  # 21.50
    assert "0.023 - 0.0125" in fail.savings.basis and "aws.amazon.com/s3/pricing" in \
        fail.savings.basis
    # no datapoint: a FAIL without money, saying why
    nosize = found["acme-checkpoints-nosize"]
    assert nosize.status.value == "FAIL" and nosize.savings is None
    assert "no BucketSizeBytes" in nosize.evidence["saving_not_estimated"]


def test_a_failed_metric_read_leaves_the_verdict_without_money(aws: None) -> None:
    buckets()
    denied = Fault(403, "<ErrorResponse><Error><Code>AccessDenied</Code><Message>no"
                        "</Message></Error></ErrorResponse>")
    result = collect(TargetSpec(regions=(REGION,)), kinds=_kinds(), session_maker=session_maker(
        {"before-send.cloudwatch.GetMetricData": denied}))
    found = results(result)
    assert found["acme-ckpt"].status.value == "FAIL"
    assert found["acme-ckpt"].savings is None
    assert "GetMetricData failed" in found["acme-ckpt"].evidence["saving_not_estimated"]
    assert not [f for f in found.values() if f.status.value == "ERROR"]


def test_a_denied_lifecycle_read_is_an_error_not_a_verdict(aws: None) -> None:
    buckets()
    denied = Fault(403, "<Error><Code>AccessDenied</Code><Message>no</Message></Error>",
                   "application/xml")
    result = collect(TargetSpec(regions=(REGION,)), kinds=_kinds(), session_maker=session_maker(
        {"before-send.s3.GetBucketLifecycleConfiguration": denied}))
    found = results(result)
    statuses = {f.status.value for f in found.values()}
    assert statuses == {"ERROR"}, statuses
    assert "s3:GetBucketLifecycleConfiguration" in found[next(iter(found))].message


def test_the_answers_are_spelled_as_the_model() -> None:
    assert tiering_configs({"IntelligentTieringConfigurationList": [
        {"Id": "a", "Status": "Enabled", "Filter": {"Prefix": "ckpt/"},
         "Tierings": [{"Days": 90, "AccessTier": "ARCHIVE_ACCESS"}]}]}) == [
        {"Id": "a", "Status": "Enabled", "Prefix": "ckpt/",
         "Tierings": [{"Days": 90, "AccessTier": "ARCHIVE_ACCESS"}]}]
    assert lifecycle_rules({"Rules": [{"ID": "t", "Status": "Enabled", "Transitions": [
        {"Days": 30, "StorageClass": "GLACIER_IR"}]}]}) == [
        {"Status": "Enabled", "Id": "t",
         "Transitions": [{"StorageClass": "GLACIER_IR", "TransitionInDays": 30}]}]


def test_iam_policy_grows_by_the_s3_reads() -> None:
    actions: Any = policy_document(_kinds())["Statement"][0]["Action"]
    assert set(actions) == {"s3:ListAllMyBuckets", "s3:GetBucketTagging",
                            "s3:GetIntelligentTieringConfiguration",
                            "s3:GetLifecycleConfiguration", "cloudwatch:GetMetricData"}


def test_net_001_on_live_groups(aws: None) -> None:
    """NET-001 live: a p4d group whose template attaches no EFA fails; one with an EFA template
    in a named placement group is UNKNOWN (the strategy is not read live, never guessed); the
    IAM policy needs no new action for it."""
    from policies.discovery import all_policies

    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.1.1.0/24")["Subnet"]["SubnetId"]
    ec2.create_launch_template(LaunchTemplateName="efa", LaunchTemplateData={
        "InstanceType": "p4d.24xlarge", "ImageId": "ami-12c6146b",
        "NetworkInterfaces": [{"DeviceIndex": 0, "InterfaceType": "efa", "SubnetId": subnet}]})
    ec2.create_launch_template(LaunchTemplateName="plain", LaunchTemplateData={
        "InstanceType": "p4d.24xlarge", "ImageId": "ami-12c6146b"})
    asg = client("autoscaling")
    for name, template, extra in (("placed", "efa", {"PlacementGroup": "train"}),
                                  ("plain", "plain", {}), ("one", "plain", {})):
        asg.create_auto_scaling_group(
            AutoScalingGroupName=name, MinSize=0, MaxSize=1 if name == "one" else 4,
            DesiredCapacity=0, VPCZoneIdentifier=subnet,
            LaunchTemplate={"LaunchTemplateName": template, "Version": "$Default"}, **extra)
    kinds = frozenset(all_policies()["NET-001"].observed_needs)
    result = collect(TargetSpec(regions=(REGION,)), kinds=kinds)
    findings = evaluate(result.resources, policy_ids=("NET-001",), gaps=result.gaps)
    got = {f.resource["id"]: f for f in findings}
    assert {k: f.status.value for k, f in got.items()} == {
        "placed": "UNKNOWN", "plain": "FAIL", "one": "PASS"}
    assert "strategy is not read" in got["placed"].message
    assert "no EFA interface" in got["plain"].message
    actions = policy_document(kinds)["Statement"][0]["Action"]
    assert not [a for a in actions if "Placement" in a]
