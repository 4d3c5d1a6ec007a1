"""``sagemaker.cluster``: a SageMaker HyperPod cluster: its instance groups (types and counts),
the subnets its VPC config places them in, and their EBS volumes.

The instances run in a service account: only the cluster's configuration is visible, live as
in IaC, so its volumes' keys are judged from it live too (``DEVICES_LIVE``). HyperPod encrypts
every EBS volume it attaches, with an AWS owned key unless ``VolumeKmsKeyId`` names one: EBS-001
has nothing to judge (``service_encrypted``), EBS-003 asks for the customer-managed key. A
SageMaker type ``ml.p5.48xlarge`` is the EC2 type ``p5.48xlarge`` for the GPU fact. There is no
spot option and no public-IP setting (VPC-004 has nothing to judge); without a VPC config the
cluster runs in a SageMaker-owned VPC (no subnet of the account's).
"""

from __future__ import annotations

from typing import Any

from scanner.compute.index import Views
from scanner.compute.launch import subnet_values
from scanner.compute.registry import DEVICES, DEVICES_LIVE, LAUNCHES, PLACES, extractor
from scanner.compute.values import as_list, iter_dicts, ordinal, to_int
from scanner.compute.view import AWS_OWNED, Attr, Capacity, ComputeView, Device, Network, Types
from scanner.model import Resource, Unknown

GROUP_LISTS = ("InstanceGroups", "RestrictedInstanceGroups")
AWS_OWNED_KEY = "an AWS owned key (no VolumeKmsKeyId)"


def ec2_type(value: Any) -> Any:
    """``ml.p5.48xlarge`` -> ``p5.48xlarge`` (the hardware behind the SageMaker type)."""
    if isinstance(value, str) and value.startswith("ml."):
        return value[3:]
    return value


@extractor("sagemaker.cluster", provides=(LAUNCHES, PLACES, DEVICES, DEVICES_LIVE), rank=10)
def sagemaker_cluster(r: Resource, views: Views) -> ComputeView:
    types: list[Any] = []
    requirement = None
    devices: list[Device] = []
    subnets: list[Any] = []
    counts: list[Any] = []
    cluster_vpc = r.get("VpcConfig")
    for key in GROUP_LISTS:
        groups = r.get(key)
        if isinstance(groups, Unknown):
            types.append(groups)
            devices.append(Device(key, f"the EBS volumes of every {key} entry", True, groups,
                                  service_encrypted=True))
            counts.append(groups)
            continue
        for i, g in iter_dicts(groups):
            path = f"{key}[{i}]"
            name = g.get("InstanceGroupName")
            label = f"instance group {name}" if isinstance(name, str) \
                else f"the {ordinal(i)} instance group"
            itype = g.get("InstanceType")
            if itype is not None:
                types.append(ec2_type(itype))
            if itype is None and g.get("InstanceRequirements") is not None:
                from scanner.compute.requirements import gpu_requirement

                requirement = requirement or gpu_requirement(g["InstanceRequirements"],
                                                             f"{path}.InstanceRequirements")
            counts.append(to_int(next((g.get(k) for k in ("CurrentCount", "InstanceCount",
                                                          "TargetCount")
                                       if g.get(k) is not None), None)))
            devices.extend(_volumes(g.get("InstanceStorageConfigs"), path, label))
            override = g.get("OverrideVpcConfig")
            vpc = override if override is not None else cluster_vpc
            own = vpc.get("Subnets") if isinstance(vpc, dict) else vpc
            if isinstance(own, Unknown):
                subnets.append(own)
            else:
                subnets.extend(as_list(own))
    if not types and requirement is None:
        types = [Unknown("no instance group")]
    placed = subnet_values(subnets)
    count: Any = next((c for c in counts if isinstance(c, Unknown)), None)
    if count is None and all(isinstance(c, int) for c in counts):
        count = sum(counts)
    return ComputeView(
        r, types=Types(tuple(types), requirement),
        capacity=Capacity(desired=Attr(count, "InstanceGroups.InstanceCount")),
        devices=tuple(devices),
        network=Network(placed=bool(placed), subnets=placed, subnets_path="VpcConfig.Subnets",
                        public_ip_applies=False))


def _volumes(configs: Any, path: str, label: str) -> list[Device]:
    """The group's EBS volumes: each EbsVolumeConfig, and the root volume (its key from the
    config marked RootVolume, else an AWS owned key). All are encrypted."""
    if isinstance(configs, Unknown):
        return [Device(f"{path}.InstanceStorageConfigs", f"the EBS volumes of {label}", True,
                       configs, service_encrypted=True)]
    out: list[Device] = []
    root = False
    for j, c in iter_dicts(configs):
        ebs = c.get("EbsVolumeConfig")
        if not isinstance(ebs, dict):
            continue
        is_root = ebs.get("RootVolume") is True
        root = root or is_root
        key = ebs.get("VolumeKmsKeyId")
        where = f"{path}.InstanceStorageConfigs[{j}].EbsVolumeConfig"
        what = "root volume" if is_root else "EBS volume at /opt/sagemaker"
        out.append(Device(where, f"the {what} of {label}", True,
                          key if key is not None else AWS_OWNED_KEY,
                          key_manager=AWS_OWNED if key is None else None,
                          service_encrypted=True))
    if not root:
        out.insert(0, Device(f"{path}.InstanceStorageConfigs(root)",
                             f"the root volume of {label}", True, AWS_OWNED_KEY,
                             key_manager=AWS_OWNED, service_encrypted=True))
    return out
