"""An HTTP fault proxy for live-audit tests: forwards to a moto server (``tests/live_server.py``)
and answers chosen AWS operations the way they fail in the field.

gpuaudit talks to the proxy exactly as it would to AWS (``--endpoint-url``); the proxy reads
each request's operation (``Action=`` of the query body for EC2, Auto Scaling and STS; the
``X-Amz-Target`` header for the JSON services, KMS, Organizations and SageMaker; the method and
path, matched against the service model's request URIs, for the REST-JSON services EKS and
Batch) and its region (the SigV4 credential scope), and either forwards it upstream or injects
a fault:

=========  ==================================================================================
deny       403 with the service's own access-denied error (UnauthorizedOperation, AccessDenied,
           AccessDeniedException)
throttle   the service's throttling error (EC2: 503 RequestLimitExceeded; query: 400
           Throttling; JSON: 400 ThrottlingException)
500        500 with the service's InternalError
close      the request is read, the connection closed without an answer
truncate   the real answer's status and headers (its full Content-Length), half its body, close
garbage    200 with the first half of the real answer as a whole body (malformed XML / JSON)
html       200 text/html: a captive portal's sign-in page
empty      200 with an empty body
stall      the request is read and never answered (until ``release()`` or the proxy stops)
=========  ==================================================================================

An operation is named alone (``ListClusters``: in every service that has it) or with its service
(``eks:ListClusters``). ``answer(operation, body)`` serves a fixed answer for an operation the
emulator lacks (moto has no GetEbsDefaultKmsKeyId): a fake only where no real part exists.
``rewrite(operation, edit)`` passes each successful upstream answer to that operation through
``edit(request_body, answer) -> answer`` (what a misbehaving paginator, cache or endpoint would
send: a repeated page, an answer about another region). ``remember()`` keeps the upstream's
successful answers by request (method, path, region, target, body) and serves a request seen
before from memory: for an estate that is only read once seeded, every audit after the first
then gets moto's own answers without moto's work (a module of 47 audits: 25 s of the moto
server's CPU).
"""

from __future__ import annotations

import http.client
import re
import socket
import threading
import urllib.parse
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

FAULTS = ("deny", "throttle", "500", "close", "truncate", "garbage", "html", "empty", "stall")

_SCOPE = re.compile(r"Credential=[^/]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request")
# The wire protocol of each service gpuaudit calls (botocore's service models say the same).
PROTOCOLS = {"ec2": "ec2", "autoscaling": "query", "sts": "query", "kms": "json",
             "organizations": "json", "sagemaker": "json", "ce": "json", "eks": "rest-json",
             "batch": "rest-json", "s3": "rest-xml"}
# S3 (REST-XML): the operation is the method, whether the path names a bucket, and the
# subresource of the query string.
_S3_OPERATIONS = {("GET", False, ""): "ListBuckets",
                  ("GET", True, "tagging"): "GetBucketTagging",
                  ("GET", True, "intelligent-tiering"):
                      "ListBucketIntelligentTieringConfigurations",
                  ("GET", True, "lifecycle"): "GetBucketLifecycleConfiguration"}
# Well-formed (XHTML, as many portals serve): an XML parser reads it without complaint.
HTML_PAGE = (b"<html><head><title>Sign in to the guest network</title></head>"
             b"<body><form action=\"/login\"><input name=\"user\"/></form></body></html>\n")


def _error(protocol: str, fault: str, operation: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of the service's own error for ``fault``."""
    codes = {
        "ec2": {"deny": (403, "UnauthorizedOperation", "You are not authorized to perform "
                         f"this operation. ({operation})"),
                "throttle": (503, "RequestLimitExceeded", "Request limit exceeded."),
                "500": (500, "InternalError", "An internal error has occurred.")},
        "query": {"deny": (403, "AccessDenied", f"User is not authorized to perform {operation}"),
                  "throttle": (400, "Throttling", "Rate exceeded"),
                  "500": (500, "InternalFailure", "An internal error has occurred.")},
        "json": {"deny": (400, "AccessDeniedException", f"not authorized to perform {operation}"),
                 "throttle": (400, "ThrottlingException", "Rate exceeded"),
                 "500": (500, "InternalFailure", "An internal error has occurred.")},
        "rest-xml": {"deny": (403, "AccessDenied", "Access Denied"),
                     "throttle": (503, "SlowDown", "Please reduce your request rate."),
                     "500": (500, "InternalError", "We encountered an internal error.")},
        "rest-json": {"deny": (403, "AccessDeniedException",
                               f"not authorized to perform {operation}"),
                      "throttle": (429, "ThrottlingException", "Rate exceeded"),
                      "500": (500, "InternalFailure", "An internal error has occurred.")},
    }
    status, code, message = codes[protocol][fault]
    if protocol == "ec2":
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>{code}'
                f"</Code><Message>{message}</Message></Error></Errors>"
                "<RequestID>f4ul7-1</RequestID></Response>")
        return status, "text/xml;charset=UTF-8", body.encode()
    if protocol == "rest-xml":
        body = (f"<Error><Code>{code}</Code><Message>{message}</Message>"
                "<RequestId>f4ul7-1</RequestId></Error>")
        return status, "application/xml", body.encode()
    if protocol == "query":
        body = (f"<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}"
                "</Message></Error><RequestId>f4ul7-1</RequestId></ErrorResponse>")
        return status, "text/xml", body.encode()
    body = f'{{"__type":"{code}","message":"{message}"}}'
    ctype = "application/json" if protocol == "rest-json" else "application/x-amz-json-1.1"
    return status, ctype, body.encode()


class FaultProxy:
    """A threaded proxy on 127.0.0.1 in front of ``upstream``; a context manager.

    ``fail(operation, fault, region=None)`` makes every later request for that operation (in
    that region, else in every region) fail that way; ``clear()`` forgets all faults. ``seen``
    counts forwarded and faulted requests by (region, service, operation); ``injected`` counts
    the faults by (region, operation, fault)."""

    def __init__(self, upstream: str) -> None:
        parts = urllib.parse.urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.seen: Counter[tuple[str, str, str]] = Counter()
        self.injected: Counter[tuple[str, str, str]] = Counter()
        self._faults: dict[tuple[str | None, str], str] = {}
        self._answers: dict[str, tuple[str, bytes]] = {}
        self._rewrites: dict[str, Callable[[bytes, bytes], bytes]] = {}
        self._memory: dict[tuple[Any, ...], tuple[int, dict[str, str], bytes]] | None = None
        self._lock = threading.Lock()
        self._released = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as AWS and moto speak
            # headers and body leave in separate writes: with Nagle's algorithm the body
            # waits for the client's delayed ACK of the headers, 40 ms on every answer
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                proxy._handle(self)

            def do_GET(self) -> None:
                proxy._handle(self)

            def log_message(self, *_: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 64

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # -- configuration -------------------------------------------------------------------------

    def fail(self, operation: str, fault: str, *, region: str | None = None) -> None:
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r} (known: {', '.join(FAULTS)})")
        service, sep, name = operation.rpartition(":")
        if sep:  # boto3's service name as the request's credential scope spells it
            operation = f"{_signing_name(service)}:{name}"
        with self._lock:
            self._faults[(region, operation)] = fault

    def answer(self, operation: str, body: bytes, content_type: str = "text/xml") -> None:
        with self._lock:
            self._answers[operation] = (content_type, body)

    def rewrite(self, operation: str, edit: Callable[[bytes, bytes], bytes]) -> None:
        with self._lock:
            self._rewrites[operation] = edit

    def remember(self) -> None:
        """From now on, answer a request seen before with the upstream's answer to it (only
        for an upstream whose state no longer changes)."""
        with self._lock:
            self._memory = {}

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self._rewrites.clear()
            self.seen.clear()
            self.injected.clear()
        self.release()
        self._released = threading.Event()

    def release(self) -> None:
        """Let every stalled request go (its connection is then closed unanswered)."""
        self._released.set()

    def calls(self, region: str | None = None) -> set[str]:
        """``service:Operation`` of every request seen (in ``region``)."""
        with self._lock:
            return {f"{s}:{op}" for (r, s, op) in self.seen if region in (None, r)}

    # -- serving -------------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        region, service = "?", "?"
        m = _SCOPE.search(h.headers.get("Authorization") or "")
        if m:
            region, service = m.group(1), m.group(2)
        operation = _operation(h, body, service)
        with self._lock:
            self.seen[(region, service, operation)] += 1
            fault, named = None, operation
            for named in (f"{service}:{operation}", operation):  # "eks:ListClusters" first
                fault = self._faults.get((region, named)) or self._faults.get((None, named))
                if fault:
                    break
            if fault:
                self.injected[(region, named, fault)] += 1
            canned = self._answers.get(operation)
            edit = self._rewrites.get(operation)
            released = self._released
        protocol = PROTOCOLS.get(service, "query")
        if fault in ("deny", "throttle", "500"):
            status, ctype, payload = _error(protocol, fault, operation)
            return _send(h, status, ctype, payload)
        if fault == "close":
            h.close_connection = True
            return _hang_up(h)
        if fault == "stall":
            released.wait()
            h.close_connection = True
            return _hang_up(h)
        if fault == "html":
            return _send(h, 200, "text/html; charset=utf-8", HTML_PAGE)
        if fault == "empty":
            return _send(h, 200, "text/xml", b"")
        if canned is not None:  # what the emulator lacks, faulted like a real answer
            status, headers, answer = 200, {"Content-Type": canned[0]}, canned[1]
        else:
            status, headers, answer = self._recall(h, body, region)
        if edit is not None and status == 200:
            answer = edit(body, answer)
        if fault == "truncate":
            _send(h, status, headers.get("Content-Type", "text/xml"), answer[: len(answer) // 2],
                  length=len(answer))
            h.close_connection = True
            return _hang_up(h)
        ctype = headers.get("Content-Type", "text/xml")
        if fault == "garbage":
            return _send(h, 200, ctype, answer[: len(answer) // 2])
        return _send(h, status, ctype, answer)

    def _recall(self, h: BaseHTTPRequestHandler, body: bytes, region: str
                ) -> tuple[int, dict[str, str], bytes]:
        key = (h.command, h.path, region, h.headers.get("X-Amz-Target"), body)
        with self._lock:
            memory = self._memory
            known = None if memory is None else memory.get(key)
        if known is not None:
            return known
        answer = self._forward(h, body)
        if memory is not None and answer[0] == 200:
            with self._lock:
                memory[key] = answer
        return answer

    def _forward(self, h: BaseHTTPRequestHandler, body: bytes) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(*self.upstream, timeout=120)
        try:
            headers = {k: v for k, v in h.headers.items() if k.lower() not in ("connection",)}
            conn.request(h.command, h.path, body=body, headers=headers)
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read()
        finally:
            conn.close()

    # -- lifetime ------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _operation(h: BaseHTTPRequestHandler, body: bytes, service: str = "?") -> str:
    target = h.headers.get("X-Amz-Target")
    if target:
        return target.rsplit(".", 1)[-1]
    query = urllib.parse.urlsplit(h.path).query
    for source in (body.decode("utf-8", "replace"), query):
        action = urllib.parse.parse_qs(source).get("Action")
        if action:
            return action[0]
    path = urllib.parse.urlsplit(h.path).path
    if service == "s3":
        keys = [k.split("=", 1)[0] for k in query.split("&") if k]
        sub = next((k for k in keys if k in ("tagging", "intelligent-tiering", "lifecycle")),
                   "")
        found = _S3_OPERATIONS.get((h.command, path.strip("/") != "", sub))
        if found:
            return found
    return _rest_operation(service, h.command, path) or f"{h.command} {path}"


def _signing_name(service: str) -> str:
    """``cloudwatch`` -> ``monitoring``: the name in a request's SigV4 credential scope."""
    import botocore.session

    try:
        meta = botocore.session.get_session().get_service_model(service).metadata
    except Exception:
        return service
    return str(meta.get("signingName") or meta.get("endpointPrefix") or service)


_REST: dict[str, list[tuple[str, re.Pattern[str], int, str]]] = {}


def _rest_operation(service: str, method: str, path: str) -> str | None:
    """A REST service's operation from its method and path (the service model's request URIs,
    ``/clusters/{name}/node-groups``); the most literal match wins."""
    if PROTOCOLS.get(service) != "rest-json":
        return None
    routes = _REST.get(service)
    if routes is None:
        import botocore.session

        model = botocore.session.get_session().get_service_model(service)
        routes = []
        for name in model.operation_names:
            http = model.operation_model(name).http
            uri = str(http.get("requestUri", "")).split("?", 1)[0]
            pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(uri))
            routes.append((str(http.get("method")), re.compile(f"^{pattern}/?$"),
                           len(re.sub(r"\{[^}]+\}", "", uri)), name))
        _REST[service] = routes
    hits = sorted((-n, name) for m, rx, n, name in routes if m == method and rx.match(path))
    return hits[0][1] if hits else None


def _send(h: BaseHTTPRequestHandler, status: int, ctype: str, payload: bytes,
          length: int | None = None) -> None:
    h.send_response(status)
    h.send_header("Content-Type", ctype)
    h.send_header("Content-Length", str(len(payload) if length is None else length))
    h.send_header("x-amzn-RequestId", "f4ul7-1")
    h.end_headers()
    h.wfile.write(payload)
    h.wfile.flush()


def _hang_up(h: BaseHTTPRequestHandler) -> None:
    """Close the client's connection now, without an answer (a reset if it still sends)."""
    try:
        h.wfile.flush()
        h.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
