"""Faults the way they happen in the field: an HTTP proxy (tests/fault_proxy.py) between
gpuaudit and a moto server (tests/live_server.py), answering one operation with a denial, a
throttle, a 500, a closed or truncated connection, a malformed or empty body, an HTML page, or
no answer at all.

The rule under test: in an (account, region) where a kind a policy reads could not be read, that
policy gives no PASS, FAIL or UNKNOWN there; its results there are ERROR naming the failed call;
every other policy, and every other region, keeps exactly the verdicts of the fault-free audit.
``test_every_declared_operation_failed_alone`` walks ``declared_operations()`` (plus the STS
identity calls), so a newly declared operation is covered without a new test.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner

from policies import all_policies
from scanner.aws.account_wide import ACCOUNT_COLLECTORS
from scanner.aws.clients import ALWAYS_ALLOWED
from scanner.aws.collectors.base import Call
from scanner.aws.registry import COLLECTORS, declared_operations
from scanner.cli.main import cli
from scanner.kinds import schema
from tests import awskinds_seed
from tests.aws_helpers import ACCOUNT, AMI, declared_only  # noqa: F401 - fixture
from tests.fault_proxy import FAULTS, FaultProxy
from tests.live_server import MotoProcess, clean_aws_env
from tests.rightsizing_seed import END_TEXT, seed_cloudwatch

pytestmark = pytest.mark.slow

EAST, WEST = "us-east-1", "us-west-2"
# every policy live accounts can give (EBS-003 too, off by default: every call is made)
POLICIES = tuple(sorted(p for p, pol in all_policies().items() if "L" in pol.sources))
DEFAULT_KEY = (
    b'<GetEbsDefaultKmsKeyIdResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
    b"<requestId>f4ul7-0</requestId><kmsKeyId>alias/aws/ebs</kmsKeyId>"
    b"</GetEbsDefaultKmsKeyIdResponse>"
)
# Cost Explorer's coverage (moto lacks it): g5 usage, none of it reserved (COST-001 FAIL)
CE_COVERAGE = {
    "GetReservationCoverage": json.dumps({"CoveragesByTime": [{
        "TimePeriod": {"Start": "2026-01-01", "End": "2026-01-15"},
        "Groups": [{"Attributes": {"instanceType": "g5.xlarge"}, "Coverage": {"CoverageHours": {
            "OnDemandHours": "100", "ReservedHours": "0", "TotalRunningHours": "100",
            "CoverageHoursPercentage": "0"}}}]}]}).encode(),
    "GetSavingsPlansCoverage": b'{"SavingsPlansCoverages": []}'}
# Faults that end (stall is tested on its own, with a deadline).
ENDING = tuple(f for f in FAULTS if f != "stall")
REPO = Path(__file__).resolve().parents[1]


# -- the estate ----------------------------------------------------------------------------------


def seed(url: str) -> dict[str, str]:
    """us-east-1: a GPU VPC with an S3 gateway endpoint on the main table, a private subnet
    (main table) and a public one (its own table, 0.0.0.0/0 to an internet gateway, public IPs
    on launch); a GPU instance in the private subnet; a GPU group launched by a template into
    the public subnet; a spot template, a launch configuration, a spot request; volumes
    unencrypted, encrypted with the default key, and with a customer-managed key; an EKS SPOT
    node group, a Batch SPOT compute environment and a HyperPod cluster. us-west-2: a GPU
    instance in the default VPC, encryption by default."""
    ec2 = boto3.client("ec2", endpoint_url=url, region_name=EAST)
    asg = boto3.client("autoscaling", endpoint_url=url, region_name=EAST)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    private = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24",
                                AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24",
                               AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    ec2.modify_subnet_attribute(SubnetId=public, MapPublicIpOnLaunch={"Value": True})
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    public_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=public_rt, SubnetId=public)
    main_rt = ec2.describe_route_tables(
        Filters=[{"Name": "vpc-id", "Values": [vpc]},
                 {"Name": "association.main", "Values": ["true"]}])["RouteTables"][0]
    endpoint = ec2.create_vpc_endpoint(
        VpcId=vpc, ServiceName=f"com.amazonaws.{EAST}.s3",
        RouteTableIds=[main_rt["RouteTableId"]])["VpcEndpoint"]["VpcEndpointId"]
    instance = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge",
                                 SubnetId=private)["Instances"][0]["InstanceId"]
    # right-sizing: a lightly used p3.8xlarge (RS-001) and an idle g5.2xlarge (RS-002) with
    # CloudWatch agent metrics; the g5.xlarge above publishes none (RS-003)
    measured = {ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType=itype,
                                  SubnetId=private)["Instances"][0]["InstanceId"]: itype
                for itype in ("p3.8xlarge", "g5.2xlarge")}
    seed_cloudwatch(boto3.client("cloudwatch", endpoint_url=url, region_name=EAST), measured)
    ec2.create_launch_template(LaunchTemplateName="gpu", LaunchTemplateData={
        "ImageId": AMI, "InstanceType": "g5.xlarge"})
    spot_lt = ec2.create_launch_template(LaunchTemplateName="gpu-spot", LaunchTemplateData={
        "ImageId": AMI, "InstanceType": "g5.xlarge",
        "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "0.95"}},
    })["LaunchTemplate"]["LaunchTemplateId"]
    asg.create_auto_scaling_group(
        AutoScalingGroupName="gpu-public", MinSize=0, MaxSize=4, DesiredCapacity=0,
        VPCZoneIdentifier=public,
        LaunchTemplate={"LaunchTemplateName": "gpu", "Version": "$Default"})
    # a mixed instances policy over the on-demand template (ASG-004 PASS), sized 0: no split
    asg.create_auto_scaling_group(
        AutoScalingGroupName="gpu-mixed", MinSize=0, MaxSize=0, VPCZoneIdentifier=private,
        MixedInstancesPolicy={
            "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateName": "gpu"},
                               "Overrides": [{"InstanceType": "g5.xlarge"},
                                             {"InstanceType": "g6.xlarge"}]},
            "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 30}})
    asg.create_launch_configuration(LaunchConfigurationName="gpu-lc", ImageId=AMI,
                                    InstanceType="g5.xlarge", SpotPrice="0.50")
    asg.create_auto_scaling_group(AutoScalingGroupName="gpu-lc-group", MinSize=0, MaxSize=2,
                                  LaunchConfigurationName="gpu-lc", VPCZoneIdentifier=private)
    # ASG-003 / SPOT-003: a CPU-only group, a group scaled through an alarm on queue depth, a
    # termination hook, and an EventBridge rule on the interruption warning with a target
    # (moto keeps scaling policies by name alone: each name is unique)
    asg.put_scaling_policy(AutoScalingGroupName="gpu-public", PolicyName="gpu-public-cpu",
                           PolicyType="TargetTrackingScaling", TargetTrackingConfiguration={
                               "PredefinedMetricSpecification": {
                                   "PredefinedMetricType": "ASGAverageCPUUtilization"},
                               "TargetValue": 60.0})
    asg.put_scaling_policy(AutoScalingGroupName="gpu-lc-group", PolicyName="gpu-lc-queue",
                           PolicyType="StepScaling", AdjustmentType="ChangeInCapacity",
                           StepAdjustments=[{"MetricIntervalLowerBound": 0.0,
                                             "ScalingAdjustment": 1}])
    queue_policy = asg.describe_policies(
        AutoScalingGroupName="gpu-lc-group")["ScalingPolicies"][0]["PolicyARN"]
    boto3.client("cloudwatch", endpoint_url=url, region_name=EAST).put_metric_alarm(
        AlarmName="jobs-backlog", MetricName="ApproximateNumberOfMessagesVisible",
        Namespace="AWS/SQS", Statistic="Maximum", Period=60, EvaluationPeriods=1,
        Threshold=10.0, ComparisonOperator="GreaterThanThreshold", AlarmActions=[queue_policy])
    asg.put_lifecycle_hook(AutoScalingGroupName="gpu-mixed", LifecycleHookName="drain",
                           LifecycleTransition="autoscaling:EC2_INSTANCE_TERMINATING")
    events = boto3.client("events", endpoint_url=url, region_name=EAST)
    events.put_rule(Name="spot-interruption", EventPattern=json.dumps(
        {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]}))
    events.put_targets(Rule="spot-interruption", Targets=[
        {"Id": "q", "Arn": f"arn:aws:sqs:{EAST}:123456789012:node-termination"}])
    ec2.request_spot_instances(SpotPrice="0.90", InstanceCount=1, LaunchSpecification={
        "ImageId": AMI, "InstanceType": "g5.xlarge", "SubnetId": private})
    # issue 13's kinds: a SPOT GPU node group in the public subnet, a SPOT compute environment
    # without a bid cap, a HyperPod cluster in the private subnet
    sg = ec2.create_security_group(GroupName="gpu", Description="gpu", VpcId=vpc)["GroupId"]
    awskinds_seed.eks_cluster(url, EAST, "ml", [public, private])
    awskinds_seed.eks_nodegroup(url, EAST, "ml", "gpu-spot", [public], capacityType="SPOT",
                                instanceTypes=["g5.xlarge"],
                                scalingConfig={"minSize": 0, "maxSize": 4, "desiredSize": 2})
    awskinds_seed.batch_environment(url, EAST, "gpu-spot", [private], sg, type="SPOT",
                                    instanceTypes=["g5.xlarge", "g6.xlarge"])
    awskinds_seed.hyperpod_cluster(url, EAST, "hp", [private], sg, [
        {"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2,
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]}])
    encrypted = ec2.create_volume(Size=10, AvailabilityZone="us-east-1a",
                                  Encrypted=True)["VolumeId"]
    key = boto3.client("kms", endpoint_url=url, region_name=EAST).create_key()["KeyMetadata"]
    custom = ec2.create_volume(Size=10, AvailabilityZone="us-east-1a", Encrypted=True,
                               KmsKeyId=key["Arn"])["VolumeId"]
    plain = ec2.create_volume(Size=10, AvailabilityZone="us-east-1a")["VolumeId"]
    # NET-001: a p4d group that can grow to 4 nodes without EFA (FAIL), one of at most one
    # node (PASS); S3-001: a checkpoint bucket without tiering (FAIL), one with (PASS)
    ec2.create_launch_template(LaunchTemplateName="train", LaunchTemplateData={
        "ImageId": AMI, "InstanceType": "p4d.24xlarge"})
    for name, size in (("train-4", 4), ("train-1", 1)):
        asg.create_auto_scaling_group(
            AutoScalingGroupName=name, MinSize=0, MaxSize=size, DesiredCapacity=0,
            VPCZoneIdentifier=private,
            LaunchTemplate={"LaunchTemplateName": "train", "Version": "$Default"})
    s3 = boto3.client("s3", endpoint_url=url, region_name=EAST)
    for bucket in ("ml-checkpoints", "ml-models-tiered"):
        s3.create_bucket(Bucket=bucket)
    s3.put_bucket_lifecycle_configuration(Bucket="ml-models-tiered", LifecycleConfiguration={
        "Rules": [{"ID": "tier", "Status": "Enabled", "Filter": {"Prefix": ""},
                   "Transitions": [{"Days": 0, "StorageClass": "INTELLIGENT_TIERING"}]}]})
    west = boto3.client("ec2", endpoint_url=url, region_name=WEST)
    west.enable_ebs_encryption_by_default()
    west_instance = west.run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                                       InstanceType="g4dn.xlarge")["Instances"][0]["InstanceId"]
    return {"vpc": vpc, "private": private, "public": public, "endpoint": endpoint,
            "instance": instance, "spot_lt": spot_lt, "volume": plain, "encrypted": encrypted,
            "custom": custom,
            "west_instance": west_instance}


def seed_desired_capacity(url: str) -> None:
    """GroupDesiredCapacity of every group (COST-001's base and peak): 1 then 2 instances."""
    end = dt.datetime.fromisoformat(END_TEXT.replace("Z", "+00:00"))
    for region in (EAST, WEST):
        names = [g["AutoScalingGroupName"] for g in boto3.client(
            "autoscaling", endpoint_url=url, region_name=region).describe_auto_scaling_groups()[
            "AutoScalingGroups"]]
        eks = boto3.client("eks", endpoint_url=url, region_name=region)
        names += [g["name"] for c in eks.list_clusters()["clusters"]
                  for n in eks.list_nodegroups(clusterName=c)["nodegroups"]
                  for g in eks.describe_nodegroup(clusterName=c, nodegroupName=n)["nodegroup"]
                  .get("resources", {}).get("autoScalingGroups", [])]
        cw = boto3.client("cloudwatch", endpoint_url=url, region_name=region)
        for name in names:
            cw.put_metric_data(Namespace="AWS/AutoScaling", MetricData=[{
                "MetricName": "GroupDesiredCapacity", "Value": v,
                "Timestamp": end - dt.timedelta(hours=h, minutes=30),
                "Dimensions": [{"Name": "AutoScalingGroupName", "Value": name}]}
                for h, v in ((2, 1.0), (1, 2.0))])


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    home = tmp_path_factory.mktemp("home")
    environ = clean_aws_env(home=home, extra={"AWS_MAX_ATTEMPTS": "2",
                                              "GPUAUDIT_TELEMETRY_END": END_TEXT})
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("AWS_")]:
            mp.delenv(key)
        for key, value in environ.items():
            if key.startswith(("AWS_", "GPUAUDIT_")):
                mp.setenv(key, value)
        yield environ


@pytest.fixture(scope="module")
def estate(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with MotoProcess(log) as moto, FaultProxy(moto.url) as proxy:
        ids = seed(moto.url)
        seed_desired_capacity(moto.url)
        proxy.answer("GetEbsDefaultKmsKeyId", DEFAULT_KEY)  # moto lacks it
        for op, body in CE_COVERAGE.items():  # and Cost Explorer's coverage (COST-001)
            proxy.answer(op, body, "application/x-amz-json-1.1")
        proxy.remember()  # the estate is only read from here on
        yield proxy, ids


@pytest.fixture()
def proxy(estate: Any) -> Iterator[FaultProxy]:
    proxy = estate[0]
    proxy.clear()
    yield proxy
    proxy.clear()


@pytest.fixture(scope="module")
def baseline(estate: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    proxy = estate[0]
    proxy.clear()
    code, doc = audit(proxy.url, tmp_path_factory.mktemp("baseline"))
    assert code == 1, doc["errors"]  # failing findings, and nothing unread
    assert doc["errors"] == []
    assert {c["status"] for c in doc["coverage"]} == {"ok"}
    return doc


# -- running and reading an audit ----------------------------------------------------------------


def audit(url: str, where: Path, *extra: str, regions: str = f"{EAST},{WEST}") -> tuple[int, Any]:
    out = where / "report.json"
    args = ["audit", "--endpoint-url", url, "--regions", regions, "--format", "json",
            "--output", str(out), "--deterministic", "--include-passed", "-q",
            *(a for p in POLICIES for a in ("--policy", p)), *extra]
    cwd = Path.cwd()
    os.chdir(where)  # no project config from the checkout
    try:
        res = CliRunner().invoke(cli, args)
    finally:
        os.chdir(cwd)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, json.loads(out.read_text())


def results(doc: Any, region: str | None = None,
            policies: set[str] | None = None) -> set[tuple[str, str, str]]:
    return {(f["policy_id"], f["resource"]["id"], f["status"]) for f in doc["findings"]
            if region in (None, f["resource"]["region"])
            and (policies is None or f["policy_id"] in policies)}


def readers(kinds: tuple[str, ...]) -> set[str]:
    """The policies that read one of ``kinds`` in an account."""
    return {p.id for p in all_policies().values() if set(kinds) & set(p.observed_needs)}


def declared(operation: str) -> Call:
    """The operation's call; one that several collectors declare feeds every kind (not fact)
    they declare it for (CloudWatch's GetMetricData: the GPU utilization and the Auto Scaling
    groups' capacity)."""
    service, name = operation.split(":")
    calls = [c for col in (*COLLECTORS, *ACCOUNT_COLLECTORS) for c in col.calls
             if (c.service, c.operation) == (service, name)]
    if len(calls) == 1:
        return calls[0]
    facts = schema().facts  # a fact (S3's bucket sizes) is money only, never a gap
    kinds = tuple(dict.fromkeys(k for c in calls for k in c.kinds if k not in facts))
    return Call(service, name, kinds)


def assert_no_verdict_where_data_is_missing(doc: Any, baseline: Any, call: Call,
                                            region: str = EAST) -> None:
    """The gap rule, for ``call`` failed in ``region``: its readers have only ERRORs there,
    each naming the call; everything else is the fault-free audit's."""
    what = f"{call.service}:{call.operation}"
    hit = readers(call.kinds)
    assert hit, f"no policy reads {call.kinds}"
    assert f"{ACCOUNT}/{region}/{what}" in {e["path"] for e in doc["errors"]}
    for f in doc["findings"]:
        if f["policy_id"] in hit and f["resource"]["region"] == region:
            assert f["status"] == "ERROR", f"{f['policy_id']} {f['resource']['id']}: {f['status']}"
            assert f"{what}: " in f["message"], f["message"]
    for pid in hit:
        assert any(f["policy_id"] == pid and f["resource"]["region"] == region
                   for f in doc["findings"]), f"{pid} says nothing in {region}"
    others = set(POLICIES) - hit
    assert results(doc, region, others) == results(baseline, region, others)
    for elsewhere in {EAST, WEST} - {region}:
        assert results(doc, elsewhere) == results(baseline, elsewhere)


# -- the fault-free audit ------------------------------------------------------------------------


def test_the_fault_free_audit_judges_every_policy_in_the_faulted_region(
    baseline: Any, estate: Any
) -> None:
    """Every policy has a PASS or FAIL in us-east-1, so an ERROR there is a verdict lost."""
    ids = estate[1]
    judged = {p for p, _, s in results(baseline, EAST) if s in ("PASS", "FAIL")}
    # what is judged once per account (COST-002 on the account's budgets) has no region
    judged |= {p for p, _, s in results(baseline, None) if s in ("PASS", "FAIL")
               and p in readers(("budgets.account", "ce.commitment_coverage"))}
    assert judged == set(POLICIES)
    east = results(baseline, EAST)
    assert ("VPC-001", ids["vpc"], "PASS") in east  # it has an S3 gateway endpoint
    assert ("VPC-002", ids["public"], "FAIL") in east  # its table is not the endpoint's
    assert ("VPC-003", ids["endpoint"], "FAIL") in east  # moto's default: allow everything
    assert ("VPC-004", "gpu-public", "FAIL") in east  # public subnet routing to an IGW
    assert ("VPC-004", ids["instance"], "PASS") in east
    assert ("EBS-003", ids["volume"], "PASS") not in east  # unencrypted: EBS-001's business
    # each kind of issue 13 has verdicts to lose when its calls fail
    assert {("VPC-004", "ml/gpu-spot", "FAIL"), ("ASG-002", "ml/gpu-spot", "FAIL"),
            ("SPOT-001", "gpu-spot", "FAIL"), ("ASG-002", "gpu-spot", "FAIL"),
            ("VPC-004", "gpu-spot", "PASS"),
            ("EBS-003", "hp", "FAIL")} <= east


# -- one operation at a time -----------------------------------------------------------------------


OPERATIONS = sorted({*declared_operations(), *(f"{s}:{o}" for s, o in ALWAYS_ALLOWED)})


@pytest.mark.parametrize("operation", OPERATIONS)
def test_every_declared_operation_failed_alone(
    operation: str, proxy: FaultProxy, baseline: Any, tmp_path: Path
) -> None:
    service, name = operation.split(":")
    fault = ENDING[OPERATIONS.index(operation) % len(ENDING)]  # every class, in turn
    if service in ("sts", "organizations") or name == "DescribeRegions":
        # target discovery: the account (or its regions) cannot be known, nothing is judged
        extra = {"AssumeRole": ("--role-arn", f"arn:aws:iam::{ACCOUNT}:role/audit"),
                 "ListAccounts": ("--org", "--role-name", "audit")}.get(name, ())
        proxy.fail(name, fault)
        regions = "all" if name == "DescribeRegions" else f"{EAST},{WEST}"
        code, doc = audit(proxy.url, tmp_path, *extra, regions=regions)
        assert any(op == name for _, op, _ in proxy.injected), proxy.injected
        assert code == 2
        assert doc["errors"] and all(operation in e["path"] for e in doc["errors"])
        assert {f["status"] for f in doc["findings"]} == {"ERROR"}
        assert {f["policy_id"] for f in doc["findings"]} == set(POLICIES)
        assert all(f"{operation}: " in f["message"] for f in doc["findings"])
        return
    call = declared(operation)
    proxy.fail(operation, fault, region=EAST)  # "eks:ListClusters", not sagemaker's
    code, doc = audit(proxy.url, tmp_path)
    # read once per account (AWS Budgets, sent to us-east-1): its gap is the whole account's
    where = "*" if service in ("budgets", "ce") else EAST
    if not readers(call.kinds):
        # no enabled policy reads what it feeds: it is not even called
        assert operation not in proxy.calls()
        assert (code, results(doc)) == (1, results(baseline))
        return
    assert sum(n for (r, op, f), n in proxy.injected.items()
               if (r, op.rsplit(":", 1)[-1], f) == (EAST, name, fault)) >= 1, \
        f"{operation} was not called"
    assert code == 2
    assert_no_verdict_where_data_is_missing(doc, baseline, call, where)


# -- every fault class on the calls of the examples ------------------------------------


REASONS = {
    "deny": "access denied (UnauthorizedOperation)",
    "throttle": "throttled (RequestLimitExceeded) after 2 attempts",
    "500": "InternalError: An internal error has occurred. (after 2 attempts)",
    "close": "connection closed before a whole answer arrived",
    "truncate": "connection closed before a whole answer arrived",
    "garbage": "unreadable answer (not the service's XML or JSON",
    "html": "unreadable answer: HTTP 200 (text/html) whose root is <html>, not "
            "<DescribeVpcEndpointsResponse>",
    "empty": "unreadable answer: HTTP 200 with an empty body",
}


@pytest.mark.parametrize("fault", ENDING)
def test_no_endpoints_read_is_no_verdict_on_endpoints(
    fault: str, proxy: FaultProxy, baseline: Any, estate: Any, tmp_path: Path
) -> None:
    """DescribeVpcEndpoints failing in any way: VPC-001 does not say "no S3 gateway endpoint",
    VPC-002/003 do not vanish, VPC-004 (which does not read endpoints) keeps its verdicts."""
    ids = estate[1]
    proxy.fail("DescribeVpcEndpoints", fault, region=EAST)
    code, doc = audit(proxy.url, tmp_path)
    assert code == 2
    (error,) = [e for e in doc["errors"] if e["path"].endswith("ec2:DescribeVpcEndpoints")]
    assert error["reason"].startswith(REASONS[fault]), error["reason"]
    assert "Sign in" not in json.dumps(doc)  # the page's text is never quoted
    east = results(doc, EAST)
    assert ("VPC-001", ids["vpc"], "ERROR") in east
    # no endpoint, so no subnet or endpoint to carry the ERROR: the region carries it
    assert {("VPC-002", f"{ACCOUNT}/{EAST}", "ERROR"),
            ("VPC-003", f"{ACCOUNT}/{EAST}", "ERROR")} <= east
    assert_no_verdict_where_data_is_missing(doc, baseline, declared("ec2:DescribeVpcEndpoints"))


@pytest.mark.parametrize(("operation", "fault"), [("DescribeSubnets", "deny"),
                                                  ("DescribeRouteTables", "html"),
                                                  ("DescribeRouteTables", "truncate")])
def test_a_group_in_a_public_subnet_is_never_passed_unread(
    operation: str, fault: str, proxy: FaultProxy, baseline: Any, tmp_path: Path
) -> None:
    """VPC-004 (high) on a GPU group launched into a public subnet: FAIL when the network is
    read, ERROR when its subnets or route tables are not, never "no public IP is assigned"."""
    proxy.fail(operation, fault, region=EAST)
    code, doc = audit(proxy.url, tmp_path)
    assert code == 2
    group = [f for f in doc["findings"]
             if (f["policy_id"], f["resource"]["id"]) == ("VPC-004", "gpu-public")]
    assert [f["status"] for f in group] == ["ERROR"]
    assert f"ec2:{operation}: " in group[0]["message"]
    assert_no_verdict_where_data_is_missing(doc, baseline, declared(f"ec2:{operation}"))


def test_an_html_page_on_a_json_service_is_no_empty_answer(
    proxy: FaultProxy, baseline: Any, tmp_path: Path
) -> None:
    proxy.fail("ListAliases", "html", region=EAST)
    code, doc = audit(proxy.url, tmp_path)
    assert code == 2
    (error,) = doc["errors"]
    assert error["path"] == f"{ACCOUNT}/{EAST}/kms:ListAliases"
    assert error["reason"] == ("unreadable answer: HTTP 200 (text/html) whose body is not a "
                               "JSON object, not the ListAliases answer")
    assert_no_verdict_where_data_is_missing(doc, baseline, declared("kms:ListAliases"))


def test_ebs_003_tells_the_aws_managed_key_with_the_default_key_read(
    baseline: Any, estate: Any
) -> None:
    """EBS-003 live: the default key comes from GetEbsDefaultKmsKeyId (served by the proxy:
    moto lacks it) and the key managers from kms:ListAliases."""
    ids = estate[1]
    ebs_003 = {(f["resource"]["id"], f["status"], f["message"]) for f in baseline["findings"]
               if f["policy_id"] == "EBS-003" and f["resource"]["region"] == EAST}
    # the encrypted volume uses the default key, alias/aws/ebs: AWS-managed; the unencrypted
    # one is EBS-001's finding, not EBS-003's
    # (and the HyperPod cluster's volumes, on an AWS owned key without VolumeKmsKeyId)
    assert {(r, s) for r, s, _ in ebs_003} == {(ids["encrypted"], "FAIL"),
                                              (ids["custom"], "PASS"), ("hp", "FAIL")}, ebs_003


# -- a stalled call and the audit's deadline ------------------------------------------------


def test_a_stalled_call_holds_neither_the_audit_nor_the_other_region(
    proxy: FaultProxy, baseline: Any, env: dict[str, str], tmp_path: Path
) -> None:
    """DescribeVpcEndpoints in us-east-1 never answers. The local endpoint's lane lets the
    other requests past it; at the deadline the audit stops waiting, writes the report (what
    us-east-1 read is judged; its endpoint readers are ERROR) and exits 2 without waiting for
    the stalled request. us-west-2 is complete."""
    proxy.fail("DescribeVpcEndpoints", "stall", region=EAST)
    out = tmp_path / "report.json"
    args = [sys.executable, "-m", "scanner", "audit", "--endpoint-url", proxy.url,
            "--regions", f"{EAST},{WEST}", "--format", "json", "--output", str(out),
            "--deterministic", "--include-passed", "--timeout", "20",
            *(a for p in POLICIES for a in ("--policy", p))]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=240,
                          env={**env, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2, proc.stderr
    assert "the audit deadline passed first (--timeout 20 s)" in proc.stderr
    doc = json.loads(out.read_text())
    assert proxy.injected[(EAST, "DescribeVpcEndpoints", "stall")] == 1
    (error,) = doc["errors"]
    assert error == {"kind": "aws", "path": f"{ACCOUNT}/{EAST}/ec2:DescribeVpcEndpoints",
                     "reason": "not read: the audit deadline passed first (--timeout 20 s)"}
    assert_no_verdict_where_data_is_missing(doc, baseline, declared("ec2:DescribeVpcEndpoints"))
    vpc_row = next(c for c in doc["coverage"] if (c["region"], c["service"]) == (EAST, "vpc"))
    assert vpc_row["status"] == "error" and "deadline" in vpc_row["error"]


# -- what each policy reads ------------------------------------------------------------------------


def test_a_policy_reads_nothing_live_beyond_its_observed_needs(estate: Any) -> None:
    """The gap rule is only as good as ``observed_needs``: for every policy and every kind the
    live audit can produce that the policy does not declare, taking all resources of that kind
    away changes none of its results on the seeded estate (so a gap in that kind could not
    have changed them either)."""
    from scanner.aws.collect import collect
    from scanner.aws.registry import ALL_KINDS
    from scanner.aws.targets import TargetSpec
    from scanner.engine.evaluate import evaluate

    proxy = estate[0]
    proxy.clear()
    result = collect(TargetSpec(regions=(EAST, WEST)), kinds=ALL_KINDS, endpoint_url=proxy.url,
                     max_attempts=1)
    assert result.errors == []
    produced = {r.kind for r in result.resources}
    for pol in all_policies().values():
        if "L" not in pol.sources:  # an IaC-only policy (TF-001) reads nothing live
            assert not evaluate(result.resources, policy_ids=[pol.id]), pol.id
            continue
        assert set(pol.observed_needs) <= ALL_KINDS, pol.id  # no kind the live audit lacks
        whole = evaluate(result.resources, policy_ids=[pol.id])
        assert whole, f"{pol.id} judges nothing on the estate"
        for kind in sorted(produced - set(pol.observed_needs)):
            without = [r for r in result.resources if r.kind != kind]
            assert evaluate(without, policy_ids=[pol.id]) == whole, (
                f"{pol.id} reads {kind} live but does not declare it")
