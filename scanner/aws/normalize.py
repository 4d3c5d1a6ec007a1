"""Shared helpers that turn API items into model Resources (tags, skips, ARNs, coercions)."""

from __future__ import annotations

import re
from typing import Any

from scanner.aws.collectors.base import RegionContext
from scanner.aws.secrets import scrub, scrub_text
from scanner.model import Provenance, Resource, Skip, SourceKind

SKIP_TAG = "gpuaudit:skip"
_POLICY_ID = re.compile(r"^[A-Z][A-Z0-9]*-\d{3}$")


def partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def ec2_arn(ctx: RegionContext, resource_type: str, resource_id: str) -> str:
    return (
        f"arn:{partition(ctx.region)}:ec2:{ctx.region}:{ctx.account}:{resource_type}/{resource_id}"
    )


def tags_of(items: Any) -> dict[str, str]:
    """AWS ``[{Key, Value}]`` tags (or a plain ``{key: value}`` map, as EKS and Batch give them)
    as a plain dict (credential-looking values redacted)."""
    if isinstance(items, dict):
        items = [{"Key": k, "Value": v} for k, v in items.items()]
    out: dict[str, str] = {}
    for item in items or []:
        if isinstance(item, dict) and "Key" in item:
            out[scrub_text(str(item["Key"]))] = scrub_text(str(item.get("Value") or ""))
    return out


def parse_skips(value: str, where: str) -> tuple[list[Skip], list[str]]:
    """``EBS-001:reason;SPOT-001:reason`` → skips, plus a message for every unusable entry."""
    skips: list[Skip] = []
    problems: list[str] = []
    for raw in re.split(r"[;\n]", value):
        entry = raw.strip()
        if not entry:
            continue
        policy, sep, reason = entry.partition(":")
        policy, reason = policy.strip().upper(), reason.strip()
        if not _POLICY_ID.match(policy):
            problems.append(f"{where}: '{entry}' is not POLICY-ID:reason; ignored")
        elif not sep or not reason:
            problems.append(
                f"{where}: skip of {policy} has no reason; a reason is required, ignored"
            )
        else:
            skips.append(Skip(policy_id=policy, reason=reason, by=f"tag {SKIP_TAG}"))
    return skips, problems


def to_int(value: Any) -> Any:
    """``"2"`` → 2, ``2.0`` → 2; anything else is returned unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value.strip())
    return value


def make(
    ctx: RegionContext,
    kind: str,
    rid: str,
    attrs: dict[str, Any],
    *,
    tags: dict[str, str] | None = None,
    name: str | None = None,
    arn: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Resource:
    """A live Resource: scrubbed attributes, tags, name, aliases, skips from the skip tag."""
    tags = dict(tags or {})
    if name is None:
        name = tags.get("Name") or None
    skips: list[Skip] = []
    if SKIP_TAG in tags:
        skips, problems = parse_skips(tags[SKIP_TAG], f"tag {SKIP_TAG}")
        for problem in problems:
            ctx.notice(rid, problem)
    names: list[str] = []
    for alias in (rid, name, arn, *aliases):
        if alias and alias not in names:
            names.append(alias)
    return Resource(
        kind=kind,
        id=rid,
        attrs=scrub(attrs),
        provenance=Provenance(SourceKind.AWS, account=ctx.account, region=ctx.region, arn=arn),
        scope=ctx.scope,
        name=name,
        tags=tags,
        aliases=tuple(names),
        skips=tuple(skips),
        declared=False,
    )


def without(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in keys}


def pascal_keys(value: Any, keep: frozenset[str] = frozenset({"tags", "labels"})) -> Any:
    """A camelCase API answer (EKS, Batch) with the model's PascalCase keys
    (``scalingConfig.desiredSize`` -> ``ScalingConfig.DesiredSize``); the values of ``keep``
    (user maps: tags, labels) are left as they are."""
    if isinstance(value, dict):
        return {(k[:1].upper() + k[1:] if isinstance(k, str) else k):
                (v if k in keep else pascal_keys(v, keep)) for k, v in value.items()}
    if isinstance(value, list):
        return [pascal_keys(v, keep) for v in value]
    return value
