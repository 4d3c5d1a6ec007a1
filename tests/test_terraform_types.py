"""scanner.sources.terraform.translate: Terraform resource values -> normalized Resources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scanner.kinds import schema
from scanner.model import UNKNOWN, Provenance, Ref, Resource, Skip, SourceKind, Unknown
from scanner.sources.terraform.translate import (
    MANIFEST_TYPES,
    SUPPORTED_TYPES,
    merge_ebs_defaults,
    translate,
)

ROOT = Path(__file__).resolve().parents[1]
PROV = Provenance(SourceKind.TERRAFORM_HCL, "main.tf", 3, 9, "")


def one(tf_type: str, values: dict[str, Any], address: str = "x.y", **kw: Any) -> Resource:
    out = translate(tf_type, address, values, provenance=PROV, scope="root", **kw)
    assert len(out) == 1
    return out[0]


# -- the type table ------------------------------------------------------------------------------


def test_supported_types_are_the_kind_schemas_terraform_types() -> None:
    """The translators and the kind schema (docs/resource-model.md is generated from it) name
    the same Terraform types, and each translator gives the kind that declares its type."""
    declared = schema().terraform
    assert len(declared) >= 20
    # and the Kubernetes manifest types, which the Karpenter source translates
    assert set(declared) == SUPPORTED_TYPES - MANIFEST_TYPES
    for tf_type, (kind, _tf) in declared.items():
        assert one(tf_type, {}).kind == kind.name, tf_type


@pytest.mark.parametrize("tf_type, kind", [
    ("aws_ebs_volume", "ec2.volume"),
    ("aws_ebs_encryption_by_default", "ec2.ebs_defaults"),
    ("aws_ebs_default_kms_key", "ec2.ebs_defaults"),
    ("aws_instance", "ec2.instance"),
    ("aws_launch_template", "ec2.launch_template"),
    ("aws_launch_configuration", "autoscaling.launch_configuration"),
    ("aws_autoscaling_group", "autoscaling.group"),
    ("aws_spot_instance_request", "ec2.spot_request"),
    ("aws_spot_fleet_request", "ec2.spot_fleet"),
    ("aws_ec2_fleet", "ec2.fleet"),
    ("aws_vpc", "ec2.vpc"),
    ("aws_subnet", "ec2.subnet"),
    ("aws_route_table", "ec2.route_table"),
    ("aws_default_route_table", "ec2.route_table"),
    ("aws_route", "ec2.route"),
    ("aws_route_table_association", "ec2.route_table_association"),
    ("aws_main_route_table_association", "ec2.main_route_table_association"),
    ("aws_internet_gateway", "ec2.internet_gateway"),
    ("aws_internet_gateway_attachment", "ec2.gateway_attachment"),
    ("aws_vpc_endpoint", "ec2.vpc_endpoint"),
    ("aws_vpc_endpoint_route_table_association", "ec2.vpc_endpoint_route_table_association"),
])
def test_kinds(tf_type: str, kind: str) -> None:
    r = one(tf_type, {})
    assert r.kind == kind
    assert r.declared is True
    assert r.id == "x.y" and r.scope == "root" and r.provenance == PROV


def test_unsupported_types_give_nothing() -> None:
    for tf_type in ("aws_kms_key", "aws_sqs_queue", "google_compute_instance", ""):
        assert translate(tf_type, "a.b", {"x": 1}, provenance=PROV, scope="s") == []


def test_skips_pass_through() -> None:
    skip = Skip("EBS-001", "scratch disk", "comment at main.tf:2")
    assert one("aws_ebs_volume", {}, skips=(skip,)).skips == (skip,)


# -- coercions -----------------------------------------------------------------------------------


def test_launch_template_string_booleans() -> None:
    r = one("aws_launch_template", {
        "name": "gpu-lt",
        "instance_type": "g5.xlarge",
        "image_id": "ami-12c6146b",
        "block_device_mappings": [
            {"device_name": "/dev/xvda", "ebs": [{"encrypted": "true", "volume_size": "200",
                                                  "delete_on_termination": "false"}]},
            {"device_name": "/dev/xvdb", "ebs": [{"encrypted": "false"}]},
            {"device_name": "/dev/xvdc", "ebs": [{"encrypted": "", "kms_key_id": ""}]},
        ],
        "network_interfaces": [{"associate_public_ip_address": "true", "device_index": "0",
                                "subnet_id": "subnet-1"}],
        "instance_market_options": [{"market_type": "spot",
                                     "spot_options": [{"max_price": "0.50"}]}],
    })
    data = r.attrs["LaunchTemplateData"]
    assert r.attrs["LaunchTemplateName"] == "gpu-lt" and r.name == "gpu-lt"
    assert "gpu-lt" in r.aliases
    assert data["InstanceType"] == "g5.xlarge" and data["ImageId"] == "ami-12c6146b"
    bdm = data["BlockDeviceMappings"]
    assert bdm[0] == {"DeviceName": "/dev/xvda",
                      "Ebs": {"Encrypted": True, "VolumeSize": 200, "DeleteOnTermination": False}}
    assert bdm[1]["Ebs"] == {"Encrypted": False}
    assert bdm[2]["Ebs"] == {}  # "" is terraform's unset
    assert data["NetworkInterfaces"] == [
        {"AssociatePublicIpAddress": True, "DeviceIndex": 0, "SubnetId": "subnet-1"}]
    assert data["InstanceMarketOptions"] == {"MarketType": "spot",
                                             "SpotOptions": {"MaxPrice": "0.50"}}
    assert r.get("LaunchTemplateData.InstanceMarketOptions.SpotOptions.MaxPrice") == "0.50"


def test_autoscaling_group_counts_lists_and_mixed_policy() -> None:
    r = one("aws_autoscaling_group", {
        "name": "gpu",
        "min_size": "1", "max_size": 10.0, "desired_capacity": "4",
        "vpc_zone_identifier": ["subnet-a", "subnet-b"],
        "capacity_rebalance": True,
        "mixed_instances_policy": [{
            "instances_distribution": [{
                "on_demand_base_capacity": 0,
                "on_demand_percentage_above_base_capacity": "30",
                "spot_allocation_strategy": "price-capacity-optimized",
                "spot_instance_pools": 0,
                "spot_max_price": "",
            }],
            "launch_template": [{
                "launch_template_specification": [{"launch_template_id": "lt-1",
                                                   "version": "$Latest"}],
                "override": [
                    {"instance_type": "g5.xlarge", "weighted_capacity": None,
                     "instance_requirements": [], "launch_template_specification": []},
                    {"instance_type": "g5.2xlarge", "weighted_capacity": "2"},
                ],
            }],
        }],
        "tag": [{"key": "team", "value": "ml", "propagate_at_launch": True}],
    })
    a = r.attrs
    assert (a["MinSize"], a["MaxSize"], a["DesiredCapacity"]) == (1, 10, 4)
    assert a["VPCZoneIdentifier"] == ["subnet-a", "subnet-b"]
    assert a["CapacityRebalance"] is True
    assert a["AutoScalingGroupName"] == "gpu" and r.name == "gpu"
    assert r.tags == {"team": "ml"}
    assert a["MixedInstancesPolicy"] == {
        "InstancesDistribution": {
            "OnDemandBaseCapacity": 0, "OnDemandPercentageAboveBaseCapacity": 30,
            "SpotAllocationStrategy": "price-capacity-optimized",
            "SpotMaxPrice": "",  # AWS's explicit "cap at on-demand" is kept
        },
        "LaunchTemplate": {
            "LaunchTemplateSpecification": {"LaunchTemplateId": "lt-1", "Version": "$Latest"},
            "Overrides": [{"InstanceType": "g5.xlarge"},
                          {"InstanceType": "g5.2xlarge", "WeightedCapacity": 2}],
        },
    }


def test_vpc_zone_identifier_shapes() -> None:
    assert sorted(one("aws_autoscaling_group", {"vpc_zone_identifier": {"b", "a"}}).attrs[
        "VPCZoneIdentifier"]) == ["a", "b"]  # a set becomes a list
    assert one("aws_autoscaling_group", {"vpc_zone_identifier": "a, b"}).attrs[
        "VPCZoneIdentifier"] == ["a", "b"]
    ref = Ref("aws_subnet.private")
    assert one("aws_autoscaling_group", {"vpc_zone_identifier": ref}).attrs[
        "VPCZoneIdentifier"] == [ref]
    assert one("aws_autoscaling_group", {"vpc_zone_identifier": UNKNOWN}).attrs[
        "VPCZoneIdentifier"] is UNKNOWN


def test_launch_template_id_placeholder_dropped() -> None:
    # The AWS provider plans launch_template_id = "unknown" when only a name is given.
    r = one("aws_autoscaling_group", {"mixed_instances_policy": [{"launch_template": [{
        "launch_template_specification": [{"launch_template_id": "unknown",
                                           "launch_template_name": "gpu-ondemand"}]}]}]})
    assert r.get("MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification") == {
        "LaunchTemplateName": "gpu-ondemand"}


def test_bad_scalars_become_unknown() -> None:
    r = one("aws_autoscaling_group", {"desired_capacity": "lots", "min_size": True,
                                      "capacity_rebalance": "maybe"})
    for key in ("DesiredCapacity", "MinSize", "CapacityRebalance"):
        assert isinstance(r.attrs[key], Unknown), key
    assert "lots" in r.attrs["DesiredCapacity"].reason


def test_instance_devices_and_market() -> None:
    r = one("aws_instance", {
        "ami": "ami-12c6146b", "instance_type": "p3.8xlarge", "subnet_id": "subnet-1",
        "associate_public_ip_address": False,
        "root_block_device": [{"encrypted": True, "kms_key_id": "arn:aws:kms:k",
                               "volume_size": 100, "device_name": "/dev/xvda"}],
        "ebs_block_device": [{"device_name": "/dev/sdf", "encrypted": False,
                              "volume_size": 500}],
        "ephemeral_block_device": [{"device_name": "/dev/sdg", "virtual_name": "ephemeral0"}],
        "instance_market_options": [{"market_type": "spot",
                                     "spot_options": [{"max_price": 3.5}]}],
        "launch_template": [{"id": "lt-1", "version": "2"}],
        "tags": {"Name": "trainer"},
    })
    a = r.attrs
    assert a["ImageId"] == "ami-12c6146b" and a["InstanceType"] == "p3.8xlarge"
    assert a["AssociatePublicIpAddress"] is False
    assert a["BlockDeviceMappings"] == [
        {"DeviceName": "root", "Ebs": {"Encrypted": True, "KmsKeyId": "arn:aws:kms:k",
                                       "VolumeSize": 100}},
        {"DeviceName": "/dev/sdf", "Ebs": {"Encrypted": False, "VolumeSize": 500}},
        {"DeviceName": "/dev/sdg", "VirtualName": "ephemeral0"},
    ]
    assert a["InstanceMarketOptions"] == {"MarketType": "spot", "SpotOptions": {"MaxPrice": "3.5"}}
    assert a["LaunchTemplate"] == {"LaunchTemplateId": "lt-1", "Version": "2"}
    assert r.name == "trainer" and r.tags == {"Name": "trainer"}


def test_instance_without_devices_has_no_mappings() -> None:
    # EBS-001 reads "no mappings" as the AMI's root device with Encrypted unset.
    assert "BlockDeviceMappings" not in one("aws_instance", {"root_block_device": []}).attrs


def test_spot_request_puts_instance_arguments_in_launch_specification() -> None:
    r = one("aws_spot_instance_request", {
        "ami": "ami-12c6146b", "instance_type": "g5.xlarge", "subnet_id": Ref("aws_subnet.a"),
        "spot_price": "0.50", "spot_type": "one-time", "associate_public_ip_address": True,
        "root_block_device": [{"encrypted": True}],
    })
    a = r.attrs
    assert a["SpotPrice"] == "0.50" and a["Type"] == "one-time" and a["InstanceCount"] == 1
    spec = a["LaunchSpecification"]
    assert spec["InstanceType"] == "g5.xlarge" and spec["SubnetId"] == Ref("aws_subnet.a")
    assert spec["BlockDeviceMappings"] == [{"DeviceName": "root", "Ebs": {"Encrypted": True}}]
    # AWS carries a launch specification's public IP on the primary interface.
    assert spec["NetworkInterfaces"] == [{"DeviceIndex": 0, "AssociatePublicIpAddress": True,
                                          "SubnetId": Ref("aws_subnet.a")}]
    assert "InstanceType" not in a


def test_spot_fleet_and_ec2_fleet() -> None:
    fleet = one("aws_spot_fleet_request", {
        "spot_price": "0.20", "target_capacity": "4", "allocation_strategy": "capacityOptimized",
        "launch_specification": [
            {"instance_type": "g4dn.2xlarge", "ami": "ami-1", "spot_price": "0.30",
             "weighted_capacity": "2", "subnet_id": "subnet-1"},
            {"instance_type": "g4dn.xlarge", "ami": "ami-1", "spot_price": "",
             "root_block_device": [{"encrypted": True}]},
        ],
        "launch_template_config": [{
            "launch_template_specification": [{"id": "lt-1", "version": "1"}],
            "overrides": [{"instance_type": "g5.xlarge", "spot_price": "0.4"}],
        }],
    })
    cfg = fleet.attrs["SpotFleetRequestConfig"]
    assert cfg["SpotPrice"] == "0.20" and cfg["TargetCapacity"] == 4
    assert cfg["AllocationStrategy"] == "capacityOptimized"
    specs = cfg["LaunchSpecifications"]
    assert specs[0]["SpotPrice"] == "0.30" and specs[0]["WeightedCapacity"] == 2
    assert "SpotPrice" not in specs[1]  # "" = unset: the fleet's price applies
    assert specs[1]["BlockDeviceMappings"] == [{"DeviceName": "root", "Ebs": {"Encrypted": True}}]
    assert cfg["LaunchTemplateConfigs"] == [{
        "LaunchTemplateSpecification": {"LaunchTemplateId": "lt-1", "Version": "1"},
        "Overrides": [{"InstanceType": "g5.xlarge", "SpotPrice": "0.4"}]}]

    ec2 = one("aws_ec2_fleet", {
        "type": "maintain",
        "target_capacity_specification": [{"default_target_capacity_type": "spot",
                                           "total_target_capacity": 2}],
        "spot_options": [{"allocation_strategy": "capacity-optimized"}],
        "launch_template_config": [{
            "launch_template_specification": [{"launch_template_id": Ref("aws_launch_template.f",
                                                                         "id")}],
            "override": [{"instance_type": "g4dn.xlarge", "max_price": "0.45",
                          "weighted_capacity": 1.0}],
        }],
    })
    assert ec2.attrs["Type"] == "maintain"
    assert ec2.attrs["TargetCapacitySpecification"] == {"DefaultTargetCapacityType": "spot",
                                                        "TotalTargetCapacity": 2}
    assert ec2.attrs["SpotOptions"] == {"AllocationStrategy": "capacity-optimized"}
    assert ec2.attrs["LaunchTemplateConfigs"] == [{
        "LaunchTemplateSpecification": {"LaunchTemplateId": Ref("aws_launch_template.f", "id")},
        "Overrides": [{"InstanceType": "g4dn.xlarge", "MaxPrice": "0.45",
                       "WeightedCapacity": 1}]}]


def test_launch_configuration() -> None:
    r = one("aws_launch_configuration", {
        "name": "lab-spot", "instance_type": "g4dn.xlarge", "spot_price": "0.20",
        "associate_public_ip_address": True,
        "root_block_device": [{"encrypted": False, "volume_size": 100}],
    })
    assert r.attrs == {
        "InstanceType": "g4dn.xlarge", "SpotPrice": "0.20", "AssociatePublicIpAddress": True,
        "BlockDeviceMappings": [{"DeviceName": "root",
                                 "Ebs": {"Encrypted": False, "VolumeSize": 100}}],
        "LaunchConfigurationName": "lab-spot"}
    assert r.name == "lab-spot" and r.aliases == ("lab-spot",)


def test_network_resources() -> None:
    rt = one("aws_route_table", {"vpc_id": "vpc-1", "route": [
        {"cidr_block": "0.0.0.0/0", "gateway_id": "igw-1", "nat_gateway_id": "",
         "ipv6_cidr_block": "", "vpc_endpoint_id": ""},
        {"cidr_block": "10.1.0.0/16", "gateway_id": "", "nat_gateway_id": Ref("aws_nat_gateway.a",
                                                                               "id")}]})
    assert rt.attrs == {"VpcId": "vpc-1", "Routes": [
        {"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": "igw-1"},
        {"DestinationCidrBlock": "10.1.0.0/16", "NatGatewayId": Ref("aws_nat_gateway.a", "id")}]}
    main = one("aws_default_route_table",
               {"default_route_table_id": Ref("module.net.aws_vpc.this", "default_route_table_id")})
    assert main.attrs["Main"] is True
    assert main.attrs["VpcId"] == Ref("module.net.aws_vpc.this", "id")
    literal = one("aws_default_route_table", {"default_route_table_id": "rtb-123",
                                              "vpc_id": "vpc-9"})
    assert literal.attrs["VpcId"] == "vpc-9" and "rtb-123" in literal.aliases
    subnet = one("aws_subnet", {"vpc_id": Ref("aws_vpc.a", "id"), "cidr_block": "10.0.1.0/24",
                                "map_public_ip_on_launch": "true", "availability_zone": ""})
    assert subnet.attrs == {"VpcId": Ref("aws_vpc.a", "id"), "CidrBlock": "10.0.1.0/24",
                            "MapPublicIpOnLaunch": True}
    assert one("aws_route", {"route_table_id": "rtb-1", "destination_cidr_block": "0.0.0.0/0",
                             "gateway_id": "igw-1"}).attrs == {
        "RouteTableId": "rtb-1", "DestinationCidrBlock": "0.0.0.0/0", "GatewayId": "igw-1"}
    assert one("aws_route_table_association", {"subnet_id": "s", "route_table_id": "r"}).attrs \
        == {"SubnetId": "s", "RouteTableId": "r"}
    assert one("aws_main_route_table_association", {"vpc_id": "v", "route_table_id": "r"}).attrs \
        == {"VpcId": "v", "RouteTableId": "r"}
    assert one("aws_internet_gateway", {"vpc_id": "v"}).attrs == {"VpcId": "v"}
    assert one("aws_internet_gateway_attachment", {"vpc_id": "v", "internet_gateway_id": "i"}
               ).attrs == {"VpcId": "v", "InternetGatewayId": "i"}
    assert one("aws_vpc_endpoint_route_table_association",
               {"vpc_endpoint_id": "e", "route_table_id": "r"}).attrs == {
        "VpcEndpointId": "e", "RouteTableId": "r"}
    vpc = one("aws_vpc", {"cidr_block": "10.0.0.0/16", "id": "vpc-1", "arn": "arn:vpc",
                          "tags": {"Name": "gpu"}})
    assert vpc.attrs["CidrBlock"] == "10.0.0.0/16"
    assert vpc.aliases == ("vpc-1", "arn:vpc", "gpu") and vpc.name == "gpu"


def test_endpoint_policy_document() -> None:
    doc = '{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:*"}]}'
    r = one("aws_vpc_endpoint", {"service_name": "com.amazonaws.us-east-1.s3",
                                 "route_table_ids": ["rtb-1"], "policy": doc,
                                 "vpc_endpoint_type": "Gateway"})
    assert r.attrs["PolicyDocument"] == {
        "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:*"}]}
    assert r.attrs["RouteTableIds"] == ["rtb-1"]
    assert isinstance(one("aws_vpc_endpoint", {"policy": "{not json"}).attrs["PolicyDocument"],
                      Unknown)
    assert isinstance(one("aws_vpc_endpoint", {"policy": "[1]"}).attrs["PolicyDocument"], Unknown)
    assert "PolicyDocument" not in one("aws_vpc_endpoint", {"policy": ""}).attrs
    already = {"Statement": []}
    assert one("aws_vpc_endpoint", {"policy": already}).attrs["PolicyDocument"] == already


def test_ebs_defaults_and_volume() -> None:
    assert one("aws_ebs_encryption_by_default", {}).attrs == {"EbsEncryptionByDefault": True}
    assert one("aws_ebs_encryption_by_default", {"enabled": False}).attrs == {
        "EbsEncryptionByDefault": False}
    assert one("aws_ebs_default_kms_key", {"key_arn": "arn:k"}).attrs == {"KmsKeyId": "arn:k"}
    vol = one("aws_ebs_volume", {"encrypted": True, "kms_key_id": "arn:k", "size": "100",
                                 "type": "gp3", "availability_zone": "us-east-1a"})
    assert vol.attrs == {"Encrypted": True, "KmsKeyId": "arn:k", "Size": 100,
                         "VolumeType": "gp3", "AvailabilityZone": "us-east-1a"}


def test_merge_ebs_defaults() -> None:
    flag = one("aws_ebs_encryption_by_default", {"enabled": True},
               "aws_ebs_encryption_by_default.on")
    key = one("aws_ebs_default_kms_key", {"key_arn": Ref("aws_kms_key.k", "arn")},
              "aws_ebs_default_kms_key.this")
    other_scope = translate("aws_ebs_default_kms_key", "aws_ebs_default_kms_key.x",
                            {"key_arn": "arn:other"}, provenance=PROV, scope="elsewhere")[0]
    vol = one("aws_ebs_volume", {})
    merged = merge_ebs_defaults([key, vol, flag, other_scope])
    assert merged == [vol, flag, other_scope]
    assert flag.attrs == {"EbsEncryptionByDefault": True, "KmsKeyId": Ref("aws_kms_key.k", "arn")}
    assert "aws_ebs_default_kms_key.this" in flag.aliases
    assert other_scope.attrs == {"KmsKeyId": "arn:other"}  # nothing to merge into: kept


# -- Unknown and Ref pass through ----------------------------------------------------------------


def test_unknown_and_ref_pass_through_at_every_depth() -> None:
    u = Unknown("known only after apply")
    ref = Ref("module.m.aws_kms_key.k", "arn")
    lt = one("aws_launch_template", {
        "name": u,
        "instance_type": Ref("var.type"),
        "block_device_mappings": [{"device_name": "/dev/xvda",
                                   "ebs": [{"encrypted": u, "kms_key_id": ref}]},
                                  {"device_name": "/dev/xvdb", "ebs": u}],
        "network_interfaces": u,
        "instance_market_options": [{"market_type": "spot", "spot_options": u}],
    })
    data = lt.attrs["LaunchTemplateData"]
    assert lt.attrs["LaunchTemplateName"] is u and lt.name is None
    assert data["InstanceType"] == Ref("var.type")
    assert data["BlockDeviceMappings"][0]["Ebs"] == {"Encrypted": u, "KmsKeyId": ref}
    assert data["BlockDeviceMappings"][1]["Ebs"] is u
    assert data["NetworkInterfaces"] is u
    assert data["InstanceMarketOptions"]["SpotOptions"] is u
    assert lt.get("LaunchTemplateData.InstanceMarketOptions.SpotOptions.MaxPrice") is u

    inst = one("aws_instance", {"root_block_device": u, "ebs_block_device": u, "subnet_id": u})
    assert inst.attrs["SubnetId"] is u
    assert inst.attrs["BlockDeviceMappings"] is u
    inst = one("aws_instance", {"root_block_device": u})
    assert inst.attrs["BlockDeviceMappings"] == [{"DeviceName": "root", "Ebs": u}]

    asg = one("aws_autoscaling_group", {"mixed_instances_policy": u, "desired_capacity": ref,
                                        "launch_template": [{"id": ref, "version": u}]})
    assert asg.attrs["MixedInstancesPolicy"] is u
    assert asg.attrs["DesiredCapacity"] == ref
    assert asg.attrs["LaunchTemplate"] == {"LaunchTemplateId": ref, "Version": u}
    asg = one("aws_autoscaling_group", {"mixed_instances_policy": [{
        "instances_distribution": [{"spot_max_price": u, "on_demand_base_capacity": u}],
        "launch_template": [{"override": u}]}]})
    assert asg.attrs["MixedInstancesPolicy"] == {
        "InstancesDistribution": {"OnDemandBaseCapacity": u, "SpotMaxPrice": u},
        "LaunchTemplate": {"Overrides": u}}
    ep = one("aws_vpc_endpoint", {"policy": u, "route_table_ids": [ref, u], "vpc_id": ref})
    assert ep.attrs == {"PolicyDocument": u, "RouteTableIds": [ref, u], "VpcId": ref}
    # tags that are not known are left out (Resource.tags holds strings only)
    vpc = one("aws_vpc", {"tags": {"Name": u, "team": "ml"}, "tags_all": u})
    assert vpc.tags == {"team": "ml"} and vpc.name is None


def test_values_not_a_mapping() -> None:
    assert one("aws_instance", UNKNOWN).attrs == {}  # type: ignore[arg-type]


# -- never raises --------------------------------------------------------------------------------

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True),
                  st.text(max_size=8), st.sampled_from(["true", "false", "", "0.5", "1e3"]),
                  st.just(UNKNOWN), st.builds(Ref, st.text(min_size=1, max_size=8)))
_keys = st.sampled_from([
    "name", "encrypted", "kms_key_id", "block_device_mappings", "ebs", "root_block_device",
    "ebs_block_device", "instance_market_options", "spot_options", "max_price",
    "mixed_instances_policy", "instances_distribution", "launch_template", "override",
    "launch_template_specification", "instance_type", "vpc_zone_identifier", "desired_capacity",
    "tags", "tag", "route", "policy", "network_interfaces", "launch_specification",
    "launch_template_config", "overrides", "target_capacity_specification", "subnet_id",
    "default_route_table_id", "associate_public_ip_address", "spot_price", "enabled", "key",
    "value", "id", "arn", "spot_max_price", "weighted_capacity"])
_values = st.recursive(_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=5)), max_leaves=25)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(tf_type="aws_autoscaling_group", values={"tag": True})  # found by this test once
@given(tf_type=st.sampled_from(sorted(SUPPORTED_TYPES)),
       values=st.dictionaries(_keys, _values, max_size=8))
def test_translate_never_raises(tf_type: str, values: dict[str, Any]) -> None:
    out = translate(tf_type, "a.b", values, provenance=PROV, scope="s")
    # a Kubernetes manifest gives a resource only when it holds a Karpenter object
    assert len(out) == (0 if tf_type in MANIFEST_TYPES else 1)
    for r in out:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in r.tags.items())
        assert r.name is None or isinstance(r.name, str)
