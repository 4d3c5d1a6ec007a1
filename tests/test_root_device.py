"""The AMI's root volume beside block device mappings that declare only data volumes.

A launch that maps only ``/dev/sdf`` still boots a root volume from the AMI, whose encryption
the account's default decides: EBS-001 must not PASS on the data volume alone. A mapping
replaces the root volume when it is Terraform's ``root_block_device`` (the sources name it
"root"), when its device name is one EC2 reserves for the root device (``/dev/xvda``,
``/dev/sda1``, with or without ``/dev/``), or when Karpenter's ``rootVolume`` says so; a name that
is not known may be either, and the root volume is then UNKNOWN (never PASS nor FAIL on it).
Live, the volumes themselves are judged: nothing changes there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Ref, Status, Unknown
from tests.model_builders import res

DATA = {"DeviceName": "/dev/sdf", "Ebs": {"Encrypted": True}}


def ebs001(resources: list[Any], rid: str) -> Any:
    found = {f.resource["id"]: f for f in evaluate(resources, policy_ids=["EBS-001"])}
    return found.get(rid)


def launches(mappings: list[Any]) -> list[tuple[Any, str]]:
    """The same mappings on every kind that declares a launch specification."""
    return [
        (res("ec2.instance", "i", InstanceType="g5.xlarge", BlockDeviceMappings=mappings), "i"),
        (res("ec2.launch_template", "lt", LaunchTemplateData={"BlockDeviceMappings": mappings}),
         "lt"),
        (res("autoscaling.launch_configuration", "lc", InstanceType="g5.xlarge",
             BlockDeviceMappings=mappings), "lc"),
        (res("ec2.spot_request", "sr", SpotPrice="1", LaunchSpecification={
            "InstanceType": "g5.xlarge", "BlockDeviceMappings": mappings}), "sr"),
        (res("ec2.spot_fleet", "sf", SpotFleetRequestConfig={"TargetCapacity": 1,
             "LaunchSpecifications": [{"InstanceType": "g5.xlarge",
                                       "BlockDeviceMappings": mappings}]}), "sf"),
    ]


@pytest.mark.parametrize("index", range(5))
def test_data_volumes_only_do_not_hide_the_amis_root_volume(index):
    resource, rid = launches([DATA])[index]
    found = ebs001([resource], rid)
    assert found.status is Status.FAIL, found.message
    assert "root (from the AMI)" in found.message and "/dev/sdf" not in found.message
    # the account's default encryption on in the same scope decides it
    on = res("ec2.ebs_defaults", "d", EbsEncryptionByDefault=True)
    assert ebs001([resource, on], rid).status is Status.PASS


@pytest.mark.parametrize("root", ["/dev/xvda", "/dev/sda1", "xvda", "sda1", "root"])
@pytest.mark.parametrize("index", range(5))
def test_a_mapping_with_a_root_device_name_replaces_it(root, index):
    mappings = [{"DeviceName": root, "Ebs": {"Encrypted": True}}, DATA]
    resource, rid = launches(mappings)[index]
    assert ebs001([resource], rid).status is Status.PASS
    mappings[0]["Ebs"]["Encrypted"] = False
    found = ebs001([resource], rid)
    assert found.status is Status.FAIL and root in found.message
    assert "root (from the AMI)" not in found.message


@pytest.mark.parametrize("name", [Unknown("var.device_name has no value"),
                                  Ref("data.aws_ami.gpu", "root_device_name"), None])
@pytest.mark.parametrize("index", range(5))
def test_a_device_name_that_is_not_known_leaves_the_root_unknown(name, index):
    mapping: dict[str, Any] = {"Ebs": {"Encrypted": True}}
    if name is not None:
        mapping["DeviceName"] = name
    resource, rid = launches([mapping])[index]
    found = ebs001([resource], rid)
    assert found.status is Status.UNKNOWN, found.message
    assert "root (from the AMI)" in found.message
    assert "replaces the AMI's root volume is not known" in found.message
    # negative: an unencrypted data volume beside it fails whatever the root is
    resource, rid = launches([mapping, {"DeviceName": "/dev/sdg",
                                        "Ebs": {"Encrypted": False}}])[index]
    found = ebs001([resource], rid)
    assert found.status is Status.FAIL and "/dev/sdg" in found.message


def test_a_mapping_that_is_not_known_is_judged_unknown_not_skipped():
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"BlockDeviceMappings": [
        {"DeviceName": "/dev/xvda", "Ebs": {"Encrypted": True}},
        Unknown("dynamic block over var.disks")]})
    found = ebs001([lt], "lt")
    assert found.status is Status.UNKNOWN and "var.disks" in found.message


def test_instance_store_mappings_are_not_the_root():
    mappings = [{"DeviceName": "/dev/xvda", "VirtualName": "ephemeral0"}, DATA]
    resource, rid = launches(mappings)[0]
    assert ebs001([resource], rid).status is Status.FAIL


def test_an_instance_from_a_template_leaves_the_root_to_the_template():
    """An instance with data volumes of its own launched from a template: the root volume is
    the template's (judged there, once); from a template not in the scan, it is UNKNOWN."""
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"BlockDeviceMappings": [
        {"DeviceName": "/dev/xvda", "Ebs": {"Encrypted": True}}]})
    inst = res("ec2.instance", "i", InstanceType="g5.xlarge", BlockDeviceMappings=[DATA],
               LaunchTemplate={"LaunchTemplateId": Ref("lt")})
    assert ebs001([inst, lt], "i").status is Status.PASS
    assert ebs001([inst, lt], "lt").status is Status.PASS
    bare = res("ec2.launch_template", "lt", LaunchTemplateData={"BlockDeviceMappings": [DATA]})
    assert ebs001([inst, bare], "lt").status is Status.FAIL  # the AMI's root, decided there
    elsewhere = res("ec2.instance", "i", InstanceType="g5.xlarge", BlockDeviceMappings=[DATA],
                    LaunchTemplate={"LaunchTemplateId": "lt-0123456789abcdef0"})
    found = ebs001([elsewhere], "i")
    assert found.status is Status.UNKNOWN and "not in the scan" in found.message


def test_karpenter_node_class_mappings_without_the_root_volume():
    def node_class(*mappings: dict[str, Any]) -> Any:
        return res("karpenter.ec2_node_class", "nc", AmiFamily="Bottlerocket",
                   BlockDeviceMappings=list(mappings))

    data = {"DeviceName": "/dev/xvdb", "Ebs": {"Encrypted": True}}
    found = ebs001([node_class(data)], "nc")
    assert found.status is Status.FAIL and "root (from the AMI)" in found.message
    root = {"DeviceName": "/dev/xvdz", "RootVolume": True, "Ebs": {"Encrypted": True}}
    assert ebs001([node_class(root, data)], "nc").status is Status.PASS


def test_live_launch_specifications_are_not_judged():
    """Live, the volumes carry the real state: the views of templates, configurations and
    instances hold no devices, with or without a root mapping."""
    for resource, rid in launches([DATA]):
        resource.declared = False
        assert ebs001([resource], rid) is None


def test_terraform_data_volumes_only(tmp_path: Path):
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    (tmp_path / "main.tf").write_text('''
resource "aws_instance" "data_only" {
  instance_type = "g5.xlarge"
  ebs_block_device {
    device_name = "/dev/sdf"
    encrypted   = true
  }
}
resource "aws_instance" "with_root" {
  instance_type = "g5.xlarge"
  root_block_device { encrypted = true }
  ebs_block_device {
    device_name = "/dev/sdf"
    encrypted   = true
  }
}
resource "aws_launch_template" "data_only" {
  block_device_mappings {
    device_name = "/dev/sdf"
    ebs { encrypted = true }
  }
}
resource "aws_launch_template" "with_root" {
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs { encrypted = true }
  }
}
''')
    found = {f.resource["id"]: f.status for f in evaluate(
        load_terraform_dir([tmp_path]).resources, policy_ids=["EBS-001"])}
    assert found == {"aws_instance.data_only": Status.FAIL,
                     "aws_instance.with_root": Status.PASS,
                     "aws_launch_template.data_only": Status.FAIL,
                     "aws_launch_template.with_root": Status.PASS}
