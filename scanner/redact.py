"""The report document's last step before any renderer: no secret, no invalid text.

Every string of the document (messages, names, tags, evidence, remediation, locations, errors,
notices; keys too) is checked:

- a value the input marks secret (``SourceResult.sensitive``: Terraform ``sensitive``, a plan's
  ``sensitive_values``, CloudFormation ``NoEcho``) is replaced by ``(sensitive)`` wherever it
  appears in a string. Values shorter than :data:`MIN_SENSITIVE` characters are left alone (a
  sensitive ``"1"`` or ``"us"`` would erase every digit or word of the report);
- a string that looks like a credential, or the value of a key or tag named like a secret,
  becomes ``[redacted: looks like a credential]`` (:mod:`scanner.credentials`, the same detector
  as the live collectors');
- text that cannot be written as UTF-8 (a file name that is not UTF-8 reaches Python as lone
  surrogates) shows its bytes as ``\\xNN``;
- a float that is not finite (never JSON) becomes null.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Any

from scanner.credentials import redact_named, redact_text

SENSITIVE = "(sensitive)"
MIN_SENSITIVE = 4
_SURROGATES = re.compile("[\ud800-\udfff]")


@functools.lru_cache(maxsize=200_000)
def _plain(text: str) -> str:
    """UTF-8-safe and credential-free text."""
    if _SURROGATES.search(text) is not None:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        text = _SURROGATES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return redact_text(text)


class Redactor:
    """Cleans strings and documents; ``sensitive`` are the marked values."""

    def __init__(self, sensitive: Iterable[str] = ()) -> None:
        values = sorted({s for s in sensitive if isinstance(s, str) and len(s) >= MIN_SENSITIVE},
                        key=lambda s: (-len(s), s))
        self._marked = (re.compile("|".join(re.escape(v) for v in values)) if values else None)
        self._seen: dict[str, str] = {}

    def text(self, value: str, key: str | None = None) -> str:
        out = self._seen.get(value) if key is None else None
        if out is not None:
            return out
        out = value
        if self._marked is not None and self._marked.search(out):
            out = self._marked.sub(SENSITIVE, out)
        out = _plain(out)
        if key is not None:
            out = redact_named(key, out)
        elif len(self._seen) < 200_000:
            self._seen[value] = out
        return out

    def document(self, value: Any) -> Any:
        """A cleaned copy of a JSON-like value (dicts, lists, strings, numbers)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            out: dict[Any, Any] = {}
            tag_key = value.get("Key") if "Value" in value else None
            for k, v in value.items():
                ck = self.text(k) if isinstance(k, str) else k
                if isinstance(v, str):
                    if k == "Value" and isinstance(tag_key, str):
                        out[ck] = self.text(v, tag_key)  # a {Key, Value} tag
                    elif isinstance(k, str):
                        out[ck] = self.text(v, k)
                    else:
                        out[ck] = self.text(v)
                else:
                    out[ck] = self.document(v)
            return out
        if isinstance(value, list | tuple):
            return [self.document(v) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value


def redact_document(doc: dict[str, Any], sensitive: Iterable[str] = ()) -> dict[str, Any]:
    """The report document with secrets and unwritable text taken out (see the module doc)."""
    return Redactor(sensitive).document(doc)  # type: ignore[no-any-return]
