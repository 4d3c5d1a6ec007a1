"""Keep secrets in the account: user data and credential-looking strings never become attributes.

``scrub`` walks an API response and returns a JSON-safe copy without user data, with every
string that looks like a credential, and every value of a key or tag named like a secret,
replaced by ``REDACTED``. The detector is :mod:`scanner.inputs.credentials`, the same one the report
step applies to IaC findings. Everything the live collectors put
into a Resource (attributes, tags, names) goes through it, so nothing secret can reach a finding,
a report or an error message.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from typing import Any

from scanner.inputs.credentials import REDACTED, looks_like_credential, redact_named, redact_text

__all__ = ["REDACTED", "looks_like_credential", "scrub", "scrub_text"]

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

# API responses repeat the same short strings (states, types, zones, tag keys) thousands of
# times; the detector remembers each verdict, which makes scrubbing 5,000 volumes cheap.
_REMEMBERED = 200_000
_NOT_LETTERS = re.compile(r"[^a-z]")


def scrub_text(text: str) -> str:
    return redact_text(text)


@functools.lru_cache(maxsize=_REMEMBERED)
def _normal_key(key: str) -> str:
    return _NOT_LETTERS.sub("", key.lower())


def scrub(value: Any) -> Any:
    """A JSON-safe copy of ``value`` with user data dropped and credential-like strings redacted.

    datetimes become ISO 8601 strings; bytes (never expected) are dropped.
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        tag_key = value.get("Key") if "Value" in value else None
        for key, item in value.items():
            skey = str(key)
            if _normal_key(skey) in _DROP_KEYS or skey == "ResponseMetadata":
                continue
            if isinstance(item, bytes | bytearray):
                continue
            if isinstance(item, str):
                # a tag {Key: aws_secret_access_key, Value: ...}, or a key named like a secret
                name = tag_key if skey == "Value" and isinstance(tag_key, str) else skey
                out[scrub_text(skey)] = redact_named(name, item)
            else:
                out[scrub_text(skey)] = scrub(item)
        return out
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value if not isinstance(v, bytes | bytearray)]
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    return value
