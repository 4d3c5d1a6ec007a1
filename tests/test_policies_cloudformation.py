"""Each policy the CloudFormation source supports, on real templates, through the engine.

One failing and one passing template per policy (tests/fixtures/cfn/policies/); the exact
(policy, resource, status) results are asserted, so a resource the policy should not look at
(no GPU, no spot) must give no result at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policies import all_policies
from scanner.engine.config import Config
from scanner.engine.evaluate import evaluate, run
from scanner.model import Finding, Status
from scanner.sources.cloudformation.reader import load_template
from tests.test_rightsizing_sources import UTILIZATION_POLICIES

POLICIES = Path(__file__).resolve().parent / "fixtures" / "cfn" / "policies"

F, P, U, S = Status.FAIL, Status.PASS, Status.UNKNOWN, Status.SUPPRESSED

CASES: list[tuple[str, tuple[str, ...], list[tuple[str, str, Status]]]] = [
    (
        "ebs001_fail.yaml",
        ("EBS-001",),
        [
            ("EBS-001", "PlainVolume", F),
            ("EBS-001", "DefaultVolume", F),  # absent Encrypted; no default encryption in CFN
            ("EBS-001", "ParamVolume", U),  # parameter with no default
            ("EBS-001", "SkippedVolume", S),  # Metadata skip with a reason
            ("EBS-001", "NoReasonVolume", F),  # a skip without a reason does not mute
            ("EBS-001", "Instance", F),  # second device has no Encrypted
            ("EBS-001", "Template", F),  # "false" as a string
            ("EBS-001", "Config", F),  # no mappings: the AMI's root volume, unencrypted
            ("EBS-001", "Fleet", F),
        ],
    ),
    (
        "ebs001_pass.yaml",
        ("EBS-001",),
        [
            ("EBS-001", "Volume", P),  # "true" from a parameter default
            ("EBS-001", "Instance", P),
            ("EBS-001", "Template", P),
            ("EBS-001", "Config", P),  # "True"
            ("EBS-001", "Fleet", P),
        ],
    ),
    (
        # created from a snapshot whose encryption is not known: UNKNOWN without Encrypted: true
        # (explicit false too: it does not decrypt an encrypted snapshot); no snapshot still FAILs
        "ebs001_snapshot.yaml",
        ("EBS-001",),
        [
            ("EBS-001", "ParamSnapshotVolume", U),  # a parameter with no default
            ("EBS-001", "LiteralSnapshotVolume", U),  # an id, Encrypted: false
            ("EBS-001", "EncryptedSnapshotVolume", P),
            ("EBS-001", "PlainVolume", F),
            ("EBS-001", "Template", U),
            ("EBS-001", "EncryptedTemplate", P),
            ("EBS-001", "PlainTemplate", F),
            ("EBS-001", "Instance", U),
            ("EBS-001", "Config", U),
        ],
    ),
    (
        "ebs003_fail.yaml",
        ("EBS-003",),
        [
            ("EBS-003", "DefaultKeyVolume", U),  # the account's default key, not named
            ("EBS-003", "AwsManagedKeyVolume", F),
            ("EBS-003", "Template", F),
        ],
    ),
    (
        "ebs003_pass.yaml",
        ("EBS-003",),
        [("EBS-003", "Volume", P), ("EBS-003", "Template", P)],
    ),
    ("vpc001_fail.yaml", ("VPC-001",), [("VPC-001", "GpuVpc", F)]),
    ("vpc001_pass.yaml", ("VPC-001",), [("VPC-001", "GpuVpc", P)]),
    (
        # subnets from another stack or a parameter: UNKNOWN on the compute, no PASS on ToolsVpc
        # (which has the endpoint), no VPC-002 result; VPC-003 UNKNOWN on the endpoint (it
        # would pass, but applies only if the compute runs in its VPC)
        "vpc001_unknown.yaml",
        ("VPC-001", "VPC-002", "VPC-003"),
        [
            ("VPC-001", "Trainers", U),  # !Split of an !ImportValue
            ("VPC-001", "GpuNodes", U),  # a List<AWS::EC2::Subnet::Id> parameter, no default
            ("VPC-001", "BatchGpu", U),  # [!ImportValue ...]
            ("VPC-001", "Notebook", U),  # a subnet id no template declares
            ("VPC-003", "ToolsS3Endpoint", U),
        ],
    ),
    (
        "vpc002_fail.yaml",
        ("VPC-002",),
        [("VPC-002", "ExplicitSubnet", F), ("VPC-002", "MainTableSubnet", F)],
    ),
    ("vpc002_pass.yaml", ("VPC-002",), [("VPC-002", "GpuSubnet", P)]),
    (
        "vpc003_fail.yaml",
        ("VPC-003",),
        [("VPC-003", "NoPolicy", F), ("VPC-003", "OpenPolicy", F)],
    ),
    (
        "vpc003_pass.yaml",
        ("VPC-003",),
        [("VPC-003", "Restricted", P), ("VPC-003", "Conditional", P)],
    ),
    (
        "vpc004_fail.yaml",
        ("VPC-004",),
        [
            ("VPC-004", "ExplicitInstance", F),
            # Template sets no public IP itself: no result, Workers (its group) is judged
            ("VPC-004", "Workers", F),  # public subnet: MapPublicIpOnLaunch + route to the IGW
            ("VPC-004", "PublicConfig", F),
        ],
    ),
    (
        "vpc004_pass.yaml",
        ("VPC-004",),
        [
            ("VPC-004", "ExplicitInstance", P),
            ("VPC-004", "Workers", P),  # maps public IPs, but routes to a NAT gateway
            # PrivateConfig sets no public IP itself: judged on its group
        ],
    ),
    (
        "spot_fail.yaml",
        ("SPOT-001", "SPOT-002"),
        [
            ("SPOT-001", "TooHigh", F),
            ("SPOT-002", "TooHigh", P),
            ("SPOT-001", "NoCap", F),  # require_explicit_cap: no max price = on-demand
            ("SPOT-002", "NoCap", P),
            ("SPOT-001", "TooLow", P),
            ("SPOT-002", "TooLow", F),
            ("SPOT-001", "LowConfig", P),
            ("SPOT-002", "LowConfig", F),
            ("SPOT-001", "Mixed", F),  # SpotMaxPrice 1.00 over both override types' caps
            ("SPOT-002", "Mixed", P),
        ],
    ),
    (
        "spot_pass.yaml",
        ("SPOT-001", "SPOT-002"),
        [
            ("SPOT-001", "Capped", P),
            ("SPOT-002", "Capped", P),
            ("SPOT-001", "Config", P),
            ("SPOT-002", "Config", P),
            ("SPOT-001", "Fleet", P),
            ("SPOT-002", "Fleet", P),
        ],
    ),
    (
        "asg_fail.yaml",
        ("ASG-001", "ASG-002"),
        [
            ("ASG-001", "AllOnDemand", F),  # no spot: ASG-002 does not apply
            ("ASG-001", "AllSpot", F),
            ("ASG-002", "AllSpot", F),
            ("ASG-001", "LowestPrice", F),
            ("ASG-002", "LowestPrice", F),
        ],
    ),
    (
        "purchase.yaml",  # purchase options: tests/test_purchase_options.py
        ("ASG-004",),
        [("ASG-004", "RejectedGroup", F), ("ASG-004", "MixedGroup", P)],
    ),
    (
        "asg_pass.yaml",
        ("ASG-001", "ASG-002"),
        [("ASG-001", "Workers", P), ("ASG-002", "Workers", P)],
    ),
    (
        "compute_view.yaml",  # the policy-level regressions of issue 11
        ("EBS-001", "VPC-004", "SPOT-001", "ASG-001"),
        [
            ("EBS-001", "DefaultVpcInstance", P),
            ("EBS-001", "GpuTemplate", P),
            ("EBS-001", "Trn2Spot", P),
            ("EBS-001", "Unnamed", F),  # "the first block device mapping"
            ("VPC-004", "DefaultVpcInstance", U),  # no subnet: the default VPC
            ("VPC-004", "ZonesOnly", U),  # availability zones only: the default VPC
            ("VPC-004", "HeadNode", U),
            ("SPOT-001", "Trn2Spot", F),  # no max price: fails whatever the price
            ("ASG-001", "ZonesOnly", F),  # 1 of max 4, all on-demand
            # HeadNode (MaxSize 1): a notice, no verdict
        ],
    ),
    # -- ASG-003 / SPOT-003 ------------------------------------------------------------------
    (
        "scaling_interruption_fail.yaml",
        ("ASG-003", "SPOT-003"),
        [
            ("ASG-003", "CpuTracked", F),  # target tracking on ASGAverageCPUUtilization
            ("ASG-003", "CpuAlarmed", F),  # step policy, alarm on CPUUtilization
            ("ASG-003", "OnTheGroup", F),  # the group's own (misplaced) configuration
            ("ASG-003", "Elsewhere", U),  # no alarm names its step policy; one Refs a param
            ("SPOT-003", "SpotGroup", F),  # a launch hook, a state-change rule, no target
            ("SPOT-003", "RebalancingFleet", P),  # SpotMaintenanceStrategies.CapacityRebalance
        ],
    ),
    (
        "scaling_interruption_pass.yaml",
        ("ASG-003", "SPOT-003"),
        [
            ("ASG-003", "Inference", P),  # GPU target tracking beside a CPU one
            ("ASG-003", "Workers", P),  # alarm on SQS queue depth
            ("SPOT-003", "Inference", P),
            ("SPOT-003", "Workers", P),
            ("SPOT-003", "Notebook", P),  # the rule covers the template's spot instance too
        ],
    ),
    # NET-001 and S3-001: tests/test_net_s3_iac.py
    # COST-002 never FAILs in IaC (a budget may exist elsewhere): tests/test_cost_budgets.py
    ("../../cost/cfn/budget.yaml", ("COST-002",), [("COST-002", "GpuBudget", P)]),
    ("../../net_s3/cfn/training.yaml", ("NET-001",), [
        ("NET-001", "GoodGroup", P), ("NET-001", "PlainGroup", F),
        ("NET-001", "SizedByParameter", U)]),
    ("../../net_s3/cfn/buckets.yaml", ("S3-001",), [
        ("S3-001", "CheckpointBucket", U), ("S3-001", "ModelBucket", P),
        ("S3-001", "ArtifactBucket", F)]),
]


def _results(name: str, policy_ids: tuple[str, ...]) -> list[tuple[str, str, Status]]:
    source = load_template(POLICIES / name)
    assert source.errors == []
    findings = evaluate(source.resources, policy_ids=policy_ids)
    return [(f.policy_id, f.resource["id"], f.status) for f in findings]


@pytest.mark.parametrize(("name", "policy_ids", "expected"), CASES, ids=[c[0] for c in CASES])
def test_policy_results(
    name: str, policy_ids: tuple[str, ...], expected: list[tuple[str, str, Status]]
) -> None:
    assert sorted(_results(name, policy_ids)) == sorted(expected)


def test_every_supported_policy_has_a_failing_and_a_passing_case() -> None:
    supported = {pid for pid, pol in all_policies().items() if "C" in pol.sources
                 and pid not in UTILIZATION_POLICIES}  # tests/test_rightsizing_sources.py
    failing = {pid for _, _, exp in CASES for pid, _, status in exp if status is F}
    passing = {pid for _, _, exp in CASES for pid, _, status in exp if status is P}
    never_fail_in_iac = {"COST-002"}  # it cannot know that no budget exists in the account
    assert supported - never_fail_in_iac <= failing and supported <= passing


def test_findings_point_at_the_template_lines() -> None:
    source = load_template(POLICIES / "ebs001_fail.yaml")
    findings = evaluate(source.resources, policy_ids=["EBS-001"])
    by_id = {f.resource["id"]: f for f in findings}
    loc = by_id["PlainVolume"].location
    assert loc is not None and loc["start_line"] == 6 and loc["end_line"] == 8
    assert loc["file"].endswith("ebs001_fail.yaml")
    skipped = by_id["SkippedVolume"]
    assert skipped.suppression is not None
    assert skipped.suppression["by"] == "Metadata of SkippedVolume"
    assert skipped.suppression["reason"] == "scratch space wiped on every run"
    assert [n.message for n in source.notices] == [
        "NoReasonVolume: gpuaudit skip of EBS-001 has no reason; not suppressed"
    ]


def test_ebs003_is_off_unless_enabled_in_the_config() -> None:
    source = load_template(POLICIES / "ebs003_fail.yaml")
    assert not [f for f in evaluate(source.resources) if f.policy_id == "EBS-003"]
    config = Config(policies={"EBS-003": {"enabled": True}})
    on = [
        (f.resource["id"], f.status)
        for f in evaluate(source.resources, config=config)
        if f.policy_id == "EBS-003"
    ]
    assert sorted(on) == [("AwsManagedKeyVolume", F), ("DefaultKeyVolume", U), ("Template", F)]


def test_region_given_or_not_the_s3_endpoint_is_recognised() -> None:
    for region in (None, "eu-central-1"):
        source = load_template(POLICIES / "vpc001_pass.yaml", region=region)
        findings = evaluate(source.resources, policy_ids=["VPC-001"])
        assert [(f.resource["id"], f.status) for f in findings] == [("GpuVpc", P)]


def test_vpc_001_names_the_subnets_it_could_not_resolve() -> None:
    source = load_template(POLICIES / "vpc001_unknown.yaml")
    by = {f.resource["id"]: f for f in evaluate(source.resources, policy_ids=["VPC-001"])}
    assert "Fn::ImportValue ml-network-PrivateSubnets: the value is exported by another stack" \
        in by["Trainers"].message
    assert "parameter PrivateSubnets has no default" in by["GpuNodes"].message
    assert "subnet subnet-0a1b2c3d4e5f60718 is not in the scan" in by["Notebook"].message
    assert "it may run in ToolsVpc or in a VPC outside the scan" in by["Notebook"].message
    loc = by["Trainers"].location
    assert loc is not None and loc["file"].endswith("vpc001_unknown.yaml")
    assert loc["start_line"] == 35
    assert by["Trainers"].evidence["vpcs_it_may_run_in"] == ["ToolsVpc"]
    # the fix says how to make the VPC known, then what to add to it
    assert "--cfn-param" in by["GpuNodes"].remediation["text"]
    assert "AWS::EC2::VPCEndpoint" in by["GpuNodes"].remediation["cloudformation"]


def test_an_import_value_names_its_export_unless_it_holds_a_secret(tmp_path: Path) -> None:
    template = {"Parameters": {"Token": {"Type": "String", "NoEcho": True,
                                         "Default": "s3cr3t-t0ken"}},
                "Resources": {"Box": {"Type": "AWS::EC2::Instance", "Properties": {
                    "InstanceType": "g5.xlarge", "ImageId": "ami-12345678",
                    "SubnetId": {"Fn::ImportValue": {"Fn::Sub": "net-${Token}"}}}}}}
    (tmp_path / "t.json").write_text(json.dumps(template))
    source = load_template(tmp_path / "t.json")
    [box] = [r for r in source.resources if r.id == "Box"]
    reason = box.get("SubnetId").reason
    assert reason == "Fn::ImportValue: the value is exported by another stack"
    assert "s3cr3t" not in reason


def test_the_issue_11_messages_on_cloudformation() -> None:
    source = load_template(POLICIES / "compute_view.yaml")
    out = run(source.resources, policy_ids=("EBS-001", "VPC-004", "SPOT-001", "ASG-001"))
    by = {(f.policy_id, f.resource["id"]): f for f in out.findings}
    assert by[("EBS-001", "Unnamed")].message.endswith("the first block device mapping")
    assert "LaunchTemplateData:" in by[("EBS-001", "Unnamed")].remediation["cloudformation"]
    assert "default VPC" in by[("VPC-004", "DefaultVpcInstance")].message
    spot = by[("SPOT-001", "Trn2Spot")]
    assert "not in the catalogue" in spot.message and spot.savings is None
    [notice] = [n for n in out.notices if "HeadNode" in n.message]
    assert notice.message.startswith("ASG-001 HeadNode: not judged: at most 1 instance ")
    assert notice.path.endswith("compute_view.yaml") and notice.line


def test_vpc_002_with_the_endpoint_route_tables_not_known_is_unknown(tmp_path: Path) -> None:
    template = tmp_path / "t.yaml"
    template.write_text("""
Parameters:
  Tables: {Type: CommaDelimitedList}
Resources:
  Vpc: {Type: AWS::EC2::VPC, Properties: {CidrBlock: 10.0.0.0/16}}
  Subnet: {Type: AWS::EC2::Subnet, Properties: {VpcId: !Ref Vpc, CidrBlock: 10.0.1.0/24}}
  S3:
    Type: AWS::EC2::VPCEndpoint
    Properties:
      VpcId: !Ref Vpc
      ServiceName: com.amazonaws.us-east-1.s3
      RouteTableIds: !Ref Tables
  Gpu:
    Type: AWS::EC2::Instance
    Properties: {InstanceType: p4d.24xlarge, SubnetId: !Ref Subnet, ImageId: ami-12c6146b}
""")
    findings = evaluate(load_template(template).resources, policy_ids=["VPC-002"])
    assert [(f.resource["id"], f.status) for f in findings] == [("Subnet", U)]


def test_properties_chosen_whole_by_a_condition(tmp_path: Path) -> None:
    # Properties: !If [C, {... Encrypted: true}, {...}] was read as one property named Fn::If:
    # the volume failed whatever the branch
    body = """
Parameters:
  P: {Type: String%s}
Conditions:
  C: !Equals [!Ref P, x]
Resources:
  A:
    Type: AWS::EC2::Volume
    Properties: !If [C, {Size: 1, AvailabilityZone: a, Encrypted: true},
                        {Size: 1, AvailabilityZone: a}]
"""
    got = {}
    for default, name in (("", "unknown"), (", Default: x", "true"), (", Default: y", "false")):
        template = tmp_path / f"{name}.yaml"
        template.write_text(body % default)
        [finding] = evaluate(load_template(template).resources, policy_ids=["EBS-001"])
        got[name] = finding.status
    assert got == {"unknown": U, "true": P, "false": F}


def test_a_target_tracking_configuration_on_the_group_is_judged_with_a_notice() -> None:
    """CloudFormation rejects TargetTrackingConfiguration on AWS::AutoScaling::AutoScalingGroup;
    the group is judged on it all the same, and the reader and the finding both say so."""
    source = load_template(POLICIES / "scaling_interruption_fail.yaml")
    assert any("OnTheGroup: TargetTrackingConfiguration is not a property of "
               "AWS::AutoScaling::AutoScalingGroup: CloudFormation rejects" in n.message
               for n in source.notices)
    [finding] = [f for f in evaluate(source.resources, policy_ids=["ASG-003"])
                 if f.resource["id"] == "OnTheGroup"]
    assert finding.status is F and "CloudFormation rejects" in finding.evidence[
        "misplaced_property"]
    assert finding.evidence["scalers"][0]["metrics"] == ["ASGAverageCPUUtilization"]



ASG001_LT_CFN = """AWSTemplateFormatVersion: "2010-09-09"
Resources:
  LT:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData:
        InstanceType: p4de.24xlarge
        ImageId: ami-12345678
"""
ASG001_GROUP_CFN = """  NAME:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MinSize: "0"
      MaxSize: "64"
      DesiredCapacity: "DESIRED"
      VPCZoneIdentifier: [subnet-1]
"""
ASG001_ON_DEMAND = """      LaunchTemplate:
        LaunchTemplateId: !Ref LT
        Version: "1"
"""
ASG001_ALL_SPOT = """      MixedInstancesPolicy:
        InstancesDistribution:
          OnDemandBaseCapacity: 0
          OnDemandPercentageAboveBaseCapacity: 0
          SpotAllocationStrategy: price-capacity-optimized
        LaunchTemplate:
          LaunchTemplateSpecification:
            LaunchTemplateId: !Ref LT
            Version: "1"
          Overrides:
            - InstanceType: p4de.24xlarge
            - InstanceType: p4d.24xlarge
"""


def _asg001_sizes(tmp_path: Path, groups: dict[str, tuple[int, str]]) -> dict[str, Finding]:
    """ASG-001's findings on a template of the given groups (name: (desired, launch))."""
    text = ASG001_LT_CFN + "".join(
        ASG001_GROUP_CFN.replace("NAME", name).replace("DESIRED", str(desired)) + launch
        for name, (desired, launch) in groups.items())
    (tmp_path / "t.yaml").write_text(text)
    source = load_template(tmp_path / "t.yaml")
    assert source.errors == []
    return {f.resource["id"]: f for f in evaluate(source.resources, policy_ids=["ASG-001"])}


def test_asg001_saving_only_at_a_split_inside_the_band(tmp_path: Path) -> None:
    """The saving moves on-demand units to spot down to the band's upper edge, an on-demand
    count the policy itself passes (2 of 5 = 40 %, 1 of 3 = 33 %); no split of 1 or 2 instances
    is inside 20-40 %: still a FAIL, with no saving (the 0-of-2 target it used to price fails)."""
    found = _asg001_sizes(tmp_path, {
        "One": (1, ASG001_ON_DEMAND), "Two": (2, ASG001_ON_DEMAND),
        "Three": (3, ASG001_ON_DEMAND), "Five": (5, ASG001_ON_DEMAND),
        "TwoSpot": (2, ASG001_ALL_SPOT)})
    assert {rid: f.status for rid, f in found.items()} == dict.fromkeys(
        ("One", "Two", "Three", "Five", "TwoSpot"), F)
    for rid, size in (("One", "1 instance"), ("Two", "2 instances")):
        f = found[rid]
        assert f.savings is None and f.evidence["target_on_demand"] is None
        assert f"no split of {size} is inside the band" in f.message
        assert "a desired capacity of 3 holds one" in f.message
    for rid, desired, target in (("Three", 3, 1), ("Five", 5, 2)):
        f = found[rid]
        assert f.evidence["target_on_demand"] == target and f.savings is not None
        assert f"x {desired - target} instances" in f.savings.basis
    spot = found["TwoSpot"]
    assert spot.savings is None and "below the 20-40% band" in spot.message
    assert "no split of 2 instances is inside the band" in spot.message


def test_no_saving_is_reported_for_a_group_with_no_split_inside_the_band(tmp_path: Path) -> None:
    """The field case: an all-on-demand group of 2 p4de.24xlarge was booked $26,047/mo for a
    0-of-2 target that the same run FAILs on an all-spot group of 2. No policy books money that
    no compliant split can realise: the run has no saving at all."""
    found = _asg001_sizes(tmp_path, {"OnDemandASG": (2, ASG001_ON_DEMAND),
                                     "AllSpotASG": (2, ASG001_ALL_SPOT)})
    assert {rid: f.status for rid, f in found.items()} == {"OnDemandASG": F, "AllSpotASG": F}
    out = run(load_template(tmp_path / "t.yaml").resources)
    assert [(f.policy_id, f.resource["id"]) for f in out.findings
            if f.savings is not None and f.savings.money_class == "saving"] == []
