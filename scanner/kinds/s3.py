"""S3: buckets, with their Intelligent-Tiering and lifecycle configurations folded in.

Attribute names are CloudFormation's (``AWS::S3::Bucket``). Terraform declares a bucket's
Intelligent-Tiering and lifecycle configurations as resources of their own
(``aws_s3_bucket_intelligent_tiering_configuration``, ``aws_s3_bucket_lifecycle_configuration``)
or inline (``lifecycle_rule`` blocks of the provider-3 ``aws_s3_bucket``); the Terraform sources
fold each configuration into the bucket it names (``scanner.sources.terraform.s3_configs``). A
configuration whose bucket cannot be resolved stays a resource of its own kind, so that a policy
can say that it may belong to a bucket it judges."""

from __future__ import annotations

from scanner.kinds.facts import S3_STANDARD_BYTES
from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import Int, List, Obj, Ref, Str

BUCKET = ("s3.bucket",)

TIERING = Obj({
    "Id": Str(),
    "Status": Str(doc="Enabled or Disabled; Terraform: absent = Enabled"),
    "Prefix": Str(),
    "Tierings": List(Obj({"AccessTier": Str(doc="ARCHIVE_ACCESS, DEEP_ARCHIVE_ACCESS"),
                          "Days": Int()})),
})

_TRANSITION = Obj({
    "StorageClass": Str(doc="INTELLIGENT_TIERING, STANDARD_IA, GLACIER_IR, GLACIER, …"),
    "TransitionInDays": Int(doc="live: Days"),
    "TransitionDate": Str(),
})

RULE = Obj({
    "Id": Str(),
    "Status": Str(doc="Enabled or Disabled; Terraform provider 3: enabled"),
    "Prefix": Str(),
    "Transitions": List(_TRANSITION, doc="of current versions"),
    "Transition": Obj(dict(_TRANSITION.fields), doc="CloudFormation's single-transition form"),
    "NoncurrentVersionTransitions": List(Obj({"StorageClass": Str(),
                                              "TransitionInDays": Int()})),
    "ExpirationInDays": Int(),
})

KINDS = (
    Kind(
        name="s3.bucket",
        doc="an S3 bucket; live id: its name",
        attributes={
            "BucketName": Str(doc="Terraform bucket; absent or UNKNOWN: generated at apply"),
            "BucketPrefix": Str(doc="Terraform bucket_prefix"),
            "IntelligentTieringConfigurations": List(TIERING, doc="Terraform: folded in from "
                                                     "aws_s3_bucket_intelligent_tiering_"
                                                     "configuration"),
            "LifecycleConfiguration": Obj({"Rules": List(RULE)},
                                          doc="Terraform: folded in from aws_s3_bucket_"
                                              "lifecycle_configuration, or inline "
                                              "lifecycle_rule (provider 3)"),
        },
        terraform=(Terraform("aws_s3_bucket", blocks={
            "lifecycle_rule": ("enabled",), "transition": ("days", "storage_class")},
            note="inline lifecycle_rule blocks (provider 3) become LifecycleConfiguration"),),
        cloudformation=(CloudFormation("AWS::S3::Bucket", name_property="BucketName"),),
        live="ListBuckets (BucketRegion), GetBucketTagging, "
             "ListBucketIntelligentTieringConfigurations, GetBucketLifecycleConfiguration",
        facts=(S3_STANDARD_BYTES.name,),
    ),
    Kind(
        name="s3.bucket_intelligent_tiering_configuration",
        doc="an Intelligent-Tiering configuration declared on its own whose bucket could not "
            "be resolved (the others are folded into their bucket)",
        attributes={"Bucket": Ref(kinds=BUCKET), **TIERING.fields},
        terraform=(Terraform("aws_s3_bucket_intelligent_tiering_configuration",
                             blocks={"tiering": ("access_tier", "days")}),),
    ),
    Kind(
        name="s3.bucket_lifecycle_configuration",
        doc="a lifecycle configuration declared on its own whose bucket could not be resolved "
            "(the others are folded into their bucket)",
        attributes={"Bucket": Ref(kinds=BUCKET), "Rules": List(RULE)},
        terraform=(Terraform("aws_s3_bucket_lifecycle_configuration",
                             blocks={"rule": ("status",), "transition": ("days",
                                                                         "storage_class")}),),
    ),
)
