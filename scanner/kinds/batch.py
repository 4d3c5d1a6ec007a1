"""AWS Batch: compute environments (their EC2 or Spot compute resources)."""

from __future__ import annotations

from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.shapes import SUBNET
from scanner.kinds.types import AsGiven, Ids, Int, List, Obj, Ref, Str

TEMPLATE = ("ec2.launch_template",)

KINDS = (
    Kind(
        name="batch.compute_environment",
        doc="an AWS Batch compute environment",
        attributes={
            "ComputeEnvironmentName": Str(),
            "Type": Str(doc="MANAGED or UNMANAGED"),
            "State": Str(doc="ENABLED or DISABLED"),
            "ServiceRole": Str(),
            "ComputeResources": Obj({
                "Type": Str(doc="EC2, SPOT, FARGATE or FARGATE_SPOT"),
                "AllocationStrategy": Str(doc="BEST_FIT (absent), BEST_FIT_PROGRESSIVE, "
                                              "SPOT_CAPACITY_OPTIMIZED, "
                                              "SPOT_PRICE_CAPACITY_OPTIMIZED"),
                "BidPercentage": Int(doc="spot max price as a % of on-demand; absent = 100"),
                "MinvCpus": Int(),
                "MaxvCpus": Int(),
                "DesiredvCpus": Int(),
                "InstanceTypes": List(Str(), doc="types, families (p4d) or optimal"),
                "Subnets": Ids(kinds=SUBNET),
                "SecurityGroupIds": Ids(),
                "LaunchTemplate": Obj({"LaunchTemplateId": Ref(kinds=TEMPLATE),
                                       "LaunchTemplateName": Ref(kinds=TEMPLATE),
                                       "Version": Str()}),
                "Ec2Configuration": AsGiven(),
                "InstanceRole": Str(),
                "ImageId": Str(),
                "PlacementGroup": Str(),
                "SpotIamFleetRole": Str(),
                "Ec2KeyPair": Str(),
            }),
            "EcsClusterArn": Str(doc="live"),
            "Status": Str(doc="live"),
        },
        terraform=(Terraform("aws_batch_compute_environment", blocks={
            "compute_resources": ("type", "allocation_strategy", "bid_percentage", "max_vcpus",
                                  "instance_type", "subnets"),
            "launch_template": ("launch_template_id", "launch_template_name")},
            note="compute_resources becomes ComputeResources, instance_type InstanceTypes"),),
        cloudformation=(CloudFormation("AWS::Batch::ComputeEnvironment",
                                       name_property="ComputeEnvironmentName"),),
        live="DescribeComputeEnvironments (camelCase keys become PascalCase)",
    ),
)
