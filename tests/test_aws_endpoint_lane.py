"""Requests to a local emulator are bounded; service models load once for many clients."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from botocore.loaders import Loader, create_loader

from scanner.aws.clients import ClientFactory, is_loopback
from tests.aws_helpers import SlowEndpoint


@pytest.fixture()
def creds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    yield


LOADER = create_loader()


def session() -> boto3.Session:
    """A session of its own (as each audited region has) sharing the models' loader."""
    bs = botocore.session.Session()
    bs.register_component("data_loader", LOADER)
    return boto3.Session(botocore_session=bs, region_name="us-east-1")


def hammer(factory: ClientFactory, threads: int = 6, calls: int = 3, **params: Any) -> list[Any]:
    """``threads`` clients (one per thread, as the audit has one per region) call side by side."""

    ready = threading.Barrier(threads)

    def run(_: int) -> list[Any]:
        ec2 = factory.client(session(), "ec2", ["DescribeVpcs"])
        ready.wait()  # every thread has its client: the calls start together
        out: list[Any] = []
        for _ in range(calls):
            try:
                out.append(ec2.describe_vpcs(**params).get("Vpcs", []))
            except (ClientError, EndpointConnectionError) as exc:
                out.append(exc)
        return out

    with ThreadPoolExecutor(threads) as pool:
        return [r for rs in pool.map(run, range(threads)) for r in rs]


def test_loopback_endpoints() -> None:
    for url in ("http://localhost:5000", "http://127.0.0.1:4566", "http://127.1.2.3",
                "http://[::1]:5000/", "https://LOCALHOST"):
        assert is_loopback(url), url
    for url in (None, "", "http://10.0.0.5:4566", "https://ec2.us-east-1.amazonaws.com",
                "http://localstack:4566", "not a url"):
        assert not is_loopback(url), url


def test_a_local_emulator_gets_one_request_at_a_time(creds: None) -> None:
    with SlowEndpoint() as endpoint:
        factory = ClientFactory(endpoint_url=endpoint.url, max_attempts=1)
        assert factory.endpoint_concurrency == 1
        results = hammer(factory)
        assert results == [[]] * 18 and endpoint.requests == 18
        assert endpoint.max_in_flight == 1


def test_the_bound_is_configurable_and_absent_for_remote_endpoints(creds: None) -> None:
    assert ClientFactory().endpoint_concurrency == 0  # real AWS: no bound
    assert ClientFactory(endpoint_url="https://ec2.example.internal").endpoint_concurrency == 0
    with SlowEndpoint() as endpoint:
        three = ClientFactory(endpoint_url=endpoint.url, endpoint_concurrency=3, max_attempts=1)
        hammer(three)
        assert endpoint.max_in_flight == 3
    with SlowEndpoint() as endpoint:
        unbounded = ClientFactory(endpoint_url=endpoint.url, endpoint_concurrency=0,
                                  max_attempts=1)
        hammer(unbounded)
        assert endpoint.max_in_flight > 3


def test_failures_release_the_endpoint(creds: None) -> None:
    with SlowEndpoint() as endpoint:
        factory = ClientFactory(endpoint_url=endpoint.url, max_attempts=1)
        denied = hammer(factory, threads=3, calls=2, VpcIds=["vpc-denied"])
        assert len(denied) == 6 and all(isinstance(e, ClientError) for e in denied)
        assert hammer(factory, threads=2, calls=1) == [[], []]  # nothing left holding the slot
    # an unreachable endpoint: every call fails, none waits forever for the slot
    factory = ClientFactory(endpoint_url=endpoint.url, max_attempts=1)
    started = time.monotonic()
    unreachable = hammer(factory, threads=3, calls=2)
    assert all(isinstance(e, EndpointConnectionError) for e in unreachable)
    assert time.monotonic() - started < 30


def test_a_service_model_is_loaded_once_for_clients_made_side_by_side(
    creds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader = create_loader()
    reads: list[str] = []
    original = Loader.load_data_with_path

    def counting(self: Loader, name: str) -> Any:
        reads.append(name)
        return original(self, name)

    monkeypatch.setattr(Loader, "load_data_with_path", counting)

    def fresh() -> boto3.Session:
        bs = botocore.session.Session()
        bs.register_component("data_loader", loader)
        return boto3.Session(botocore_session=bs, region_name="us-east-1")

    factory = ClientFactory()
    sessions = [fresh() for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda s: factory.client(s, "ec2", ["DescribeVpcs"]), sessions))
    assert reads.count("ec2/2016-11-15/service-2") == 1, reads


def test_a_stalled_request_stops_holding_the_lane(creds: None) -> None:
    """One request never answered: after ``lane_hold`` seconds it no longer counts against the
    local endpoint's one slot, and the other requests go through while it is still stalled."""
    with SlowEndpoint(delay=0.01) as endpoint:
        factory = ClientFactory(endpoint_url=endpoint.url, max_attempts=1, lane_hold=0.2,
                                read_timeout=60)
        assert factory.endpoint_concurrency == 1
        stalled = ThreadPoolExecutor(1)
        stuck = stalled.submit(
            lambda: factory.client(session(), "ec2", ["DescribeVpcs"]).describe_vpcs(
                VpcIds=["vpc-stalled"]))
        while endpoint.stalled == 0:
            time.sleep(0.01)
        others = ThreadPoolExecutor(1).submit(hammer, factory, 3, 2)
        done = others.result(timeout=50)  # with the slot held they would wait for 60 s
        assert done == [[]] * 6 and not stuck.done()
        endpoint.release()
        with pytest.raises(Exception):  # noqa: B017 - closed unanswered: any failure will do
            stuck.result(timeout=30)
        stalled.shutdown()


def test_a_timed_out_call_is_retried_only_while_an_attempt_fits_in_its_time(creds: None) -> None:
    """Six attempts are allowed, but a stalled endpoint costs a call two read timeouts (the
    third would end after ``call_timeout``), not six."""
    with SlowEndpoint() as endpoint:
        factory = ClientFactory(endpoint_url=endpoint.url, endpoint_concurrency=0,
                                max_attempts=6, read_timeout=1.0, call_timeout=2.7)
        ec2 = factory.client(session(), "ec2", ["DescribeVpcs"])
        with pytest.raises(ReadTimeoutError):
            ec2.describe_vpcs(VpcIds=["vpc-stalled"])
        assert endpoint.stalled == 2
