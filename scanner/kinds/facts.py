"""Declared facts: what a live collector adds to resources of other kinds, only when an enabled
policy needs it.

A fact has a name, which a policy lists in ``needs`` and a collector's ``Call`` feeds (so a
failed call is a gap on exactly the policies that needed the fact), the attribute it adds to
each kind that declares it (``Kind.facts``), and the attributes of other kinds it fills in. A
resource without the attribute was not given the fact (IaC, or not read).
"""

from __future__ import annotations

from dataclasses import dataclass

from scanner.kinds.types import FieldType, Map, Num, Price, Str


@dataclass(frozen=True, eq=False)
class Fact:
    name: str
    doc: str
    attribute: str  # what it adds to a resource of a kind that declares it
    type: FieldType
    fills: tuple[tuple[str, str], ...] = ()  # (kind, attribute) it reads live for other kinds


SPOT_PRICES = Fact(
    name="ec2.spot_prices",
    doc="the current spot price of each instance type the resource launches, the lowest over "
        "the region's Availability Zones (live, DescribeSpotPriceHistory)",
    attribute="CurrentSpotPrices",
    type=Map(Price(), doc="{instance type: price}"),
)

EBS_KMS_KEYS = Fact(
    name="ec2.ebs_kms_keys",
    doc="which KMS keys EBS uses: whether an encrypted volume's key is the AWS-managed "
        "alias/aws/ebs (kms:ListAliases), and the account's default EBS key "
        "(GetEbsDefaultKmsKeyId)",
    attribute="KmsKeyManager",
    type=Str(doc='"AWS" or "CUSTOMER"'),
    fills=(("ec2.ebs_defaults", "KmsKeyId"),),
)

# -- S3 (S3-001's saving) --
S3_STANDARD_BYTES = Fact(
    name="s3.standard_storage_bytes",
    doc="the bytes a bucket holds in S3 Standard: CloudWatch AWS/S3 BucketSizeBytes "
        "(StorageType StandardStorage), the latest daily datapoint of the last 3 days (live, "
        "GetMetricData); UNKNOWN with the reason when it could not be read",
    attribute="StandardStorageBytes",
    type=Num(doc="bytes"),
)

FACTS: tuple[Fact, ...] = (SPOT_PRICES, EBS_KMS_KEYS, S3_STANDARD_BYTES)
