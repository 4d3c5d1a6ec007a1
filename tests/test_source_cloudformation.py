"""The CloudFormation source: parsing, intrinsics, coercion, suppressions, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.model import Ref, Resource, Skip, SourceKind, SourceResult, Unknown
from scanner.sources.cloudformation import yaml_nodes as cfn_yaml
from scanner.sources.cloudformation.reader import KINDS, load_template, looks_like_cloudformation

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cfn"
REPO = Path(__file__).resolve().parents[1]


def load(name: str, **kw: Any) -> SourceResult:
    return load_template(FIXTURES / name, **kw)


def by_id(result: SourceResult) -> dict[str, Resource]:
    return {r.id: r for r in result.resources}


def unknown_reason(value: Any) -> str:
    assert isinstance(value, Unknown), value
    return value.reason


# ------------------------------------------------------------------------------ the sniff


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ('AWSTemplateFormatVersion: "2010-09-09"\n', True),
        ("Resources:\n  V:\n    Type: AWS::EC2::VPC\n", True),
        ('{"Resources": {"V": {"Type" : "AWS::EC2::VPC"}}}', True),
        ("Resources:\n  V:\n    Type: 'AWS::EC2::VPC'\n", True),
        ("name: ci\non: push\njobs: {}\n", False),
        ('{"format_version": "1.2", "planned_values": {}}', False),
        ("Type: Custom::Thing\n", False),
    ],
)
def test_sniff(head: str, expected: bool) -> None:
    assert looks_like_cloudformation(head) is expected


# ------------------------------------------------------------------------------ each kind


EXPECTED_KINDS = {
    "DataVolume": "ec2.volume",
    "TrainingInstance": "ec2.instance",
    "GpuTemplate": "ec2.launch_template",
    "LegacyConfig": "autoscaling.launch_configuration",
    "Workers": "autoscaling.group",
    "Fleet": "ec2.spot_fleet",
    "Ec2Fleet": "ec2.fleet",
    "Vpc": "ec2.vpc",
    "PrivateSubnet": "ec2.subnet",
    "RouteTable": "ec2.route_table",
    "DefaultRoute": "ec2.route",
    "Association": "ec2.route_table_association",
    "Igw": "ec2.internet_gateway",
    "IgwAttachment": "ec2.gateway_attachment",
    "S3Endpoint": "ec2.vpc_endpoint",
}


def test_every_kind_is_mapped_and_others_ignored() -> None:
    result = load("all_kinds.yaml")
    assert result.errors == [] and result.notices == []
    got = {r.id: r.kind for r in result.resources}
    assert got == EXPECTED_KINDS  # the AWS::KMS::Key is not a kind of the model
    path = str(FIXTURES / "all_kinds.yaml")
    for r in result.resources:
        assert r.scope == path
        assert r.declared is True
        assert r.provenance.source is SourceKind.CLOUDFORMATION
        assert r.provenance.file == path


def test_attributes_are_coerced_and_spelled_as_the_model() -> None:
    res = by_id(load("all_kinds.yaml"))
    vol = res["DataVolume"]
    assert vol.attrs["Size"] == 500 and vol.attrs["Encrypted"] is False
    assert vol.tags == {"Name": "training-data", "team": "ml"}
    assert vol.name == "training-data"

    inst = res["TrainingInstance"]
    assert inst.attrs["InstanceType"] == "g5.xlarge"  # parameter default
    assert inst.attrs["SubnetId"] == Ref("PrivateSubnet")
    bdm = inst.attrs["BlockDeviceMappings"][0]["Ebs"]
    assert bdm == {"VolumeSize": 200, "Encrypted": True, "KmsKeyId": Ref("Key", "Arn")}
    nic = inst.attrs["NetworkInterfaces"][0]
    assert nic["DeviceIndex"] == 0 and nic["AssociatePublicIpAddress"] is False

    lt = res["GpuTemplate"]
    assert lt.name == "gpu-workers" and lt.aliases == ("gpu-workers",)
    assert lt.get("LaunchTemplateData.InstanceMarketOptions.SpotOptions.MaxPrice") == "12.50"
    assert lt.get("LaunchTemplateData.BlockDeviceMappings")[0]["Ebs"]["Encrypted"] is True

    lc = res["LegacyConfig"]
    assert lc.name == "legacy-gpu"
    assert lc.attrs["AssociatePublicIpAddress"] is True and lc.attrs["SpotPrice"] == "0.20"

    asg = res["Workers"]
    assert asg.name == "gpu-workers-asg"  # the physical name wins over the Name tag
    assert asg.tags == {"Name": "tagged-name"}
    assert (asg.attrs["MinSize"], asg.attrs["MaxSize"], asg.attrs["DesiredCapacity"]) == (0, 10, 4)
    assert asg.attrs["VPCZoneIdentifier"] == ["subnet-0aaa", "subnet-0bbb"]
    assert asg.attrs["CapacityRebalance"] is True
    mip = asg.attrs["MixedInstancesPolicy"]
    assert mip["LaunchTemplate"]["LaunchTemplateSpecification"] == {
        "LaunchTemplateId": Ref("GpuTemplate"),
        "Version": Ref("GpuTemplate", "LatestVersionNumber"),
    }
    assert [o["WeightedCapacity"] for o in mip["LaunchTemplate"]["Overrides"]] == [1, 2]
    assert mip["InstancesDistribution"] == {
        "OnDemandBaseCapacity": 1,
        "OnDemandPercentageAboveBaseCapacity": 30,
        "SpotAllocationStrategy": "price-capacity-optimized",
    }

    fleet = res["Fleet"]
    assert "SpotFleetRequestConfigData" not in fleet.attrs
    cfg = fleet.attrs["SpotFleetRequestConfig"]
    assert cfg["TargetCapacity"] == 2 and cfg["SpotPrice"] == "3.00"
    assert cfg["LaunchSpecifications"][0]["WeightedCapacity"] == 1.5

    ec2fleet = res["Ec2Fleet"]
    assert ec2fleet.get("TargetCapacitySpecification.TotalTargetCapacity") == 4
    assert ec2fleet.attrs["LaunchTemplateConfigs"][0]["Overrides"][0]["MaxPrice"] == "0.40"

    assert res["PrivateSubnet"].attrs == {
        "VpcId": Ref("Vpc"),
        "CidrBlock": "10.0.1.0/24",
        "AvailabilityZone": "us-east-1a",
        "MapPublicIpOnLaunch": False,
    }
    assert res["DefaultRoute"].attrs["GatewayId"] == Ref("Igw")
    assert res["Association"].attrs == {
        "RouteTableId": Ref("RouteTable"),
        "SubnetId": Ref("PrivateSubnet"),
    }
    assert res["IgwAttachment"].attrs == {"VpcId": Ref("Vpc"), "InternetGatewayId": Ref("Igw")}
    assert res["Igw"].attrs == {}
    ep = res["S3Endpoint"]
    assert ep.attrs["RouteTableIds"] == [Ref("RouteTable")]
    assert ep.attrs["PolicyDocument"]["Statement"][0]["Principal"] == "*"  # JSON string parsed


def test_line_numbers_of_each_resource() -> None:
    res = by_id(load("all_kinds.yaml"))
    spans = {rid: (r.provenance.start_line, r.provenance.end_line) for rid, r in res.items()}
    assert spans["DataVolume"] == (14, 25)
    assert spans["TrainingInstance"] == (26, 41)
    assert spans["Vpc"] == (122, 125)
    assert spans["Igw"] == (148, 149)
    assert spans["S3Endpoint"] == (155, 161)  # the Outputs section is not part of it
    lines = (FIXTURES / "all_kinds.yaml").read_text().splitlines()
    for rid, (start, end) in spans.items():
        assert lines[start - 1].strip() == f"{rid}:"
        assert lines[end - 1].strip()  # ends on content, not on a blank line


def test_json_line_numbers() -> None:
    res = by_id(load("all_kinds.json"))
    lines = (FIXTURES / "all_kinds.json").read_text().splitlines()
    for rid, r in res.items():
        start, end = r.provenance.start_line, r.provenance.end_line
        assert start is not None and end is not None and start < end
        assert lines[start - 1].strip() == f'"{rid}": {{'
        assert lines[end - 1].strip() in ("}", "},")


def test_yaml_and_json_forms_give_the_same_resources() -> None:
    def strip(result: SourceResult) -> list[tuple[Any, ...]]:
        return [(r.id, r.kind, r.name, r.tags, r.aliases, r.attrs) for r in result.resources]

    yaml_result, json_result = load("all_kinds.yaml"), load("all_kinds.json")
    assert json_result.errors == []
    assert strip(yaml_result) == strip(json_result)
    assert len(yaml_result.resources) == len(EXPECTED_KINDS)


def test_cdk_synth_output() -> None:
    cdk = FIXTURES / "cdk.out"
    sniffed = [f.name for f in sorted(cdk.iterdir()) if looks_like_cloudformation(f.read_text())]
    assert sniffed == ["GpuStack.template.json"]  # not tree.json / manifest.json
    result = load_template(cdk / "GpuStack.template.json")
    assert result.errors == [] and result.notices == []  # AWS::CDK::Metadata is ignored quietly
    res = by_id(result)
    assert sorted(r.kind for r in res.values()) == sorted(
        [
            "ec2.vpc",
            "ec2.subnet",
            "ec2.route_table",
            "ec2.route_table_association",
            "ec2.vpc_endpoint",
            "ec2.launch_template",
            "autoscaling.group",
        ]
    )
    assert res["VpcS3Endpoint1C4D4E67"].attrs["ServiceName"] == "com.amazonaws.${AWS::Region}.s3"
    lt = res["WorkersLaunchTemplate5D5A5B1F"]
    assert lt.tags == {"Name": "GpuStack/Workers/LaunchTemplate"}  # not the instance's tags
    assert "SSM" in unknown_reason(lt.get("LaunchTemplateData.ImageId"))
    asg = res["WorkersASG8D4A2F11"]
    assert (asg.attrs["MinSize"], asg.attrs["MaxSize"], asg.attrs["DesiredCapacity"]) == (0, 10, 10)
    assert asg.attrs["VPCZoneIdentifier"] == [Ref("VpcPrivateSubnet1Subnet536B997A")]
    assert (asg.provenance.start_line, asg.provenance.end_line) == (60, 84)


# ------------------------------------------------------------------------------ intrinsics


def test_intrinsics_with_defaults() -> None:
    result = load("intrinsics.yaml")
    assert result.errors == []
    res = by_id(result)
    subs = res["Subs"]
    assert subs.attrs["InstanceType"] == "g4dn.xlarge"  # FindInMap on the Env default
    assert "SSM" in unknown_reason(subs.attrs["ImageId"])
    assert unknown_reason(subs.attrs["KeyName"]) == "parameter NoDefault has no default"
    assert subs.attrs["SubnetId"] == Ref("SubnetA")  # "${SubnetA}" is a plain reference
    assert subs.attrs["AvailabilityZone"] == "us-east-1b"  # Select on a CommaDelimitedList
    assert subs.attrs["UserData"] == "aGVsbG8="  # Fn::Base64
    tags = {t["Key"]: t["Value"] for t in subs.attrs["Tags"]}
    assert "AWS::Region" in unknown_reason(tags["Name"])
    assert tags["literal"] == "${NotAVar}-x"  # ${!Literal}
    assert tags["withvars"] == "a-b-dev/dev"  # Sub with a variable map, Join inside
    assert tags["split"] == "c"
    assert "AWS::AccountId" in unknown_reason(tags["account"])
    assert tags["partition"] == "aws" and tags["suffix"] == "amazonaws.com"
    assert "AWS::StackName" in unknown_reason(tags["stack"])
    assert tags["json"] == '{"a":1}' and tags["length"] == 3
    assert "Name" not in subs.tags and subs.name is None  # an unknown tag value is left out

    conds = res["Conds"]
    assert "GetAZs" in unknown_reason(conds.attrs["AvailabilityZone"])
    assert conds.attrs["Size"] == 100  # Number parameter "100" coerced
    assert conds.attrs["Encrypted"] is False  # FindInMap "false" coerced
    assert "KmsKeyId" not in conds.attrs  # Fn::If → AWS::NoValue
    assert conds.attrs["VolumeType"] == "gp3"  # And(Not(Equals)), Equals on a Number
    assert conds.attrs["Iops"] == 3000  # Or
    assert "NoDefaultSet" in unknown_reason(conds.attrs["Throughput"])
    assert "ImportValue" in unknown_reason(conds.attrs["SnapshotId"])
    assert "InUsEast1" in unknown_reason(conds.attrs["OutpostArn"])

    subnet = res["SubnetA"]
    assert subnet.attrs["VpcId"] == Ref("Vpc", "VpcId")  # GetAtt list form
    assert "Cidr" in unknown_reason(subnet.attrs["CidrBlock"])
    assert "AWS::Region" in unknown_reason(subnet.attrs["AvailabilityZone"])
    assert "Transform" in unknown_reason(subnet.attrs["Ipv6CidrBlock"])

    # resource conditions: false → not created; unknown → scanned, never assumed created
    # (exists UNKNOWN: its results are UNKNOWN), with a notice
    assert "ProdOnly" not in res and "DevOnly" in res and "RegionOnly" in res
    assert res["DevOnly"].exists is True
    assert "InUsEast1" in unknown_reason(res["RegionOnly"].exists)
    assert [n.message for n in result.notices] == [
        "RegionOnly: condition 'InUsEast1' is not known statically; whether the resource is "
        "created is not known (its results are UNKNOWN)"
    ]
    assert result.notices[0].line == 103

    ep = res["JoinEndpoint"]
    # an unknown region stays literal in an endpoint service name (Join and Sub alike)
    assert ep.attrs["ServiceName"] == "com.amazonaws.${AWS::Region}.s3"
    assert ep.get("PolicyDocument")["Statement"][0]["Resource"] == "arn:aws:s3:::bucket/*"


def test_params_override_and_pseudo_parameters() -> None:
    result = load(
        "intrinsics.yaml",
        params={"Env": "prod", "NoDefault": "my-key", "Zones": "a, b ,c"},
        region="eu-west-1",
        account_id="123456789012",
    )
    assert result.errors == [] and result.notices == []
    res = by_id(result)
    subs = res["Subs"]
    assert subs.attrs["InstanceType"] == "p4d.24xlarge"
    assert subs.attrs["KeyName"] == "my-key"
    assert subs.attrs["AvailabilityZone"] == "b"
    assert subs.name == "prod-g5.xlarge-eu-west-1"
    assert subs.tags["account"] == "123456789012"
    conds = res["Conds"]
    assert conds.attrs["Encrypted"] is True
    assert conds.attrs["KmsKeyId"] == "alias/prod"
    assert conds.attrs["VolumeType"] == "io2"
    assert conds.attrs["Throughput"] == 500
    assert conds.attrs["OutpostArn"] == "b"  # eu-west-1 is not us-east-1
    assert res["SubnetA"].attrs["AvailabilityZone"] == "eu-west-1a"
    assert "ProdOnly" in res and "DevOnly" not in res and "RegionOnly" not in res
    assert res["JoinEndpoint"].attrs["ServiceName"] == "com.amazonaws.eu-west-1.s3"


def test_partition_follows_region(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(
        "Resources:\n  V:\n    Type: AWS::EC2::VPC\n    Properties:\n"
        "      CidrBlock: !Sub '${AWS::Partition}/${AWS::URLSuffix}'\n"
    )
    assert load_template(p, region="cn-north-1").resources[0].attrs["CidrBlock"] == (
        "aws-cn/amazonaws.com.cn"
    )
    assert load_template(p, region="us-gov-west-1").resources[0].attrs["CidrBlock"] == (
        "aws-us-gov/amazonaws.com"
    )


def test_short_form_tags_become_long_forms() -> None:
    text = """
a: !Ref X
b: !GetAtt A.B.C
c: !GetAtt [A, B]
d: !Sub "x"
e: !Join [",", [a]]
f: !Select [0, [a]]
g: !Split [",", "a"]
h: !If [C, 1, 2]
i: !Equals [1, 1]
j: !Not [!Condition C]
k: !And [!Condition C, !Condition D]
l: !Or [!Condition C, !Condition D]
m: !FindInMap [M, a, b]
n: !GetAZs ''
o: !ImportValue v
p: !Base64 x
q: !Cidr [10.0.0.0/16, 2, 8]
r: !Transform {Name: M}
s: !ToJsonString {a: 1}
t: !Length [1]
u: 2010-09-09
"""
    data = cfn_yaml.load_text(text).data
    assert data == {
        "a": {"Ref": "X"},
        "b": {"Fn::GetAtt": ["A", "B.C"]},
        "c": {"Fn::GetAtt": ["A", "B"]},
        "d": {"Fn::Sub": "x"},
        "e": {"Fn::Join": [",", ["a"]]},
        "f": {"Fn::Select": [0, ["a"]]},
        "g": {"Fn::Split": [",", "a"]},
        "h": {"Fn::If": ["C", 1, 2]},
        "i": {"Fn::Equals": [1, 1]},
        "j": {"Fn::Not": [{"Condition": "C"}]},
        "k": {"Fn::And": [{"Condition": "C"}, {"Condition": "D"}]},
        "l": {"Fn::Or": [{"Condition": "C"}, {"Condition": "D"}]},
        "m": {"Fn::FindInMap": ["M", "a", "b"]},
        "n": {"Fn::GetAZs": ""},
        "o": {"Fn::ImportValue": "v"},
        "p": {"Fn::Base64": "x"},
        "q": {"Fn::Cidr": ["10.0.0.0/16", 2, 8]},
        "r": {"Fn::Transform": {"Name": "M"}},
        "s": {"Fn::ToJsonString": {"a": 1}},
        "t": {"Fn::Length": [1]},
        "u": "2010-09-09",  # timestamps are not resolved
    }


def test_find_in_map_default_value_and_missing_key(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(
        "Mappings:\n  M:\n    a: {b: c}\nResources:\n  V:\n    Type: AWS::EC2::VPC\n"
        "    Properties:\n"
        "      CidrBlock: !FindInMap [M, x, b, {DefaultValue: fallback}]\n"
        "      InstanceTenancy: !FindInMap [M, x, b]\n"
    )
    attrs = load_template(p).resources[0].attrs
    assert attrs["CidrBlock"] == "fallback"
    assert "not in Mappings" in unknown_reason(attrs["InstanceTenancy"])


def test_condition_cycle_is_unknown_not_a_crash(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(
        "Conditions:\n  A: !Not [!Condition B]\n  B: !Not [!Condition A]\n"
        "Resources:\n  V:\n    Type: AWS::EC2::VPC\n    Condition: A\n"
        "    Properties:\n      CidrBlock: !If [B, x, y]\n"
    )
    result = load_template(p)
    assert result.errors == []
    assert isinstance(result.resources[0].attrs["CidrBlock"], Unknown)


# ------------------------------------------------------------------------------ suppressions


def test_suppressions() -> None:
    result = load("suppressions.yaml")
    assert result.errors == []
    res = by_id(result)
    assert res["Skipped"].skips == (
        Skip("EBS-001", "scratch data, wiped nightly", by="Metadata of Skipped"),
    )
    assert res["Expiring"].skips == (
        Skip("EBS-001", "migration ticket OPS-12", "Metadata of Expiring", "2030-01-31"),
    )
    assert res["Malformed"].skips == () and res["OtherMetadata"].skips == ()
    path = str(FIXTURES / "suppressions.yaml")
    messages = [(n.path, n.line, n.message) for n in result.notices]
    assert messages == [
        (path, 3, "Skipped: gpuaudit skip of EBS-003 has no reason; not suppressed"),
        (path, 3, "Skipped: gpuaudit skip of VPC-001 has no reason; not suppressed"),
        (path, 3, "Skipped: gpuaudit skip #4 has no policy id; ignored"),
        (path, 3, "Skipped: gpuaudit skip #5 has no policy id; ignored"),
        (path, 27, "Malformed: Metadata gpuaudit must be {skip: [{id, reason}]}; ignored"),
    ]


# ------------------------------------------------------------------------------ bad input


def test_property_garbage_becomes_unknown_with_a_notice() -> None:
    result = load("garbage_values.yaml")
    assert result.errors == []
    res = by_id(result)
    group = res["Group"]
    assert group.attrs["MinSize"] == 1 and group.attrs["MaxSize"] == 4
    assert "banana" in unknown_reason(group.attrs["DesiredCapacity"])
    assert "maybe" in unknown_reason(group.attrs["CapacityRebalance"])
    assert group.attrs["VPCZoneIdentifier"] == ["subnet-1", "subnet-2"]
    override = group.get("MixedInstancesPolicy.LaunchTemplate")["Overrides"][0]
    assert isinstance(override["WeightedCapacity"], Unknown)
    assert res["Config"].attrs["SpotPrice"] == 0.5  # prices stay as given
    assert "not valid JSON" in unknown_reason(res["Endpoint"].attrs["PolicyDocument"])
    odd = res["Odd"].attrs
    assert all(isinstance(v, Unknown) for v in odd.values()), odd
    assert "Undefined" in unknown_reason(odd["InstanceType"])
    assert [(n.line, n.message.split(":")[0]) for n in result.notices] == [
        (3, "Group"),
        (3, "Group"),
        (3, "Group"),
        (23, "Endpoint"),
    ]
    assert "DesiredCapacity 'banana' is not an integer" in result.notices[0].message


BAD_FIXTURES = [
    ("syntax.yaml", "YAML syntax error", 7),
    ("truncated.json", "JSON syntax error", 10),
    ("anchors.yaml", "YAML anchor &props is not supported by CloudFormation", 5),
    ("alias_bomb.yaml", "YAML anchor &a is not supported by CloudFormation", 2),
    ("resources_not_mapping.yaml", "Resources is not a mapping", 3),
    ("unknown_tag.yaml", "unsupported YAML tag !Bogus", 6),
    ("two_documents.yaml", "another document", 3),
    ("no_resources.yaml", "template has no Resources section", None),
    ("not_a_mapping.yaml", "template is not a mapping", 1),
]


@pytest.mark.parametrize(("name", "reason", "line"), BAD_FIXTURES)
def test_bad_templates_are_input_errors(name: str, reason: str, line: int | None) -> None:
    result = load(f"bad/{name}")
    assert result.resources == []
    assert len(result.errors) == 1
    err = result.errors[0]
    assert err.path == str(FIXTURES / "bad" / name)
    assert reason in err.reason
    assert err.line == line


def test_bad_resources_are_errors_and_the_rest_is_read() -> None:
    result = load("bad/resource_not_mapping.yaml")
    assert [r.id for r in result.resources] == ["Good"]
    assert [(e.line, e.reason) for e in result.errors] == [
        (7, "resource Broken is not a mapping"),
        (8, "resource NoType has no Type (or it is not a string)"),
        (10, "Properties of resource BadProps is not a mapping"),
    ]


def test_alias_bomb_is_refused_quickly_even_without_the_anchor_hint() -> None:
    # The node walk refuses shared nodes too, so an alias never expands.
    bomb = (FIXTURES / "bad" / "alias_bomb.yaml").read_text()
    started = time.perf_counter()
    loader = cfn_yaml.Composer(bomb)
    root = loader.get_single_node()
    with pytest.raises(cfn_yaml.TemplateError, match="aliases are not supported"):
        cfn_yaml._Builder().build(root)
    # a hang guard (an expanding bomb would not finish at all), not a speed budget
    assert time.perf_counter() - started < 60


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    p = tmp_path / name
    if isinstance(data, str):
        p.write_text(data, encoding="utf-8")
    else:
        p.write_bytes(data)
    return p


def single_error(path: Path) -> tuple[str, int | None]:
    result = load_template(path)
    assert result.resources == []
    assert len(result.errors) == 1, result.errors
    assert result.errors[0].path == str(path)
    return result.errors[0].reason, result.errors[0].line


def test_binary_file(tmp_path: Path) -> None:
    reason, line = single_error(write(tmp_path, "b.template", b"Resources:\n\x00\x01\x02"))
    assert reason.startswith("binary file") and line == 2


def test_not_utf8(tmp_path: Path) -> None:
    data = 'AWSTemplateFormatVersion: "2010-09-09"\nDescription: caf\xe9\n'.encode("latin-1")
    reason, line = single_error(write(tmp_path, "l1.yaml", data))
    assert reason == "not UTF-8 text (byte 0xe9)" and line == 2


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    data = "\ufeffResources:\n  V:\n    Type: AWS::EC2::VPC\n".encode()
    result = load_template(write(tmp_path, "bom.yaml", data))
    assert result.errors == [] and [r.id for r in result.resources] == ["V"]


def test_over_the_size_limit(tmp_path: Path) -> None:
    p = tmp_path / "big.json"
    with p.open("wb") as fh:
        fh.write(b'{"Resources": {}, "Description": "')
        fh.write(b"x" * cfn_yaml.MAX_BYTES)
        fh.write(b'"}')
    reason, line = single_error(p)
    assert reason == "file is larger than the 10 MiB limit" and line is None


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("flow.yaml", "Resources: " + "[" * 5000 + "]" * 5000),
        ("block.yaml", "Resources:\n" + "".join(" " * (i + 1) + f"k{i}:\n" for i in range(300))),
        ("seq.yaml", "Resources:\n" + "- " * 2000 + "x\n"),
        ("deep.json", '{"Resources": ' + "[" * 5000 + "]" * 5000 + "}"),
        ("deep2.json", '{"Resources": ' + '{"a":' * 150 + "1" + "}" * 150 + "}"),
    ],
)
def test_absurd_nesting(tmp_path: Path, name: str, text: str) -> None:
    reason, _ = single_error(write(tmp_path, name, text))
    assert "nesting" in reason or "depth" in reason


def test_unreadable_paths(tmp_path: Path) -> None:
    reason, _ = single_error(tmp_path / "missing.yaml")
    assert reason.startswith("cannot read file")
    reason, _ = single_error(tmp_path)  # a directory
    assert reason.startswith("cannot read file")


def test_empty_file(tmp_path: Path) -> None:
    reason, _ = single_error(write(tmp_path, "empty.yaml", ""))
    assert reason == "template is not a mapping"


def test_flow_yaml_starting_with_a_brace(tmp_path: Path) -> None:
    p = write(tmp_path, "flow.yaml", "{Resources: {V: {Type: AWS::EC2::VPC}}}\n")
    result = load_template(p)
    assert result.errors == [] and [r.id for r in result.resources] == ["V"]


def test_macro_payload_is_not_a_template(tmp_path: Path) -> None:
    p = write(
        tmp_path, "event.json", '{"fragment": {"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}}'
    )
    result = load_template(p)
    assert result.errors == [] and result.resources == []
    assert [n.message for n in result.notices] == [
        "not a CloudFormation template (no Resources section); skipped"
    ]


def test_foreach_and_macros_give_notices(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "t.yaml",
        "Transform: [AWS::LanguageExtensions, MyMacro]\nResources:\n"
        "  Fn::ForEach::Vols:\n    - X\n    - [a, b]\n"
        "    - Vol${X}: {Type: AWS::EC2::Volume}\n",
    )
    result = load_template(p)
    assert result.errors == [] and result.resources == []
    assert [(n.line, n.message) for n in result.notices] == [
        (
            None,
            "template uses the transform 'MyMacro'; resources it adds or changes are not scanned",
        ),
        (3, "Fn::ForEach::Vols is not expanded; resources it creates are not scanned"),
    ]


# ------------------------------------------------------------------------------ fuzzing


def _no_internal_error(result: SourceResult) -> None:
    for err in result.errors:
        assert not err.reason.startswith("internal error"), err
        assert err.path and err.reason


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=400))
def test_fuzz_arbitrary_bytes(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "fuzz.yaml"
    p.write_bytes(b"Resources:\n" + data)
    _no_internal_error(load_template(p))


_TAGS = [*cfn_yaml.SHORT_TAGS, "!Bogus"]
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from(["", "a", "A.B", "${A}", "${AWS::Region}", "true", "2", ",", "P", "C", "X"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                ["Ref", "Fn::If", "Fn::Sub", "Fn::Select", "Condition", "Key", "Value"]
            ),
            inner,
            max_size=3,
        ),
        st.tuples(st.sampled_from(_TAGS), inner),
    ),
    max_leaves=12,
)
_PROPS = [
    "Encrypted",
    "Size",
    "DesiredCapacity",
    "VPCZoneIdentifier",
    "Tags",
    "ServiceName",
    "PolicyDocument",
    "WeightedCapacity",
    "MixedInstancesPolicy",
    "LaunchTemplateName",
]


def _emit(value: Any) -> str:
    """A value as flow YAML, with tuple (tag, v) meaning a tagged node."""
    if isinstance(value, tuple):
        inner = _emit(value[1])
        return f"{value[0]} {inner}" if not isinstance(value[1], tuple) else f"{value[0]} [{inner}]"
    if isinstance(value, list):
        return "[" + ", ".join(_emit(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_emit(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(sorted(KINDS)),
    props=st.dictionaries(st.sampled_from(_PROPS), _values, max_size=4),
    cond=_values,
    param_default=_values,
    metadata=_values,
)
def test_fuzz_template_structure(
    tmp_path: Path, kind: str, props: dict[str, Any], cond: Any, param_default: Any, metadata: Any
) -> None:
    text = (
        f"Parameters:\n  P: {{Type: String, Default: {_emit(param_default)}}}\n"
        f"Conditions:\n  C: {_emit(cond)}\n"
        "Mappings:\n  M: {a: {b: c}}\n"
        "Resources:\n"
        f"  X:\n    Type: {kind}\n    Condition: C\n"
        f"    Metadata: {{gpuaudit: {_emit(metadata)}}}\n"
        f"    Properties: {_emit(props)}\n"
        f"  Y:\n    Type: {kind}\n    Properties: {_emit(props)}\n"
    )
    p = tmp_path / "fuzz.yaml"
    p.write_text(text)
    result = load_template(p)
    _no_internal_error(result)
    for r in result.resources:
        assert r.provenance.start_line is not None
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in r.tags.items())


# ------------------------------------------------------------------------------ speed


def test_import_is_light() -> None:
    """The CloudFormation source imports nothing heavy (pre-commit speed; the time itself is
    measured by `make bench`, not here: wall-clock asserts flake on a busy machine)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from scanner.sources.cloudformation.reader import load_template\n"
        f"r = load_template(Path({str(FIXTURES / 'all_kinds.yaml')!r}))\n"
        "assert len(r.resources) == 15\n"
        "heavy = [m for m in ('boto3', 'botocore', 'jinja2', 'jsonschema') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
