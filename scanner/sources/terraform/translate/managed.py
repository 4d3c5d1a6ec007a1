"""Managed compute: EKS node groups, Batch compute environments and SageMaker HyperPod
clusters (the awscc provider)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.model import Unknown
from scanner.sources.terraform.translate.coerce import (
    Attrs,
    _blocks,
    _is_map,
    _list,
    _one,
    _pairs,
    _put,
    _s,
    _sub,
)
from scanner.sources.terraform.translate.instances import _lt_spec


def _eks_node_group(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("node_group_name", "NodegroupName"),
        ("cluster_name", "ClusterName"),
        ("capacity_type", "CapacityType"),
        ("ami_type", "AmiType"),
        ("subnet_ids", "Subnets"),
        ("disk_size", "DiskSize"),
        ("node_role_arn", "NodeRole"),
        ("labels", "Labels"),
        ("version", "Version"),
        ("release_version", "ReleaseVersion"),
    ))
    types = _list(v.get("instance_types"))
    if types:
        a["InstanceTypes"] = types
    _put(a, "ScalingConfig", _sub(v.get("scaling_config"), (
        ("desired_size", "DesiredSize"), ("min_size", "MinSize"), ("max_size", "MaxSize"))))
    _put(a, "LaunchTemplate", _sub(v.get("launch_template"), (
        ("id", "Id"), ("name", "Name"), ("version", "Version"))))
    _put(a, "RemoteAccess", _sub(v.get("remote_access"), (
        ("ec2_ssh_key", "Ec2SshKey"), ("source_security_group_ids", "SourceSecurityGroups"))))
    name = _s(v.get("node_group_name"))
    return "eks.nodegroup", a, name, ()


def _batch_compute_environment(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("compute_environment_name", "ComputeEnvironmentName"),
        ("type", "Type"),
        ("state", "State"),
        ("service_role", "ServiceRole"),
    ))
    block = _one(v.get("compute_resources"))
    if isinstance(block, Unknown):
        a["ComputeResources"] = block
    elif block is not None:
        cr = _pairs({}, block, (
            ("type", "Type"),
            ("allocation_strategy", "AllocationStrategy"),
            ("bid_percentage", "BidPercentage"),
            ("min_vcpus", "MinvCpus"),
            ("max_vcpus", "MaxvCpus"),
            ("desired_vcpus", "DesiredvCpus"),
            ("subnets", "Subnets"),
            ("security_group_ids", "SecurityGroupIds"),
            ("instance_role", "InstanceRole"),
            ("image_id", "ImageId"),
            ("placement_group", "PlacementGroup"),
            ("spot_iam_fleet_role", "SpotIamFleetRole"),
            ("ec2_key_pair", "Ec2KeyPair"),
        ))
        types = _list(block.get("instance_type"))
        if types:
            cr["InstanceTypes"] = types
        _put(cr, "LaunchTemplate", _lt_spec(block.get("launch_template")))
        ec2 = _blocks(block.get("ec2_configuration"))
        if ec2:
            cr["Ec2Configuration"] = ec2
        a["ComputeResources"] = cr
    name = _s(v.get("compute_environment_name"))
    return "batch.compute_environment", a, name, ()


# The awscc provider (Cloud Control) spells a CloudFormation type's properties in snake_case and
# writes nested properties as attributes (objects and lists of objects), not blocks.
_AWSCC_VPC_CONFIG = (("security_group_ids", "SecurityGroupIds"), ("subnets", "Subnets"))
_AWSCC_EBS_VOLUME = (("volume_size_in_gb", "VolumeSizeInGB"),
                     ("volume_kms_key_id", "VolumeKmsKeyId"), ("root_volume", "RootVolume"))


def _awscc_instance_groups(value: Any) -> Any:
    """awscc ``instance_groups`` / ``restricted_instance_groups`` -> the CloudFormation
    ``InstanceGroups`` shape (the properties the kind declares; the rest is left out)."""
    groups = _blocks(value)
    if not isinstance(groups, list):
        return groups
    out: list[Any] = []
    for g in groups:
        if not _is_map(g):
            out.append(g)
            continue
        a = _pairs({}, g, (
            ("instance_group_name", "InstanceGroupName"),
            ("instance_type", "InstanceType"),
            ("instance_count", "InstanceCount"),
            ("execution_role", "ExecutionRole"),
            ("threads_per_core", "ThreadsPerCore"),
            ("training_plan_arn", "TrainingPlanArn"),
        ))
        _put(a, "LifeCycleConfig", _sub(g.get("life_cycle_config"), (
            ("on_create", "OnCreate"), ("source_s3_uri", "SourceS3Uri"))))
        configs = _blocks(g.get("instance_storage_configs"))
        if isinstance(configs, Unknown):
            a["InstanceStorageConfigs"] = configs
        elif configs:
            a["InstanceStorageConfigs"] = [
                c if isinstance(c, Unknown) else
                {"EbsVolumeConfig": _sub(c.get("ebs_volume_config"), _AWSCC_EBS_VOLUME)}
                for c in configs]
        _put(a, "OverrideVpcConfig", _sub(g.get("override_vpc_config"), _AWSCC_VPC_CONFIG))
        out.append(a)
    return out


def _awscc_sagemaker_cluster(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    """``awscc_sagemaker_cluster`` (``AWS::SageMaker::Cluster`` through Cloud Control): a
    SageMaker HyperPod cluster, as its CloudFormation template would declare it."""
    a = _pairs({}, v, (("cluster_name", "ClusterName"), ("node_recovery", "NodeRecovery")))
    orchestrator = _one(v.get("orchestrator"))
    if _is_map(orchestrator):
        _put(a, "Orchestrator", {"Eks": _sub(orchestrator.get("eks"),
                                             (("cluster_arn", "ClusterArn"),))})
    for tf_key, key in (("instance_groups", "InstanceGroups"),
                        ("restricted_instance_groups", "RestrictedInstanceGroups")):
        _put(a, key, _awscc_instance_groups(v.get(tf_key)))
    _put(a, "VpcConfig", _sub(v.get("vpc_config"), _AWSCC_VPC_CONFIG))
    name = _s(v.get("cluster_name"))
    return "sagemaker.cluster", a, name, ()
