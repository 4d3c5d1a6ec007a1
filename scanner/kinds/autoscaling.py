"""Auto Scaling: groups, launch configurations, scaling policies."""

from __future__ import annotations

from scanner.kinds.facts import SPOT_PRICES
from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.shapes import (
    BLOCK_DEVICE_MAPPINGS,
    INSTANCE_REQUIREMENTS,
    LAUNCH_TEMPLATE_SPECIFICATION,
    SUBNET,
    TERRAFORM_DEVICE_BLOCKS,
)
from scanner.kinds.types import AsGiven, Bool, Ids, Int, List, Num, Obj, Price, Ref, Str

KINDS = (
    Kind(
        name="autoscaling.launch_configuration",
        doc="an Auto Scaling launch configuration",
        attributes={
            "LaunchConfigurationName": Str(),
            "InstanceType": Str(),
            "ImageId": Str(),
            "SpotPrice": Price(),
            "AssociatePublicIpAddress": Bool(),
            "KeyName": Str(),
            "IamInstanceProfile": AsGiven(),
            "SecurityGroups": Ids(),
            "EbsOptimized": Bool(),
            "BlockDeviceMappings": BLOCK_DEVICE_MAPPINGS,
        },
        terraform=(Terraform("aws_launch_configuration", blocks=TERRAFORM_DEVICE_BLOCKS),),
        cloudformation=(CloudFormation("AWS::AutoScaling::LaunchConfiguration",
                                       name_property="LaunchConfigurationName"),),
        live="DescribeLaunchConfigurations",
        facts=(SPOT_PRICES.name,),
    ),
    Kind(
        name="autoscaling.group",
        doc="an Auto Scaling group",
        attributes={
            "AutoScalingGroupName": Str(),
            "MinSize": Int(),
            "MaxSize": Int(),
            "DesiredCapacity": Int(),
            "VPCZoneIdentifier": Ids(kinds=SUBNET, doc='live "a,b" becomes a list'),
            "AvailabilityZones": Ids(),
            "LaunchConfigurationName": Ref(kinds=("autoscaling.launch_configuration",)),
            "LaunchTemplate": LAUNCH_TEMPLATE_SPECIFICATION,
            "MixedInstancesPolicy": Obj({
                "InstancesDistribution": Obj({
                    "OnDemandAllocationStrategy": Str(),
                    "OnDemandBaseCapacity": Int(),
                    "OnDemandPercentageAboveBaseCapacity": Int(),
                    "SpotAllocationStrategy": Str(doc="absent = lowest-price"),
                    "SpotInstancePools": Int(),
                    "SpotMaxPrice": Price(doc='"" = cap at on-demand, set explicitly'),
                }),
                "LaunchTemplate": Obj({
                    "LaunchTemplateSpecification": LAUNCH_TEMPLATE_SPECIFICATION,
                    "Overrides": List(Obj({
                        "InstanceType": Str(),
                        "WeightedCapacity": Num(),
                        "LaunchTemplateSpecification": LAUNCH_TEMPLATE_SPECIFICATION,
                        "InstanceRequirements": INSTANCE_REQUIREMENTS,
                    })),
                }),
            }),
            "CapacityReservationSpecification": Obj({
                "CapacityReservationPreference": Str(
                    doc="default, none, capacity-reservations-only, capacity-reservations-first"),
                "CapacityReservationTarget": Obj({
                    "CapacityReservationIds": Ids(),
                    "CapacityReservationResourceGroupArns": Ids(),
                }),
            }, doc="a target is a reservation held ahead (docs/purchase-options.md)"),
            "CapacityRebalance": Bool(),
            "PlacementGroup": Ref(kinds=("ec2.placement_group",), doc="NET-001"),
            "HealthCheckType": Str(),
            "TargetGroupARNs": Ids(),
            "DefaultCooldown": Int(doc="live"),
            "Instances": List(Obj({"InstanceId": Str(), "InstanceType": Str(),
                                   "AvailabilityZone": Str(), "LifecycleState": Str(),
                                   "WeightedCapacity": Num()}), doc="live"),
        },
        terraform=(Terraform("aws_autoscaling_group", blocks={
            "launch_template": ("id", "name"),
            "mixed_instances_policy": (),
            "instances_distribution": ("on_demand_base_capacity",
                                       "on_demand_percentage_above_base_capacity",
                                       "spot_allocation_strategy", "spot_max_price"),
            "launch_template_specification": ("launch_template_id", "launch_template_name"),
            "override": ("instance_type", "weighted_capacity"),
            "instance_requirements": ("accelerator_types", "accelerator_manufacturers",
                                      "accelerator_names", "allowed_instance_types"),
            "accelerator_count": ("min", "max"),
            "capacity_reservation_specification": ("capacity_reservation_preference",),
            "capacity_reservation_target": ("capacity_reservation_ids",
                                            "capacity_reservation_resource_group_arns"),
            "tag": ("value",)}),),
        cloudformation=(CloudFormation("AWS::AutoScaling::AutoScalingGroup",
                                       name_property="AutoScalingGroupName"),),
        live="DescribeAutoScalingGroups",
        facts=(SPOT_PRICES.name,),
    ),
    Kind(
        name="autoscaling.scaling_policy",
        doc="an Auto Scaling scaling policy (live; read by no policy yet)",
        attributes={"AutoScalingGroupName": Ref(kinds=("autoscaling.group",)),
                    "PolicyName": Str(), "PolicyType": Str()},
        live="DescribePolicies",
    ),
)
