# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""The audit's clients share one botocore class per service (scanner/aws/client_classes.py):
botocore builds it once, every client still answers for its own region and endpoint and keeps
its own read-only guard, and nothing outside the audit's ClientFactory is changed."""

from __future__ import annotations

import threading
from typing import Any

import boto3
import pytest
from botocore.client import ClientCreator

from scanner.aws.client_classes import shared_classes
from scanner.aws.clients import ClientFactory, ReadOnlyViolation
from tests.aws_helpers import aws, aws_env, client, declared_only  # noqa: F401 - fixtures

REGIONS = ("us-east-1", "us-west-2", "eu-west-1")


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The service of every client class botocore builds (its method table, the costly part)."""
    made: list[str] = []
    original = ClientCreator._create_methods

    def counting(self: Any, service_model: Any) -> Any:
        made.append(service_model.service_name)
        return original(self, service_model)

    monkeypatch.setattr(ClientCreator, "_create_methods", counting)
    return made


def test_the_audit_s_clients_of_a_service_share_one_class(aws: None, builds: list[str]) -> None:
    for i, region in enumerate(REGIONS):
        client("ec2", region=region).create_vpc(CidrBlock=f"10.{i}.0.0/16")
    del builds[:]  # the seeding clients'
    factory = ClientFactory()
    ec2 = [factory.client(boto3.Session(), "ec2", ["DescribeVpcs"], region=r) for r in REGIONS]
    assert builds.count("ec2") <= 1  # none when an earlier test of this worker built it
    assert len({type(c) for c in ec2}) == 1
    for i, (region, c) in enumerate(zip(REGIONS, ec2, strict=True)):
        assert c.meta.region_name == region
        cidrs = {v["CidrBlock"] for v in c.describe_vpcs()["Vpcs"]}
        assert f"10.{i}.0.0/16" in cidrs  # its own region's answer, no other's
        assert not {f"10.{j}.0.0/16" for j in range(len(REGIONS)) if j != i} & cidrs
        with pytest.raises(ReadOnlyViolation, match="ec2:DescribeInstances refused"):
            c.describe_instances()  # the guard is the client's, not the class's
    other = factory.client(boto3.Session(), "autoscaling", ["DescribeAutoScalingGroups"],
                           region=REGIONS[0])
    assert type(other) is not type(ec2[0])
    assert other.describe_auto_scaling_groups()["AutoScalingGroups"] == []


def test_a_class_is_built_once_then_reused(aws: None, builds: list[str]) -> None:
    factory = ClientFactory()
    with shared_classes():
        pass  # the wrapper is in place
    first = factory.client(boto3.Session(), "kms", ["ListAliases"], region=REGIONS[0])
    del builds[:]
    again = [factory.client(boto3.Session(), "kms", ["ListAliases"], region=r) for r in REGIONS]
    assert builds == []
    assert {type(c) for c in again} == {type(first)}


def test_clients_made_outside_the_audit_s_factory_are_botocore_s_own(
    aws: None, builds: list[str]
) -> None:
    shared = ClientFactory().client(boto3.Session(), "ec2", ["DescribeVpcs"], region=REGIONS[0])
    del builds[:]
    plain = [boto3.client("ec2", region_name=r) for r in REGIONS[:2]]
    assert builds == ["ec2", "ec2"]
    assert len({type(shared), *(type(c) for c in plain)}) == 3
    # nor does another thread share while this one is inside the block
    seen: list[type] = []
    with shared_classes():
        worker = threading.Thread(
            target=lambda: seen.append(type(boto3.client("ec2", region_name=REGIONS[0]))))
        worker.start()
        worker.join()
    assert builds == ["ec2", "ec2", "ec2"] and seen[0] is not type(shared)


def test_a_changed_botocore_signature_is_left_to_botocore(aws: None, builds: list[str]) -> None:
    """Called in a form the wrapper was not written for (keywords), botocore's own code runs."""
    session = boto3.Session()._session
    creator = ClientCreator(session.get_component("data_loader"), None, "ua",
                            session.get_component("event_emitter"), None, None)
    model = creator._load_service_model("sts")
    with shared_classes():
        one = creator._create_client_class("sts", model)
        two = creator._create_client_class(service_name="sts", service_model=model)
        three = creator._create_client_class("sts", model)
    assert one is three and two is not one
    assert builds.count("sts") == 2
