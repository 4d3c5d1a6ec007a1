"""Turn a failed AWS call into a short, honest reason (never a traceback, never a secret)."""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError

from scanner.aws.clients import ReadOnlyViolation
from scanner.aws.secrets import scrub_text

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
    if isinstance(exc, EndpointConnectionError | ConnectTimeoutError | NoCredentialsError):
        return True
    return error_code(exc) in SERVICE_WIDE_CODES


def error_code(exc: BaseException) -> str | None:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code") or "") or None
    return None


def describe(exc: BaseException) -> str:
    """One line saying why a call failed, in words a CI log reader can act on."""
    return scrub_text(_describe(exc))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        code = str(err.get("Code") or "Unknown")
        message = str(err.get("Message") or "").strip()
        attempts = exc.response.get("ResponseMetadata", {}).get("RetryAttempts") or 0
        if code in THROTTLE_CODES:
            n = attempts + 1
            return f"throttled ({code}) after {n} attempt{'s' if n > 1 else ''}"
        if code in DENIED_CODES:
            return f"access denied ({code}): {message}" if message else f"access denied ({code})"
        return f"{code}: {message}" if message else code
    if isinstance(exc, EndpointConnectionError | ConnectTimeoutError):
        url = getattr(exc, "kwargs", {}).get("endpoint_url", "")
        return f"endpoint unreachable: {url}" if url else f"endpoint unreachable: {exc}"
    if isinstance(exc, ReadTimeoutError):
        return f"endpoint timed out: {exc}"
    if isinstance(exc, ResponseParserError):
        return (
            "unreadable response (the endpoint may not implement this operation): "
            + str(exc).splitlines()[0][:200]
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
