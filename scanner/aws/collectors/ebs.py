"""EBS: volumes, and the account/region defaults (encryption by default, default KMS key)."""

from __future__ import annotations

from typing import Any

from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import ec2_arn, make, tags_of, to_int, without
from scanner.kinds import facts
from scanner.model import Resource, Unknown

VOLUME = "ec2.volume"
DEFAULTS = "ec2.ebs_defaults"
# The declared fact "which KMS keys EBS uses" (the account/region default key, and which volume
# keys are AWS-managed; scanner/kinds/facts.py). Only EBS-003 needs it, so only a policy that
# lists it in ``needs`` makes the collector call GetEbsDefaultKmsKeyId and kms:ListAliases, and a
# Gap on it (moto does not implement GetEbsDefaultKmsKeyId) gives an ERROR to that policy alone,
# not to EBS-001/002.
EBS_KMS = facts.EBS_KMS_KEYS.name
KEY_MANAGER = facts.EBS_KMS_KEYS.attribute
AWS_MANAGED_ALIAS = "alias/aws/ebs"


def run(ctx: RegionContext) -> None:
    # The defaults first: a quick call, and the region's first ec2 call, which the other ec2
    # collectors wait for (see RegionContext._gate) before they start theirs.
    if ctx.wants(DEFAULTS, EBS_KMS):
        defaults(ctx)
    if ctx.wants(VOLUME):
        volumes = ctx.list("ec2", "DescribeVolumes", "Volumes")
        if volumes is not None:
            joined: dict[str, dict[str, Any]] = {}
            for item in volumes:
                resource = volume(ctx, item)
                ctx.add(resource)
                joined[resource.id] = resource.attrs
            ctx.shared["volumes"] = joined
            if ctx.wants(EBS_KMS):
                key_managers(ctx, [r for r in ctx.result.resources if r.kind == VOLUME])


def key_managers(ctx: RegionContext, volumes: list[Resource]) -> None:
    """``KmsKeyManager`` (the fact's attribute) "AWS" / "CUSTOMER" on encrypted volumes, from
    the alias/aws/ebs target."""
    aliases = ctx.list("kms", "ListAliases", "Aliases")
    aws_key = None
    for alias in aliases or []:
        if alias.get("AliasName") == AWS_MANAGED_ALIAS:
            aws_key = alias.get("TargetKeyId")
    for vol in volumes:
        key = vol.attrs.get("KmsKeyId")
        if not isinstance(key, str) or not key:
            continue
        if aliases is None:
            vol.attrs[KEY_MANAGER] = Unknown("kms:ListAliases could not be read")
        else:
            key_id = key.rsplit("/", 1)[-1]
            vol.attrs[KEY_MANAGER] = "AWS" if aws_key and key_id == aws_key else "CUSTOMER"


def volume(ctx: RegionContext, item: dict[str, Any]) -> Resource:
    vid = str(item["VolumeId"])
    attrs = without(item, "Tags")
    attrs["Encrypted"] = bool(item.get("Encrypted", False))
    attrs["Size"] = to_int(item.get("Size"))
    attrs["Attachments"] = [
        {k: a.get(k) for k in ("InstanceId", "Device", "State", "DeleteOnTermination") if k in a}
        for a in item.get("Attachments") or []
    ]
    return make(
        ctx, VOLUME, vid, attrs, tags=tags_of(item.get("Tags")), arn=ec2_arn(ctx, "volume", vid)
    )


def defaults(ctx: RegionContext) -> None:
    attrs: dict[str, Any] = {}
    if ctx.wants(DEFAULTS):
        got = ctx.call("ec2", "GetEbsEncryptionByDefault")
        if got is None:
            return  # the failure (and its Gap on ec2.ebs_defaults) is recorded
        attrs["EbsEncryptionByDefault"] = bool(got.get("EbsEncryptionByDefault"))
        if got.get("SseType"):
            attrs["SseType"] = got["SseType"]
    if ctx.wants(EBS_KMS):
        key = ctx.call("ec2", "GetEbsDefaultKmsKeyId")
        if key is None:
            attrs["KmsKeyId"] = Unknown("the default KMS key could not be read")
        else:
            attrs["KmsKeyId"] = key.get("KmsKeyId")
    else:
        attrs["KmsKeyId"] = Unknown("not read (no enabled policy needs the default KMS key)")
    rid = ctx.scope
    ctx.add(make(ctx, DEFAULTS, rid, attrs, name=rid))


COLLECTOR = Collector(
    name="ebs",
    calls=(
        Call("ec2", "DescribeVolumes", (VOLUME,)),
        Call("ec2", "GetEbsEncryptionByDefault", (DEFAULTS,)),
        Call("ec2", "GetEbsDefaultKmsKeyId", (EBS_KMS,)),
        Call("kms", "ListAliases", (EBS_KMS,)),
    ),
    run=run,
)
