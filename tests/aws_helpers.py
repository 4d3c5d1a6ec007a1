"""Fixtures and helpers for the live-audit tests: moto in-process, a moto server on 127.0.0.1,
fault injection through botocore events, and a recorder of every API call gpuaudit sends.

Import the fixtures you use into the test module (``from tests.aws_helpers import aws, ...``).
Importing this module installs the call recorder: a botocore ``before-send`` handler, registered
first on every session, that notes each request whose User-Agent carries gpuaudit's marker.
``declared_only`` (autouse in every test module that imports it) fails a test in which gpuaudit
sent an operation that no collector declared.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import botocore.handlers
import botocore.session
import pytest
from botocore.awsrequest import AWSResponse

from scanner.aws.clients import USER_AGENT

ACCOUNT = "123456789012"
REGION = "us-east-1"
AMI = "ami-12c6146b"  # an AMI moto knows

FAKE_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_DISABLE_REQUEST_COMPRESSION": "true",
    "AWS_MAX_ATTEMPTS": "2",
}
CLEARED_ENV = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_EC2",
    "AWS_ENDPOINT_URL_AUTO_SCALING",
    "AWS_ENDPOINT_URL_STS",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


# -- the call recorder -------------------------------------------------------------------------


class CallRecorder:
    """(service id, operation) of every request gpuaudit sent, as botocore's events name them."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, request: Any = None, event_name: str = "", **_: Any) -> None:
        agent = request.headers.get("User-Agent", b"") if request is not None else b""
        if isinstance(agent, bytes):
            agent = agent.decode("utf-8", "replace")
        if USER_AGENT not in agent:
            return  # test seeding, not gpuaudit
        _, service_id, operation = event_name.split(".", 2)
        with self._lock:
            self.calls.append((service_id, operation))

    def mark(self) -> int:
        return len(self.calls)

    def since(self, mark: int) -> list[tuple[str, str]]:
        return self.calls[mark:]


RECORDER = CallRecorder()
if not any(spec[1] is RECORDER for spec in botocore.handlers.BUILTIN_HANDLERS):
    botocore.handlers.BUILTIN_HANDLERS.insert(
        0, ("before-send", RECORDER, botocore.handlers.REGISTER_FIRST)
    )

_SERVICE_IDS: dict[str, str] = {}


def service_id(service: str) -> str:
    """boto3's service name ("autoscaling") as events spell it ("auto-scaling")."""
    if service not in _SERVICE_IDS:
        model = botocore.session.get_session().get_service_model(service)
        _SERVICE_IDS[service] = model.service_id.hyphenize()
    return _SERVICE_IDS[service]


def declared_set() -> set[tuple[str, str]]:
    from scanner.aws.clients import ALWAYS_ALLOWED
    from scanner.aws.registry import declared_calls
    from scanner.aws.spend import SPEND_CALLS  # `gpuaudit spend`

    pairs = {(c.service, c.operation) for c in (*declared_calls(), *SPEND_CALLS)}
    pairs |= set(ALWAYS_ALLOWED)
    return {(service_id(s), op) for s, op in pairs}


@pytest.fixture(autouse=True)
def declared_only() -> Iterator[None]:
    mark = RECORDER.mark()
    yield
    undeclared = sorted(set(RECORDER.since(mark)) - declared_set())
    assert not undeclared, f"gpuaudit sent undeclared operations: {undeclared}"


# -- environments ------------------------------------------------------------------------------


@pytest.fixture()
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Fake credentials, no real profile or endpoint leaking in from the machine."""
    for name in CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in FAKE_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))


@pytest.fixture()
def aws(aws_env: None) -> Iterator[None]:
    """moto in-process."""
    from moto import mock_aws

    with mock_aws():
        yield


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MotoServer:
    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)

    def start(self) -> None:
        import logging

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server.start()

    def stop(self) -> None:
        self._server.stop()

    def reset(self) -> None:
        import urllib.request

        req = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()


@pytest.fixture(scope="module")
def moto_server_module() -> Iterator[MotoServer]:
    server = MotoServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture()
def moto_server(moto_server_module: MotoServer, aws_env: None) -> Iterator[MotoServer]:
    """A moto server on 127.0.0.1 (one per module), emptied before each test."""
    moto_server_module.reset()
    yield moto_server_module


_CLIENTS: dict[tuple[str, ...], Any] = {}


def client(service: str, *, region: str = REGION, endpoint_url: str | None = None) -> Any:
    """A plain boto3 client for seeding (not gpuaudit's, so the recorder ignores it).

    Cached across tests (building a client is the slow part of a moto test); the key includes
    every setting that changes where it sends requests."""
    import boto3

    env = tuple(
        f"{k}={v}"
        for k, v in sorted(os.environ.items())
        if k.startswith("AWS_ENDPOINT_URL") or k in FAKE_ENV
    )
    key = (service, region, endpoint_url or "", *env)
    if key not in _CLIENTS:
        _CLIENTS[key] = boto3.client(service, region_name=region, endpoint_url=endpoint_url)
    return _CLIENTS[key]


# -- fault injection ---------------------------------------------------------------------------


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def http_response(status: int, body: str, content_type: str = "text/xml") -> AWSResponse:
    return AWSResponse(
        "https://fault.invalid/", status, {"Content-Type": content_type}, _Raw(body.encode())
    )


def ec2_error(code: str, message: str = "injected by the test") -> str:
    return (
        f"<Response><Errors><Error><Code>{code}</Code><Message>{message}</Message></Error>"
        "</Errors><RequestID>test</RequestID></Response>"
    )


def query_error(code: str, message: str = "injected by the test") -> str:
    return (
        f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code>"
        f"<Message>{message}</Message></Error><RequestId>test</RequestId></ErrorResponse>"
    )


class Fault:
    """Answers one operation with an HTTP error, counting the attempts botocore made."""

    def __init__(self, status: int, body: str, content_type: str = "text/xml") -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.attempts = 0

    def __call__(self, **_: Any) -> AWSResponse:
        self.attempts += 1
        return http_response(self.status, self.body, self.content_type)


def session_maker(faults: dict[str, Callable[..., Any]]) -> Callable[[str | None], Any]:
    """A gpuaudit session maker whose sessions answer ``before-send.<service-id>.<Op>`` events
    with the given handlers (registered first, ahead of moto)."""

    def make(profile: str | None) -> botocore.session.Session:
        bs = botocore.session.Session(profile=profile)
        events = bs.get_component("event_emitter")
        for event, handler in faults.items():
            events.register_first(event, handler)
        return bs

    return make


def by_kind(resources: list[Any], kind: str) -> list[Any]:
    return [r for r in resources if r.kind == kind]


def one(resources: list[Any], kind: str, rid: str | None = None) -> Any:
    hits = [r for r in by_kind(resources, kind) if rid is None or r.id == rid]
    assert len(hits) == 1, f"expected one {kind} {rid or ''}, got {[r.id for r in hits]}"
    return hits[0]


def env_without_aws_endpoints() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}


def empty_answer(action: str) -> bytes:
    """The EC2 answer to ``action`` with no items (its root element is ``<ActionResponse>``)."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<{action}Response xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
        f"<requestId>r-1</requestId></{action}Response>"
    ).encode()


FAULT = (
    b'<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error>'
    b"<Code>UnauthorizedOperation</Code><Message>denied</Message></Error></Errors>"
    b"<RequestID>r-2</RequestID></Response>"
)


class SlowEndpoint:
    """An HTTP endpoint that answers every EC2 action with no items after ``delay`` seconds (a
    denial when the request asks for VPC ``vpc-denied``; no answer at all, until ``release()``,
    when it asks for ``vpc-stalled``) and records how many requests it held at once."""

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests = 0
        self.stalled = 0
        self._released = threading.Event()
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # no 40 ms wait between headers and body

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if b"vpc-stalled" in body:
                    with endpoint._lock:
                        endpoint.stalled += 1
                    endpoint._released.wait()
                    self.close_connection = True
                    return  # closed unanswered
                with endpoint._lock:
                    endpoint.requests += 1
                    endpoint.in_flight += 1
                    endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
                time.sleep(endpoint.delay)
                with endpoint._lock:
                    endpoint.in_flight -= 1
                denied = b"vpc-denied" in body
                action = urllib.parse.parse_qs(body.decode()).get("Action", ["DescribeVpcs"])[0]
                payload = FAULT if denied else empty_answer(action)
                self.send_response(403 if denied else 200)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SlowEndpoint:
        self.thread.start()
        return self

    def release(self) -> None:
        self._released.set()

    def __exit__(self, *_: Any) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()
