"""EBS-001 on a volume created from a snapshot: AWS encrypts a volume made from an encrypted
snapshot whatever Encrypted says, so without Encrypted = true the snapshot decides, and the
scan does not hold its encryption: UNKNOWN, never a confident FAIL. Encrypted = true still
PASSes and a volume without a snapshot still FAILs. Terraform HCL, CloudFormation, eksctl and
Karpenter."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import scan_paths

HCL = '''
variable "snapshot_id" { type = string }

resource "aws_ebs_volume" "from_snapshot" {
  availability_zone = "us-east-1a"
  snapshot_id       = var.snapshot_id
}

resource "aws_ebs_volume" "from_snapshot_false" {
  availability_zone = "us-east-1a"
  snapshot_id       = "snap-0123456789abcdef0"
  encrypted         = false
}

resource "aws_ebs_volume" "from_snapshot_encrypted" {
  availability_zone = "us-east-1a"
  snapshot_id       = var.snapshot_id
  encrypted         = true
}

resource "aws_ebs_volume" "plain" {
  availability_zone = "us-east-1a"
  size              = 100
}

resource "aws_launch_template" "gpu" {
  instance_type = "g5.xlarge"
  image_id      = "ami-12345678"
  block_device_mappings {
    device_name = "/dev/xvdb"
    ebs {
      snapshot_id = var.snapshot_id
    }
  }
  block_device_mappings {
    device_name = "/dev/xvdc"
    ebs {
      volume_size = 100
    }
  }
}
'''
CFN = '''AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Snapshot: {Type: String}
Resources:
  FromSnapshot:
    Type: AWS::EC2::Volume
    Properties: {AvailabilityZone: us-east-1a, SnapshotId: !Ref Snapshot}
  FromSnapshotEncrypted:
    Type: AWS::EC2::Volume
    Properties: {AvailabilityZone: us-east-1a, SnapshotId: !Ref Snapshot, Encrypted: true}
  Plain:
    Type: AWS::EC2::Volume
    Properties: {AvailabilityZone: us-east-1a, Size: 100}
'''
EKSCTL = '''apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: c, region: us-east-1}
nodeGroups:
  - name: gpu
    instanceType: g5.xlarge
    volumeEncrypted: true
    additionalVolumes:
      - {volumeName: /dev/xvdb, snapshotID: snap-0123456789abcdef0}
'''
KARPENTER = '''apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: c}}]
  blockDeviceMappings:
    - deviceName: /dev/xvdb
      ebs: {snapshotID: snap-0123456789abcdef0}
'''


def _ebs(tmp_path: Path, name: str, text: str) -> dict[str, tuple[Status, str]]:
    (tmp_path / name).write_text(text)
    source = scan_paths([tmp_path])
    assert source.errors == []
    return {f.resource["id"]: (f.status, f.message)
            for f in evaluate(source.resources, policy_ids=["EBS-001"])}


def test_terraform_volumes_and_template_devices_from_a_snapshot(tmp_path: Path) -> None:
    got = _ebs(tmp_path, "main.tf", HCL)
    assert got["aws_ebs_volume.from_snapshot"][0] is Status.UNKNOWN
    assert "snapshot" in got["aws_ebs_volume.from_snapshot"][1]
    assert got["aws_ebs_volume.from_snapshot_false"][0] is Status.UNKNOWN
    assert got["aws_ebs_volume.from_snapshot_encrypted"][0] is Status.PASS
    assert got["aws_ebs_volume.plain"][0] is Status.FAIL
    # the template: /dev/xvdc has no snapshot and is not encrypted: still a FAIL, naming it
    status, message = got["aws_launch_template.gpu"]
    assert status is Status.FAIL and "/dev/xvdc" in message and "/dev/xvdb" not in message


def test_a_template_whose_only_unencrypted_device_is_from_a_snapshot(tmp_path: Path) -> None:
    text = HCL.replace('''  block_device_mappings {
    device_name = "/dev/xvdc"
    ebs {
      volume_size = 100
    }
  }
''', "")
    got = _ebs(tmp_path, "main.tf", text)
    # its root comes from the AMI (the policy's own rule): the FAIL names the root, never the
    # device made from the snapshot
    status, message = got["aws_launch_template.gpu"]
    assert status is Status.FAIL and "root (from the AMI)" in message
    assert "/dev/xvdb" not in message
    root = '    device_name = "/dev/xvda"\n    ebs {\n      encrypted = true\n    }\n  }\n' \
           '  block_device_mappings {\n    device_name = "/dev/xvdb"'
    with_root = text.replace('    device_name = "/dev/xvdb"', root)
    assert _ebs(tmp_path, "main.tf", with_root)["aws_launch_template.gpu"][0] is Status.UNKNOWN


def test_cloudformation_volumes_from_a_snapshot(tmp_path: Path) -> None:
    got = _ebs(tmp_path, "t.yaml", CFN)
    assert {k: v[0] for k, v in got.items()} == {
        "FromSnapshot": Status.UNKNOWN, "FromSnapshotEncrypted": Status.PASS,
        "Plain": Status.FAIL}


@pytest.mark.parametrize(("name", "text"), [("cluster.yaml", EKSCTL),
                                            ("nodeclass.yaml", KARPENTER)])
def test_yaml_sources_devices_from_a_snapshot(tmp_path: Path, name: str, text: str) -> None:
    if name == "nodeclass.yaml":  # explicit mappings replace Karpenter's: give the root too
        text = text.replace("  blockDeviceMappings:\n", "  blockDeviceMappings:\n"
                            "    - deviceName: /dev/xvda\n      ebs: {encrypted: true}\n")
    got = _ebs(tmp_path, name, text)
    assert [v[0] for v in got.values()] == [Status.UNKNOWN], got
    # without the snapshot the same device FAILs
    plain = text.replace(", snapshotID: snap-0123456789abcdef0", "").replace(
        "{snapshotID: snap-0123456789abcdef0}", "{volumeSize: 100Gi}")
    assert [v[0] for v in _ebs(tmp_path, name, plain).values()] == [Status.FAIL]
