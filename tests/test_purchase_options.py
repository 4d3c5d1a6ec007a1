# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""Purchase options (docs/purchase-options.md): how each source spells them, how the compute
view reads them, and what ASG-001, ASG-004 and SPOT-* do with each, on Terraform HCL, plan JSON,
CloudFormation and a live account (moto)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.targets import TargetSpec
from scanner.compute import views
from scanner.compute.purchase import market_option
from scanner.engine.evaluate import run
from scanner.model import Resource, Unknown
from scanner.model.graph import ResourceIndex
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
TF = FIXTURES / "terraform" / "purchase"
CFN = FIXTURES / "cfn" / "policies" / "purchase.yaml"
POLICIES = ("ASG-001", "ASG-002", "ASG-004", "SPOT-001", "SPOT-002")
G5 = 1.006  # g5.xlarge on demand, us-east-1 (the catalogue)

# The same estate in each IaC source: Terraform addresses and CloudFormation logical ids.
NAMES = {
    "capacity_block_lt": ("aws_launch_template.capacity_block", "CapacityBlockTemplate"),
    "capacity_block": ("aws_autoscaling_group.capacity_block", "CapacityBlockGroup"),
    "reserved_lt": ("aws_launch_template.reserved", "ReservedTemplate"),
    "reserved": ("aws_autoscaling_group.reserved", "ReservedGroup"),
    "open_lt": ("aws_launch_template.open", "OpenTemplate"),
    "open": ("aws_autoscaling_group.open", "OpenGroup"),
    "spot_lt": ("aws_launch_template.spot", "SpotTemplate"),
    "spot_a": ("aws_autoscaling_group.spot_a", "SpotGroupA"),
    "spot_b": ("aws_autoscaling_group.spot_b", "SpotGroupB"),
    "unused_lt": ("aws_launch_template.spot_unused", "UnusedSpotTemplate"),
    "in_mixed_lt": ("aws_launch_template.spot_in_mixed", "SpotInMixedTemplate"),
    "rejected": ("aws_autoscaling_group.rejected", "RejectedGroup"),
    "on_demand_lt": ("aws_launch_template.on_demand", "OnDemandTemplate"),
    "mixed": ("aws_autoscaling_group.mixed", "MixedGroup"),
}
OPTIONS = {
    "capacity_block_lt": "capacity-block", "capacity_block": "capacity-block",
    "reserved_lt": "reservation-targeted", "reserved": "reservation-targeted",
    "open_lt": "reservation-open", "open": "reservation-open",
    "spot_lt": "spot", "spot_a": "spot", "spot_b": "spot",  # an open preference keeps spot
    "unused_lt": "spot", "in_mixed_lt": "spot", "on_demand_lt": "on-demand", "mixed": "mixed",
}
F, P = "FAIL", "PASS"
EXPECTED = {
    ("ASG-001", "open"): F,  # an open reservation is bought on demand: judged
    ("ASG-001", "spot_a"): F,
    ("ASG-001", "mixed"): P,
    ("ASG-002", "spot_a"): F, ("ASG-002", "spot_b"): F, ("ASG-002", "mixed"): P,
    ("ASG-004", "rejected"): F, ("ASG-004", "mixed"): P,
    ("SPOT-001", "spot_lt"): F, ("SPOT-001", "unused_lt"): F, ("SPOT-001", "in_mixed_lt"): F,
    ("SPOT-001", "mixed"): F,
    ("SPOT-002", "spot_lt"): P, ("SPOT-002", "unused_lt"): P, ("SPOT-002", "in_mixed_lt"): P,
    ("SPOT-002", "mixed"): P,
}


def hcl() -> list[Resource]:
    return load_terraform_dir([TF]).resources


def plan() -> list[Resource]:
    result = load_plan(TF / "plan.json")
    assert result.errors == []
    return result.resources


def cfn() -> list[Resource]:
    result = load_template(CFN)
    assert result.errors == []
    return result.resources


SOURCES = {"hcl": (hcl, 0), "plan": (plan, 0), "cloudformation": (cfn, 1)}


@pytest.fixture(params=sorted(SOURCES), scope="module")
def source(request: pytest.FixtureRequest) -> tuple[list[Resource], dict[str, str], Any]:
    load, column = SOURCES[request.param]
    resources = load()
    names = {key: pair[column] for key, pair in NAMES.items()}
    return resources, names, run(resources, policy_ids=POLICIES)


def test_the_view_reads_every_purchase_option(source: Any) -> None:
    resources, names, _ = source
    shared = views(ResourceIndex(resources))
    by_id = {r.id: r for r in resources}
    got = {key: shared.of(by_id[names[key]]).purchase.option for key in OPTIONS}
    assert got == OPTIONS
    prepaid = {key for key in OPTIONS if shared.of(by_id[names[key]]).purchase.prepaid is True}
    assert prepaid == {"capacity_block_lt", "capacity_block", "reserved_lt", "reserved"}


def test_policies_on_each_purchase_option(source: Any) -> None:
    _, names, evaluation = source
    back = {v: k for k, v in names.items()}
    got = {(f.policy_id, back[f.resource["id"]]): f.status.value
           for f in evaluation.findings if f.resource["id"] in back}
    assert got == EXPECTED
    # prepaid capacity: no verdict, no money, a notice that says why
    for key in ("capacity_block", "reserved"):
        assert not [k for k in got if k[1] == key]
        said = [n.message for n in evaluation.notices if names[key] in n.message]
        assert any("ASG-001" in m and "is prepaid" in m and "band does not apply" in m
                   for m in said), said


def test_every_asg_and_spot_finding_names_the_purchase_option(source: Any) -> None:
    _, names, evaluation = source
    back = {v: k for k, v in names.items()}
    for f in evaluation.findings:
        key = back.get(f.resource["id"])
        if key is None:
            continue
        if key == "rejected":
            assert f.evidence["purchase_option"] is None
            assert "rejects" in f.evidence["purchase_option_unknown"]
        else:
            assert f.evidence["purchase_option"] == OPTIONS[key], (f.policy_id, key)


def _finding(evaluation: Any, policy: str, rid: str) -> Any:
    return next(f for f in evaluation.findings
                if f.policy_id == policy and f.resource["id"] == rid)


def test_spot_exposure_belongs_to_the_consumers(source: Any) -> None:
    _, names, evaluation = source
    over = 0.90 - 0.7 * G5  # $/h over the cap per instance
    shared = _finding(evaluation, "SPOT-001", names["spot_lt"])
    # 3 instances of one group at DesiredCapacity, 1 of the other at MaxSize (desired 0)
    assert shared.savings.usd_month == pytest.approx(over * 730 * 4)
    basis = shared.savings.basis
    assert "x 4 instances" in basis and "per instance" not in basis
    assert f"{names['spot_a']}: DesiredCapacity 3" in basis
    assert f"{names['spot_b']}: MaxSize 1 (desired is 0)" in basis
    assert "list price" in basis
    # no group or instance launches it: a finding, no money
    unused = _finding(evaluation, "SPOT-001", names["unused_lt"])
    assert unused.savings is None and "no exposure is booked" in unused.message
    assert "no group or instance in the scan launches it" in unused.message
    # the template inside a mixed instances policy: its only consumer is rejected
    in_mixed = _finding(evaluation, "SPOT-001", names["in_mixed_lt"])
    assert in_mixed.savings is None and names["rejected"] in in_mixed.message
    # the groups that take their market from the template carry no exposure of their own
    assert not [f for f in evaluation.findings if f.policy_id == "SPOT-001"
                and f.resource["id"] in (names["spot_a"], names["spot_b"])]


def test_a_spot_template_in_a_mixed_instances_policy_is_asg_004_and_nothing_else(
        source: Any) -> None:
    _, names, evaluation = source
    fail = _finding(evaluation, "ASG-004", names["rejected"])
    assert fail.severity.value == "high"
    assert names["rejected"] in fail.message and names["in_mixed_lt"] in fail.message
    assert "Incompatible launch template" in fail.message
    others = [f for f in evaluation.findings if f.resource["id"] == names["rejected"]
              and f.policy_id != "ASG-004" and f.policy_id in POLICIES]
    assert others == []  # no on-demand share, no saving, no spot numbers from it
    assert any("ASG-001" in n.message and "ASG-004" in n.message and names["rejected"]
               in n.message for n in evaluation.notices)


def test_no_saving_is_booked_against_prepaid_capacity(source: Any) -> None:
    _, names, evaluation = source
    prepaid = {names[k] for k in ("capacity_block", "capacity_block_lt", "reserved",
                                  "reserved_lt")}
    assert not [f for f in evaluation.findings if f.resource["id"] in prepaid
                and f.savings is not None]
    # the open-reservation group is priced on demand, and says so
    open_fail = _finding(evaluation, "ASG-001", names["open"])
    assert open_fail.savings is not None and "list price" in open_fail.savings.basis


@pytest.mark.parametrize(("market", "reservation", "option"), [
    (None, None, "on-demand"),
    ("spot", {"CapacityReservationPreference": "open"}, "spot"),
    ("spot", {"CapacityReservationTarget": {"CapacityReservationId": "cr-1"}}, "spot"),
    ("capacity-block", None, "capacity-block"),
    ("Capacity-Block", None, "capacity-block"),
    (None, {"CapacityReservationPreference": "none"}, "on-demand"),
    (None, {"CapacityReservationPreference": "open"}, "reservation-open"),
    (None, {"CapacityReservationPreference": "capacity-reservations-only"},
     "reservation-targeted"),
    (None, {"CapacityReservationTarget": {"CapacityReservationResourceGroupArn": "arn:x"}},
     "reservation-targeted"),
    (None, {"CapacityReservationTarget": {"CapacityReservationIds": ["cr-1"]}},
     "reservation-targeted"),  # an Auto Scaling group's own target
])
def test_market_option(market: Any, reservation: Any, option: str) -> None:
    assert market_option(market, reservation)[0] == option


def test_an_option_not_known_stays_unknown() -> None:
    assert isinstance(market_option(Unknown("var.market"), None)[0], Unknown)
    pref = {"CapacityReservationPreference": Unknown("var.pref")}
    assert isinstance(market_option(None, pref)[0], Unknown)
    assert isinstance(market_option("persistent", None)[0], Unknown)  # not an EC2 market


def test_an_unknown_reservation_preference_is_not_a_fail(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('''
variable "preference" {
  type = string
}

resource "aws_launch_template" "gpu" {
  name_prefix   = "p4d-"
  instance_type = "p4d.24xlarge"
  capacity_reservation_specification {
    capacity_reservation_preference = var.preference
  }
}

resource "aws_autoscaling_group" "gpu" {
  min_size            = 0
  max_size            = 8
  desired_capacity    = 4
  vpc_zone_identifier = ["subnet-0123456789abcdef0"]
  launch_template {
    id = aws_launch_template.gpu.id
  }
}
''')
    evaluation = run(load_terraform_dir([tmp_path]).resources, policy_ids=["ASG-001"])
    (found,) = evaluation.findings
    assert found.status.value == "UNKNOWN" and "prepaid" in found.message
    assert found.savings is None


# -- live (moto) ---------------------------------------------------------------------------


def test_live_launch_template_versions_carry_the_purchase_option(aws: None) -> None:
    ec2, autoscaling = client("ec2"), client("autoscaling")
    subnet = ec2.create_subnet(VpcId=ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"],
                               CidrBlock="10.1.1.0/24")["Subnet"]["SubnetId"]
    templates = {
        "p5-capacity-block": {"InstanceType": "p5.48xlarge", "InstanceMarketOptions": {
            "MarketType": "capacity-block"}, "CapacityReservationSpecification": {
            "CapacityReservationTarget": {"CapacityReservationId": "cr-0a1b2c3d4e5f67890"}}},
        "p4d-reserved": {"InstanceType": "p4d.24xlarge", "CapacityReservationSpecification": {
            "CapacityReservationTarget": {"CapacityReservationId": "cr-0fedcba9876543210"}}},
        "g5-spot-open": {"InstanceType": "g5.xlarge", "CapacityReservationSpecification": {
            "CapacityReservationPreference": "open"}, "InstanceMarketOptions": {
            "MarketType": "spot", "SpotOptions": {"MaxPrice": "0.90"}}},
    }
    ids = {}
    for name, data in templates.items():
        ids[name] = ec2.create_launch_template(
            LaunchTemplateName=name, LaunchTemplateData={"ImageId": AMI, **data},
        )["LaunchTemplate"]["LaunchTemplateId"]
    for name, desired in (("p5-capacity-block", 4), ("p4d-reserved", 2), ("g5-spot-open", 3)):
        autoscaling.create_auto_scaling_group(
            AutoScalingGroupName=name, MinSize=0, MaxSize=8, DesiredCapacity=desired,
            VPCZoneIdentifier=subnet,
            LaunchTemplate={"LaunchTemplateName": name, "Version": "$Default"})
    result = collect(TargetSpec(regions=(REGION,)),
                     kinds={"ec2.launch_template", "autoscaling.group", "ec2.instance"})
    groups = {r.id: r for r in result.resources if r.kind == "autoscaling.group"}
    lts = {r.id: r for r in result.resources if r.kind == "ec2.launch_template"}
    shared = views(ResourceIndex(result.resources))
    assert shared.of(lts[ids["p5-capacity-block"]]).purchase.option == "capacity-block"
    assert shared.of(groups["p5-capacity-block"]).purchase.option == "capacity-block"
    assert shared.of(groups["p4d-reserved"]).purchase.option == "reservation-targeted"
    assert shared.of(groups["g5-spot-open"]).purchase.option == "spot"

    evaluation = run(result.resources, policy_ids=POLICIES, gaps=result.gaps)
    got = {(f.policy_id, f.resource["id"]): f for f in evaluation.findings}
    assert ("ASG-001", "p5-capacity-block") not in got
    assert ("ASG-001", "p4d-reserved") not in got
    assert not [f for f in got.values() if f.savings is not None
                and f.resource["id"] in ("p5-capacity-block", "p4d-reserved",
                                         ids["p5-capacity-block"], ids["p4d-reserved"])]
    spot = got[("SPOT-001", ids["g5-spot-open"])]
    assert spot.status.value == "FAIL"
    assert spot.savings.usd_month == pytest.approx((0.90 - 0.7 * G5) * 730 * 3)
    assert "g5-spot-open: DesiredCapacity 3" in spot.savings.basis
    assert got[("ASG-001", "g5-spot-open")].evidence["purchase_option"] == "spot"


def test_the_public_autoscaling_module_s_purchase_options() -> None:
    """terraform-aws-modules/autoscaling's complete example (vendored, Apache-2.0): the
    template with ``capacity_reservation_preference = "open"`` and ``market_type = "spot"``
    reads as spot, the one that targets ``aws_ec2_capacity_reservation.targeted`` as a targeted
    reservation, through the module's dynamic blocks."""
    root = FIXTURES / "corpora" / "terraform-aws-autoscaling" / "examples" / "complete"
    resources = load_terraform_dir([root]).resources
    shared = views(ResourceIndex(resources))
    by_id = {r.id: r for r in resources}
    option = {rid: shared.of(by_id[rid]).purchase.option for rid in (
        "module.complete.aws_launch_template.this[0]",
        "module.complete.aws_autoscaling_group.idc[0]",
        "module.warm_pool.aws_launch_template.this[0]",
        "module.warm_pool.aws_autoscaling_group.this[0]",
        "module.mixed_instance.aws_autoscaling_group.this[0]",
        "module.default.aws_autoscaling_group.this[0]")}
    assert option == {
        "module.complete.aws_launch_template.this[0]": "spot",
        "module.complete.aws_autoscaling_group.idc[0]": "spot",
        "module.warm_pool.aws_launch_template.this[0]": "reservation-targeted",
        "module.warm_pool.aws_autoscaling_group.this[0]": "reservation-targeted",
        "module.mixed_instance.aws_autoscaling_group.this[0]": "mixed",
        "module.default.aws_autoscaling_group.this[0]": "on-demand",
    }
    spot = shared.of(by_id["module.complete.aws_launch_template.this[0]"]).purchase.spot
    assert [o.count for o in spot] == [1]  # the one group that launches it, DesiredCapacity 1


def test_instances_node_groups_and_a_group_s_own_reservation(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('''
resource "aws_instance" "block" {
  ami           = "ami-0a1b2c3d4e5f67890"
  instance_type = "p5.48xlarge"
  instance_market_options {
    market_type = "capacity-block"
  }
  capacity_reservation_specification {
    capacity_reservation_target {
      capacity_reservation_id = "cr-0a1b2c3d4e5f67890"
    }
  }
}

resource "aws_instance" "open" {
  ami           = "ami-0a1b2c3d4e5f67890"
  instance_type = "g5.xlarge"
  capacity_reservation_specification {
    capacity_reservation_preference = "open"
  }
}

resource "aws_launch_template" "p5" {
  name_prefix   = "p5-"
  instance_type = "p5.48xlarge"
}

resource "aws_eks_node_group" "block" {
  cluster_name    = "training"
  node_group_name = "p5-block"
  node_role_arn   = "arn:aws:iam::123456789012:role/eks-node"
  subnet_ids      = ["subnet-0123456789abcdef0"]
  capacity_type   = "CAPACITY_BLOCK"
  launch_template {
    id      = aws_launch_template.p5.id
    version = aws_launch_template.p5.latest_version
  }
  scaling_config {
    desired_size = 2
    max_size     = 2
    min_size     = 0
  }
}

resource "aws_autoscaling_group" "reserved" {
  min_size            = 0
  max_size            = 8
  desired_capacity    = 4
  vpc_zone_identifier = ["subnet-0123456789abcdef0"]
  capacity_reservation_specification {
    capacity_reservation_preference = "capacity-reservations-only"
    capacity_reservation_target {
      capacity_reservation_ids = ["cr-0a1b2c3d4e5f67890"]
    }
  }
  launch_template {
    id = aws_launch_template.p5.id
  }
}
''')
    resources = load_terraform_dir([tmp_path]).resources
    shared = views(ResourceIndex(resources))
    got = {r.id: shared.of(r).purchase.option for r in resources}
    assert got == {"aws_instance.block": "capacity-block", "aws_instance.open": "reservation-open",
                   "aws_launch_template.p5": "on-demand",
                   "aws_eks_node_group.block": "capacity-block",
                   "aws_autoscaling_group.reserved": "reservation-targeted"}
    evaluation = run(resources, policy_ids=POLICIES)
    assert [f for f in evaluation.findings if f.resource["id"] == "aws_autoscaling_group.reserved"
            ] == []
    assert any("aws_autoscaling_group.reserved: not judged: reservation-targeted" in n.message
               for n in evaluation.notices)


@pytest.mark.parametrize(("attrs", "option"), [
    ({"InstanceLifecycle": "capacity-block"}, "capacity-block"),
    ({"InstanceLifecycle": "spot"}, "spot"),
    ({"CapacityReservationSpecification": {"CapacityReservationTarget": {
        "CapacityReservationId": "cr-0123"}}, "CapacityReservationId": "cr-0123"},
     "reservation-targeted"),
    ({"CapacityReservationSpecification": {"CapacityReservationPreference": "open"},
      "CapacityReservationId": "cr-0123"}, "reservation-open"),
    ({"CapacityReservationId": "cr-0123"}, "reservation-open"),
    ({"CapacityReservationSpecification": {"CapacityReservationPreference": "open"}},
     "reservation-open"),
    ({}, "on-demand"),
])
def test_a_running_instance_says_its_option(attrs: dict[str, Any], option: str) -> None:
    """DescribeInstances: InstanceLifecycle, and the reservation it runs in (moto does not
    return the reservation fields, so the instance is built as AWS answers)."""
    from tests.model_builders import res

    inst = res("ec2.instance", "i-0123", declared=False, InstanceType="p4d.24xlarge",
               State="running", **attrs)
    assert views(ResourceIndex([inst])).of(inst).purchase.option == option


def test_the_spot_share_of_a_group_over_a_reservation_is_still_judged() -> None:
    """On-demand units in a targeted reservation (prepaid: no band, no saving), spot units
    above them: the spot settings are judged on the spot share."""
    from tests.model_builders import res

    lt = res("ec2.launch_template", "lt", LaunchTemplateData={
        "InstanceType": "p4d.24xlarge", "CapacityReservationSpecification": {
            "CapacityReservationTarget": {"CapacityReservationId": "cr-0123"}}})
    group = res("autoscaling.group", "g", DesiredCapacity=10, MinSize=0, MaxSize=10,
                MixedInstancesPolicy={
                    "InstancesDistribution": {"OnDemandBaseCapacity": 4,
                                              "OnDemandPercentageAboveBaseCapacity": 0,
                                              "SpotAllocationStrategy": "lowest-price"},
                    "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateId": "lt"},
                                       "Overrides": [{"InstanceType": "p4d.24xlarge"}]}})
    evaluation = run([lt, group], policy_ids=POLICIES)
    got = {(f.policy_id, f.resource["id"]): f for f in evaluation.findings}
    assert ("ASG-001", "g") not in got  # prepaid: a notice
    assert got[("SPOT-001", "g")].status.value == "FAIL"  # no SpotMaxPrice on the spot share
    assert "6 spot of DesiredCapacity 10" in got[("SPOT-001", "g")].savings.basis
    assert got[("ASG-002", "g")].status.value == "FAIL"  # one type, lowest-price
    assert got[("SPOT-001", "g")].evidence["purchase_option"] == "reservation-targeted"


EKSCTL = '''apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: training
  region: us-east-1
nodeGroups:
  - name: block
    instanceType: p5.48xlarge
    desiredCapacity: 4
    instanceMarketOptions:
      marketType: capacity-block
    capacityReservation:
      capacityReservationTarget:
        capacityReservationID: cr-0123456789abcdef0
  - name: odcr
    instanceType: p4de.24xlarge
    desiredCapacity: 2
    capacityReservation:
      capacityReservationTarget:
        capacityReservationID: "cr-0123456789abcdef1"
  - name: group-odcr
    instanceType: p4de.24xlarge
    desiredCapacity: 2
    capacityReservation:
      capacityReservationTarget:
        capacityReservationResourceGroupARN: arn:aws:resource-groups:us-east-1:123456789012:group/g
  - name: misspelt
    instanceType: p4de.24xlarge
    desiredCapacity: 4
    capacityReservation:
      capacityReservationTarget:
        capacityReservationId: cr-0123456789abcdef1
  - name: placeholder
    instanceType: p4de.24xlarge
    desiredCapacity: 4
    capacityReservation:
      capacityReservationTarget:
        capacityReservationID: ${RESERVATION}
  - name: open
    instanceType: g5.xlarge
    desiredCapacity: 4
    capacityReservation:
      capacityReservationPreference: open
  - name: spot
    instanceType: mixed
    desiredCapacity: 4
    instancesDistribution:
      instanceTypes: [g5.xlarge, g5.2xlarge]
      onDemandBaseCapacity: 0
      onDemandPercentageAboveBaseCapacity: 0
  - name: on-demand
    instanceType: g5.xlarge
    desiredCapacity: 4
managedNodeGroups:
  - name: managed-spot
    instanceTypes: [g5.xlarge, g5.2xlarge]
    spot: true
  - name: managed-block
    instanceType: p5.48xlarge
    instanceMarketOptions:
      marketType: capacity-block
    capacityReservation:
      capacityReservationTarget:
        capacityReservationID: cr-0123456789abcdef0
  - name: managed
    instanceType: g5.xlarge
'''
EKSCTL_OPTIONS = {
    "nodeGroups/block": "capacity-block", "nodeGroups/odcr": "reservation-targeted",
    "nodeGroups/group-odcr": "reservation-targeted", "nodeGroups/misspelt": None,
    "nodeGroups/placeholder": None, "nodeGroups/open": "reservation-open",
    "nodeGroups/spot": "spot", "nodeGroups/on-demand": "on-demand",
    "managedNodeGroups/managed-spot": "spot", "managedNodeGroups/managed-block": "capacity-block",
    "managedNodeGroups/managed": "on-demand"}


def test_eksctl_node_groups_say_their_option_and_prepaid_ones_book_no_saving(
        tmp_path: Path) -> None:
    """eksctl's instanceMarketOptions and capacityReservation, read as a launch template's: a
    Capacity Block or a targeted reservation is prepaid (a notice, no ASG-001 verdict, no spot
    saving); a target eksctl does not know, or a placeholder, is not known (never on-demand)."""
    from scanner.sources.eksctl.reader import read_if_cluster_config

    path = tmp_path / "cluster.yaml"
    path.write_text(EKSCTL)
    result = read_if_cluster_config(path)
    assert result is not None and result.errors == []
    shared = views(ResourceIndex(result.resources))
    got = {}
    for r in result.resources:
        option = shared.of(r).purchase.option
        got[r.id.split("/", 2)[2]] = None if isinstance(option, Unknown) else option
    assert got == EKSCTL_OPTIONS
    block = next(r for r in result.resources if r.id.endswith("nodeGroups/block"))
    assert shared.of(block).purchase.option_path == "InstanceMarketOptions.marketType"
    odcr = next(r for r in result.resources if r.id.endswith("nodeGroups/odcr"))
    assert shared.of(odcr).purchase.option_path == \
        "CapacityReservation.capacityReservationTarget.capacityReservationID"

    evaluation = run(result.resources, policy_ids=POLICIES)
    judged = {(f.policy_id, f.resource["id"].split("/", 2)[2]): f for f in evaluation.findings}
    for name in ("nodeGroups/block", "nodeGroups/odcr", "nodeGroups/group-odcr"):
        assert ("ASG-001", name) not in judged
        assert any(f"{name}: not judged" in n.message and "is prepaid" in n.message
                   for n in evaluation.notices), name
    for name in ("nodeGroups/misspelt", "nodeGroups/placeholder"):  # never a confident FAIL
        assert judged[("ASG-001", name)].status.value == "UNKNOWN"
        assert judged[("ASG-001", name)].savings is None
    assert judged[("ASG-001", "nodeGroups/open")].status.value == "FAIL"  # bought on demand
    assert judged[("ASG-001", "nodeGroups/on-demand")].savings is not None
    assert judged[("ASG-001", "nodeGroups/spot")].evidence["purchase_option"] == "spot"
    prepaid = {"nodeGroups/block", "nodeGroups/odcr", "nodeGroups/group-odcr",
               "managedNodeGroups/managed-block"}
    assert not [f for (_, name), f in judged.items() if name in prepaid and f.savings]


@pytest.mark.parametrize(("values", "option"), [
    (None, "on-demand"),  # no capacity-type requirement: Karpenter's default
    (["spot"], "spot"),
    (["on-demand"], "on-demand"),
    (["spot", "on-demand"], "mixed"),
    (["reserved"], "reservation-targeted"),
    (["reserved", "spot"], None),  # reservations first, then spot: decided at launch
])
def test_a_node_pool_s_capacity_types_are_its_option(values: Any, option: Any) -> None:
    from tests.model_builders import res

    reqs = [{"Key": "karpenter.k8s.aws/instance-family", "Operator": "In", "Values": ["g5"]}]
    if values is not None:
        reqs.append({"Key": "karpenter.sh/capacity-type", "Operator": "In", "Values": values})
    pool = res("karpenter.node_pool", "NodePool/gpu", Requirements=reqs,
               NodeClassRef={"Name": "gpu"})
    got = views(ResourceIndex([pool])).of(pool).purchase.option
    assert (None if isinstance(got, Unknown) else got) == option


PCLUSTER = '''Region: us-east-1
Image: {Os: alinux2}
HeadNode:
  InstanceType: c5.xlarge
  Networking: {SubnetId: subnet-0123456789abcdef0}
Scheduling:
  Scheduler: slurm
  SlurmQueues:
    - Name: spot
      CapacityType: SPOT
      Networking: {SubnetIds: [subnet-0123456789abcdef0]}
      ComputeResources: [{Name: g5, InstanceType: g5.xlarge}]
    - Name: block
      CapacityType: CAPACITY_BLOCK
      Networking: {SubnetIds: [subnet-0123456789abcdef0]}
      ComputeResources:
        - Name: p5
          InstanceType: p5.48xlarge
          CapacityReservationTarget: {CapacityReservationId: cr-0123456789abcdef0}
    - Name: odcr
      Networking: {SubnetIds: [subnet-0123456789abcdef0]}
      CapacityReservationTarget: {CapacityReservationId: cr-0123456789abcdef1}
      ComputeResources: [{Name: p4d, InstanceType: p4d.24xlarge}]
    - Name: some-odcr
      Networking: {SubnetIds: [subnet-0123456789abcdef0]}
      ComputeResources:
        - {Name: p4d, InstanceType: p4d.24xlarge,
           CapacityReservationTarget: {CapacityReservationId: cr-0123456789abcdef1}}
        - {Name: g5, InstanceType: g5.xlarge}
    - Name: on-demand
      CapacityType: ONDEMAND
      Networking: {SubnetIds: [subnet-0123456789abcdef0]}
      ComputeResources: [{Name: g5, InstanceType: g5.xlarge}]
'''


def test_parallelcluster_queues_say_their_option(tmp_path: Path) -> None:
    from scanner.sources.parallelcluster.reader import read_if_cluster_configuration

    path = tmp_path / "cluster.yaml"
    path.write_text(PCLUSTER)
    result = read_if_cluster_configuration(path)
    assert result is not None and result.errors == []
    shared = views(ResourceIndex(result.resources))
    got = {r.get("Name"): shared.of(r).purchase.option for r in result.resources
           if r.kind == "parallelcluster.queue"}
    assert got == {"spot": "spot", "block": "capacity-block", "odcr": "reservation-targeted",
                   "some-odcr": "on-demand", "on-demand": "on-demand"}
