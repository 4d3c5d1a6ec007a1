"""EC2 compute: instances, launch templates, spot requests, spot fleets, EC2 fleets."""

from __future__ import annotations

from scanner.kinds.facts import SPOT_PRICES
from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.shapes import (
    BLOCK_DEVICE_MAPPINGS,
    CAPACITY_RESERVATION,
    INSTANCE_REQUIREMENTS,
    INSTANCE_SPECIFICATION,
    LAUNCH_TEMPLATE_SPECIFICATION,
    MARKET_OPTIONS,
    NETWORK_INTERFACES,
    SUBNET,
    TEMPLATE_CONFIGS,
    TERRAFORM_DEVICE_BLOCKS,
    TERRAFORM_LAUNCH_TEMPLATE_BLOCK,
    TERRAFORM_MARKET_BLOCKS,
    TERRAFORM_RESERVATION_BLOCKS,
)
from scanner.kinds.types import AsGiven, Bool, Ids, Int, List, Num, Obj, Price, Ref, Str

_TEMPLATE_DATA = Obj({
    "InstanceType": Str(),
    "ImageId": Str(),
    "KeyName": Str(),
    "SecurityGroupIds": Ids(),
    "SecurityGroups": Ids(),
    "EbsOptimized": Bool(),
    "BlockDeviceMappings": BLOCK_DEVICE_MAPPINGS,
    "InstanceMarketOptions": MARKET_OPTIONS,
    "CapacityReservationSpecification": CAPACITY_RESERVATION,
    "NetworkInterfaces": NETWORK_INTERFACES,
    "IamInstanceProfile": Obj({"Arn": Str(), "Name": Str()}),
    "Placement": Obj({"AvailabilityZone": Str(), "GroupName": Str(), "Tenancy": Str()}),
    "InstanceRequirements": INSTANCE_REQUIREMENTS,
})

_SPOT_FLEET_SPECIFICATION = Obj({
    "InstanceType": Str(),
    "ImageId": Str(),
    "SubnetId": Ref(kinds=SUBNET),
    "AvailabilityZone": Str(),
    "SpotPrice": Price(),
    "WeightedCapacity": Num(),
    "AssociatePublicIpAddress": Bool(),
    "KeyName": Str(),
    "IamInstanceProfile": AsGiven(),
    "SecurityGroupIds": Ids(),
    "SecurityGroups": Ids(),
    "EbsOptimized": Bool(),
    "BlockDeviceMappings": BLOCK_DEVICE_MAPPINGS,
    "NetworkInterfaces": NETWORK_INTERFACES,
})

# A fleet's capacity rebalancing (SPOT-003): a replacement launched on a rebalance
# recommendation ("launch", "launch-before-terminate").
_MAINTENANCE = Obj({"CapacityRebalance": Obj({"ReplacementStrategy": Str(),
                                              "TerminationDelay": Int()})})

KINDS = (
    Kind(
        name="ec2.instance",
        doc="an EC2 instance",
        attributes={
            **INSTANCE_SPECIFICATION,
            "PublicIpAddress": Str(doc="live"),
            "State": Str(doc="live: running, stopped, …"),
            "InstanceLifecycle": Str(doc='live: "spot"'),
            "AutoScalingGroupName": Ref(kinds=("autoscaling.group",), doc="live"),
        },
        terraform=(Terraform("aws_instance", blocks={
            **TERRAFORM_DEVICE_BLOCKS, **TERRAFORM_MARKET_BLOCKS,
            **TERRAFORM_LAUNCH_TEMPLATE_BLOCK, "network_interface": ("network_interface_id",)},
            note="root_block_device becomes the mapping named \"root\", first"),),
        cloudformation=(CloudFormation("AWS::EC2::Instance"),),
        live="DescribeInstances",
    ),
    Kind(
        name="ec2.launch_template",
        doc="an EC2 launch template (its default version)",
        attributes={
            "LaunchTemplateName": Str(),
            "LaunchTemplateId": Str(doc="live"),
            "DefaultVersionNumber": Int(),
            "LatestVersionNumber": Int(),
            "LaunchTemplateData": _TEMPLATE_DATA,
            "LatestLaunchTemplateData": Obj(dict(_TEMPLATE_DATA.fields),
                                            doc="live, when $Latest differs"),
        },
        terraform=(Terraform("aws_launch_template", blocks={
            "block_device_mappings": ("device_name",),
            "ebs": ("encrypted", "kms_key_id", "snapshot_id"),
            "network_interfaces": ("associate_public_ip_address", "subnet_id"),
            **TERRAFORM_MARKET_BLOCKS, **TERRAFORM_RESERVATION_BLOCKS,
            "instance_requirements": ("accelerator_types", "accelerator_manufacturers",
                                      "accelerator_names", "allowed_instance_types"),
            "accelerator_count": ("min", "max")}),),
        cloudformation=(CloudFormation("AWS::EC2::LaunchTemplate",
                                       name_property="LaunchTemplateName"),),
        live="DescribeLaunchTemplates, DescribeLaunchTemplateVersions",
        facts=(SPOT_PRICES.name,),
    ),
    Kind(
        name="ec2.spot_request",
        doc="a spot instance request",
        attributes={
            "SpotPrice": Price(),
            "Type": Str(),
            "InstanceCount": Int(doc="Terraform: 1"),
            "InstanceInterruptionBehavior": Str(),
            "ValidUntil": Str(),
            "LaunchGroup": Str(),
            "BlockDurationMinutes": Int(),
            "LaunchSpecification": Obj(dict(INSTANCE_SPECIFICATION)),
        },
        terraform=(Terraform("aws_spot_instance_request", blocks={
            **TERRAFORM_DEVICE_BLOCKS, **TERRAFORM_MARKET_BLOCKS,
            **TERRAFORM_LAUNCH_TEMPLATE_BLOCK, "network_interface": ("network_interface_id",)},
            note="the instance arguments go into LaunchSpecification"),),
        live="DescribeSpotInstanceRequests",
        facts=(SPOT_PRICES.name,),
    ),
    Kind(
        name="ec2.spot_fleet",
        doc="a spot fleet request",
        attributes={
            "SpotFleetRequestConfig": Obj({
                "SpotPrice": Price(),
                "TargetCapacity": Int(),
                "OnDemandTargetCapacity": Int(),
                "AllocationStrategy": Str(),
                "OnDemandAllocationStrategy": Str(),
                "Type": Str(),
                "IamFleetRole": Str(),
                "InstancePoolsToUseCount": Int(),
                "InstanceInterruptionBehavior": Str(),
                "ValidUntil": Str(),
                "LaunchSpecifications": List(_SPOT_FLEET_SPECIFICATION),
                "LaunchTemplateConfigs": TEMPLATE_CONFIGS,
                "SpotMaintenanceStrategies": _MAINTENANCE,
            }),
        },
        terraform=(Terraform("aws_spot_fleet_request", blocks={
            **TERRAFORM_DEVICE_BLOCKS,
            "launch_specification": ("instance_type", "subnet_id", "spot_price",
                                     "associate_public_ip_address"),
            "launch_template_config": (),
            "launch_template_specification": ("launch_template_id", "launch_template_name"),
            "overrides": ("instance_type", "spot_price", "subnet_id", "weighted_capacity")}),),
        cloudformation=(CloudFormation(
            "AWS::EC2::SpotFleet",
            renames={"SpotFleetRequestConfigData": "SpotFleetRequestConfig"}),),
        live="DescribeSpotFleetRequests",
        facts=(SPOT_PRICES.name,),
    ),
    Kind(
        name="ec2.fleet",
        doc="an EC2 Fleet",
        attributes={
            "Type": Str(),
            "TargetCapacitySpecification": Obj({
                "TotalTargetCapacity": Int(),
                "OnDemandTargetCapacity": Int(),
                "SpotTargetCapacity": Int(),
                "DefaultTargetCapacityType": Str(),
                "TargetCapacityUnitType": Str(),
            }),
            "SpotOptions": Obj({"AllocationStrategy": Str(),
                                "InstanceInterruptionBehavior": Str(),
                                "InstancePoolsToUseCount": Int(),
                                "MaintenanceStrategies": _MAINTENANCE}),
            "OnDemandOptions": Obj({"AllocationStrategy": Str()}),
            "LaunchTemplateConfigs": TEMPLATE_CONFIGS,
        },
        terraform=(Terraform("aws_ec2_fleet", blocks={
            "launch_template_config": (),
            "launch_template_specification": ("launch_template_id", "launch_template_name"),
            "override": ("instance_type", "weighted_capacity", "max_price", "subnet_id")}),),
        cloudformation=(CloudFormation("AWS::EC2::EC2Fleet"),),
        live="DescribeFleets",
        facts=(SPOT_PRICES.name,),
    ),
)

__all__ = ["KINDS", "LAUNCH_TEMPLATE_SPECIFICATION"]
