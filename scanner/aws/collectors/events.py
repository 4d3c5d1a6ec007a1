"""Amazon EventBridge rules of the default bus (ListRules) and, for the rules whose pattern may
match EC2's events, their targets (ListTargetsByRule, a few at a time). A rule whose targets
were not read keeps ``Targets`` absent when it cannot match EC2's events (a schedule, another
service's source), so no verdict leans on it."""

from __future__ import annotations

import json
from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make
from scanner.model import Resource, Unknown

RULE = "events.rule"
EC2 = "aws.ec2"


def run(ctx: RegionContext) -> None:
    from scanner.aws.collectors.eks import each

    rules = ctx.list("events", "ListRules", "Rules")
    if rules is None:
        return
    items = [r for r in rules if isinstance(r, dict) and r.get("Name")]
    wanted = [r for r in items if may_match_ec2(r.get("EventPattern"))]
    answers = each(wanted, lambda r: ctx.list("events", "ListTargetsByRule", "Targets",
                                              Rule=r["Name"]))
    targets = {id(r): a for r, a in zip(wanted, answers, strict=True)}
    for item in items:
        found = targets.get(id(item), False)
        ctx.add(rule(ctx, item, found))


def may_match_ec2(pattern: Any) -> bool:
    """A pattern that names no source, or names aws.ec2 anywhere in its text (or does not
    parse): its targets are read."""
    if not isinstance(pattern, str) or not pattern:
        return False  # a scheduled rule
    try:
        doc = json.loads(pattern)
    except ValueError:
        return True
    return not isinstance(doc, dict) or "source" not in doc or EC2 in pattern


def rule(ctx: RegionContext, item: dict[str, Any], targets: Any) -> Resource:
    name = str(item["Name"])
    attrs: dict[str, Any] = {k: item[k] for k in ("Name", "State", "EventBusName",
                                                 "ScheduleExpression") if k in item}
    raw = item.get("EventPattern")
    if isinstance(raw, str) and raw:
        try:
            attrs["EventPattern"] = json.loads(raw)
        except ValueError:
            attrs["EventPattern"] = Unknown("its event pattern is not valid JSON")
    if targets is None:  # ListTargetsByRule failed: recorded as an error and a gap
        attrs["Targets"] = Unknown("ListTargetsByRule failed")
    elif targets is not False:
        attrs["Targets"] = [{"Id": t.get("Id"), "Arn": t.get("Arn")} for t in targets
                            if isinstance(t, dict)]
    return make(ctx, RULE, name, attrs, name=name, arn=item.get("Arn"))


COLLECTOR = Collector(
    name="events",
    calls=(
        Call("events", "ListRules", (RULE,)),
        Call("events", "ListTargetsByRule", (RULE,)),
    ),
    run=run,
)
