"""Keep secrets in the account: user data and credential-looking strings never become attributes.

``scrub`` walks an API response and returns a JSON-safe copy without user data, with every
string that looks like a credential replaced by ``REDACTED``. Everything the live collectors put
into a Resource (attributes, tags, names) goes through it, so nothing secret can reach a finding,
a report or an error message.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from typing import Any

REDACTED = "[redacted: looks like a credential]"

# Keys dropped wherever they appear (compared case-insensitively, without separators).
_DROP_KEYS = frozenset(
    {
        "userdata",
        "password",
        "passwd",
        "secret",
        "secretaccesskey",
        "sessiontoken",
        "privatekey",
        "keymaterial",
    }
)

_CREDENTIAL = re.compile(
    r"""
    \b(?:AKIA|ASIA)[A-Z0-9]{16}\b                       # AWS access key ids
    | aws_secret_access_key | aws_session_token          # credential file / env spellings
    | -----BEGIN\ [A-Z0-9 ]*PRIVATE\ KEY-----            # PEM private keys
    | \b(?:password|passwd|pwd|secret|secret_key|api_key|apikey|token|auth_token)\s*[=:]\s*\S
    | \b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@          # user:password@ in a URL
    """,
    re.IGNORECASE | re.VERBOSE,
)


# API responses repeat the same short strings (states, types, zones, tag keys) thousands of
# times; remembering each verdict makes scrubbing 5,000 volumes cheap.
_REMEMBERED = 200_000
_NOT_LETTERS = re.compile(r"[^a-z]")


def looks_like_credential(text: str) -> bool:
    return bool(_CREDENTIAL.search(text))


@functools.lru_cache(maxsize=_REMEMBERED)
def scrub_text(text: str) -> str:
    return REDACTED if _CREDENTIAL.search(text) else text


@functools.lru_cache(maxsize=_REMEMBERED)
def _normal_key(key: str) -> str:
    return _NOT_LETTERS.sub("", key.lower())


def scrub(value: Any) -> Any:
    """A JSON-safe copy of ``value`` with user data dropped and credential-like strings redacted.

    datetimes become ISO 8601 strings; bytes (never expected) are dropped.
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            skey = str(key)
            if _normal_key(skey) in _DROP_KEYS or skey == "ResponseMetadata":
                continue
            if isinstance(item, bytes | bytearray):
                continue
            out[scrub_text(skey)] = scrub(item)
        return out
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value if not isinstance(v, bytes | bytearray)]
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    return value
