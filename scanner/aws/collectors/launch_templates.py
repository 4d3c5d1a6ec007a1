"""EC2 launch templates with the data of their default and latest versions.

Two paginated walks per region: the templates, and the ``$Default`` + ``$Latest`` versions of
every template in one DescribeLaunchTemplateVersions call (no per-template calls). The model's
``LaunchTemplateData`` is the default version's; ``LatestLaunchTemplateData`` is added when the
latest version differs (what an ASG pinned to ``$Latest`` launches). User data is never kept.
"""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import ec2_arn, make, tags_of
from scanner.model import Resource, Unknown

LAUNCH_TEMPLATE = "ec2.launch_template"


def run(ctx: RegionContext) -> None:
    templates = ctx.list("ec2", "DescribeLaunchTemplates", "LaunchTemplates")
    if templates is None:
        return
    versions = ctx.list(
        "ec2",
        "DescribeLaunchTemplateVersions",
        "LaunchTemplateVersions",
        Versions=["$Default", "$Latest"],
    )
    by_template: dict[str, dict[int, dict[str, Any]]] = {}
    for v in versions or []:
        by_template.setdefault(str(v.get("LaunchTemplateId")), {})[int(v["VersionNumber"])] = v
    for item in templates:
        ctx.add(
            template(
                ctx,
                item,
                None if versions is None else by_template.get(str(item["LaunchTemplateId"]), {}),
            )
        )


def template(
    ctx: RegionContext, item: dict[str, Any], versions: dict[int, dict[str, Any]] | None
) -> Resource:
    ltid = str(item["LaunchTemplateId"])
    name = str(item.get("LaunchTemplateName") or "") or None
    attrs: dict[str, Any] = {
        "LaunchTemplateId": ltid,
        "LaunchTemplateName": name,
        "DefaultVersionNumber": item.get("DefaultVersionNumber"),
        "LatestVersionNumber": item.get("LatestVersionNumber"),
        "CreateTime": item.get("CreateTime"),
    }
    if versions is None:
        attrs["LaunchTemplateData"] = Unknown("the launch template versions could not be read")
    else:
        default = _pick(versions, item.get("DefaultVersionNumber"), want_default=True)
        latest = _pick(versions, item.get("LatestVersionNumber"), want_default=False)
        if default is None:
            attrs["LaunchTemplateData"] = Unknown("the default version was not returned")
        else:
            attrs["LaunchTemplateData"] = default.get("LaunchTemplateData") or {}
        if latest is not None and latest is not default:
            attrs["LatestLaunchTemplateData"] = latest.get("LaunchTemplateData") or {}
    return make(
        ctx,
        LAUNCH_TEMPLATE,
        ltid,
        attrs,
        tags=tags_of(item.get("Tags")),
        name=name,
        arn=ec2_arn(ctx, "launch-template", ltid),
    )


def _pick(
    versions: dict[int, dict[str, Any]], number: Any, *, want_default: bool
) -> dict[str, Any] | None:
    if isinstance(number, int) and number in versions:
        return versions[number]
    if want_default:
        return next((v for v in versions.values() if v.get("DefaultVersion")), None)
    return versions[max(versions)] if versions else None


COLLECTOR = Collector(
    name="launch_templates",
    calls=(
        Call("ec2", "DescribeLaunchTemplates", (LAUNCH_TEMPLATE,)),
        Call("ec2", "DescribeLaunchTemplateVersions", (LAUNCH_TEMPLATE,)),
    ),
    run=run,
)
