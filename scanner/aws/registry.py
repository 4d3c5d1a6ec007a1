"""The live collectors, in run order (a collector only ever waits for earlier ones; spot prices
last: they price the types the others found)."""

from __future__ import annotations

from collections.abc import Collection

from scanner.aws.account_wide import ACCOUNT_COLLECTORS  # read once per account (Budgets)
from scanner.aws.collectors import (
    alarms,
    asg_capacity,
    autoscaling,
    batch,
    cloudwatch,
    commitments,
    ebs,
    eks,
    events,
    instances,
    launch_templates,
    s3,
    sagemaker,
    spot,
    spot_prices,
    vpc,
)
from scanner.aws.collectors.base import Call, Collector
from scanner.aws.targets import DISCOVERY_CALLS

COLLECTORS: tuple[Collector, ...] = (
    ebs.COLLECTOR,
    instances.COLLECTOR,
    launch_templates.COLLECTOR,
    autoscaling.COLLECTOR,
    spot.COLLECTOR,
    eks.COLLECTOR,
    batch.COLLECTOR,
    sagemaker.COLLECTOR,
    vpc.COLLECTOR,
    alarms.COLLECTOR,  # what triggers step and simple scaling (ASG-003)
    events.COLLECTOR,  # EventBridge rules on spot interruptions (SPOT-003)
    cloudwatch.COLLECTOR,  # GPU utilization: only when a right-sizing policy is enabled
    asg_capacity.COLLECTOR,  # desired capacity history: only when COST-001 is enabled
    s3.COLLECTOR,  # S3-001: checkpoint buckets (their sizes: money only, never a gap)
    spot_prices.COLLECTOR,  # last: it prices the types the others found
)

# Every kind a live audit can produce, plus the pseudo-kind of the default EBS KMS key.
ALL_KINDS: frozenset[str] = frozenset(k for c in (*COLLECTORS, *ACCOUNT_COLLECTORS)
                                      for k in c.kinds)
# What runs when the caller does not say which kinds it needs: everything but the optional
# default-KMS-key read (only EBS-003, off by default, needs it) and the GPU utilization
# (CloudWatch; only the RS-* policies read it, and `audit` asks for it when they are enabled).
# Nor COST-001's reads (off by default: each Cost Explorer request is billed).
DEFAULT_KINDS: frozenset[str] = (ALL_KINDS - {ebs.EBS_KMS} - cloudwatch.COLLECTOR.kinds
                                 - asg_capacity.COLLECTOR.kinds - commitments.COLLECTOR.kinds)


def selected(kinds: Collection[str]) -> tuple[Collector, ...]:
    wanted = set(kinds)
    return tuple(c for c in COLLECTORS if c.kinds & wanted)


def declared_calls(kinds: Collection[str] | None = None) -> tuple[Call, ...]:
    """Every operation the collectors (for ``kinds``, default all) and target discovery declare."""
    wanted = ALL_KINDS if kinds is None else frozenset(kinds)
    calls = [c for col in (*COLLECTORS, *ACCOUNT_COLLECTORS) for c in col.calls
             if set(c.kinds) & wanted]
    return (*calls, *DISCOVERY_CALLS)


def declared_operations(kinds: Collection[str] | None = None) -> list[str]:
    """``["autoscaling:DescribeAutoScalingGroups", "ec2:DescribeVolumes", ...]``, sorted."""
    return sorted({f"{c.service}:{c.operation}" for c in declared_calls(kinds)})
