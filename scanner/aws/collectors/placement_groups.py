"""EC2 placement groups of the region (NET-001 reads their strategy): one DescribePlacementGroups
call (it does not paginate). A group's id is its name, which is how Auto Scaling groups,
instances and launch templates name it; its ``GroupId`` is an alias."""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import ec2_arn, make, tags_of
from scanner.model import Resource

PLACEMENT_GROUP = "ec2.placement_group"


def run(ctx: RegionContext) -> None:
    ctx.lists("ec2", ("DescribePlacementGroups", "PlacementGroups", placement_group))


def placement_group(ctx: RegionContext, item: dict[str, Any]) -> Resource | None:
    name = item.get("GroupName")
    if not isinstance(name, str) or not name:
        return None
    attrs = {k: item[k] for k in ("GroupName", "Strategy", "PartitionCount", "SpreadLevel")
             if k in item}
    group_id = item.get("GroupId")
    return make(ctx, PLACEMENT_GROUP, name, attrs, tags=tags_of(item.get("Tags")), name=name,
                arn=item.get("GroupArn") or (ec2_arn(ctx, "placement-group", name)),
                aliases=(group_id,) if isinstance(group_id, str) else ())


COLLECTOR = Collector(
    name="placement_groups",
    calls=(Call("ec2", "DescribePlacementGroups", (PLACEMENT_GROUP,)),),
    run=run,
)
