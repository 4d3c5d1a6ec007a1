"""Keep secrets in the account: user data and credential-looking strings never become attributes.

``scrub`` walks an API response and returns a JSON-safe copy without user data, with every
string that looks like a credential replaced by ``REDACTED``. Everything the live collectors put
into a Resource (attributes, tags, names) goes through it, so nothing secret can reach a finding,
a report or an error message.
"""

from __future__ import annotations

import datetime as _dt
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
# times; remembering each verdict makes scrubbing 5,000 volumes cheap. Bounded, thread-safe
# enough (a lost insert only costs a second regex search).
_VERDICTS: dict[str, str] = {}
_VERDICTS_MAX = 200_000
_NORMAL_KEYS: dict[str, str] = {}
_NOT_LETTERS = re.compile(r"[^a-z]")


def looks_like_credential(text: str) -> bool:
    return bool(_CREDENTIAL.search(text))


def scrub_text(text: str) -> str:
    verdict = _VERDICTS.get(text)
    if verdict is None:
        verdict = REDACTED if _CREDENTIAL.search(text) else text
        if len(_VERDICTS) >= _VERDICTS_MAX:
            _VERDICTS.clear()
        _VERDICTS[text] = verdict
    return verdict


def _normal_key(key: str) -> str:
    normal = _NORMAL_KEYS.get(key)
    if normal is None:
        normal = _NOT_LETTERS.sub("", key.lower())
        if len(_NORMAL_KEYS) >= _VERDICTS_MAX:
            _NORMAL_KEYS.clear()
        _NORMAL_KEYS[key] = normal
    return normal


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
