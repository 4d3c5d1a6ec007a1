"""``ec2.volume``: an EBS volume is its own storage device (IaC and live alike)."""

from __future__ import annotations

from scanner.compute.index import Views
from scanner.compute.registry import DEVICES, extractor
from scanner.compute.view import ComputeView, Device
from scanner.kinds.facts import EBS_KMS_KEYS
from scanner.model import Resource


@extractor("ec2.volume", provides=(DEVICES,), rank=0)
def volume(r: Resource, views: Views) -> ComputeView:
    # declared, a volume created from a snapshot is encrypted when the snapshot is; observed,
    # its own Encrypted is the state
    device = Device("Encrypted", r.id, r.get("Encrypted"), r.get("KmsKeyId"),
                    key_manager=r.get(EBS_KMS_KEYS.attribute),
                    snapshot=r.get("SnapshotId") if r.declared else None,
                    snapshot_path="SnapshotId")
    return ComputeView(r, devices=(device,))
