"""CloudWatch metric alarms (DescribeAlarms): what triggers step and simple scaling policies.
Composite alarms are not read (they cannot trigger a scaling policy)."""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make, without
from scanner.model import Resource

ALARM = "cloudwatch.metric_alarm"


def run(ctx: RegionContext) -> None:
    ctx.lists("cloudwatch", ("DescribeAlarms", "MetricAlarms", alarm))


def alarm(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    name = str(item["AlarmName"])
    attrs = without(item, "StateReason", "StateReasonData", "StateUpdatedTimestamp",
                    "AlarmConfigurationUpdatedTimestamp", "StateTransitionedTimestamp")
    return make(ctx, ALARM, name, attrs, name=name, arn=item.get("AlarmArn"))


COLLECTOR = Collector(
    name="alarms",
    calls=(Call("cloudwatch", "DescribeAlarms", (ALARM,)),),
    run=run,
)
