"""Auto Scaling: groups, launch configurations, scaling policies, lifecycle hooks."""

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

GROUP_KIND = ("autoscaling.group",)
# A metric a scaling policy or alarm watches (CloudWatch's spelling).
DIMENSIONS = List(Obj({"Name": Str(), "Value": Str()}))
METRIC = {"MetricName": Str(), "Namespace": Str(), "Dimensions": DIMENSIONS}
METRIC_QUERIES = List(Obj({
    "Id": Str(), "Expression": Str(), "Label": Str(), "ReturnData": Bool(),
    "MetricStat": Obj({"Metric": Obj(METRIC), "Stat": Str(), "Unit": Str()}),
}), doc="metric math: the metrics it reads and the expression over them")
TARGET_TRACKING = Obj({
    "PredefinedMetricSpecification": Obj({"PredefinedMetricType": Str(),
                                          "ResourceLabel": Str()}),
    "CustomizedMetricSpecification": Obj({**METRIC, "Statistic": Str(), "Unit": Str(),
                                          "Metrics": METRIC_QUERIES}),
    "TargetValue": Num(),
    "DisableScaleIn": Bool(),
})
PREDICTIVE_SCALING = Obj({
    "Mode": Str(),
    "MetricSpecifications": List(Obj({
        "TargetValue": Num(),
        "PredefinedMetricPairSpecification": Obj({"PredefinedMetricType": Str()}),
        "PredefinedScalingMetricSpecification": Obj({"PredefinedMetricType": Str()}),
        "CustomizedScalingMetricSpecification": Obj({"MetricDataQueries": METRIC_QUERIES}),
    })),
})
LIFECYCLE_HOOK = {
    "LifecycleHookName": Str(),
    "LifecycleTransition": Str(doc="autoscaling:EC2_INSTANCE_LAUNCHING | "
                                   "autoscaling:EC2_INSTANCE_TERMINATING"),
    "DefaultResult": Str(),
    "HeartbeatTimeout": Int(),
    "NotificationTargetARN": Str(),
    "RoleARN": Str(),
}

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
            "LifecycleHookSpecificationList": List(Obj(LIFECYCLE_HOOK),
                                                   doc="Terraform: initial_lifecycle_hook"),
            "TargetTrackingConfiguration": Obj(
                TARGET_TRACKING.fields,
                doc="not a property of AWS::AutoScaling::AutoScalingGroup (CloudFormation "
                    "rejects it; it belongs on an AWS::AutoScaling::ScalingPolicy); read as "
                    "the group's scaler all the same"),
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
            "tag": ("value",),
            "initial_lifecycle_hook": ("lifecycle_transition",)}),),
        cloudformation=(CloudFormation("AWS::AutoScaling::AutoScalingGroup",
                                       name_property="AutoScalingGroupName"),),
        live="DescribeAutoScalingGroups",
        facts=(SPOT_PRICES.name,),
    ),
    Kind(
        name="autoscaling.scaling_policy",
        doc="an Auto Scaling scaling policy: target tracking, step, simple or predictive "
            "(step and simple policies are triggered by the CloudWatch alarms whose actions "
            "name them)",
        attributes={
            "AutoScalingGroupName": Ref(kinds=GROUP_KIND),
            "PolicyName": Str(),
            "PolicyType": Str(doc="absent = SimpleScaling"),
            "AdjustmentType": Str(),
            "ScalingAdjustment": Int(),
            "Enabled": Bool(),
            "StepAdjustments": AsGiven(),
            "TargetTrackingConfiguration": TARGET_TRACKING,
            "PredictiveScalingConfiguration": PREDICTIVE_SCALING,
            "Alarms": List(Obj({"AlarmName": Str(), "AlarmARN": Str()}),
                           doc="live: the alarms that trigger it"),
        },
        terraform=(Terraform("aws_autoscaling_policy", blocks={
            "target_tracking_configuration": ("target_value",),
            "predefined_metric_specification": ("predefined_metric_type",),
            "customized_metric_specification": ("metric_name", "namespace"),
            "metric_dimension": ("name", "value"),
            "metrics": ("id", "expression"),
            "metric_stat": ("stat",),
            "metric": ("metric_name", "namespace"),
            "predictive_scaling_configuration": ("mode",),
            "metric_specification": ("target_value",),
            "predefined_metric_pair_specification": ("predefined_metric_type",),
            "predefined_scaling_metric_specification": ("predefined_metric_type",),
            "customized_scaling_metric_specification": (),
            "metric_data_queries": ("id", "expression")}),),
        cloudformation=(CloudFormation("AWS::AutoScaling::ScalingPolicy"),),
        live="DescribePolicies",
    ),
    Kind(
        name="autoscaling.lifecycle_hook",
        doc="an Auto Scaling lifecycle hook (a group's own LifecycleHookSpecificationList "
            "is read on the group)",
        attributes={"AutoScalingGroupName": Ref(kinds=GROUP_KIND), **LIFECYCLE_HOOK},
        terraform=(Terraform("aws_autoscaling_lifecycle_hook"),),
        cloudformation=(CloudFormation("AWS::AutoScaling::LifecycleHook"),),
        live="DescribeLifecycleHooks (per group)",
    ),
)
