# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""Read-only by construction, and the IAM policy generated from what the collectors declare."""

from __future__ import annotations

import json

import boto3
import pytest

from scanner.aws.clients import (
    ALWAYS_ALLOWED,
    SECRET_READS,
    ClientFactory,
    ReadOnlyViolation,
    check_declarable,
)
from scanner.aws.collect import collect, plan
from scanner.aws.iam_policy import all_actions, iam_action, policy_document
from scanner.aws.registry import ALL_KINDS, COLLECTORS, declared_calls, declared_operations
from scanner.aws.targets import DISCOVERY_CALLS, TargetSpec
from tests import awskinds_seed
from tests.aws_helpers import (  # noqa: F401 - fixtures
    AMI,
    RECORDER,
    REGION,
    aws,
    aws_env,
    client,
    declared_only,
    declared_set,
    service_id,
)


def test_a_write_is_refused_before_it_is_sent(aws: None) -> None:
    iid = client("ec2").run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0][
        "InstanceId"
    ]
    ec2 = ClientFactory().client(boto3.Session(), "ec2", ["DescribeInstances"], region=REGION)
    mark = RECORDER.mark()
    with pytest.raises(ReadOnlyViolation, match="ec2:TerminateInstances refused"):
        ec2.terminate_instances(InstanceIds=[iid])
    with pytest.raises(ReadOnlyViolation, match="ec2:CreateVolume refused"):
        ec2.create_volume(Size=1, AvailabilityZone="us-east-1a")
    assert RECORDER.since(mark) == []  # nothing left the process
    state = client("ec2").describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
    assert state["State"]["Name"] == "running"
    # the declared read still works, and is the only thing sent
    assert ec2.describe_instances()["Reservations"]
    assert RECORDER.since(mark) == [("ec2", "DescribeInstances")]


def test_an_undeclared_read_is_refused(aws: None) -> None:
    ec2 = ClientFactory().client(boto3.Session(), "ec2", ["DescribeVolumes"], region=REGION)
    mark = RECORDER.mark()
    with pytest.raises(ReadOnlyViolation, match="ec2:DescribeInstances refused"):
        ec2.describe_instances()
    with pytest.raises(ReadOnlyViolation, match="ec2:DescribeSecurityGroups refused"):
        ec2.get_paginator("describe_security_groups").paginate().build_full_result()
    assert RECORDER.since(mark) == []


def test_identity_calls_are_always_allowed(aws: None) -> None:
    sts = ClientFactory().client(boto3.Session(), "sts", [], region=REGION)
    assert sts.get_caller_identity()["Account"]
    with pytest.raises(ReadOnlyViolation):
        sts.get_session_token()
    assert {("sts", "AssumeRole"), ("sts", "GetCallerIdentity")} == ALWAYS_ALLOWED


@pytest.mark.parametrize(
    ("service", "operation"),
    [
        ("ec2", "GetPasswordData"),
        ("ec2", "GetConsoleOutput"),
        ("ec2", "GetLaunchTemplateData"),
        ("ec2", "DescribeInstanceAttribute"),
        ("ssm", "GetParameter"),
        ("ssm", "DescribeParameters"),
        ("secretsmanager", "GetSecretValue"),
        ("secretsmanager", "ListSecrets"),
        ("ec2", "TerminateInstances"),
        ("ec2", "ModifyInstanceAttribute"),
        ("autoscaling", "UpdateAutoScalingGroup"),
    ],
)
def test_secret_reads_and_writes_cannot_be_declared(service: str, operation: str) -> None:
    with pytest.raises(ValueError):
        check_declarable(service, operation)
    with pytest.raises(ValueError):
        ClientFactory().client(boto3.Session(region_name=REGION), service, [operation])


def test_collectors_declare_only_plain_reads() -> None:
    for call in declared_calls():
        check_declarable(call.service, call.operation)  # raises otherwise
        assert (call.service, call.operation) not in SECRET_READS
        assert call.operation.startswith(("Describe", "List", "Get"))
    names = [c.name for c in COLLECTORS]
    assert len(names) == len(set(names))


def test_adaptive_retries_and_endpoint() -> None:
    factory = ClientFactory(endpoint_url="http://127.0.0.1:4566", max_attempts=4)
    assert factory.config.retries == {"mode": "adaptive", "total_max_attempts": 4}
    ec2 = factory.client(boto3.Session(region_name=REGION), "ec2", ["DescribeVolumes"])
    assert ec2.meta.endpoint_url == "http://127.0.0.1:4566"
    assert ec2.meta.config.retries["mode"] == "adaptive"


# -- the IAM policy --------------------------------------------------------------------------


def test_iam_policy_is_exactly_the_declared_operations() -> None:
    doc = policy_document()
    assert doc["Version"] == "2012-10-17"
    reads, discovery, catalog, spend = doc["Statement"]
    assert reads["Effect"] == discovery["Effect"] == catalog["Effect"] == "Allow"
    assert sorted(reads["Action"] + discovery["Action"] + catalog["Action"]
                  + spend["Action"]) == all_actions()
    # IAM actions are the operations' names, but for S3's and AWS Budgets', which IAM names apart
    assert all_actions() == sorted([*(iam_action(*op.split(":")) for op in
                                      declared_operations()), "pricing:GetProducts",
                                    "ce:GetCostAndUsage"])
    assert [a for a in reads["Action"] if a.startswith("s3:")] == [
        "s3:GetBucketTagging", "s3:GetIntelligentTieringConfiguration",
        "s3:GetLifecycleConfiguration", "s3:ListAllMyBuckets"]
    # `gpuaudit spend` reads Cost Explorer's GetCostAndUsage, in a statement of its own
    assert (spend["Sid"], spend["Action"]) == ("GpuauditSpend", ["ce:GetCostAndUsage"])
    assert "ce:GetCostAndUsage" not in reads["Action"]
    # AWS Budgets authorizes DescribeBudgets as budgets:ViewBudget (COST-002), and nothing else
    assert [a for a in reads["Action"] if a.startswith("budgets:")] == ["budgets:ViewBudget"]
    assert policy_document({"budgets.budget"})["Statement"][0]["Action"] == [
        "budgets:ViewBudget"]
    assert discovery["Action"] == ["ec2:DescribeRegions", "organizations:ListAccounts"]
    # `catalog refresh` reads the Price List API, nothing else; the audit never does
    assert catalog["Action"] == ["pricing:GetProducts"]
    assert "pricing:GetProducts" not in reads["Action"]
    # the right-sizing collector's CloudWatch reads and the alarms ASG-003 reads, and no other
    # CloudWatch action
    assert [a for a in reads["Action"] if a.startswith("cloudwatch:")] == [
        "cloudwatch:DescribeAlarms", "cloudwatch:GetMetricData", "cloudwatch:ListMetrics"]
    # ASG-003 / SPOT-003: the alarms, the EventBridge rules and targets, the lifecycle hooks
    assert [a for a in reads["Action"] if a.startswith("events:")] == [
        "events:ListRules", "events:ListTargetsByRule"]
    assert policy_document({"autoscaling.lifecycle_hook"})["Statement"][0]["Action"] == [
        "autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeLifecycleHooks"]
    assert policy_document({"cloudwatch.metric_alarm"})["Statement"][0]["Action"] == [
        "cloudwatch:DescribeAlarms"]
    assert "ec2:DescribeVolumes" in reads["Action"]
    # issue 13's kinds: exactly these reads, and no other action of their services
    assert [a for a in reads["Action"] if a.startswith(("eks:", "batch:", "sagemaker:"))] == [
        "batch:DescribeComputeEnvironments", "eks:DescribeNodegroup", "eks:ListClusters",
        "eks:ListNodegroups", "sagemaker:DescribeCluster", "sagemaker:ListClusters"]
    assert policy_document({"eks.nodegroup"})["Statement"][0]["Action"] == [
        "eks:DescribeNodegroup", "eks:ListClusters", "eks:ListNodegroups"]
    assert "ec2:GetEbsDefaultKmsKeyId" in reads["Action"]
    assert not any(a.startswith(("ssm:", "secretsmanager:")) for a in reads["Action"])
    assert not any(":Get" in a and "Password" in a for a in reads["Action"])
    # for a narrower set of kinds, only what those need
    narrow = policy_document({"ec2.volume"})["Statement"][0]["Action"]
    assert narrow == ["ec2:DescribeVolumes"]
    assert len(policy_document({"ec2.volume"})["Statement"]) == 2
    json.dumps(doc)  # plain JSON


def test_every_declared_operation_is_exercised_and_every_sent_one_declared(aws: None) -> None:
    """The full collection against moto: what is sent ⊆ what is declared, and the declarations
    are not stale (each collector operation is really called)."""
    client("organizations").create_organization(FeatureSet="ALL")
    client("s3").create_bucket(Bucket="ml-checkpoints")  # its tags, tiering and lifecycle
    client("ec2").create_launch_template(  # something to price: DescribeSpotPriceHistory
        LaunchTemplateName="spot", LaunchTemplateData={"InstanceType": "g5.xlarge"}
    )
    # a running GPU instance with one CloudWatch agent point: ListMetrics and GetMetricData
    gpu = client("ec2").run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                                      InstanceType="g5.xlarge")["Instances"][0]["InstanceId"]
    client("cloudwatch").put_metric_data(Namespace="CWAgent", MetricData=[{
        "MetricName": "nvidia_smi_utilization_gpu", "Value": 3.0,
        "Dimensions": [{"Name": "InstanceId", "Value": gpu}, {"Name": "index", "Value": "0"}]}])
    # an EKS node group and a HyperPod cluster: ListNodegroups, DescribeNodegroup, DescribeCluster
    vpc = client("ec2").create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = client("ec2").create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    sg = client("ec2").create_security_group(GroupName="g", Description="g", VpcId=vpc)["GroupId"]
    awskinds_seed.eks_cluster(None, REGION, "ml", [subnet])
    awskinds_seed.eks_nodegroup(None, REGION, "ml", "gpu", [subnet], instanceTypes=["g5.xlarge"])
    awskinds_seed.hyperpod_cluster(None, REGION, "hp", [subnet], sg, [
        {"InstanceGroupName": "w", "InstanceType": "ml.g5.xlarge", "InstanceCount": 1}])
    # a group (DescribeLifecycleHooks, per group) and a rule on EC2's events (ListTargetsByRule)
    client("autoscaling").create_auto_scaling_group(
        AutoScalingGroupName="gpu", MinSize=0, MaxSize=1, VPCZoneIdentifier=subnet,
        LaunchTemplate={"LaunchTemplateName": "spot", "Version": "$Default"})
    client("events").put_rule(Name="spot", EventPattern=json.dumps(
        {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]}))
    mark = RECORDER.mark()
    collect(TargetSpec(regions=(REGION,)), kinds=ALL_KINDS)
    plan(TargetSpec(regions=("all",), org=True, role_name="Audit"), ClientFactory())
    sent = set(RECORDER.since(mark))
    assert sent <= declared_set()
    expected = {(service_id(c.service), c.operation) for col in COLLECTORS for c in col.calls}
    expected |= {(service_id(c.service), c.operation) for c in DISCOVERY_CALLS}
    missing = expected - sent
    assert missing == set(), f"declared but never called: {missing}"
