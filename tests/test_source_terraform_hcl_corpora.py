"""The HCL source over real modules (vendored in tests/fixtures/corpora): terraform-aws-modules
autoscaling and vpc, examples included. No crash, no hang, no input error, and the launch
templates and groups of the examples come out as a reviewer reading the code would expect."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from scanner.engine.config import Config
from scanner.engine.evaluate import evaluate, run
from scanner.model import Ref, Resource, SourceResult, Status, Unknown
from scanner.sources.terraform.hcl.reader import load_terraform_dir

CORPORA = Path(__file__).resolve().parent / "fixtures" / "corpora"
ASG = CORPORA / "terraform-aws-autoscaling"
VPC = CORPORA / "terraform-aws-vpc"



def _load(path: Path) -> tuple[SourceResult, float]:
    t = time.perf_counter()
    result = load_terraform_dir([path])
    return result, time.perf_counter() - t


@pytest.fixture(scope="module")
def asg() -> SourceResult:
    result, took = _load(ASG)
    assert took < 20
    return result


@pytest.fixture(scope="module")
def vpc() -> SourceResult:
    result, took = _load(VPC)
    assert took < 20
    return result


def _by_id(result: SourceResult) -> dict[str, Resource]:
    return {r.id: r for r in result.resources}


def test_autoscaling_corpus_loads_cleanly(asg: SourceResult) -> None:
    assert asg.errors == []
    # the module's own directory is used by the examples (source = "../../"), so only the
    # examples (and the empty wrappers root) are roots
    assert {Path(r.scope).name for r in asg.resources} == {"complete"}
    kinds = Counter(r.kind for r in asg.resources)
    # the remote calls not read: vpc, security group, alb, two cloudwatch alarms (TF-001)
    assert kinds == {"ec2.launch_template": 10, "autoscaling.group": 8,
                     "terraform.module_call": 5}


def test_autoscaling_mixed_instances_group(asg: SourceResult) -> None:
    g = _by_id(asg)["module.mixed_instance.aws_autoscaling_group.this[0]"]
    assert g.provenance.file is not None and g.provenance.file.endswith(
        "terraform-aws-autoscaling/main.tf"
    )
    assert (g.attrs["MinSize"], g.attrs["MaxSize"], g.attrs["DesiredCapacity"]) == (0, 5, 4)
    mip = g.attrs["MixedInstancesPolicy"]
    assert mip["InstancesDistribution"] == {
        "OnDemandBaseCapacity": 0,
        "OnDemandPercentageAboveBaseCapacity": 10,
        "SpotAllocationStrategy": "capacity-optimized",
    }
    assert mip["LaunchTemplate"]["Overrides"] == [
        {"InstanceType": "t3.nano", "WeightedCapacity": 2},
        {"InstanceType": "t3.medium", "WeightedCapacity": 1},
    ]
    spec = mip["LaunchTemplate"]["LaunchTemplateSpecification"]
    assert spec["LaunchTemplateId"] == Ref("module.mixed_instance.aws_launch_template.this[0]")
    # the subnets come from the remote vpc module: unknown, and saying why
    subnets = g.attrs["VPCZoneIdentifier"]
    assert isinstance(subnets, Unknown) and "module.vpc" in subnets.reason


def test_autoscaling_complete_launch_template(asg: SourceResult) -> None:
    lt = _by_id(asg)["module.complete.aws_launch_template.this[0]"]
    data = lt.attrs["LaunchTemplateData"]
    assert data["InstanceType"] == "t3.micro"
    assert isinstance(data["ImageId"], Unknown)  # data.aws_ami: read at plan time
    assert [(m["DeviceName"], m["Ebs"]["Encrypted"]) for m in data["BlockDeviceMappings"]] == [
        ("/dev/xvda", True),
        ("/dev/sda1", True),
    ]
    assert data["InstanceMarketOptions"] == {"MarketType": "spot"}
    # ignore_desired_capacity_changes = true selects the "idc" group (count = 1, not "this")
    ids = set(_by_id(asg))
    assert "module.complete.aws_autoscaling_group.idc[0]" in ids
    assert "module.complete.aws_autoscaling_group.this[0]" not in ids
    assert not any(i.startswith("module.disabled.") for i in ids)  # create = false


def test_autoscaling_findings_a_reviewer_expects(asg: SourceResult) -> None:
    policies = ["EBS-001", "ASG-001", "ASG-002", "SPOT-002"]
    # ASG-001 judges GPU groups only by default; this corpus runs t3 instances
    cpu_groups_too = Config(policies={"ASG-001": {"gpu_only": False}})
    by_default = {(f.policy_id, f.resource["id"]) for f in evaluate(asg.resources,
                                                                    policy_ids=policies)}
    assert not any(p == "ASG-001" and "mixed_instance" in r for p, r in by_default)
    got = {
        (f.policy_id, f.resource["id"]): f.status
        for f in evaluate(asg.resources, policy_ids=policies, config=cpu_groups_too)
    }
    # 10% on-demand above base 0 at desired 4: AWS rounds up to 1 instance = 25%
    assert got[("ASG-001", "module.mixed_instance.aws_autoscaling_group.this[0]")] is Status.PASS
    assert got[("ASG-002", "module.mixed_instance.aws_autoscaling_group.this[0]")] is Status.PASS
    # a spot launch template with one type and no allocation strategy; at most one instance,
    # so no split can lie in the band: ASG-001 says so in a notice, not a verdict
    assert ("ASG-001", "module.complete.aws_autoscaling_group.idc[0]") not in got
    notices = run(asg.resources, policy_ids=["ASG-001"], config=cpu_groups_too).notices
    assert any("module.complete.aws_autoscaling_group.idc[0]: not judged: at most 1 instance "
               "(MaxSize 1)" in n.message for n in notices)
    assert got[("ASG-002", "module.complete.aws_autoscaling_group.idc[0]")] is Status.FAIL
    # encrypted block devices vs. the AMI's unencrypted root volume
    assert got[("EBS-001", "module.complete.aws_launch_template.this[0]")] is Status.PASS
    assert got[("EBS-001", "module.default.aws_launch_template.this[0]")] is Status.FAIL


def test_vpc_corpus_loads_cleanly(vpc: SourceResult) -> None:
    assert vpc.errors == []
    roots = {Path(r.scope).name for r in vpc.resources}
    assert "complete" in roots and "simple" in roots
    assert "terraform-aws-vpc" not in roots  # used as a module by the examples
    assert not any(r.id.startswith("module.vpc_endpoints.module.") for r in vpc.resources)
    vpcs = [r for r in vpc.resources if r.kind == "ec2.vpc"]
    assert len(vpcs) == 15


def test_vpc_complete_example(vpc: SourceResult) -> None:
    scope = str(VPC / "examples" / "complete")
    res = {r.id: r for r in vpc.resources if r.scope == scope}
    # azs = slice(data.aws_availability_zones..., 0, 3): 3 elements even though unknown
    privates = sorted(i for i in res if i.startswith("module.vpc.aws_subnet.private["))
    assert privates == [f"module.vpc.aws_subnet.private[{i}]" for i in range(3)]
    assert res["module.vpc.aws_subnet.private[1]"].attrs["CidrBlock"] == "10.0.1.0/24"
    assert res["module.vpc.aws_subnet.private[0]"].attrs["VpcId"] == Ref(
        "module.vpc.aws_vpc.this[0]"
    )
    s3 = res['module.vpc_endpoints.aws_vpc_endpoint.this["s3"]']
    assert s3.attrs["VpcEndpointType"] == "Interface"
    dynamo = res['module.vpc_endpoints.aws_vpc_endpoint.this["dynamodb"]']
    assert dynamo.attrs["VpcEndpointType"] == "Gateway"
    assert Ref("module.vpc.aws_route_table.private[0]") in dynamo.attrs["RouteTableIds"]


def test_loading_is_deterministic() -> None:
    a = load_terraform_dir([VPC, ASG])
    b = load_terraform_dir([ASG, VPC])
    assert [(r.id, r.scope, r.attrs) for r in a.resources] == [
        (r.id, r.scope, r.attrs) for r in b.resources
    ]
    assert a.notices == b.notices
