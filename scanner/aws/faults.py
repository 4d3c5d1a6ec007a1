"""Turn a failed AWS call into a short, honest reason (never a traceback, never a secret)."""

from __future__ import annotations

import errno
from http.client import responses as HTTP_REASONS

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError

from scanner.aws.answers import UnreadableAnswer
from scanner.aws.clients import ReadOnlyViolation
from scanner.aws.deadline import DeadlineExceeded
from scanner.aws.secrets import scrub_text

# Out of file descriptors (this process, or the whole system): not the endpoint's fault.
FD_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE})

DENIED_CODES = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "UnauthorizedOperation",
        "UnauthorizedAccess",
        "AuthFailure",
        "OptInRequired",
        "InvalidClientTokenId",
        "ExpiredToken",
        "ExpiredTokenException",
        "UnrecognizedClientException",
        "AWSOrganizationsNotInUseException",
    }
)
THROTTLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "SlowDown",
        "EC2ThrottledException",
        "PriorRequestNotComplete",
        "ProvisionedThroughputExceededException",
    }
)


# Refusals that hold for every call of the service in the region (a disabled region, bad or
# expired credentials), as opposed to one operation's missing permission.
SERVICE_WIDE_CODES = frozenset(
    {
        "OptInRequired",
        "AuthFailure",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "ExpiredToken",
        "ExpiredTokenException",
        "SignatureDoesNotMatch",
    }
)


def service_wide(exc: BaseException) -> bool:
    """Will every other call to this service endpoint fail the same way?"""
    if out_of_files(exc):
        return False  # this process's limit, not the endpoint: the next call may get a socket
    if isinstance(exc, EndpointConnectionError | ConnectTimeoutError | NoCredentialsError):
        return True
    return error_code(exc) in SERVICE_WIDE_CODES


def out_of_files(exc: BaseException) -> bool:
    """Whether the failure (or what caused it: botocore wraps urllib3, which wraps the socket
    error) is EMFILE/ENFILE."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        cur = todo.pop()
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in FD_ERRNOS:
            return True
        kwargs = getattr(cur, "kwargs", None) if isinstance(cur, BotoCoreError) else None
        wrapped = kwargs.get("error") if isinstance(kwargs, dict) else None
        if not isinstance(wrapped, BaseException):
            wrapped = None
        todo += [cur.__cause__, cur.__context__, wrapped]
    return "[Errno 24]" in str(exc) or "[Errno 23]" in str(exc)


def error_code(exc: BaseException) -> str | None:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code") or "") or None
    return None


def describe(exc: BaseException) -> str:
    """One line saying why a call failed, in words a CI log reader can act on."""
    return scrub_text(_describe(exc))


def _attempts(n: int) -> str:
    return f"after {n} attempt{'s' if n > 1 else ''}"


def _describe(exc: BaseException) -> str:
    if out_of_files(exc):
        return (
            "too many open files: gpuaudit ran out of file descriptors (raise the limit, "
            "`ulimit -n`, or lower --max-workers)"
        )
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code = str(err.get("Code") or "Unknown")
        message = str(err.get("Message") or "").strip()
        n = (exc.response.get("ResponseMetadata", {}).get("RetryAttempts") or 0) + 1
        if code in THROTTLE_CODES:
            return f"throttled ({code}) {_attempts(n)}"
        if code in DENIED_CODES:
            return f"access denied ({code}): {message}" if message else f"access denied ({code})"
        if code.isdigit():  # botocore's reading of a 5xx whose body is no AWS error (HTML, empty)
            reason = HTTP_REASONS.get(int(code), "")
            return f"HTTP {code}{' ' + reason if reason else ''} {_attempts(n)}"
        text = f"{code}: {message}" if message else code
        return f"{text} ({_attempts(n)})" if n > 1 else text
    if isinstance(exc, DeadlineExceeded | UnreadableAnswer):
        return str(exc) if isinstance(exc, DeadlineExceeded) else f"unreadable answer: {exc}"
    if isinstance(exc, EndpointConnectionError | ConnectTimeoutError):
        url = getattr(exc, "kwargs", {}).get("endpoint_url", "")
        return f"endpoint unreachable: {url}" if url else f"endpoint unreachable: {exc}"
    if isinstance(exc, ReadTimeoutError):
        url = getattr(exc, "kwargs", {}).get("endpoint_url", "")
        return f"no answer in time (read timeout): {url}" if url else f"endpoint timed out: {exc}"
    if isinstance(exc, ConnectionClosedError):
        url = getattr(exc, "kwargs", {}).get("endpoint_url", "")
        detail = getattr(exc, "kwargs", {}).get("error")
        text = "connection closed before a whole answer arrived"
        if isinstance(detail, str):
            text += f" ({detail})"
        return text + (f": {url}" if url else "")
    if isinstance(exc, ResponseParserError):
        return (
            "unreadable answer (not the service's XML or JSON: cut short, garbled, or an "
            "operation the endpoint does not implement): " + str(exc).splitlines()[0][:160]
        )
    if isinstance(exc, NotImplementedError):
        return f"operation not implemented by the endpoint: {exc}"
    if isinstance(exc, NoCredentialsError | ProfileNotFound):
        return f"no credentials: {exc}"
    if isinstance(exc, ReadOnlyViolation):
        return str(exc)
    if isinstance(exc, BotoCoreError):
        return f"{type(exc).__name__}: {exc}"
    return f"{type(exc).__name__}: {exc}"
