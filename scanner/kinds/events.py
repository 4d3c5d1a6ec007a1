"""Amazon EventBridge: rules and their targets (what handles EC2's spot interruption warnings
and rebalance recommendations)."""

from __future__ import annotations

from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import Json, List, Obj, Ref, Str

TARGET = {"Id": Str(), "Arn": Str()}

KINDS = (
    Kind(
        name="events.rule",
        doc="an EventBridge rule (on the default event bus unless EventBusName says another)",
        attributes={
            "Name": Str(),
            "EventPattern": Json(),
            "ScheduleExpression": Str(),
            "State": Str(doc="ENABLED (the default) | DISABLED | "
                             "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS"),
            "EventBusName": Str(),
            "Targets": List(Obj(TARGET), doc="CloudFormation: inline; live: ListTargetsByRule"),
        },
        terraform=(Terraform("aws_cloudwatch_event_rule", note="is_enabled = false becomes "
                             "State DISABLED"),),
        cloudformation=(CloudFormation("AWS::Events::Rule", name_property="Name"),),
        live="ListRules, ListTargetsByRule",
    ),
    Kind(
        name="events.target",
        doc="an EventBridge rule's target declared on its own (Terraform "
            "aws_cloudwatch_event_target; CloudFormation and live give a rule's Targets)",
        attributes={"Rule": Ref(kinds=("events.rule",)), "EventBusName": Str(), **TARGET},
        terraform=(Terraform("aws_cloudwatch_event_target"),),
    ),
)
