"""Amazon EKS: managed node groups (the Auto Scaling group EKS creates for one is its own
business: live, it is judged at the node group, see scanner.compute.ownership)."""

from __future__ import annotations

from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.shapes import SUBNET
from scanner.kinds.types import AsGiven, Ids, Int, List, Obj, Ref, Str

TEMPLATE = ("ec2.launch_template",)

KINDS = (
    Kind(
        name="eks.nodegroup",
        doc="an EKS managed node group",
        attributes={
            "NodegroupName": Str(),
            "ClusterName": Str(),
            "InstanceTypes": List(Str(), doc="absent: the launch template's, else t3.medium"),
            "CapacityType": Str(doc="ON_DEMAND (absent), SPOT or CAPACITY_BLOCK"),
            "AmiType": Str(doc="AL2_x86_64_GPU, AL2023_x86_64_NVIDIA, …: a GPU AMI"),
            "ScalingConfig": Obj({"MinSize": Int(), "MaxSize": Int(), "DesiredSize": Int()}),
            "Subnets": Ids(kinds=SUBNET),
            "DiskSize": Int(doc="GiB of the node volume when there is no launch template"),
            "LaunchTemplate": Obj({"Id": Ref(kinds=TEMPLATE), "Name": Ref(kinds=TEMPLATE),
                                   "Version": Str()}),
            "RemoteAccess": Obj({"Ec2SshKey": Str(), "SourceSecurityGroups": Ids()},
                                doc="SSH: without source security groups, port 22 is open "
                                    "to 0.0.0.0/0 (no policy judges it yet)"),
            "NodeRole": Str(),
            "Labels": AsGiven(),
            "Taints": AsGiven(),
            "Version": Str(),
            "ReleaseVersion": Str(),
            "Status": Str(doc="live"),
            "Resources": Obj({
                "AutoScalingGroups": List(Obj({"Name": Ref(kinds=("autoscaling.group",))})),
                "RemoteAccessSecurityGroup": Str(),
            }, doc="live: the Auto Scaling group EKS runs the nodes in"),
        },
        terraform=(Terraform("aws_eks_node_group", blocks={
            "scaling_config": ("desired_size", "min_size", "max_size"),
            "launch_template": ("id", "name"),
            "remote_access": ("ec2_ssh_key", "source_security_group_ids")},
            note="subnet_ids becomes Subnets, scaling_config ScalingConfig"),),
        cloudformation=(CloudFormation("AWS::EKS::Nodegroup", name_property="NodegroupName"),),
        live="ListClusters, ListNodegroups, DescribeNodegroup (camelCase keys become PascalCase)",
    ),
)
