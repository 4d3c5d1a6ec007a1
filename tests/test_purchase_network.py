# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""Where capacity lands, said from what was found: VPC-001 names each GPU subnet's 0.0.0.0/0
route (a NAT gateway, the internet gateway, none, not known), and VPC-004's verdict belongs to
the groups and instances that launch a template (with their subnets), not to a template that
sets no public IP itself. Terraform HCL, plan JSON, CloudFormation and live (moto)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import run
from scanner.model import Resource
from scanner.sources.cloudformation.reader import load_template
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.sources.terraform.plan.reader import load_plan
from tests.aws_helpers import (  # noqa: F401 - fixtures
    AMI,
    REGION,
    aws,
    aws_env,
    client,
    declared_only,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TF = FIXTURES / "terraform" / "purchase_network"
CFN = FIXTURES / "cfn" / "policies" / "purchase_network.yaml"
TF_NAMES = {"vpc": "aws_vpc.this", "public": "aws_subnet.public", "private": "aws_subnet.private",
            "nat": "aws_nat_gateway.this", "igw": "aws_internet_gateway.this",
            "template": "aws_launch_template.gpu", "group": "aws_autoscaling_group.public",
            "instance": "aws_instance.private"}
CFN_NAMES = {"vpc": "VPC", "public": "PublicSubnet", "private": "PrivateSubnet",
             "nat": "NatGateway", "igw": "InternetGateway", "template": "GpuTemplate",
             "group": "PublicGroup", "instance": "PrivateInstance"}


def _plan() -> list[Resource]:
    result = load_plan(TF / "plan.json")
    assert result.errors == []
    return result.resources


SOURCES = {
    "hcl": (lambda: load_terraform_dir([TF]).resources, TF_NAMES),
    "plan": (_plan, TF_NAMES),
    "cloudformation": (lambda: load_template(CFN).resources, CFN_NAMES),
}


@pytest.fixture(params=sorted(SOURCES), scope="module")
def source(request: pytest.FixtureRequest) -> tuple[Any, dict[str, str]]:
    load, names = SOURCES[request.param]
    return run(load(), policy_ids=["VPC-001", "VPC-004"]), names


def by(evaluation: Any) -> dict[tuple[str, str], Any]:
    return {(f.policy_id, f.resource["id"]): f for f in evaluation.findings}


def test_vpc_001_says_each_subnet_s_route_as_found(source: Any) -> None:
    evaluation, n = source
    found = by(evaluation)[("VPC-001", n["vpc"])]
    assert found.status.value == "FAIL"
    assert (f"subnet {n['private']} routes 0.0.0.0/0 through NAT gateway {n['nat']}: S3 "
            "traffic pays NAT processing") in found.message
    assert (f"subnet {n['public']} routes 0.0.0.0/0 to internet gateway {n['igw']}: S3 traffic "
            "goes out over the internet gateway") in found.message
    assert "no 0.0.0.0/0 route" not in found.message and "not known" not in found.message
    rows = {r["subnet"]: r["egress"] for r in found.evidence["egress"]}
    assert rows == {n["private"]: "NAT", n["public"]: "internet gateway"}


def test_vpc_004_is_judged_on_the_consumers_with_their_subnets(source: Any) -> None:
    evaluation, n = source
    got = by(evaluation)
    group = got[("VPC-004", n["group"])]
    assert group.status.value == "FAIL" and n["public"] in group.message
    assert group.evidence["public_subnets"] == [n["public"]]
    assert group.evidence["launch_template"] == n["template"]
    assert got[("VPC-004", n["instance"])].status.value == "PASS"
    # the template sets no public IP itself: no result that could read as a clean bill
    assert ("VPC-004", n["template"]) not in got


def test_a_template_that_sets_the_flag_is_judged_on_it(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('''
resource "aws_launch_template" "off" {
  name_prefix   = "gpu-"
  instance_type = "g5.xlarge"
  network_interfaces {
    device_index                = 0
    associate_public_ip_address = false
  }
}

resource "aws_launch_template" "on" {
  name_prefix   = "gpu-"
  instance_type = "g5.xlarge"
  network_interfaces {
    device_index                = 0
    associate_public_ip_address = true
  }
}
''')
    got = by(run(load_terraform_dir([tmp_path]).resources, policy_ids=["VPC-004"]))
    off = got[("VPC-004", "aws_launch_template.off")]
    assert off.status.value == "PASS"
    assert "LaunchTemplateData.NetworkInterfaces[0].AssociatePublicIpAddress" in off.message
    assert got[("VPC-004", "aws_launch_template.on")].status.value == "FAIL"


def test_live_the_same_verdicts(aws: None) -> None:
    ec2, autoscaling = client("ec2"), client("autoscaling")
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.20.101.0/24")["Subnet"]["SubnetId"]
    ec2.modify_subnet_attribute(SubnetId=public, MapPublicIpOnLaunch={"Value": True})
    private = ec2.create_subnet(VpcId=vpc, CidrBlock="10.20.1.0/24")["Subnet"]["SubnetId"]
    public_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=public_rt, SubnetId=public)
    nat = ec2.create_nat_gateway(SubnetId=public, AllocationId=ec2.allocate_address(
        Domain="vpc")["AllocationId"])["NatGateway"]["NatGatewayId"]
    private_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=private_rt, DestinationCidrBlock="0.0.0.0/0",
                     NatGatewayId=nat)
    ec2.associate_route_table(RouteTableId=private_rt, SubnetId=private)
    lt = ec2.create_launch_template(LaunchTemplateName="gpu", LaunchTemplateData={
        "ImageId": AMI, "InstanceType": "g5.xlarge"})["LaunchTemplate"]["LaunchTemplateId"]
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="gpu-public", MinSize=0, MaxSize=4, DesiredCapacity=0,
        VPCZoneIdentifier=public, LaunchTemplate={"LaunchTemplateId": lt})
    ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge",
                      SubnetId=private)
    result = collect(TargetSpec(regions=(REGION,)))
    got = by(run(result.resources, policy_ids=["VPC-001", "VPC-004"], gaps=result.gaps))
    vpc_001 = got[("VPC-001", vpc)]
    assert f"subnet {private} routes 0.0.0.0/0 through NAT gateway {nat}: S3 traffic pays " \
        "NAT processing" in vpc_001.message
    assert f"subnet {public} routes 0.0.0.0/0 to internet gateway {igw}" in vpc_001.message
    group = got[("VPC-004", "gpu-public")]
    assert group.status.value == "FAIL" and group.evidence["public_subnets"] == [public]
    assert ("VPC-004", lt) not in got
