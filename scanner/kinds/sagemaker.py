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

# The awscc provider's nested objects (attributes, not blocks) and the members policies read
# in them: a plan leaves out a member known only after apply (it writes the others, null when
# unset), so an absent one is unknown.
_TF_VPC = ("security_group_ids", "subnets")
TERRAFORM_OBJECTS = {
    "vpc_config": _TF_VPC,
    "override_vpc_config": _TF_VPC,
    "instance_groups": ("instance_type", "instance_count", "instance_storage_configs"),
    "restricted_instance_groups": ("instance_type", "instance_count",
                                   "instance_storage_configs"),
    "instance_storage_configs": ("ebs_volume_config",),
    "ebs_volume_config": ("volume_kms_key_id", "root_volume"),
}

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
        terraform=(Terraform("awscc_sagemaker_cluster", blocks=TERRAFORM_OBJECTS,
                             note="the awscc provider's spelling of AWS::SageMaker::Cluster: "
                                  "snake_case attributes, nested objects; the AWS provider has "
                                  "no HyperPod resource"),),
        cloudformation=(CloudFormation("AWS::SageMaker::Cluster", name_property="ClusterName"),),
        live="ListClusters, DescribeCluster",
    ),
)
