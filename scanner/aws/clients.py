"""The one read-only client factory every live AWS call goes through.

A client is made for a set of declared operations. A botocore ``before-parameter-build`` handler
refuses any other operation before anything is built or sent, so a write (or an undeclared read)
cannot leave the process even by mistake. Reads that expose secrets can never be declared.
"""

from __future__ import annotations

import ipaddress
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.client import BaseClient
from botocore.config import Config

from scanner import __version__

USER_AGENT = f"gpuaudit/{__version__}"

# Always allowed, whatever a collector declared: finding out who we are and assuming audit roles.
ALWAYS_ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {("sts", "AssumeRole"), ("sts", "GetCallerIdentity")}
)

# Reads that return secrets or user data. Declaring one is a programming error.
SECRET_READS: frozenset[tuple[str, str]] = frozenset(
    {
        ("ec2", "GetPasswordData"),
        ("ec2", "GetConsoleOutput"),
        ("ec2", "GetConsoleScreenshot"),
        ("ec2", "GetLaunchTemplateData"),  # returns the instance's user data
        ("ec2", "DescribeInstanceAttribute"),  # userData attribute
        ("autoscaling", "DescribeLaunchConfigurationAttribute"),
    }
)
SECRET_SERVICES: frozenset[str] = frozenset({"ssm", "secretsmanager"})
READ_PREFIXES: tuple[str, ...] = ("Describe", "List", "Get")

DEFAULT_MAX_ATTEMPTS = 6
LOCAL_ENDPOINT_CONCURRENCY = 1  # requests in flight to an emulator on this machine (see below)


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
    remote endpoint) is not bounded.
    """

    def __init__(
        self,
        *,
        endpoint_url: str | None = None,
        max_attempts: int | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        # A region's client of a service is shared by up to 4 collectors whose independent
        # list calls go side by side (ec2: up to 10 at once); botocore's default pool of 10
        # would discard (and warn about) the connections beyond it.
        max_pool_connections: int = 16,
        endpoint_concurrency: int | None = None,
    ) -> None:
        self.endpoint_url = endpoint_url
        if endpoint_concurrency is None:
            endpoint_concurrency = LOCAL_ENDPOINT_CONCURRENCY if is_loopback(endpoint_url) else 0
        self.endpoint_concurrency = endpoint_concurrency if endpoint_url else 0
        self._lane = (
            threading.BoundedSemaphore(self.endpoint_concurrency)
            if self.endpoint_concurrency > 0
            else None
        )
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
        with creating:
            client = session.client(service, **kwargs)  # type: ignore[call-overload]
        if self._lane is not None:
            endpoint = client._endpoint
            endpoint.http_session = _Lane(endpoint.http_session, self._lane)
        # The service name as the events spell it ("ec2", "auto-scaling"), for error messages.
        client.meta.events.register_first(
            "before-parameter-build", _Guard(service, frozenset(allowed))
        )
        client.meta.events.register("before-call", _Counter(self, service, on_call))
        return client

    def _count(self, service: str, operation: str) -> None:
        with self._lock:
            key = f"{service}:{operation}"
            self.calls[key] = self.calls.get(key, 0) + 1


class _Lane:
    """An HTTP session that sends while holding the endpoint's semaphore. botocore reads the
    whole body inside ``send`` (non-streaming operations), so the slot is held until the answer
    has arrived, and released before it is parsed."""

    def __init__(self, inner: Any, semaphore: threading.BoundedSemaphore) -> None:
        self._inner = inner
        self._semaphore = semaphore

    def send(self, request: Any) -> Any:
        with self._semaphore:
            return self._inner.send(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


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

    def __call__(self, model: Any = None, **_: Any) -> None:
        name = str(getattr(model, "name", "?"))
        self.factory._count(self.service, name)
        if self.on_call is not None:
            self.on_call(self.service, name)
