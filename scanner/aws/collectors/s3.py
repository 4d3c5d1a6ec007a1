"""S3 buckets of the region: ListBuckets (``BucketRegion`` = this region, so that each bucket
is read once, in the region that holds it), then per bucket its tags, Intelligent-Tiering
configurations and lifecycle rules, in the model's (CloudFormation's) spelling; and, for the
saving of S3-001, the bucket's bytes in S3 Standard from CloudWatch (``BucketSizeBytes``,
StorageType StandardStorage, the latest daily datapoint of the last 3 days).

An answer that says a bucket has no such configuration (``NoSuchLifecycleConfiguration``,
``NoSuchTagSet``) is an answer; any other failure is the call's failure (an error and a Gap on
``s3.bucket``: S3-001 gives ERROR in the region, never a verdict on half-read buckets). The
bytes are money only: a failed metric read leaves the verdicts alone, and the buckets carry the
reason instead of a size (a notice says it too).

Budget: at most :data:`MAX_BUCKETS` buckets a region are read in detail (3 calls each, on
:data:`WORKERS` threads); past it, nothing of the region's buckets is judged (a Gap naming the
budget), since the rest could be any of them.
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from scanner.aws import faults
from scanner.aws.collectors.base import Call, Collector, RegionContext
from scanner.aws.normalize import make, partition, tags_of
from scanner.kinds.facts import S3_STANDARD_BYTES
from scanner.model import Resource, Unknown

BUCKET = "s3.bucket"
MAX_BUCKETS = 2000
WORKERS = 8
METRIC_QUERIES = 500  # GetMetricData's limit of queries per call
_ABSENT = {"GetBucketTagging": "NoSuchTagSet",
           "GetBucketLifecycleConfiguration": "NoSuchLifecycleConfiguration"}


def _error_code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str((response.get("Error") or {}).get("Code") or "")
    return ""


class _Failed(Exception):
    def __init__(self, operation: str, exc: BaseException) -> None:
        super().__init__(operation)
        self.operation, self.exc = operation, exc


def _read(client: Any, operation: str, **params: Any) -> dict[str, Any] | None:
    """One per-bucket call: its answer, None when it says there is no such configuration."""
    method = getattr(client, {"GetBucketTagging": "get_bucket_tagging",
                              "ListBucketIntelligentTieringConfigurations":
                                  "list_bucket_intelligent_tiering_configurations",
                              "GetBucketLifecycleConfiguration":
                                  "get_bucket_lifecycle_configuration"}[operation])
    try:
        return dict(method(**params))
    except Exception as exc:
        if _error_code(exc) == _ABSENT.get(operation):
            return None
        raise _Failed(operation, exc) from exc


def tiering_configs(answer: dict[str, Any] | None) -> list[dict[str, Any]]:
    """ListBucketIntelligentTieringConfigurations' list in the model's spelling."""
    out = []
    for c in (answer or {}).get("IntelligentTieringConfigurationList") or []:
        if isinstance(c, dict):
            entry = {k: c[k] for k in ("Id", "Status", "Tierings") if k in c}
            prefix = (c.get("Filter") or {}).get("Prefix") if isinstance(c.get("Filter"),
                                                                          dict) else None
            if prefix:
                entry["Prefix"] = prefix
            out.append(entry)
    return out


def lifecycle_rules(answer: dict[str, Any] | None) -> list[dict[str, Any]]:
    """GetBucketLifecycleConfiguration's rules in the model's (CloudFormation's) spelling."""
    rules = []
    for r in (answer or {}).get("Rules") or []:
        if not isinstance(r, dict):
            continue
        rule: dict[str, Any] = {"Status": r.get("Status")}
        if r.get("ID"):
            rule["Id"] = r["ID"]
        moves = [{"StorageClass": t.get("StorageClass"),
                  **({"TransitionInDays": t["Days"]} if "Days" in t else {}),
                  **({"TransitionDate": str(t["Date"])} if "Date" in t else {})}
                 for t in r.get("Transitions") or [] if isinstance(t, dict)]
        if moves:
            rule["Transitions"] = moves
        old = [{"StorageClass": t.get("StorageClass"),
                "TransitionInDays": t.get("NoncurrentDays")}
               for t in r.get("NoncurrentVersionTransitions") or [] if isinstance(t, dict)]
        if old:
            rule["NoncurrentVersionTransitions"] = old
        rules.append(rule)
    return rules


def _bucket(client: Any, name: str) -> tuple[dict[str, Any], dict[str, str]]:
    tags = _read(client, "GetBucketTagging", Bucket=name)
    tiering = _read(client, "ListBucketIntelligentTieringConfigurations", Bucket=name)
    lifecycle = _read(client, "GetBucketLifecycleConfiguration", Bucket=name)
    attrs: dict[str, Any] = {"BucketName": name}
    configs = tiering_configs(tiering)
    if configs:
        attrs["IntelligentTieringConfigurations"] = configs
    rules = lifecycle_rules(lifecycle)
    if rules:
        attrs["LifecycleConfiguration"] = {"Rules": rules}
    return attrs, tags_of((tags or {}).get("TagSet"))


def run(ctx: RegionContext) -> None:
    if not ctx.wants(BUCKET):
        return
    listed = ctx.list("s3", "ListBuckets", "Buckets", BucketRegion=ctx.region)
    if listed is None:
        return  # recorded: an error and a Gap on s3.bucket
    names = sorted({str(b["Name"]) for b in listed if isinstance(b, dict) and b.get("Name")})
    if len(names) > MAX_BUCKETS:
        ctx.record_failure("s3:ListBuckets", f"{len(names):,} buckets in the region, more than "
                           f"the {MAX_BUCKETS:,} read in detail", (BUCKET,))
        ctx.settle(*((c.service, c.operation) for c in COLLECTOR.calls))
        return
    client = ctx.client("s3")
    try:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            read = list(pool.map(lambda n: _bucket(client, n), names))
    except _Failed as failed:
        ctx.fail("s3", failed.operation, failed.exc)
        return
    buckets = []
    for name, (attrs, tags) in zip(names, read, strict=True):
        arn = f"arn:{partition(ctx.region)}:s3:::{name}"
        buckets.append(make(ctx, BUCKET, name, attrs, tags=tags, name=name, arn=arn))
    if ctx.wants(S3_STANDARD_BYTES.name) and buckets:
        _sizes(ctx, buckets)
    for b in buckets:
        ctx.add(b)
    ctx.settle(*((c.service, c.operation) for c in COLLECTOR.calls))


def _sizes(ctx: RegionContext, buckets: list[Resource]) -> None:
    """Each bucket's latest StandardStorage BucketSizeBytes (a daily metric)."""
    end = dt.datetime.now(dt.timezone.utc)
    start = end - dt.timedelta(days=3)
    found: dict[str, float] = {}
    try:
        # the queries are built as plain dicts: the stubs' TypedDicts would add nothing here
        client: Any = ctx.client("cloudwatch")
        for i in range(0, len(buckets), METRIC_QUERIES):
            chunk = buckets[i:i + METRIC_QUERIES]
            queries = [{"Id": f"b{i + j}", "ReturnData": True, "MetricStat": {
                "Metric": {"Namespace": "AWS/S3", "MetricName": "BucketSizeBytes",
                           "Dimensions": [{"Name": "BucketName", "Value": b.id},
                                          {"Name": "StorageType", "Value": "StandardStorage"}]},
                "Period": 86400, "Stat": "Average"}} for j, b in enumerate(chunk)]
            token: str | None = None
            while True:
                extra = {"NextToken": token} if token else {}
                answer = client.get_metric_data(MetricDataQueries=queries, StartTime=start,
                                                EndTime=end, ScanBy="TimestampDescending",
                                                **extra)
                for res in answer.get("MetricDataResults") or []:
                    values = res.get("Values") or []
                    index = int(str(res.get("Id", "b-1"))[1:])
                    if values and 0 <= index - i < len(chunk):
                        found.setdefault(buckets[index].id, float(values[0]))
                token = answer.get("NextToken")
                if not token:
                    break
    except Exception as exc:  # money only: the verdicts stand, the saving says why not
        reason = f"cloudwatch:GetMetricData failed: {faults.describe(exc)}"
        ctx.notice("cloudwatch/BucketSizeBytes", f"{reason}; S3-001 estimates no saving here")
        for b in buckets:
            b.attrs[S3_STANDARD_BYTES.attribute] = Unknown(reason)
        return
    for b in buckets:
        if b.id in found:
            b.attrs[S3_STANDARD_BYTES.attribute] = found[b.id]
        else:
            b.attrs[S3_STANDARD_BYTES.attribute] = Unknown(
                "no BucketSizeBytes (StandardStorage) datapoint in the last 3 days")


COLLECTOR = Collector(
    name="s3",
    calls=(
        Call("s3", "ListBuckets", (BUCKET,)),
        Call("s3", "GetBucketTagging", (BUCKET,)),
        Call("s3", "ListBucketIntelligentTieringConfigurations", (BUCKET,)),
        Call("s3", "GetBucketLifecycleConfiguration", (BUCKET,)),
        Call("cloudwatch", "GetMetricData", (S3_STANDARD_BYTES.name,)),
    ),
    run=run,
)
