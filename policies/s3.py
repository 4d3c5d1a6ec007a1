"""Checkpoint and model buckets without Intelligent-Tiering or a lifecycle transition (S3-001)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from policies.base import Context, Remediation, policy
from scanner.kinds.facts import S3_STANDARD_BYTES
from scanner.model import Resource, Result, Severity, Status, Unknown
from scanner.pricing.s3_storage import tiering_saving

BUCKET = "s3.bucket"
TIERING = "s3.bucket_intelligent_tiering_configuration"
LIFECYCLE = "s3.bucket_lifecycle_configuration"
DEFAULT_PATTERNS = ("checkpoint", "ckpt", "model", "artifact")

_TF = '''resource "aws_s3_bucket_lifecycle_configuration" "checkpoints" {
  bucket = aws_s3_bucket.checkpoints.id
  rule {
    id     = "intelligent-tiering"
    status = "Enabled"
    filter {}
    transition {
      days          = 0
      storage_class = "INTELLIGENT_TIERING"
    }
  }
}'''
_CFN = '''CheckpointBucket:
  Type: AWS::S3::Bucket
  Properties:
    LifecycleConfiguration:
      Rules:
        - Id: intelligent-tiering
          Status: Enabled
          Transitions:
            - StorageClass: INTELLIGENT_TIERING
              TransitionInDays: 0'''


def _patterns(ctx: Context) -> Any:
    """The configured name patterns as one RE2 expression (linear time whatever a config
    says), or None when there are none; a pattern RE2 refuses is an error naming the key."""
    raw = ctx.params.get("name_patterns", DEFAULT_PATTERNS)
    words = [str(p) for p in (raw if isinstance(raw, list | tuple) else [raw]) if str(p)]
    if not words:
        return None
    key = "s3-001:patterns:" + "\0".join(words)
    if key not in ctx.memo:
        import re2

        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = False
        try:
            ctx.memo[key] = re2.compile("|".join(f"(?:{w})" for w in words), options)
        except Exception as exc:  # re2.error
            raise ValueError(f"name_patterns: not a valid RE2 expression ({exc})") from None
    return ctx.memo[key]


def _selected(bucket: Resource, ctx: Context) -> tuple[bool | Unknown, str]:
    """Whether the bucket holds checkpoints or models (by name, or by the configured tag), and
    why; an Unknown when its name is not known but its declaration says it may."""
    tag = str(ctx.params.get("tag_key") or "")
    if tag and tag in bucket.tags and bucket.tags[tag].strip().lower() != "false":
        return True, f"tag {tag}"
    pattern = _patterns(ctx)
    if pattern is None:
        return False, ""
    name = bucket.get("BucketName")
    prefix = bucket.get("BucketPrefix")
    if isinstance(name, str):
        return bool(pattern.search(name)), f"name {name}"
    if name is None and isinstance(prefix, str):  # the rest of the name is a generated suffix
        return bool(pattern.search(prefix)), f"name prefix {prefix}"
    if tag and bucket.tags_unknown is not None:
        return bucket.tags_unknown, ""
    # the name is generated at apply (absent), or not known: never judged on a guess
    if pattern.search(bucket.id.rsplit(".", 1)[-1]):
        why = name.reason if isinstance(name, Unknown) and name.reason else \
            "the name is generated when the bucket is created"
        return Unknown(f"its name is not known ({why}); its declaration {bucket.id} suggests "
                       "a checkpoint or model bucket"), ""
    return False, ""


def _enabled(status: Any) -> bool | Unknown:
    if isinstance(status, Unknown):
        return status
    return isinstance(status, str) and status.lower() == "enabled"


def _tiering(bucket: Resource) -> tuple[bool | Unknown, list[str]]:
    """(an enabled Intelligent-Tiering configuration or lifecycle transition exists, what was
    found); an Unknown when none is known but one may be."""
    found: list[str] = []
    doubt: Unknown | None = None
    configs = bucket.get("IntelligentTieringConfigurations")
    if isinstance(configs, Unknown):
        doubt = configs
    for c in configs if isinstance(configs, list) else ():
        if isinstance(c, Unknown):
            doubt = doubt or c
            continue
        on = _enabled(c.get("Status")) if isinstance(c, dict) else False
        if on is True:
            found.append(f"Intelligent-Tiering configuration {c.get('Id') or '(unnamed)'}")
        elif isinstance(on, Unknown):
            doubt = doubt or on
    lifecycle = bucket.get("LifecycleConfiguration")
    rules = lifecycle.get("Rules") if isinstance(lifecycle, dict) else lifecycle
    if isinstance(rules, Unknown):
        doubt = doubt or rules
    for rule in rules if isinstance(rules, list) else ():
        if isinstance(rule, Unknown):
            doubt = doubt or rule
            continue
        if not isinstance(rule, dict):
            continue
        on = _enabled(rule.get("Status"))
        moves = rule.get("Transitions")
        if isinstance(moves, Unknown):
            has: bool | Unknown = moves
        else:
            has = bool(moves) or isinstance(rule.get("Transition"), dict)
        if on is True and has is True:
            found.append(f"lifecycle rule {rule.get('Id') or '(unnamed)'} with a transition")
        elif on is not False and has is not False:
            doubt = doubt or (on if isinstance(on, Unknown) else has)  # type: ignore[assignment]
    if found:
        return True, found
    return (doubt if doubt is not None else False), found


def _unresolved(bucket: Resource, ctx: Context) -> list[Resource]:
    """Configurations of the bucket's scope whose bucket could not be resolved (the Terraform
    sources fold every resolvable one into its bucket): each may be this bucket's."""
    return [c for kind in (TIERING, LIFECYCLE) for c in ctx.index.of_kind(kind, bucket.scope)
            if not ctx.index.resolve_all(c.get("Bucket"), c.scope, BUCKET)]


@policy(
    id="S3-001",
    title="Checkpoint or model bucket without Intelligent-Tiering or a lifecycle transition",
    severity=Severity.LOW,
    category="cost",
    kinds=(BUCKET,),
    needs=(TIERING, LIFECYCLE, S3_STANDARD_BYTES.name),
    observed_needs=(BUCKET, S3_STANDARD_BYTES.name),
    description=(
        "Training checkpoints and model artifacts are written once and rarely read again, yet "
        "stay in S3 Standard unless the bucket moves them: an Intelligent-Tiering "
        "configuration or an enabled lifecycle rule with a transition is expected on buckets "
        "whose name matches name_patterns (regular expressions, case-insensitive; or that "
        "carry tag_key, when set). A rule counts when its Status is Enabled and it has a "
        "transition of current versions (an expiration or a noncurrent-version transition "
        "alone does not). A bucket whose name is generated at apply or not known is never "
        "FAIL: UNKNOWN when its Terraform address or CloudFormation logical id matches the "
        "patterns, else no result; a separately declared configuration whose bucket cannot "
        "be resolved makes the buckets it may belong to UNKNOWN. Live, the saving is the "
        "bucket's S3 Standard bytes (CloudWatch BucketSizeBytes, StorageType "
        "StandardStorage) x (S3 Standard 0.023 - Intelligent-Tiering Infrequent Access "
        "0.0125) $/GB-month, us-east-1 list prices from aws.amazon.com/s3/pricing recorded "
        "2026-12-03: an upper bound (data read within 30 days stays in the Frequent Access "
        "tier; the monitoring fee of 0.0025 $ per 1,000 objects is not counted). Without a "
        "datapoint no money is given, and the evidence says why."),
    remediation=Remediation(
        text="Add a lifecycle rule that transitions objects to INTELLIGENT_TIERING (day 0), "
             "or another transition suited to how the checkpoints are read.",
        terraform=_TF, cloudformation=_CFN),
    params={"name_patterns": list(DEFAULT_PATTERNS), "tag_key": ""},
)
def s3_001(bucket: Resource, ctx: Context) -> Iterator[Result]:
    selected, why = _selected(bucket, ctx)
    if selected is False:
        return
    if isinstance(selected, Unknown):
        yield ctx.result(bucket, Status.UNKNOWN,
                         f"cannot tell whether it holds checkpoints or models: {selected.reason}")
        return
    tiered, found = _tiering(bucket)
    evidence: dict[str, Any] = {"selected_by": why, "tiering": found}
    if tiered is True:
        yield ctx.result(bucket, Status.PASS, "objects move out of S3 Standard: "
                         + "; ".join(found), evidence=evidence)
        return
    if isinstance(tiered, Unknown):
        yield ctx.result(bucket, Status.UNKNOWN, "cannot tell whether objects move out of S3 "
                         f"Standard: {tiered.reason or 'a configuration is not known'}",
                         path="LifecycleConfiguration", evidence=evidence)
        return
    orphans = _unresolved(bucket, ctx)
    if orphans:
        evidence["unresolved_configurations"] = [c.id for c in orphans[:20]]
        ref = orphans[0].get("Bucket")
        yield ctx.result(bucket, Status.UNKNOWN,
                         f"{orphans[0].id} names its bucket as {_shown(ref)}, which cannot be "
                         "resolved here: it may be this bucket's configuration",
                         evidence=evidence)
        return
    savings = None
    size = bucket.get(S3_STANDARD_BYTES.attribute)
    if isinstance(size, int | float) and not isinstance(size, bool):
        evidence["standard_storage_bytes"] = size
        savings = tiering_saving(float(size), bucket.provenance.region)
    elif isinstance(size, Unknown):
        evidence["saving_not_estimated"] = size.reason
    elif not bucket.declared:
        evidence["saving_not_estimated"] = "no BucketSizeBytes (StandardStorage) datapoint"
    yield ctx.result(bucket, Status.FAIL,
                     f"{why}: no Intelligent-Tiering configuration and no lifecycle transition; "
                     "checkpoints stay in S3 Standard", path="LifecycleConfiguration",
                     evidence=evidence, savings=savings)


def _shown(value: Any) -> str:
    if isinstance(value, Unknown):
        return f"a value not known ({value.reason})" if value.reason else "a value not known"
    return str(value)[:120]
