# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""The AWS-resource kinds of issue 13 read live (moto in-process): EKS managed node groups
(ListClusters, ListNodegroups, DescribeNodegroup), AWS Batch compute environments
(DescribeComputeEnvironments) and SageMaker HyperPod clusters (ListClusters, DescribeCluster;
moto 5.2.5 has them), normalized to the model and judged by every policy that applies; and the
Auto Scaling group EKS runs a node group in, whose capacity is judged and priced once, at the
node group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.registry import ALL_KINDS, DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.compute import views
from scanner.engine.config import Config
from scanner.engine.evaluate import evaluate
from scanner.model import Finding, Provenance, Resource, SourceKind, SourceResult
from scanner.model.graph import ResourceIndex
from scanner.pricing.overlap import capacity_of
from scanner.sources.cloudformation.reader import load_template
from scanner.telemetry import COVERAGE, TELEMETRY
from tests import awskinds_seed as seed
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    RECORDER,
    REGION,
    aws,
    aws_env,
    client,
    declared_only,
)
from tests.model_builders import res

SCOPE = f"{ACCOUNT}/{REGION}"
KINDS = frozenset({"eks.nodegroup", "batch.compute_environment", "sagemaker.cluster"})
CONFIG = Config(policies={"EBS-003": {"enabled": True}})
CFN = Path(__file__).resolve().parent / "fixtures" / "cfn" / "awskinds"


def run(kinds: Any = DEFAULT_KINDS) -> SourceResult:
    return collect(TargetSpec(regions=(REGION,)), kinds=kinds, max_workers=2)


def estate() -> dict[str, str]:
    """A VPC with a public subnet (public IPs on launch, a route to an internet gateway) and a
    private one, an S3 gateway endpoint on the private table only (no policy); GPU node groups,
    compute environments and a HyperPod cluster in them."""
    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24",
                               AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    private = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24",
                                AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    ec2.modify_subnet_attribute(SubnetId=public, MapPublicIpOnLaunch={"Value": True})
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    public_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=public_rt, SubnetId=public)
    private_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.associate_route_table(RouteTableId=private_rt, SubnetId=private)
    endpoint = ec2.create_vpc_endpoint(VpcId=vpc, ServiceName=f"com.amazonaws.{REGION}.s3",
                                       RouteTableIds=[private_rt])["VpcEndpoint"]
    sg = ec2.create_security_group(GroupName="gpu", Description="gpu",
                                   VpcId=vpc)["GroupId"]
    seed.eks_cluster(None, REGION, "ml", [public, private])
    seed.eks_nodegroup(None, REGION, "ml", "gpu-spot", [public], instanceTypes=["g5.xlarge"],
                       capacityType="SPOT", tags={"team": "ml"},
                       scalingConfig={"minSize": 0, "maxSize": 4, "desiredSize": 2})
    seed.eks_nodegroup(None, REGION, "ml", "gpu-diverse", [private], capacityType="SPOT",
                       instanceTypes=["g5.2xlarge", "g6.2xlarge", "g4dn.2xlarge"],
                       scalingConfig={"minSize": 1, "maxSize": 8, "desiredSize": 2})
    seed.eks_nodegroup(None, REGION, "ml", "system", [private], instanceTypes=["m6i.large"],
                       scalingConfig={"minSize": 2, "maxSize": 4, "desiredSize": 2})
    seed.batch_environment(None, REGION, "gpu-spot", [public], sg, type="SPOT",
                           instanceTypes=["g5"])
    seed.batch_environment(None, REGION, "gpu-capped", [private], sg, type="SPOT",
                           bidPercentage=60, allocationStrategy="SPOT_PRICE_CAPACITY_OPTIMIZED",
                           instanceTypes=["g5.xlarge", "g6.xlarge"])
    seed.batch_environment(None, REGION, "gpu-low", [private], sg, type="SPOT",
                           bidPercentage=10, instanceTypes=["p4d.24xlarge"])
    seed.hyperpod_cluster(None, REGION, "hp", [private], sg, [
        {"InstanceGroupName": "controller", "InstanceType": "ml.m5.2xlarge", "InstanceCount": 1},
        {"InstanceGroupName": "workers", "InstanceType": "ml.p5.48xlarge", "InstanceCount": 2,
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]}])
    return {"vpc": vpc, "public": public, "private": private,
            "endpoint": endpoint["VpcEndpointId"]}


def verdicts(result: SourceResult, *policies: str) -> dict[tuple[str, str], str]:
    found = evaluate(result.resources, config=CONFIG, gaps=result.gaps,
                     policy_ids=policies or None)
    return {(f.policy_id, f.resource["id"]): f.status.value for f in found
            if not f.policy_id.startswith("RS-")}


# -- normalization ---------------------------------------------------------------------------


def test_node_groups_are_read_in_the_model_s_spelling(aws: None) -> None:
    estate()
    result = run(KINDS)
    assert result.errors == []
    ngs = {r.id: r for r in result.resources if r.kind == "eks.nodegroup"}
    assert sorted(ngs) == ["ml/gpu-diverse", "ml/gpu-spot", "ml/system"]
    ng = ngs["ml/gpu-spot"]
    assert ng.name == "gpu-spot" and ng.declared is False and ng.scope == SCOPE
    assert ng.tags == {"team": "ml"}
    assert ng.provenance == Provenance(SourceKind.AWS, account=ACCOUNT, region=REGION,
                                       arn=ng.get("NodegroupArn"))
    assert ng.get("InstanceTypes") == ["g5.xlarge"]
    assert ng.get("CapacityType") == "SPOT"
    assert ng.get("ScalingConfig") == {"MinSize": 0, "MaxSize": 4, "DesiredSize": 2}
    group = ng.get("Resources")["AutoScalingGroups"][0]["Name"]
    assert group.startswith("eks-")
    view = views(ResourceIndex(result.resources)).of(ng)
    assert view.types.gpu() is True and view.devices == ()  # live: the volumes are judged
    assert view.purchase.split.spot == 2 and view.purchase.fixed_market


def test_compute_environments_and_hyperpod_clusters_are_read(aws: None) -> None:
    estate()
    result = run(KINDS)
    assert result.errors == []
    envs = {r.id: r for r in result.resources if r.kind == "batch.compute_environment"}
    assert sorted(envs) == ["gpu-capped", "gpu-low", "gpu-spot"]
    capped = envs["gpu-capped"]
    assert capped.get("ComputeResources")["BidPercentage"] == 60
    assert capped.get("ComputeResources")["AllocationStrategy"] == \
        "SPOT_PRICE_CAPACITY_OPTIMIZED"
    assert capped.provenance.arn == capped.get("ComputeEnvironmentArn")
    (hp,) = [r for r in result.resources if r.kind == "sagemaker.cluster"]
    assert hp.id == "hp" and hp.get("ClusterStatus") == "InService"
    view = views(ResourceIndex(result.resources)).of(hp)
    assert view.types.values == ("m5.2xlarge", "p5.48xlarge") and view.types.gpu() is True
    assert view.capacity.desired.value == 3  # CurrentCount: 1 + 2
    # HyperPod's volumes live in a service account: the configuration is judged live too
    assert [d.name for d in view.devices] == [
        "the root volume of instance group controller", "the root volume of instance group "
        "workers", "the EBS volume at /opt/sagemaker of instance group workers"]


def test_only_the_calls_a_kind_needs_are_made(aws: None) -> None:
    estate()
    mark = RECORDER.mark()
    result = run({"batch.compute_environment"})
    assert sorted(set(RECORDER.since(mark))) == [("batch", "DescribeComputeEnvironments"),
                                                 ("sts", "GetCallerIdentity")]
    assert [c["service"] for c in result.coverage] == ["batch"]
    mark = RECORDER.mark()
    run({"eks.nodegroup"})
    assert sorted(set(RECORDER.since(mark))) == [
        ("eks", "DescribeNodegroup"), ("eks", "ListClusters"), ("eks", "ListNodegroups"),
        ("sts", "GetCallerIdentity")]


# -- the policies, live ---------------------------------------------------------------------


def test_every_policy_that_applies_judges_the_kinds_live(aws: None) -> None:
    ids = estate()
    result = run()
    assert result.errors == []
    got = {k: v for k, v in verdicts(result).items()
           if k[1].startswith(("ml/", "gpu-", "hp")) or k[1] in ids.values()}
    assert got == {
        ("VPC-001", ids["vpc"]): "PASS",
        ("VPC-002", ids["public"]): "FAIL",  # its own table, not the endpoint's
        ("VPC-002", ids["private"]): "PASS",
        ("VPC-003", ids["endpoint"]): "FAIL",  # moto's default policy: allow everything
        # node groups: subnets, diversification; no SPOT-* (no max price), no ASG-001, no
        # EBS-* (live, the volumes are judged)
        ("VPC-004", "ml/gpu-spot"): "FAIL",
        ("ASG-002", "ml/gpu-spot"): "FAIL",
        ("VPC-004", "ml/gpu-diverse"): "PASS",
        ("ASG-002", "ml/gpu-diverse"): "PASS",
        # compute environments: the bid as a share of on-demand, strategy and types
        ("VPC-004", "gpu-spot"): "FAIL",
        ("SPOT-001", "gpu-spot"): "FAIL",  # no bid percentage: 100 %
        ("SPOT-002", "gpu-spot"): "PASS",
        ("ASG-002", "gpu-spot"): "FAIL",  # BEST_FIT, the default
        ("VPC-004", "gpu-capped"): "PASS",
        ("SPOT-001", "gpu-capped"): "PASS",
        ("SPOT-002", "gpu-capped"): "PASS",
        ("ASG-002", "gpu-capped"): "PASS",
        ("VPC-004", "gpu-low"): "PASS",
        ("SPOT-001", "gpu-low"): "PASS",
        ("SPOT-002", "gpu-low"): "FAIL",  # 10 % of on-demand
        ("ASG-002", "gpu-low"): "FAIL",  # one type, BEST_FIT
        # HyperPod: its volumes' keys from its configuration (an AWS owned key without
        # VolumeKmsKeyId: EBS-003 FAIL); EBS-001: HyperPod always encrypts, nothing to judge
        ("EBS-003", "hp"): "FAIL",
    }
    # With the fact EBS-003 reads live (the account's default key, GetEbsDefaultKmsKeyId,
    # which moto lacks) asked for and unread: an ERROR, never a verdict made without it
    # (tests/test_aws_live_faults.py serves the call)
    full = run(ALL_KINDS)
    ebs_003 = {(f.resource["id"], f.status.value)
               for f in evaluate(full.resources, policy_ids=["EBS-003"], gaps=full.gaps)}
    assert ("hp", "ERROR") in ebs_003 and {s for _r, s in ebs_003} == {"ERROR"}


def test_a_failed_node_group_read_is_no_verdict(aws: None, monkeypatch: pytest.MonkeyPatch
                                                 ) -> None:
    """ListNodegroups denied: the node groups are a gap; every policy that reads them live
    gives ERROR in the region, never a verdict without them."""
    import botocore.exceptions

    estate()

    def deny(**_: Any) -> None:
        raise botocore.exceptions.ClientError(
            {"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "ListNodegroups")

    from scanner.aws.clients import ClientFactory

    real = ClientFactory.client

    def client_with_denial(self: Any, session: Any, service: str, *args: Any,
                           **kwargs: Any) -> Any:
        c = real(self, session, service, *args, **kwargs)
        if service == "eks":
            c.meta.events.register("before-call.eks.ListNodegroups", deny)
        return c

    monkeypatch.setattr(ClientFactory, "client", client_with_denial)
    result = run()
    assert [e.path for e in result.errors] == [f"{SCOPE}/eks:ListNodegroups"]
    assert [g.kinds for g in result.gaps] == [("eks.nodegroup",)]
    found = evaluate(result.resources, config=CONFIG, gaps=result.gaps)
    for f in found:
        if f.policy_id in ("ASG-002", "VPC-004", "VPC-001", "VPC-002", "RS-001"):
            assert f.status.value == "ERROR", (f.policy_id, f.resource["id"], f.status)
    assert {f.policy_id for f in found if f.status.value in ("PASS", "FAIL")} >= {
        "SPOT-001", "SPOT-002", "EBS-002"}  # they do not read node groups


# -- one capacity, judged and priced once ------------------------------------------------------


def _eks_estate(declared: bool = False) -> list[Resource]:
    """What a live audit reads of one SPOT GPU node group: the node group, the Auto Scaling
    group EKS made for it (tagged, its members listed), the members (tagged with the group),
    the member's utilization (idle), and the coverage marker."""
    ng = res("eks.nodegroup", "ml/gpu", declared=declared, NodegroupName="gpu", ClusterName="ml",
             InstanceTypes=["g5.2xlarge"], CapacityType="ON_DEMAND", Subnets=["subnet-1"],
             ScalingConfig={"MinSize": 2, "MaxSize": 4, "DesiredSize": 2},
             Resources={"AutoScalingGroups": [{"Name": "eks-gpu-1234"}]})
    asg = res("autoscaling.group", "eks-gpu-1234", declared=declared, MinSize=2, MaxSize=4,
              DesiredCapacity=2, VPCZoneIdentifier=["subnet-1"],
              Instances=[{"InstanceId": "i-1"}, {"InstanceId": "i-2"}],
              MixedInstancesPolicy={
                  "LaunchTemplate": {"Overrides": [{"InstanceType": "g5.2xlarge"}]},
                  "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 100}})
    asg.tags = {"eks:nodegroup-name": "gpu", "eks:cluster-name": "ml"}
    members = []
    for iid in ("i-1", "i-2"):
        inst = res("ec2.instance", iid, declared=declared, InstanceType="g5.2xlarge",
                   State="running", SubnetId="subnet-1", AutoScalingGroupName="eks-gpu-1234")
        inst.tags = {"eks:nodegroup-name": "gpu", "eks:cluster-name": "ml",
                     "aws:autoscaling:groupName": "eks-gpu-1234"}
        members.append(inst)
    gpus = [{"Index": "0", "Hours": 200, "UtilP50": 1, "UtilP95": 1, "UtilMax": 2,
             "MemUsedMaxMiB": 300, "MemTotalMiB": 22888}]
    telemetry = [res(TELEMETRY, f"telemetry:{i}", declared=declared, Target=i,
                     Source="cloudwatch", LookbackDays=14, Hours=200,
                     Members=[{"Id": i, "Hours": 200, "Gpus": gpus}]) for i in ("i-1", "i-2")]
    subnet = res("ec2.subnet", "subnet-1", declared=declared, VpcId="vpc-1")
    coverage = res(COVERAGE, "coverage", declared=declared, Source="cloudwatch")
    return [ng, asg, *members, *telemetry, subnet, coverage]


def _by(found: list[Finding]) -> dict[tuple[str, str], Finding]:
    return {(f.policy_id, f.resource["id"]): f for f in found}


def test_the_group_eks_runs_is_judged_and_priced_at_the_node_group() -> None:
    resources = _eks_estate()
    found = _by(evaluate(resources, policy_ids=["RS-001", "RS-002", "RS-003", "ASG-001",
                                                "ASG-002", "SPOT-001", "VPC-004"]))
    # RS-002 on the node group: both members idle, priced at its two instances, once
    assert found[("RS-002", "ml/gpu")].status.value == "FAIL"
    saving = found[("RS-002", "ml/gpu")].savings
    assert saving is not None and saving.usd_month == pytest.approx(1.212 * 730 * 2)
    assert "x 2 instances" in saving.basis
    key = "//eks.nodegroup/ml/gpu"  # account/region (none in hand-built resources)/kind/id
    assert saving.capacity == (key,)
    # nothing on the group EKS made (ASG-001 would say 100 % on-demand), nothing on a member
    # but the public-IP truth observed on it
    assert not [k for k in found if k[1] == "eks-gpu-1234"]
    assert {k for k in found if k[1] in ("i-1", "i-2")} == {("VPC-004", "i-1"),
                                                            ("VPC-004", "i-2")}
    index = ResourceIndex(resources)
    by_id = {r.id: r for r in resources}
    # money found on the group or a member belongs to the node group's capacity
    for rid in ("eks-gpu-1234", "i-1", "ml/gpu"):
        assert capacity_of(by_id[rid], index) == (key,)


def test_without_its_node_group_read_the_eks_group_is_still_not_judged() -> None:
    """The tags say EKS made the group: even when the node group was not read (then a gap
    makes the node group's readers ERROR), the group is not judged as the user's own."""
    resources = [r for r in _eks_estate() if r.kind != "eks.nodegroup"]
    found = evaluate(resources, policy_ids=["ASG-001", "ASG-002", "RS-002", "VPC-004"])
    assert not [f for f in found if f.resource["id"] == "eks-gpu-1234"]
    view = views(ResourceIndex(resources)).of(next(r for r in resources
                                                   if r.id == "eks-gpu-1234"))
    assert view.managed_by == "EKS node group ml/gpu"


def test_a_declared_group_with_eks_tags_is_the_user_s_own() -> None:
    """IaC: tags a user writes are not EKS's claim; a declared group is always judged."""
    asg = res("autoscaling.group", "aws_autoscaling_group.g", MinSize=2, MaxSize=4,
              DesiredCapacity=2, VPCZoneIdentifier=["subnet-1"],
              MixedInstancesPolicy={"LaunchTemplate": {"Overrides": [
                  {"InstanceType": "g5.2xlarge"}]}})
    asg.tags = {"eks:nodegroup-name": "gpu", "eks:cluster-name": "ml"}
    found = evaluate([asg], policy_ids=["ASG-001"])
    assert [(f.policy_id, f.status.value) for f in found] == [("ASG-001", "FAIL")]


# -- HyperPod: the CloudFormation template and the cluster it makes agree ---------------------


def test_hyperpod_template_and_live_cluster_give_the_same_statuses(aws: None) -> None:
    """tests/fixtures/cfn/awskinds/hyperpod_fail.yaml scanned, and the same estate created in
    moto and audited: the same statuses for VPC-001/002/003, and no EBS-001 result on either
    side (EBS-003 live needs GetEbsDefaultKmsKeyId, which moto lacks: tests/test_aws_live_faults.py
    judges it)."""
    ec2 = client("ec2")
    tag = "gpuaudit:address"

    def tagged(rtype: str, rid: str, logical: str) -> str:
        ec2.create_tags(Resources=[rid], Tags=[{"Key": tag, "Value": logical}])
        return rid

    vpc = tagged("vpc", ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"], "VPC")
    subnet = tagged("subnet", ec2.create_subnet(VpcId=vpc, CidrBlock="10.1.0.0/17")[
        "Subnet"]["SubnetId"], "PrivateSubnet")
    table = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.associate_route_table(RouteTableId=table, SubnetId=subnet)
    main = ec2.describe_route_tables(Filters=[
        {"Name": "vpc-id", "Values": [vpc]},
        {"Name": "association.main", "Values": ["true"]}])["RouteTables"][0]["RouteTableId"]
    endpoint = ec2.create_vpc_endpoint(VpcId=vpc, ServiceName=f"com.amazonaws.{REGION}.s3",
                                       RouteTableIds=[main])["VpcEndpoint"]["VpcEndpointId"]
    tagged("vpc-endpoint", endpoint, "S3Endpoint")
    sg = ec2.create_security_group(GroupName="efa", Description="EFA", VpcId=vpc)["GroupId"]
    other = tagged("vpc", ec2.create_vpc(CidrBlock="10.2.0.0/16")["Vpc"]["VpcId"], "OtherVPC")
    other_subnet = tagged("subnet", ec2.create_subnet(VpcId=other, CidrBlock="10.2.0.0/17")[
        "Subnet"]["SubnetId"], "OtherSubnet")
    seed.hyperpod_cluster(None, REGION, "ml-cluster", [subnet], sg, [
        {"InstanceGroupName": "controller-machine", "InstanceType": "ml.m5.12xlarge",
         "InstanceCount": 1},
        {"InstanceGroupName": "worker-group-1", "InstanceType": "ml.p5.48xlarge",
         "InstanceCount": 2,
         "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]}])
    seed.hyperpod_cluster(None, REGION, "TrainiumCluster", [other_subnet], sg, [
        {"InstanceGroupName": "trn", "InstanceType": "ml.trn1.32xlarge", "InstanceCount": 4}])

    policies = ("EBS-001", "VPC-001", "VPC-002", "VPC-003")  # EBS-001: none on clusters
    live = run()
    assert live.errors == []
    names = {r.id: r.tags.get(tag) or {"ml-cluster": "HyperPodCluster"}.get(r.id, r.id)
             for r in live.resources}
    live_statuses = {(p, names[rid]): s for (p, rid), s in verdicts(live, *policies).items()}
    template = load_template(CFN / "hyperpod_fail.yaml")
    iac_statuses = {(f.policy_id, f.resource["id"]): f.status.value
                    for f in evaluate(template.resources, policy_ids=policies)}
    assert iac_statuses == live_statuses
    assert set(iac_statuses.values()) == {"PASS", "FAIL"}
