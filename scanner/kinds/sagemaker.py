"""Amazon SageMaker HyperPod: clusters of instance groups (their instances and EBS volumes
live in a service account; the cluster's configuration is all an account shows of them)."""

from __future__ import annotations

from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.shapes import INSTANCE_REQUIREMENTS, SUBNET
from scanner.kinds.types import AsGiven, Bool, Ids, Int, List, Obj, Str

VPC_CONFIG = Obj({"SecurityGroupIds": Ids(), "Subnets": Ids(kinds=SUBNET)})

INSTANCE_GROUP = Obj({
    "InstanceGroupName": Str(),
    "InstanceType": Str(doc='a SageMaker type, "ml.p5.48xlarge"'),
    "InstanceRequirements": INSTANCE_REQUIREMENTS,
    "InstanceCount": Int(doc="IaC: the count asked for"),
    "TargetCount": Int(doc="live"),
    "CurrentCount": Int(doc="live"),
    "InstanceStorageConfigs": List(Obj({
        "EbsVolumeConfig": Obj({
            "VolumeSizeInGB": Int(),
            "VolumeKmsKeyId": Str(doc="absent: an AWS owned key"),
            "RootVolume": Bool(doc="true: the root volume's key"),
        }),
    }), doc="EBS volumes: always encrypted by HyperPod"),
    "OverrideVpcConfig": VPC_CONFIG,
    "ExecutionRole": Str(),
    "ThreadsPerCore": Int(),
    "LifeCycleConfig": AsGiven(),
    "TrainingPlanArn": Str(),
})

KINDS = (
    Kind(
        name="sagemaker.cluster",
        doc="a SageMaker HyperPod cluster",
        attributes={
            "ClusterName": Str(),
            "InstanceGroups": List(INSTANCE_GROUP),
            "RestrictedInstanceGroups": List(INSTANCE_GROUP),
            "VpcConfig": VPC_CONFIG,
            "Orchestrator": AsGiven(),
            "NodeRecovery": Str(),
            "ClusterStatus": Str(doc="live"),
        },
        terraform=(Terraform("awscc_sagemaker_cluster",
                             note="the awscc provider's spelling of AWS::SageMaker::Cluster: "
                                  "snake_case attributes, nested objects; the AWS provider has "
                                  "no HyperPod resource"),),
        cloudformation=(CloudFormation("AWS::SageMaker::Cluster", name_property="ClusterName"),),
        live="ListClusters, DescribeCluster",
    ),
)
