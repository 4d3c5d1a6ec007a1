"""Resources that may not exist (an unknown count / for_each, a CloudFormation condition that
cannot be decided) are never assumed to exist or not: a verdict that leans on one is UNKNOWN,
saying which and why (issue 11: "the worst thing this tool can do is a confident wrong
verdict").

Each join the VPC policies and the compute view make is tried with a maybe-resource on the side
that decides the verdict (the regression: a confident PASS or FAIL), and with a resource that
certainly exists beside it (the negative: the verdict stays decided where it can be).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Ref, Resource, Status, Unknown
from tests.model_builders import res

MAYBE = "count is var.n, which has no value"


def maybe(r: Resource, why: str = MAYBE) -> Resource:
    r.exists = Unknown(why)
    return r


def results(resources: list[Resource], *policies: str) -> dict[tuple[str, str], Any]:
    return {(f.policy_id, f.resource["id"]): f
            for f in evaluate(resources, policy_ids=list(policies))}


def verdict(resources: list[Resource], policy: str, rid: str) -> Any:
    return results(resources, policy)[(policy, rid)]


def network(*, public: bool = False, endpoint: bool = True) -> list[Resource]:
    """A VPC with one subnet associated to a table routing 0.0.0.0/0 to an internet gateway,
    and (endpoint) an S3 gateway endpoint covering that table."""
    rs = [res("ec2.vpc", "vpc"),
          res("ec2.subnet", "sub", VpcId=Ref("vpc"), MapPublicIpOnLaunch=public),
          res("ec2.internet_gateway", "igw", VpcId=Ref("vpc")),
          res("ec2.route_table", "rt", VpcId=Ref("vpc"),
              Routes=[{"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": Ref("igw")}]),
          res("ec2.route_table_association", "assoc", SubnetId=Ref("sub"), RouteTableId=Ref("rt")),
          res("ec2.route_table", "other", VpcId=Ref("vpc"))]
    if endpoint:
        rs.append(s3_endpoint())
    return rs


def s3_endpoint(rid: str = "s3", **attrs: Any) -> Resource:
    attrs.setdefault("RouteTableIds", [Ref("rt")])
    return res("ec2.vpc_endpoint", rid, VpcId=Ref("vpc"), ServiceName="com.amazonaws.us-east-1.s3",
               **attrs)


def gpu(rid: str = "gpu", subnet: str = "sub", **attrs: Any) -> Resource:
    return res("ec2.instance", rid, InstanceType="g5.xlarge", SubnetId=Ref(subnet),
               BlockDeviceMappings=[{"DeviceName": "root", "Ebs": {"Encrypted": True}}], **attrs)


def without(rs: list[Resource], *ids: str) -> list[Resource]:
    return [r for r in rs if r.id not in ids]


def decided(found: Any) -> bool:
    return found.status in (Status.PASS, Status.FAIL)


# -- VPC-001: the S3 gateway endpoint and the GPU compute --------------------------------------


def test_vpc001_an_endpoint_that_may_not_exist_is_not_a_pass_nor_a_fail():
    rs = without(network(), "s3") + [maybe(s3_endpoint()), gpu()]
    found = verdict(rs, "VPC-001", "vpc")
    assert found.status is Status.UNKNOWN
    assert "may not exist" in found.message and MAYBE in found.message
    assert found.evidence["s3_gateway_endpoints_that_may_not_exist"] == ["s3"]
    # negative: one that certainly exists beside it decides
    assert verdict(rs + [s3_endpoint("s3b")], "VPC-001", "vpc").status is Status.PASS
    assert verdict(without(network(), "s3") + [gpu()], "VPC-001", "vpc").status is Status.FAIL


@pytest.mark.parametrize("endpoint, would", [(True, "would pass"), (False, "would fail")])
def test_vpc001_gpu_compute_that_may_not_exist_does_not_make_the_vpc_gpu(endpoint, would):
    rs = network(endpoint=endpoint) + [maybe(gpu())]
    found = verdict(rs, "VPC-001", "vpc")
    assert found.status is Status.UNKNOWN, found.message
    assert would in found.message and "instance gpu may not exist" in found.message
    assert found.evidence["gpu_compute"][0]["may_not_exist"]


def test_vpc001_judges_on_the_gpu_compute_that_certainly_exists():
    rs = network(endpoint=False) + [maybe(gpu("maybe_gpu")), gpu("sure_gpu")]
    found = verdict(rs, "VPC-001", "vpc")
    assert found.status is Status.FAIL and "sure_gpu" in found.message
    assert "maybe_gpu" not in found.message


def test_vpc001_gpu_compute_only_in_subnets_that_may_not_exist():
    rs = network(endpoint=False) + [gpu()]
    maybe(next(r for r in rs if r.id == "sub"))
    found = verdict(rs, "VPC-001", "vpc")
    assert found.status is Status.UNKNOWN and "subnet sub may not exist" in found.message
    # negative: the same compute also in a subnet that certainly exists: decided
    rs.append(res("ec2.subnet", "sub2", VpcId=Ref("vpc")))
    rs = without(rs, "gpu") + [res("autoscaling.group", "gpu", MinSize=1, MaxSize=2,
                                   VPCZoneIdentifier=[Ref("sub"), Ref("sub2")],
                                   MixedInstancesPolicy={"LaunchTemplate": {"Overrides": [
                                       {"InstanceType": "g5.xlarge"}]}})]
    assert verdict(rs, "VPC-001", "vpc").status is Status.FAIL


# -- VPC-002: the subnet's route table and the endpoint's ---------------------------------------


def test_vpc002_an_endpoint_association_that_may_not_exist_is_no_coverage():
    rs = without(network(), "s3") + [
        s3_endpoint(RouteTableIds=[]), gpu(),
        maybe(res("ec2.vpc_endpoint_route_table_association", "epassoc",
                  VpcEndpointId=Ref("s3"), RouteTableId=Ref("rt")))]
    found = verdict(rs, "VPC-002", "sub")
    assert found.status is Status.UNKNOWN
    assert "covered only if" in found.message and "epassoc may not exist" in found.message
    # negative: the same association certainly there passes; none at all fails
    rs[-1].exists = True
    assert verdict(rs, "VPC-002", "sub").status is Status.PASS
    assert verdict(rs[:-1], "VPC-002", "sub").status is Status.FAIL


@pytest.mark.parametrize("covered", [True, False])
def test_vpc002_a_subnet_association_that_may_not_exist_leaves_the_table_unknown(covered):
    rs = network() + [gpu()]
    if not covered:
        rs = without(rs, "s3") + [s3_endpoint(RouteTableIds=[Ref("other")])]
    maybe(next(r for r in rs if r.id == "assoc"))
    found = verdict(rs, "VPC-002", "sub")
    assert found.status is Status.UNKNOWN and "assoc may not exist" in found.message


def test_vpc002_a_main_table_association_that_may_not_exist():
    rs = without(network(), "assoc") + [gpu(), maybe(res(
        "ec2.main_route_table_association", "main", VpcId=Ref("vpc"), RouteTableId=Ref("rt")))]
    found = verdict(rs, "VPC-002", "sub")
    assert found.status is Status.UNKNOWN and "main may not exist" in found.message
    rs[-1].exists = True
    assert verdict(rs, "VPC-002", "sub").status is Status.PASS


def test_vpc002_a_route_table_that_may_not_exist():
    rs = network() + [gpu()]
    maybe(next(r for r in rs if r.id == "rt"))
    found = verdict(rs, "VPC-002", "sub")
    assert found.status is Status.UNKNOWN and "route table rt may not exist" in found.message


@pytest.mark.parametrize("covered", [True, False])
def test_vpc002_an_endpoint_or_gpu_compute_that_may_not_exist(covered):
    rs = without(network(), "s3") + [
        maybe(s3_endpoint(RouteTableIds=[Ref("rt" if covered else "other")])), gpu()]
    assert verdict(rs, "VPC-002", "sub").status is Status.UNKNOWN
    rs = network() + [maybe(gpu())]
    assert verdict(rs, "VPC-002", "sub").status is Status.UNKNOWN


# -- VPC-003 -----------------------------------------------------------------------------------


def test_vpc003_gpu_compute_that_may_not_exist():
    rs = network() + [maybe(gpu())]
    found = verdict(rs, "VPC-003", "s3")
    assert found.status is Status.UNKNOWN and "would fail" in found.message


def test_vpc003_a_separate_policy_that_may_not_exist_is_no_restriction():
    narrow = {"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"}]}
    rs = network() + [gpu(), maybe(res("ec2.vpc_endpoint_policy", "pol", VpcEndpointId=Ref("s3"),
                                       PolicyDocument=narrow))]
    found = verdict(rs, "VPC-003", "s3")
    assert found.status is Status.UNKNOWN and "pol may not exist" in found.message
    # negative: a wide policy that may not exist still fails (without it: no policy at all)
    rs[-1].attrs["PolicyDocument"] = {"Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "*"}]}
    assert verdict(rs, "VPC-003", "s3").status is Status.FAIL


# -- VPC-004: routes, gateways, associations, subnets ------------------------------------------


def public_network() -> list[Resource]:
    return network(public=True, endpoint=False)


@pytest.mark.parametrize("maybe_id", ["igw", "assoc", "rt"])
def test_vpc004_a_public_path_that_may_not_exist_is_unknown(maybe_id):
    rs = public_network() + [gpu()]
    assert verdict(rs, "VPC-004", "gpu").status is Status.FAIL
    maybe(next(r for r in rs if r.id == maybe_id))
    found = verdict(rs, "VPC-004", "gpu")
    assert found.status is Status.UNKNOWN and f"{maybe_id} may not exist" in found.message


def test_vpc004_a_separate_route_that_may_not_exist():
    rs = public_network() + [gpu()]
    next(r for r in rs if r.id == "rt").attrs["Routes"] = []
    route = res("ec2.route", "default", RouteTableId=Ref("rt"),
                DestinationCidrBlock="0.0.0.0/0", GatewayId=Ref("igw"))
    assert verdict(rs + [route], "VPC-004", "gpu").status is Status.FAIL
    found = verdict(rs + [maybe(route)], "VPC-004", "gpu")
    assert found.status is Status.UNKNOWN and "route default may not exist" in found.message
    # negative: no default route at all is private
    assert verdict(rs, "VPC-004", "gpu").status is Status.PASS


def test_vpc004_a_main_table_association_that_may_not_exist():
    rs = without(public_network(), "assoc") + [gpu(), maybe(res(
        "ec2.main_route_table_association", "main", VpcId=Ref("vpc"), RouteTableId=Ref("rt")))]
    found = verdict(rs, "VPC-004", "gpu")
    assert found.status is Status.UNKNOWN and "main may not exist" in found.message


def test_vpc004_a_gateway_that_is_not_known_is_not_private():
    rs = public_network() + [gpu()]
    next(r for r in rs if r.id == "rt").attrs["Routes"] = [
        {"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": Unknown("var.gateway has no value")}]
    found = verdict(rs, "VPC-004", "gpu")
    assert found.status is Status.UNKNOWN and "var.gateway has no value" in found.message


@pytest.mark.parametrize("public, would", [(True, "and it is public"),
                                           (False, "would pass")])
def test_vpc004_a_subnet_that_may_not_exist(public, would):
    rs = network(public=public, endpoint=False) + [gpu()]
    maybe(next(r for r in rs if r.id == "sub"))
    found = verdict(rs, "VPC-004", "gpu")
    assert found.status is Status.UNKNOWN and "subnet sub may not exist" in found.message
    assert would in found.message


def test_vpc004_a_group_in_a_certain_subnet_and_one_that_may_not_exist():
    def group(*subnets: str) -> Resource:
        return res("autoscaling.group", "asg", MinSize=1, MaxSize=2,
                   VPCZoneIdentifier=[Ref(s) for s in subnets],
                   MixedInstancesPolicy={"LaunchTemplate": {"Overrides": [
                       {"InstanceType": "g5.xlarge"}]}})

    private = [res("ec2.subnet", "private", VpcId=Ref("vpc"), MapPublicIpOnLaunch=False)]
    rs = network(public=False, endpoint=False) + private + [group("sub", "private")]
    maybe(next(r for r in rs if r.id == "sub"))
    assert verdict(rs, "VPC-004", "asg").status is Status.PASS  # private either way
    rs = public_network() + private + [group("sub", "private")]
    maybe(next(r for r in rs if r.id == "sub"))
    assert verdict(rs, "VPC-004", "asg").status is Status.UNKNOWN  # public if it exists
    rs = public_network() + private + [group("sub", "private")]
    maybe(next(r for r in rs if r.id == "private"))
    assert verdict(rs, "VPC-004", "asg").status is Status.FAIL  # certainly public


# -- the compute view: launch templates and configurations that may not exist ------------------


def template(rid: str = "lt", **data: Any) -> Resource:
    return res("ec2.launch_template", rid, LaunchTemplateData=data)


@pytest.mark.parametrize("policy", ["VPC-004", "VPC-001", "EBS-001"])
def test_an_instance_never_leans_on_a_template_that_may_not_exist(policy):
    lt = template(InstanceType="g5.xlarge", NetworkInterfaces=[
        {"DeviceIndex": 0, "AssociatePublicIpAddress": True, "SubnetId": Ref("sub")}],
        InstanceMarketOptions={"MarketType": "spot"})
    inst = res("ec2.instance", "i", LaunchTemplate={"LaunchTemplateId": Ref("lt")},
               BlockDeviceMappings=[{"DeviceName": "/dev/sdf", "Ebs": {"Encrypted": True}}])
    rs = network(endpoint=False) + [inst, lt]
    rid = "vpc" if policy == "VPC-001" else "i"
    before = results(rs, policy).get((policy, rid))
    maybe(lt)
    found = results(rs, policy).get((policy, rid))
    if policy == "EBS-001":  # its own devices: decided on the instance, the root at the template
        assert before.status is found.status is Status.PASS
        return
    assert before is not None and decided(before)
    assert found is None or not decided(found), found.message
    if found is not None:
        assert "launch template lt may not exist" in found.message


def test_a_group_never_leans_on_a_template_or_configuration_that_may_not_exist():
    lt = template(InstanceType="p4d.24xlarge", NetworkInterfaces=[
        {"DeviceIndex": 0, "AssociatePublicIpAddress": True}])
    asg = res("autoscaling.group", "asg", MinSize=1, MaxSize=4, DesiredCapacity=4,
              VPCZoneIdentifier=[Ref("sub")], LaunchTemplate={"LaunchTemplateId": Ref("lt")})
    rs = network(endpoint=False) + [asg, lt]
    assert verdict(rs, "VPC-004", "asg").status is Status.FAIL
    assert verdict(rs, "ASG-001", "asg").status is Status.FAIL
    maybe(lt)
    for policy in ("VPC-004", "ASG-001"):
        found = verdict(rs, policy, "asg")
        assert found.status is Status.UNKNOWN, (policy, found.message)
        assert "launch template lt may not exist" in found.message
    lc = res("autoscaling.launch_configuration", "lc", InstanceType="p4d.24xlarge",
             AssociatePublicIpAddress=True)
    asg = res("autoscaling.group", "asg2", MinSize=1, MaxSize=4, DesiredCapacity=4,
              VPCZoneIdentifier=[Ref("sub")], LaunchConfigurationName=Ref("lc"))
    rs = network(endpoint=False) + [asg, lc]
    assert verdict(rs, "VPC-004", "asg2").status is Status.FAIL
    maybe(lc)
    found = verdict(rs, "VPC-004", "asg2")
    assert found.status is Status.UNKNOWN
    assert "launch configuration lc may not exist" in found.message


# -- through the sources -----------------------------------------------------------------------


def test_hcl_an_endpoint_under_an_unknown_count(tmp_path: Path):
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    (tmp_path / "main.tf").write_text('''
variable "create_endpoint" { type = bool }
resource "aws_vpc" "main" { cidr_block = "10.0.0.0/16" }
resource "aws_subnet" "gpu" {
  vpc_id     = aws_vpc.main.id
  cidr_block = "10.0.1.0/24"
}
resource "aws_vpc_endpoint" "s3" {
  count             = var.create_endpoint ? 1 : 0
  vpc_id            = aws_vpc.main.id
  service_name      = "com.amazonaws.us-east-1.s3"
  vpc_endpoint_type = "Gateway"
}
resource "aws_instance" "gpu" {
  instance_type = "p4d.24xlarge"
  subnet_id     = aws_subnet.gpu.id
  root_block_device { encrypted = true }
}
''')
    found = results(load_terraform_dir([tmp_path]).resources, "VPC-001")
    assert found[("VPC-001", "aws_vpc.main")].status is Status.UNKNOWN
    assert "var.create_endpoint" in found[("VPC-001", "aws_vpc.main")].message
    assert not any(decided(f) for f in found.values())


def test_cloudformation_a_condition_that_cannot_be_decided(tmp_path: Path):
    from scanner.sources.cloudformation.reader import load_template

    path = tmp_path / "stack.yaml"
    path.write_text('''AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Env: {Type: String}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
Resources:
  Vpc: {Type: AWS::EC2::VPC, Properties: {CidrBlock: 10.0.0.0/16}}
  Subnet:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.0.1.0/24}
  Endpoint:
    Type: AWS::EC2::VPCEndpoint
    Condition: IsProd
    Properties:
      VpcId: !Ref Vpc
      ServiceName: com.amazonaws.us-east-1.s3
      VpcEndpointType: Gateway
  Gpu:
    Type: AWS::EC2::Instance
    Properties:
      InstanceType: g5.xlarge
      SubnetId: !Ref Subnet
      BlockDeviceMappings: [{DeviceName: /dev/xvda, Ebs: {Encrypted: true}}]
  Volume:
    Type: AWS::EC2::Volume
    Condition: IsProd
    Properties: {AvailabilityZone: us-east-1a, Size: 10, Encrypted: false}
''')
    result = load_template(path)
    found = results(result.resources, "VPC-001", "EBS-001")
    assert found[("VPC-001", "Vpc")].status is Status.UNKNOWN
    assert "IsProd" in found[("VPC-001", "Vpc")].message
    volume = found[("EBS-001", "Volume")]
    assert volume.status is Status.UNKNOWN and "would fail" in volume.message
    assert found[("EBS-001", "Gpu")].status is Status.PASS
    # negative: the condition decided by a parameter decides the verdicts
    prod = load_template(path, params={"Env": "prod"})
    found = results(prod.resources, "VPC-001", "EBS-001")
    assert found[("VPC-001", "Vpc")].status is Status.PASS
    assert found[("EBS-001", "Volume")].status is Status.FAIL
    dev = results(load_template(path, params={"Env": "dev"}).resources, "VPC-001", "EBS-001")
    assert dev[("VPC-001", "Vpc")].status is Status.FAIL and ("EBS-001", "Volume") not in dev
