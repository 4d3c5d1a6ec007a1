"""A collector's independent list calls go side by side: a region waits one round trip for
them, not one each (the VPC collector's five walks). The endpoint counts the requests it holds
at once, so the tests say "side by side" without timing anything."""

from __future__ import annotations

import boto3
import pytest

from scanner.aws.clients import ClientFactory
from scanner.aws.collect import run_collectors
from scanner.aws.collectors import ebs, vpc
from scanner.aws.collectors.base import Collector, RegionContext
from scanner.model import SourceResult
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    REGION,
    SlowEndpoint,
    aws_env,
)

pytestmark = pytest.mark.usefixtures("aws_env")

# Each answer is held this long: requests sent side by side overlap within it. 0.3 s was once
# too short on a loaded machine (four of the five walks overlapped: the fifth thread had not
# sent yet); a walk sent after another's answer would still never overlap it.
DELAY = 1.0
VPC_KINDS = frozenset(vpc.COLLECTOR.kinds)


def audit_region(
    endpoint: SlowEndpoint, collectors: tuple[Collector, ...], wanted: frozenset[str]
) -> RegionContext:
    # endpoint_concurrency=0: the endpoint stands for a remote one (no bound on requests)
    factory = ClientFactory(endpoint_url=endpoint.url, endpoint_concurrency=0, max_attempts=1)
    ctx = RegionContext(account=ACCOUNT, region=REGION, session=boto3.Session(region_name=REGION),
                        factory=factory, wanted=wanted, result=SourceResult(),
                        collectors=collectors)
    run_collectors(ctx, collectors)
    return ctx


def test_the_vpc_walks_go_side_by_side_once_the_service_is_open() -> None:
    with SlowEndpoint(delay=DELAY) as endpoint:
        ctx = audit_region(endpoint, (ebs.COLLECTOR, vpc.COLLECTOR), VPC_KINDS | {ebs.DEFAULTS})
    assert not ctx.result.errors
    # GetEbsEncryptionByDefault opens ec2 alone, then the five walks at once
    assert endpoint.requests == 6 and endpoint.max_in_flight == 5  # in turn: 1
    assert ctx.coverage["vpc"].calls == 5


def test_the_collector_that_opens_the_service_sends_its_first_walk_alone() -> None:
    with SlowEndpoint(delay=DELAY) as endpoint:
        ctx = audit_region(endpoint, (vpc.COLLECTOR,), VPC_KINDS)
    assert not ctx.result.errors
    assert endpoint.requests == 5 and endpoint.max_in_flight == 4


def test_walks_not_wanted_are_not_sent() -> None:
    with SlowEndpoint(delay=0.01) as endpoint:
        ctx = audit_region(endpoint, (vpc.COLLECTOR,), frozenset({vpc.SUBNET, vpc.VPC_ENDPOINT}))
    assert not ctx.result.errors
    assert endpoint.requests == 2 and ctx.coverage["vpc"].calls == 2
