"""The kind schema (scanner/kinds): one place for each kind's attributes and types, from which
come the CloudFormation coercions, the types Terraform values get, the plan's block keys, the
check of a policy's kinds/needs, the declared facts and docs/resource-model.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from policies import all_policies
from policies.base import REGISTRY, Remediation, policy
from scanner.aws.registry import COLLECTORS
from scanner.compute.resource_model_doc import DOC, render
from scanner.kinds import Kind, Terraform, build, schema
from scanner.kinds.types import AsGiven, Bool, Int, Json, List, Map, Obj, Str
from scanner.model import Ref, Severity, SourceKind, Unknown
from scanner.sources.cloudformation.reader import KINDS as CFN_KINDS
from scanner.sources.cloudformation.reader import load_template
from scanner.sources.scan import scan_paths
from scanner.sources.terraform.plan.reader import BLOCK_KEYS
from scanner.sources.terraform.translate import translate

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
OPAQUE = (Json, AsGiven, Map)


def test_the_resource_model_page_is_generated_from_the_schema() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), \
        "docs/resource-model.md is stale: run python -m scanner.compute.resource_model_doc --write"


def test_every_kind_and_fact_is_on_the_page() -> None:
    text = render()
    s = schema()
    for name in [*s.kinds, *s.facts]:
        assert f"`{name}`" in text
    assert "`Encrypted` (bool)" in text and "`CurrentSpotPrices`" in text


def _paths(value: Any, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            out.add(path)
            out |= _paths(v, path)
    elif isinstance(value, list):
        for v in value:
            out |= _paths(v, prefix)
    return out


def test_every_attribute_terraform_gives_is_declared() -> None:
    """Terraform's translators only map names; the schema decides every value's type, so an
    attribute they emit and the schema does not declare would go uncoerced."""
    result = scan_paths([FIXTURES / "hcl", FIXTURES / "terraform", FIXTURES / "parity",
                         ROOT / "scanner" / "cli" / "demo" / "examples" / "terraform"])
    s = schema()
    seen = 0
    for r in result.resources:
        if r.provenance.source not in (SourceKind.TERRAFORM_HCL, SourceKind.TERRAFORM_PLAN):
            continue
        for path in sorted(_paths(r.attrs)):
            parts = path.split(".")
            if any(isinstance(s.attribute(r.kind, ".".join(parts[:i])), OPAQUE)
                   for i in range(1, len(parts))):
                continue  # inside a document or a value carried as given
            seen += 1
            assert s.attribute(r.kind, path) is not None, (r.kind, r.id, path)
    assert seen > 900


def test_terraform_values_get_the_declared_types() -> None:
    lt = translate("aws_launch_template", "aws_launch_template.x", {
        "instance_type": "g5.xlarge", "ebs_optimized": "true",
        "block_device_mappings": [{"device_name": "/dev/xvda",
                                   "ebs": [{"encrypted": "false", "volume_size": "100"}]}],
        "instance_market_options": [{"market_type": "spot",
                                     "spot_options": [{"max_price": 0.5}]}],
        "network_interfaces": [{"associate_public_ip_address": "true", "device_index": "0",
                                "security_groups": {"sg-1"}}]},
        provenance=_prov(), scope="root")[0].attrs["LaunchTemplateData"]
    assert lt["EbsOptimized"] is True
    assert lt["BlockDeviceMappings"][0]["Ebs"] == {"Encrypted": False, "VolumeSize": 100}
    assert lt["InstanceMarketOptions"]["SpotOptions"]["MaxPrice"] == "0.5"
    assert lt["NetworkInterfaces"][0] == {"AssociatePublicIpAddress": True, "DeviceIndex": 0,
                                          "Groups": ["sg-1"]}
    asg = translate("aws_autoscaling_group", "aws_autoscaling_group.g", {
        "vpc_zone_identifier": Ref("aws_subnet.a"), "desired_capacity": "2",
        "mixed_instances_policy": [{"instances_distribution": [{"spot_max_price": ""}]}]},
        provenance=_prov(), scope="root")[0].attrs
    assert asg["VPCZoneIdentifier"] == [Ref("aws_subnet.a")] and asg["DesiredCapacity"] == 2
    # "" kept on purpose: AWS's explicit "cap at the on-demand price"
    assert asg["MixedInstancesPolicy"]["InstancesDistribution"]["SpotMaxPrice"] == ""
    garbage = translate("aws_ebs_volume", "aws_ebs_volume.v", {"encrypted": "maybe"},
                        provenance=_prov(), scope="root")[0].attrs
    assert isinstance(garbage["Encrypted"], Unknown)


def _prov() -> Any:
    from scanner.model import Provenance

    return Provenance(SourceKind.TERRAFORM_HCL, "main.tf", 1, 2)


def test_cloudformation_types_and_coercion_come_from_the_schema(tmp_path: Path) -> None:
    s = schema()
    assert {t: k.name for t, (k, _c) in s.cloudformation.items()} == CFN_KINDS
    template = tmp_path / "t.yaml"
    template.write_text(
        "Resources:\n"
        "  Vpc:\n    Type: AWS::EC2::VPC\n"
        "    Properties: {CidrBlock: 10.0.0.0/16, EnableDnsSupport: 'true'}\n"
        "  Group:\n    Type: AWS::AutoScaling::AutoScalingGroup\n"
        "    Properties:\n      MinSize: '1'\n      MaxSize: '4'\n"
        "      VPCZoneIdentifier: 'subnet-a,subnet-b'\n"
        "      Tags: [{Key: Encrypted, Value: 'true', PropagateAtLaunch: 'true'}]\n"
        "      MixedInstancesPolicy:\n        LaunchTemplate:\n"
        "          Overrides: [{InstanceType: g5.xlarge, WeightedCapacity: '2'}]\n")
    got = {r.id: r.attrs for r in load_template(template).resources}
    assert got["Vpc"]["EnableDnsSupport"] is True
    assert got["Group"]["MinSize"] == 1 and got["Group"]["MaxSize"] == 4
    assert got["Group"]["VPCZoneIdentifier"] == ["subnet-a", "subnet-b"]
    assert got["Group"]["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"][0][
        "WeightedCapacity"] == 2
    # a list of ids written as one joined string keeps its references
    joined = tmp_path / "j.yaml"
    joined.write_text(
        "Resources:\n  A: {Type: AWS::EC2::Subnet, Properties: {VpcId: vpc-1}}\n"
        "  G:\n    Type: AWS::AutoScaling::AutoScalingGroup\n"
        "    Properties:\n      MinSize: 1\n      MaxSize: 1\n"
        "      VPCZoneIdentifier: !Join [',', [!Ref A, subnet-b]]\n")
    group = {r.id: r for r in load_template(joined).resources}["G"]
    assert group.attrs["VPCZoneIdentifier"] == [Ref("A"), "subnet-b"]
    # path by path: a tag named like an attribute is not an attribute
    assert got["Group"]["Tags"][0] == {"Key": "Encrypted", "Value": "true",
                                       "PropagateAtLaunch": "true"}


def test_plan_block_keys_are_declared_per_terraform_type() -> None:
    assert BLOCK_KEYS["aws_autoscaling_group"]["override"] == ("instance_type",
                                                                "weighted_capacity")
    assert "max_price" in BLOCK_KEYS["aws_ec2_fleet"]["override"]
    assert BLOCK_KEYS["aws_launch_template"]["ebs"] == ("encrypted", "kms_key_id", "snapshot_id")
    assert "snapshot_id" in BLOCK_KEYS["aws_instance"]["ebs_block_device"]
    assert set(BLOCK_KEYS) == set(schema().terraform)


def test_policies_name_only_declared_kinds_and_facts() -> None:
    s = schema()
    for pol in all_policies().values():
        assert set(pol.kinds) <= set(s.kinds), pol.id
        assert set(pol.needs) <= s.names(), pol.id


@pytest.mark.parametrize("kinds, needs, message", [
    (("ec2.instanse",), (), "'ec2.instanse' in kinds is not a kind of the schema "
                            "(did you mean 'ec2.instance'?)"),
    (("ec2.spot_prices",), (), "'ec2.spot_prices' in kinds is not a kind"),
    (("ec2.volume",), ("ec2.ebs_kms_key",), "neither a kind nor a declared fact"),
])
def test_a_policy_naming_an_undeclared_kind_is_refused_when_registered(
        kinds: tuple[str, ...], needs: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        policy(id="TEST-9", title="t", severity=Severity.LOW, kinds=kinds, needs=needs,
               description="", remediation=Remediation(text=""), category="cost")(lambda r, c: [])
    assert "TEST-9" not in REGISTRY


def test_collectors_feed_only_declared_kinds_and_facts() -> None:
    names = schema().names()
    for collector in COLLECTORS:
        for call in collector.calls:
            assert set(call.kinds) <= names, (collector.name, call.operation)


def test_declared_facts_keep_their_names_and_attributes() -> None:
    s = schema()
    assert s.facts["ec2.spot_prices"].attribute == "CurrentSpotPrices"
    assert s.facts["ec2.ebs_kms_keys"].attribute == "KmsKeyManager"
    assert set(s.kinds_with_fact("ec2.spot_prices")) == {
        "ec2.launch_template", "autoscaling.group", "autoscaling.launch_configuration",
        "ec2.spot_request", "ec2.spot_fleet", "ec2.fleet"}
    assert s.attribute("ec2.volume", "KmsKeyManager") is not None


def test_the_schema_refuses_contradictions() -> None:
    vol = Kind("x.volume", "v", {"Encrypted": Bool()}, terraform=(Terraform("aws_x"),))
    with pytest.raises(ValueError, match="declared twice"):
        build([vol, vol], facts=())
    with pytest.raises(ValueError, match="maps to two kinds"):
        build([vol, Kind("x.other", "o", {}, terraform=(Terraform("aws_x"),))], facts=())
    with pytest.raises(ValueError, match="undeclared fact"):
        build([Kind("x.y", "y", {}, facts=("x.nope",))], facts=())
    with pytest.raises(ValueError, match="both a kind and a fact"):
        build([Kind("ec2.spot_prices", "p", {})])


def test_attribute_lookup_steps_through_lists() -> None:
    s = build([Kind("x.k", "k", {"Items": List(Obj({"Size": Int(), "Name": Str()}))})],
              facts=())
    assert isinstance(s.attribute("x.k", "Items.Size"), Int)
    assert s.attribute("x.k", "Items.Nope") is None
    assert s.attribute("x.k", "Items.Size.Deeper") is None
    assert s.names() == frozenset({"x.k"})
