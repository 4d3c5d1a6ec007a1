"""CloudWatch: metric alarms (what triggers a step or simple scaling policy)."""

from __future__ import annotations

from scanner.kinds.autoscaling import DIMENSIONS, METRIC_QUERIES
from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import Bool, Ids, Str

KINDS = (
    Kind(
        name="cloudwatch.metric_alarm",
        doc="a CloudWatch metric alarm; its AlarmActions name the scaling policies it triggers",
        attributes={
            "AlarmName": Str(),
            "MetricName": Str(),
            "Namespace": Str(),
            "Statistic": Str(),
            "Dimensions": DIMENSIONS,
            "Metrics": METRIC_QUERIES,
            "AlarmActions": Ids(kinds=("autoscaling.scaling_policy",),
                                doc="ARNs (a Ref in IaC) of what the alarm triggers"),
            "OKActions": Ids(),
            "ActionsEnabled": Bool(),
        },
        terraform=(Terraform("aws_cloudwatch_metric_alarm", blocks={
            "metric_query": ("id", "expression"),
            "metric": ("metric_name", "namespace")}),),
        cloudformation=(CloudFormation("AWS::CloudWatch::Alarm", name_property="AlarmName"),),
        live="DescribeAlarms",
    ),
)
