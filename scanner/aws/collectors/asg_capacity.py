"""The desired capacity history of the region's Auto Scaling groups (COST-001): one
``telemetry.asg_capacity`` per group with data, from CloudWatch's AWS/AutoScaling
GroupDesiredCapacity (published only where the group's metrics collection is on), hourly over the
lookback window (``audit --lookback-days``, default 14, as the right-sizing reads).

A group without datapoints gets no record (COST-001: UNKNOWN, no history); a failed call leaves a
Gap (ERROR). At most ``MAX_GROUPS`` groups per region are read, ``QUERIES_PER_CALL`` series per
GetMetricData request (the API's limit is 500)."""

from __future__ import annotations

import datetime as dt

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.collectors.cloudwatch import SETTINGS, _now
from scanner.aws.normalize import make
from scanner.kinds.commitments import CAPACITY
from scanner.model import Resource

MAX_GROUPS = 500  # groups read per region; the rest get no record (UNKNOWN, said so)
QUERIES_PER_CALL = 500  # GetMetricData's limit of queries per request
HOUR = 3600


def _names(r: Resource) -> list[str]:
    """The Auto Scaling groups of a group (its name) or of an EKS managed node group."""
    if r.kind == "autoscaling.group":
        name = r.get("AutoScalingGroupName")
        return [name] if isinstance(name, str) and name else []
    if r.kind == "eks.nodegroup":
        res = r.get("Resources")
        groups = res.get("AutoScalingGroups") if isinstance(res, dict) else None
        return [g["Name"] for g in groups if isinstance(g, dict)
                and isinstance(g.get("Name"), str)] if isinstance(groups, list) else []
    return []


def run(ctx: RegionContext) -> None:
    from scanner.telemetry.cloudwatch import live_window

    groups = sorted({name for r in ctx.result.resources if r.scope == ctx.scope
                     for name in _names(r)})
    if len(groups) > MAX_GROUPS:
        ctx.notice(f"{ctx.scope}/asg_capacity", f"{len(groups)} Auto Scaling groups: the "
                   f"desired capacity of the first {MAX_GROUPS} only is read")
        groups = groups[:MAX_GROUPS]
    if not groups:
        return
    window = live_window(_now(), SETTINGS.lookback_days)
    start = dt.datetime.fromtimestamp(window.start, dt.UTC)
    end = dt.datetime.fromtimestamp(window.end, dt.UTC)
    queries = []
    for i, name in enumerate(groups):
        for stat in ("Minimum", "Maximum"):
            queries.append({"Id": f"{stat[:3].lower()}{i}", "ReturnData": True, "MetricStat": {
                "Metric": {"Namespace": "AWS/AutoScaling", "MetricName": "GroupDesiredCapacity",
                           "Dimensions": [{"Name": "AutoScalingGroupName", "Value": name}]},
                "Period": HOUR, "Stat": stat}})
    series: dict[str, list[float]] = {}
    for at in range(0, len(queries), QUERIES_PER_CALL):
        results = ctx.list("cloudwatch", "GetMetricData", "MetricDataResults",
                           MetricDataQueries=queries[at:at + QUERIES_PER_CALL],
                           StartTime=start, EndTime=end, ScanBy="TimestampAscending")
        if results is None:
            return  # recorded: an error and a Gap on the kind
        for item in results:
            values = item.get("Values") if isinstance(item, dict) else None
            if isinstance(item.get("Id"), str) and isinstance(values, list):
                series.setdefault(item["Id"], []).extend(
                    float(v) for v in values if isinstance(v, (int, float)))
    for i, name in enumerate(groups):
        lows, highs = series.get(f"min{i}", []), series.get(f"max{i}", [])
        if not lows or not highs:
            continue
        ctx.add(make(ctx, CAPACITY, f"capacity:{name}", {
            "Group": name, "Start": start.isoformat(), "End": end.isoformat(),
            "Hours": max(len(lows), len(highs)), "Base": min(lows), "Peak": max(highs)}))


COLLECTOR = Collector(
    name="asg_capacity",
    calls=(Call("cloudwatch", "GetMetricData", (CAPACITY,)),),
    run=run,
    after=("autoscaling", "eks"),
)
