"""S3 storage rates and the saving of moving a bucket's S3 Standard bytes to Intelligent-Tiering
(S3-001). The rates are list prices as published, with their source and date, so that a reader
of the basis can check them."""

from __future__ import annotations

from scanner.model import Savings

GIB = 1 << 30  # S3 bills storage per GB-month with 1 GB = 2^30 bytes
# us-east-1 list prices, first 50 TB a month, USD per GB-month.
STANDARD_USD_GB_MONTH = 0.023
INTELLIGENT_TIERING_IA_USD_GB_MONTH = 0.0125
RATE_REGION = "us-east-1"
RATE_SOURCE = ("https://aws.amazon.com/s3/pricing/ (S3 Standard first 50 TB 0.023 $/GB-month; "
               "S3 Intelligent-Tiering Infrequent Access tier 0.0125 $/GB-month; us-east-1; "
               "recorded 2026-12-03)")
MONITORING_NOTE = ("not counted: the Intelligent-Tiering monitoring fee (0.0025 $ per 1,000 "
                   "objects of 128 KB or more a month) and data that stays in the Frequent "
                   "Access tier because it is read within 30 days")


def tiering_saving(standard_bytes: float, region: str | None) -> Savings | None:
    """The most a month that moving these S3 Standard bytes to Intelligent-Tiering saves, once
    the data sits untouched 30 days (its Infrequent Access tier); None for no bytes."""
    if standard_bytes <= 0:
        return None
    gb = standard_bytes / GIB
    rate = STANDARD_USD_GB_MONTH - INTELLIGENT_TIERING_IA_USD_GB_MONTH
    where = "" if region in (None, RATE_REGION) else \
        f" (us-east-1 rates; {region} list prices differ)"
    basis = (f"({STANDARD_USD_GB_MONTH} - {INTELLIGENT_TIERING_IA_USD_GB_MONTH}) $/GB-month x "
             f"{gb:,.1f} GB in S3 Standard{where}; rates from {RATE_SOURCE}; an upper bound: "
             f"{MONITORING_NOTE}")
    return Savings(usd_month=gb * rate, basis=basis, kind="storage_tiering")
