"""The one read-only client factory every live AWS call goes through.

A client is made for a set of declared operations. A botocore ``before-parameter-build`` handler
refuses any other operation before anything is built or sent, so a write (or an undeclared read)
cannot leave the process even by mistake. Reads that expose secrets can never be declared.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import boto3
from botocore.client import BaseClient
from botocore.config import Config
from botocore.exceptions import ConnectionClosedError, ConnectTimeoutError, ReadTimeoutError

from scanner import __version__
from scanner.aws.answers import check_answer
from scanner.aws.client_classes import shared_classes
from scanner.aws.deadline import Deadline

USER_AGENT = f"gpuaudit/{__version__}"

# Always allowed, whatever a collector declared: finding out who we are and assuming audit roles.
ALWAYS_ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {("sts", "AssumeRole"), ("sts", "GetCallerIdentity")}
)

# Reads that return secrets, credentials or user data by construction. Declaring one is a
# programming error (``check_declarable``); tests/test_secrets_undeclarable.py checks that each
# is an operation of botocore's models, so a misspelt entry cannot hide the real one.
SECRET_READS: frozenset[tuple[str, str]] = frozenset(
    {
        ("ec2", "GetPasswordData"),
        ("ec2", "GetConsoleOutput"),
        ("ec2", "GetConsoleScreenshot"),
        ("ec2", "GetLaunchTemplateData"),  # returns the instance's user data
        ("ec2", "DescribeInstanceAttribute"),  # userData attribute
        ("ec2", "DescribeVpnConnections"),  # the tunnels' pre-shared keys
        ("ec2", "GetVpnConnectionDeviceSampleConfiguration"),  # the same, as a device config
        ("ec2", "GetInstanceUefiData"),  # UEFI variables (Secure Boot keys)
        ("sts", "GetSessionToken"),  # credentials
        ("sts", "GetFederationToken"),
        ("sagemaker", "DescribeNotebookInstanceLifecycleConfig"),  # boot scripts: user data
        ("sagemaker", "DescribeStudioLifecycleConfig"),
        ("lambda", "GetFunction"),  # environment variables
        ("lambda", "GetFunctionConfiguration"),
        ("ecr", "GetAuthorizationToken"),  # a registry password
        ("ecr-public", "GetAuthorizationToken"),
        ("codeartifact", "GetAuthorizationToken"),
        ("redshift", "GetClusterCredentials"),
        ("redshift", "GetClusterCredentialsWithIAM"),
        ("redshift-serverless", "GetCredentials"),
        ("sso", "GetRoleCredentials"),
        ("cognito-identity", "GetCredentialsForIdentity"),
        ("cognito-identity", "GetOpenIdToken"),
        ("appsync", "ListApiKeys"),  # the keys' values
        ("apigateway", "GetApiKey"),
        ("apigateway", "GetApiKeys"),
        ("glue", "GetConnection"),  # connection passwords
        ("glue", "GetConnections"),
    }
)
SECRET_SERVICES: frozenset[str] = frozenset({"ssm", "secretsmanager"})
READ_PREFIXES: tuple[str, ...] = ("Describe", "List", "Get")

DEFAULT_MAX_ATTEMPTS = 6
LOCAL_ENDPOINT_CONCURRENCY = 1  # requests in flight to an emulator on this machine (see below)
# A request that has held its lane this long is taken for stalled: it stops holding the others
# back (it goes on until its own read timeout). The largest answers of the benchmark estate take
# moto about 2 s to render; a stalled one never ends.
LANE_HOLD_SECONDS = 5.0
CONNECT_TIMEOUT = 10.0
# No byte for this long and the attempt gives up (botocore's default is 60 s; our calls are list
# pages of at most 1,000 items, which AWS starts answering within seconds).
READ_TIMEOUT = 30.0
# A call whose attempt timed out is retried only while another whole attempt fits in this: a
# stalled endpoint costs a call at most a minute, not six read timeouts.
CALL_TIMEOUT = 60.0


_STARTED = "gpuaudit_started"  # key in botocore's request context: when the call began


class ReadOnlyViolation(Exception):
    """An operation outside the declared read-only set was attempted (and not sent)."""


@dataclass(frozen=True)
class Operation:
    """One declared API operation, e.g. ``Operation("ec2", "DescribeVolumes")``."""

    service: str
    name: str

    def __str__(self) -> str:
        return f"{self.service}:{self.name}"


def check_declarable(service: str, operation: str) -> None:
    """Raise ValueError for an operation no collector may ever declare."""
    if service in SECRET_SERVICES or (service, operation) in SECRET_READS:
        raise ValueError(f"{service}:{operation} exposes secrets and may not be declared")
    if not operation.startswith(READ_PREFIXES):
        raise ValueError(f"{service}:{operation} is not a read operation")


CallObserver = Callable[[str, str], None]


def is_loopback(url: str | None) -> bool:
    """True for an endpoint on this machine (a local emulator): localhost, 127.0.0.0/8, ::1."""
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ClientFactory:
    """Makes boto3 clients restricted to declared operations, with adaptive retries.

    ``endpoint_url`` sends every service to one endpoint (moto server, LocalStack); without it
    boto3's own settings apply (``AWS_ENDPOINT_URL``, ``AWS_ENDPOINT_URL_<SERVICE>``, config).
    ``on_call(service, operation)`` is told about every call that passed the guard.

    ``endpoint_concurrency`` bounds the requests in flight to ``endpoint_url`` (0: no bound).
    By default it is 1 for an endpoint on this machine: a local emulator is one Python process,
    and threads rendering large answers side by side fight over its GIL (the benchmark's
    5,500 volumes and 500 instances cost moto 3.5 s of CPU one at a time, 4.3-4.5 s two at a
    time, 4.3-4.9 s all at once), while the audit's threads parse one answer as the next is
    rendered. Many small requests go about 10% faster with 2 (24 empty regions). Real AWS (or a
    remote endpoint) is not bounded. The bound is one lane for every region, in which a request
    that has held its slot for ``lane_hold`` seconds stops counting (``EndpointLane``).

    ``deadline`` is the audit's: no request is sent after it, and no single attempt may take
    longer than the whole audit is given.
    """

    def __init__(
        self,
        *,
        endpoint_url: str | None = None,
        max_attempts: int | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        call_timeout: float = CALL_TIMEOUT,
        # A region's client of a service is shared by up to 4 collectors whose independent
        # list calls go side by side (ec2: up to 10 at once); botocore's default pool of 10
        # would discard (and warn about) the connections beyond it.
        max_pool_connections: int = 16,
        endpoint_concurrency: int | None = None,
        lane_hold: float = LANE_HOLD_SECONDS,
        deadline: Deadline | None = None,
    ) -> None:
        self.endpoint_url = endpoint_url
        if endpoint_concurrency is None:
            endpoint_concurrency = LOCAL_ENDPOINT_CONCURRENCY if is_loopback(endpoint_url) else 0
        self.endpoint_concurrency = endpoint_concurrency if endpoint_url else 0
        self._lane = (
            EndpointLane(self.endpoint_concurrency, lane_hold)
            if self.endpoint_concurrency > 0
            else None
        )
        self.deadline = deadline or Deadline(None)
        # No single attempt outlives the audit's deadline.
        whole = self.deadline.seconds
        if whole is not None:
            connect_timeout = min(connect_timeout, whole)
            read_timeout = min(read_timeout, whole)
        self.read_timeout = read_timeout
        self.call_timeout = call_timeout
        # One lock per service: the first client of a service loads its model into the loader
        # the sessions share; the others wait for it instead of parsing the same JSON again.
        self._creating: dict[str, threading.Lock] = {}
        attempts = max_attempts
        if attempts is None:
            env = os.environ.get("AWS_MAX_ATTEMPTS", "")
            attempts = int(env) if env.isdigit() and int(env) > 0 else DEFAULT_MAX_ATTEMPTS
        self.max_attempts = attempts
        self.config = Config(
            # total_max_attempts counts the first try (botocore's max_attempts counts retries).
            retries={"mode": "adaptive", "total_max_attempts": attempts},
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            max_pool_connections=max_pool_connections,
            user_agent_extra=USER_AGENT,
        )
        self._lock = threading.Lock()
        self.calls: dict[str, int] = {}

    def client(
        self,
        session: boto3.Session,
        service: str,
        operations: Iterable[str],
        *,
        region: str | None = None,
        on_call: CallObserver | None = None,
    ) -> BaseClient:
        """A client for ``service`` that can only call ``operations`` (plus sts identity)."""
        allowed = set(operations)
        for op in allowed:
            check_declarable(service, op)
        if service == "sts":
            allowed |= {op for svc, op in ALWAYS_ALLOWED if svc == "sts"}
        kwargs: dict[str, Any] = {"config": self.config}
        if region:
            kwargs["region_name"] = region
        if self.endpoint_url:
            kwargs["endpoint_url"] = self.endpoint_url
        with self._lock:
            creating = self._creating.setdefault(service, threading.Lock())
        with creating, shared_classes():
            # call-overload: the stubs type a client per literal service name; any service here
            client = session.client(service, **kwargs)  # type: ignore[call-overload]
        endpoint = client._endpoint
        endpoint.http_session = _Session(endpoint.http_session, self._lane)
        events = client.meta.events
        # The service name as the events spell it ("ec2", "auto-scaling"), for error messages.
        events.register_first("before-parameter-build", _Guard(service, frozenset(allowed)))
        events.register("before-call", _Counter(self, service, on_call))
        # After botocore's own before-send handlers (the adaptive rate limiter may wait there).
        events.register("before-send", self._before_send)
        events.register_first("needs-retry", self._needs_retry)
        # A reply that is not the service's answer is a failure, never an empty answer.
        events.register("before-parse", check_answer)
        return cast(BaseClient, client)  # Any above: every client is a BaseClient

    def _before_send(self, **_: Any) -> None:
        """Nothing is sent after the audit's deadline (retries included)."""
        self.deadline.check()

    def _needs_retry(
        self,
        caught_exception: BaseException | None = None,
        request_dict: dict[str, Any] | None = None,
        **_: Any,
    ) -> None:
        """A timed-out attempt is retried only while another whole attempt fits in the call's
        time (``call_timeout``); then the timeout is the call's failure."""
        if not isinstance(caught_exception, ReadTimeoutError | ConnectTimeoutError):
            return
        context = (request_dict or {}).get("context") or {}
        started = context.get(_STARTED)
        if started is not None and time.monotonic() - started + self.read_timeout > (
            self.call_timeout
        ):
            raise caught_exception

    def _count(self, service: str, operation: str) -> None:
        with self._lock:
            key = f"{service}:{operation}"
            self.calls[key] = self.calls.get(key, 0) + 1


class EndpointLane:
    """At most ``slots`` requests in flight to one endpoint, one lane for every region.

    A request that has held its slot for ``hold`` seconds is taken for stalled and stops
    counting (it carries on until its own read timeout): a stalled call in one region cannot
    hold every other region's requests back for its whole timeout."""

    def __init__(self, slots: int, hold: float = LANE_HOLD_SECONDS) -> None:
        self.slots = slots
        self.hold = hold
        self._cond = threading.Condition()
        self._holders: dict[int, float] = {}  # token -> when it took its slot
        self._tokens = itertools.count()

    def enter(self) -> int:
        with self._cond:
            while True:
                now = time.monotonic()
                stalled = [t for t, since in self._holders.items() if now - since >= self.hold]
                for token in stalled:
                    del self._holders[token]
                if len(self._holders) < self.slots:
                    token = next(self._tokens)
                    self._holders[token] = now
                    return token
                first = min(self._holders.values())
                self._cond.wait(timeout=max(first + self.hold - now, 0.001))

    def leave(self, token: int) -> None:
        with self._cond:
            if self._holders.pop(token, None) is not None:
                self._cond.notify()

    @property
    def in_flight(self) -> int:
        with self._cond:
            return len(self._holders)


class _Session:
    """botocore's HTTP session, sending inside the endpoint's lane (when there is one) and
    refusing an answer cut short.

    botocore reads the whole body inside ``send`` (non-streaming operations), so a lane's slot
    is held until the answer has arrived, and released before it is parsed. botocore does not
    hold the body to its Content-Length (urllib3's check is turned off): a connection that
    closes midway hands the parser half an answer. Here that is a ``ConnectionClosedError``, as
    a connection closed before the headers is: retried, then reported as such."""

    def __init__(self, inner: Any, lane: EndpointLane | None) -> None:
        self._inner = inner
        self._lane = lane

    def send(self, request: Any) -> Any:
        if self._lane is None:
            response = self._inner.send(request)
        else:
            token = self._lane.enter()
            try:
                response = self._inner.send(request)
            finally:
                self._lane.leave(token)
        if not getattr(request, "stream_output", False):
            _whole(request, response)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _whole(request: Any, response: Any) -> None:
    declared = response.headers.get("content-length")
    if declared is None or not str(declared).isdigit():
        return
    got = len(response.content)
    if got < int(declared):
        raise ConnectionClosedError(
            endpoint_url=request.url,
            error=f"the answer was cut short: {got} of {int(declared)} bytes",
        )


class _Guard:
    def __init__(self, service: str, allowed: frozenset[str]) -> None:
        self.service = service
        self.allowed = allowed

    def __call__(self, model: Any = None, **_: Any) -> None:
        name = getattr(model, "name", None)
        if name not in self.allowed:
            raise ReadOnlyViolation(
                f"{self.service}:{name} refused: not declared by the collector "
                "(gpuaudit is read-only; nothing was sent)"
            )


class _Counter:
    def __init__(self, factory: ClientFactory, service: str, on_call: CallObserver | None) -> None:
        self.factory = factory
        self.service = service
        self.on_call = on_call

    def __call__(self, model: Any = None, context: dict[str, Any] | None = None,
                 **_: Any) -> None:
        name = str(getattr(model, "name", "?"))
        if context is not None:
            context[_STARTED] = time.monotonic()  # the call's start, for its retries' budget
        self.factory._count(self.service, name)
        if self.on_call is not None:
            self.on_call(self.service, name)
