"""S3 buckets and their storage-class configurations (S3-001), and placement groups (NET-001).

The separate configurations are folded into the bucket they name after translation
(scanner.sources.terraform.s3_configs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.translate.coerce import Attrs, _blocks, _bool, _one, _pairs, _put

_S3_TRANSITION = (("days", "TransitionInDays"), ("date", "TransitionDate"),
                  ("storage_class", "StorageClass"))


def _s3_transitions(value: Any, spec: tuple[tuple[str, str], ...] = _S3_TRANSITION) -> Any:
    blocks = _blocks(value)
    if blocks is None or isinstance(blocks, Unknown):
        return blocks
    return [b if isinstance(b, Unknown) else _pairs({}, b, spec) for b in blocks] or None


def _s3_rule(b: Any, *, inline: bool) -> Any:
    if isinstance(b, Unknown):
        return b
    rule = _pairs({}, b, (("id", "Id"), ("prefix", "Prefix"), ("status", "Status")))
    if inline:  # provider 3: enabled = true|false
        enabled = _bool(b.get("enabled"))
        rule["Status"] = enabled if isinstance(enabled, Unknown | Ref) else (
            "Enabled" if enabled else "Disabled")
    _put(rule, "Transitions", _s3_transitions(b.get("transition")))
    _put(rule, "NoncurrentVersionTransitions", _s3_transitions(
        b.get("noncurrent_version_transition"),
        (("noncurrent_days", "TransitionInDays"), ("days", "TransitionInDays"),
         ("storage_class", "StorageClass"))))
    return rule


def _s3_rules(value: Any, *, inline: bool) -> Any:
    blocks = _blocks(value)
    if blocks is None or isinstance(blocks, Unknown):
        return blocks
    return [_s3_rule(b, inline=inline) for b in blocks]


def _s3_bucket(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("bucket", "BucketName"), ("bucket_prefix", "BucketPrefix")))
    rules = _s3_rules(v.get("lifecycle_rule"), inline=True)
    if isinstance(rules, Unknown) or rules:
        a["LifecycleConfiguration"] = rules if isinstance(rules, Unknown) else {"Rules": rules}
    name = a.get("BucketName")
    return "s3.bucket", a, name if isinstance(name, str) else None, ()


def _s3_intelligent_tiering(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("bucket", "Bucket"), ("name", "Id"), ("status", "Status")))
    a.setdefault("Status", "Enabled")  # the provider's default
    _put(a, "Prefix", (_one(v.get("filter")) or {}).get("prefix")
         if isinstance(_one(v.get("filter")), dict) else None)
    tierings = _blocks(v.get("tiering"))
    if isinstance(tierings, Unknown):
        a["Tierings"] = tierings
    elif tierings:
        a["Tierings"] = [t if isinstance(t, Unknown) else _pairs(
            {}, t, (("access_tier", "AccessTier"), ("days", "Days"))) for t in tierings]
    return "s3.bucket_intelligent_tiering_configuration", a, None, ()


def _s3_lifecycle(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("bucket", "Bucket"),))
    _put(a, "Rules", _s3_rules(v.get("rule"), inline=False))
    return "s3.bucket_lifecycle_configuration", a, None, ()


# -- placement groups (NET-001) --------------------------------------------------------------


def _placement_group(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("name", "GroupName"), ("strategy", "Strategy"),
                       ("partition_count", "PartitionCount"), ("spread_level", "SpreadLevel")))
    name = a.get("GroupName")
    return "ec2.placement_group", a, name if isinstance(name, str) else None, ()
