"""Seed moto (in-process or a server) with the AWS-resource kinds of issue 13: an EKS cluster
with managed node groups, AWS Batch compute environments and a SageMaker HyperPod cluster.

The shapes follow what public repositories deploy (terraform-aws-eks's GPU node groups,
awsome-distributed-training's Batch and HyperPod stacks); every call is moto's real API.
"""

from __future__ import annotations

from typing import Any

import boto3

AMI = "ami-12c6146b"
TRUST = ('{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":'
         '"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}')


def _client(service: str, url: str | None, region: str) -> Any:
    return boto3.client(service, region_name=region, endpoint_url=url)


def role(url: str | None, region: str, name: str) -> str:
    iam = _client("iam", url, region)
    try:
        return str(iam.create_role(RoleName=name, AssumeRolePolicyDocument=TRUST)["Role"]["Arn"])
    except iam.exceptions.EntityAlreadyExistsException:
        return str(iam.get_role(RoleName=name)["Role"]["Arn"])


def eks_cluster(url: str | None, region: str, name: str, subnets: list[str]) -> None:
    _client("eks", url, region).create_cluster(
        name=name, roleArn=role(url, region, "eks-cluster"),
        resourcesVpcConfig={"subnetIds": subnets})


def eks_nodegroup(url: str | None, region: str, cluster: str, name: str, subnets: list[str],
                  **extra: Any) -> dict[str, Any]:
    """A managed node group (extra: instanceTypes, capacityType, scalingConfig, diskSize,
    launchTemplate, amiType, tags)."""
    answer = _client("eks", url, region).create_nodegroup(
        clusterName=cluster, nodegroupName=name, subnets=subnets,
        nodeRole=role(url, region, "eks-node"), **extra)
    return dict(answer["nodegroup"])


def batch_environment(url: str | None, region: str, name: str, subnets: list[str],
                      security_group: str, **resources: Any) -> str:
    """A managed compute environment (resources: type, instanceTypes, bidPercentage,
    allocationStrategy, maxvCpus, launchTemplate, …); no instance is started (0 vCPUs)."""
    iam = _client("iam", url, region)
    service_role = role(url, region, "batch-service")
    try:
        profile = iam.create_instance_profile(InstanceProfileName="ecs-instance")
        profile_arn = profile["InstanceProfile"]["Arn"]
    except iam.exceptions.EntityAlreadyExistsException:
        profile_arn = iam.get_instance_profile(
            InstanceProfileName="ecs-instance")["InstanceProfile"]["Arn"]
    compute = {"type": "EC2", "minvCpus": 0, "desiredvCpus": 0, "maxvCpus": 256,
               "instanceTypes": ["g5"], "subnets": subnets,
               "securityGroupIds": [security_group], "instanceRole": profile_arn, **resources}
    answer = _client("batch", url, region).create_compute_environment(
        computeEnvironmentName=name, type="MANAGED", state="ENABLED",
        computeResources=compute, serviceRole=service_role)
    return str(answer["computeEnvironmentArn"])


def hyperpod_cluster(url: str | None, region: str, name: str, subnets: list[str],
                     security_group: str, groups: list[dict[str, Any]]) -> str:
    """A HyperPod cluster; ``groups``: InstanceGroupName, InstanceType, InstanceCount and
    optionally InstanceStorageConfigs."""
    execution = role(url, region, "hyperpod-exec")
    specs = [{"ExecutionRole": execution, "ThreadsPerCore": 1,
              "LifeCycleConfig": {"SourceS3Uri": "s3://sagemaker-lifecycle/config/",
                                  "OnCreate": "on_create.sh"}, **g} for g in groups]
    answer = _client("sagemaker", url, region).create_cluster(
        ClusterName=name, InstanceGroups=specs,
        VpcConfig={"SecurityGroupIds": [security_group], "Subnets": subnets})
    return str(answer["ClusterArn"])
