"""Fold each S3 bucket's separately declared storage-class configurations into the bucket.

Terraform (provider 4 and later) declares a bucket's Intelligent-Tiering and lifecycle
configurations as resources of their own that name the bucket (``bucket =
aws_s3_bucket.x.id``, or its name as text). Each one whose bucket resolves to exactly one
``s3.bucket`` of the same root module, and that certainly exists, becomes part of that bucket
(``IntelligentTieringConfigurations``, ``LifecycleConfiguration.Rules``), as CloudFormation
and the live API spell a bucket; its address becomes an alias of the bucket. The others (a
bucket given by a variable, a module output, a data source; a configuration whose count is not
known) stay resources of their own kind: a policy then cannot tell which bucket they belong to.
"""

from __future__ import annotations

from typing import Any

from scanner.model import Resource, Unknown
from scanner.model.graph import ResourceIndex

BUCKET = "s3.bucket"
TIERING = "s3.bucket_intelligent_tiering_configuration"
LIFECYCLE = "s3.bucket_lifecycle_configuration"


def fold_s3_configs(resources: list[Resource]) -> list[Resource]:
    """``resources`` with every resolvable configuration folded into its bucket (order kept)."""
    configs = [r for r in resources if r.kind in (TIERING, LIFECYCLE)]
    if not configs:
        return resources
    index = ResourceIndex(r for r in resources if r.kind == BUCKET)
    folded: set[int] = set()
    for config in configs:
        if config.exists is not True:
            continue
        hits = index.resolve_all(config.get("Bucket"), config.scope, BUCKET)
        if len(hits) != 1:
            continue
        bucket = hits[0]
        if config.kind == TIERING:
            _add_tiering(bucket, config)
        else:
            _add_rules(bucket, config.attrs.get("Rules"))
        bucket.aliases = (*bucket.aliases, config.id)
        bucket.skips = (*bucket.skips, *config.skips)
        folded.add(id(config))
    return [r for r in resources if id(r) not in folded]


def _add_tiering(bucket: Resource, config: Resource) -> None:
    entry = {k: v for k, v in config.attrs.items() if k != "Bucket"}
    current = bucket.attrs.get("IntelligentTieringConfigurations")
    if isinstance(current, Unknown):
        return
    bucket.attrs["IntelligentTieringConfigurations"] = [*(current or []), entry]


def _add_rules(bucket: Resource, rules: Any) -> None:
    current = bucket.attrs.get("LifecycleConfiguration")
    if isinstance(current, Unknown):
        return
    if isinstance(rules, Unknown):
        bucket.attrs["LifecycleConfiguration"] = rules
        return
    old = (current or {}).get("Rules") if isinstance(current, dict) else None
    old = old if isinstance(old, list) else []
    bucket.attrs["LifecycleConfiguration"] = {"Rules": [*old, *(rules or [])]}
