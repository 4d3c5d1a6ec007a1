"""The report document's last step before any renderer: no secret, no invalid text.

Every string of the document (messages, names, tags, evidence, remediation, locations, errors,
notices; keys too) is checked:

- a value the input marks secret (``SourceResult.sensitive``: Terraform ``sensitive``, a plan's
  ``sensitive_values``, CloudFormation ``NoEcho``) is replaced by ``(sensitive)`` wherever it
  appears in a string. Values shorter than :data:`MIN_SENSITIVE` characters are left alone (a
  sensitive ``"1"`` or ``"us"`` would erase every digit or word of the report). A message that
  quotes a value cut short (``'longsecretvalue-abcd…'``: the first 40 or 60 characters) holds
  only a head of it: a run of at least :data:`MIN_HEAD` characters that begins a marked value
  and ends where the text ends or a cut mark (a quote, ``…``, a newline) follows is redacted
  too;
- a string that looks like a credential, or the value of a key or tag named like a secret,
  becomes ``[redacted: looks like a credential]`` (:mod:`scanner.inputs.credentials`, the detector
  as the live collectors');
- text that cannot be written as UTF-8 (a file name that is not UTF-8 reaches Python as lone
  surrogates) shows its bytes as ``\\xNN``;
- a float that is not finite (never JSON) becomes null;
- what references amplify stays small: a string is cut at :data:`MAX_TEXT` characters, and a
  finding's evidence and tags at :data:`MAX_EVIDENCE` characters written out (lists at
  :data:`MAX_ITEMS` items), each cut saying how much was left out.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Iterable
from typing import Any

from scanner.inputs.credentials import (
    REDACTED,
    looks_like_credential,
    redact_named,
    redact_text,
    secret_name,
)
from scanner.inputs.sizes import bound, cut_text

SENSITIVE = "(sensitive)"
MIN_SENSITIVE = 4
MIN_HEAD = 12  # characters of a marked value's head shown alone (a value cut short)
_CUT_MARKS = frozenset("'\"…\n`")
MAX_TEXT = 16 * 1024  # characters of one string of the report
MAX_EVIDENCE = 256 * 1024  # characters of one finding's evidence (and of its tags) written out
MAX_ITEMS = 200  # items of one list in evidence
_EDGE = 512  # characters each side of a cut checked for a credential across it
_SURROGATES = re.compile("[\ud800-\udfff]")


@functools.lru_cache(maxsize=200_000)
def _plain(text: str) -> str:
    """UTF-8-safe and credential-free text."""
    if _SURROGATES.search(text) is not None:
        # a file name's undecodable bytes (U+DC80..U+DCFF) show as \xNN; any other lone
        # surrogate (a JSON "\ud800" escape) cannot be encoded so: its \uXXXX escape below
        with contextlib.suppress(UnicodeEncodeError):
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        text = _SURROGATES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return redact_text(text)


# Keys of the report schema: never secret, never rewritten (saves a lookup per key).
_SCHEMA_KEYS = frozenset({
    "id", "policy_id", "title", "severity", "status", "message", "resource", "location",
    "evidence", "remediation", "savings", "suppression", "kind", "name", "address", "arn",
    "account", "region", "tags", "file", "start_line", "end_line", "text", "terraform",
    "cloudformation", "usd_month", "basis", "by", "reason", "expires", "path", "line",
})


class Redactor:
    """Cleans strings and documents; ``sensitive`` are the marked values.

    Reports repeat the same strings (policy titles, remediation, resource kinds, tag keys)
    thousands of times: each string's verdict is remembered, and so is each remediation.

    ``changed`` becomes True whenever cleaning gives a value that differs from the one it was
    given, once written out (a string redacted, cut or escaped, a key renamed, a float made
    null, evidence cut, a tuple made a list); whoever reads it sets it back to False."""

    def __init__(self, sensitive: Iterable[str] = ()) -> None:
        values = sorted({s for s in sensitive if isinstance(s, str) and len(s) >= MIN_SENSITIVE},
                        key=lambda s: (-len(s), s))
        self._marked = (re.compile("|".join(re.escape(v) for v in values)) if values else None)
        heads: dict[str, list[str]] = {}
        for v in values:
            if len(v) > MIN_HEAD:
                heads.setdefault(v[:MIN_HEAD], []).append(v)
        self._heads = heads
        self._head = (re.compile("|".join(re.escape(h) for h in sorted(heads)))
                      if heads else None)
        self._seen: dict[str, str] = {}
        self._names: dict[str, bool] = {}
        self._remediations: dict[tuple[Any, ...], tuple[dict[str, Any], bool]] = {}
        self.changed = False

    def text(self, value: str) -> str:
        out = self._seen.get(value)
        if out is None:
            out = value
            if self._marked is not None and self._marked.search(out):
                out = self._marked.sub(SENSITIVE, out)
            if self._head is not None and self._head.search(out):
                out = self._cut_heads(out)
            if len(out) > MAX_TEXT:
                # cut first (the detector's work is then bounded), unless a credential lies
                # across the cut (its head would be shown)
                edge = out[MAX_TEXT - _EDGE:MAX_TEXT + _EDGE]
                out = REDACTED if looks_like_credential(edge) else cut_text(out, MAX_TEXT)
            out = _plain(out)
            if len(self._seen) < 500_000:
                self._seen[value] = out
        if out is not value and out != value:
            self.changed = True
        return out

    def _cut_heads(self, text: str) -> str:
        """``text`` with each head of a marked value that was cut short redacted."""
        assert self._head is not None
        parts: list[str] = []
        at = 0
        for m in self._head.finditer(text):
            if m.start() < at:
                continue
            end = m.start()
            for value in self._heads[m.group()]:
                stop = m.start() + MIN_HEAD
                while stop < len(text) and stop - m.start() < len(value) \
                        and text[stop] == value[stop - m.start()]:
                    stop += 1
                if stop == len(text) or text[stop] in _CUT_MARKS:
                    end = max(end, stop)
            if end > m.start():
                parts += [text[at:m.start()], SENSITIVE]
                at = end
        return "".join([*parts, text[at:]]) if parts else text

    def named(self, key: str, value: str) -> str:
        """The value of the key (or tag) ``key``."""
        secret = self._names.get(key)
        if secret is None:
            secret = self._names[key] = key not in _SCHEMA_KEYS and secret_name(key)
        if secret:
            out = redact_named(key, self.text(value))
            if out != value:
                self.changed = True
            return out
        return self.text(value)

    def document(self, value: Any) -> Any:
        """``value`` (dicts, lists, strings, numbers) cleaned in place; strings are immutable,
        so a cleaned string is returned (and assigned by the caller)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return self._dict(value)
        if isinstance(value, list):
            for i, v in enumerate(value):
                if type(v) is not int:
                    cleaned = self.document(v)
                    if cleaned is not v:
                        value[i] = cleaned
            return value
        if isinstance(value, tuple):
            self.changed = True
            return [self.document(v) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            self.changed = True
            return None
        return value

    def _dict(self, value: dict[Any, Any]) -> dict[Any, Any]:
        text = self.text
        named = self.named
        tag_key = value.get("Key") if "Value" in value else None
        renamed: list[tuple[Any, Any]] = []
        cleaned: Any  # a string, or the value cleaned
        for k, v in value.items():
            tv = type(v)
            if tv is str:
                if type(k) is not str:
                    cleaned = text(v)
                elif k == "Value" and type(tag_key) is str:
                    cleaned = named(tag_key, v)  # a {Key, Value} tag
                else:
                    cleaned = named(k, v)
            elif v is None or tv is int or tv is bool:
                cleaned = v
            elif k == "remediation" and tv is dict:
                cleaned = self._remediation(v)
            elif k in ("evidence", "tags") and (tv is dict or tv is list):
                # (most findings' tags are empty: nothing to bound or clean)
                cleaned = self._bounded(v) if v else v
            else:
                cleaned = self.document(v)
            if cleaned is not v:
                value[k] = cleaned  # the same key: allowed while iterating
            if k not in _SCHEMA_KEYS and type(k) is str:
                ck = text(k)
                if ck != k:  # an equal string may be another object (the cache's)
                    renamed.append((k, ck))
        if renamed:  # a key that holds a secret (a tag key): rebuild in the same order
            names = dict(renamed)
            items = [(names.get(k, k), v) for k, v in value.items()]
            value.clear()
            value.update(items)
        return value

    def _bounded(self, value: Any) -> Any:
        """Evidence or tags: cut to :data:`MAX_EVIDENCE` characters written out, then cleaned."""
        copy, cut = bound(value, MAX_EVIDENCE, items=MAX_ITEMS)
        if cut:
            self.changed = True
        return self.document(copy)

    def _remediation(self, value: dict[str, Any]) -> dict[str, Any]:
        """A policy's remediation (the same for each of its findings): cleaned once (whether
        that changed it is remembered with it)."""
        try:
            key = tuple(sorted(value.items()))
            hash(key)
        except TypeError:
            return self._dict(value)
        cached = self._remediations.get(key)
        if cached is None:
            before, self.changed = self.changed, False
            cleaned = dict(self._dict(value))
            cached = self._remediations[key] = (cleaned, self.changed)
            self.changed = before or self.changed
        elif cached[1]:
            self.changed = True
        return dict(cached[0])


PARALLEL_MIN_FINDINGS = 5000  # fewer findings: redacted in this process alone
FINDINGS_BLOCK = 1000  # findings redacted (and sent back by a worker) at a time


def redact_document(doc: dict[str, Any], sensitive: Iterable[str] = ()) -> dict[str, Any]:
    """The report document with secrets and unwritable text taken out (see the module doc).
    ``doc`` is cleaned in place (the report builder owns it) and returned. Many findings are
    shared out in blocks among forked processes (:func:`scanner.inputs.workers.shared_out`):
    a string's cleaning depends on the string alone, so a block is the same whichever process
    cleaned it. A worker sends back only the blocks that cleaning changed (most change
    nothing: no secret, nothing to cut); of the others this process keeps its own findings,
    equal to the cleaned ones once written out."""
    from scanner.inputs.workers import worker_count

    redactor = Redactor(sensitive)
    findings = doc.get("findings")
    workers = (worker_count(len(findings), PARALLEL_MIN_FINDINGS)
               if isinstance(findings, list) else 1)
    if workers <= 1 or not isinstance(findings, list):
        cleaned: dict[str, Any] = redactor.document(doc)  # a dict cleans to itself
        return cleaned
    doc["findings"] = []  # the rest of the document first, its place kept
    redactor.document(doc)
    doc["findings"] = _shared_findings(findings, redactor, workers)
    return doc


def _shared_findings(findings: list[Any], redactor: Redactor, workers: int) -> list[Any]:
    from scanner.inputs.workers import shared_out

    def block(i: int) -> list[Any] | None:
        """Block ``i`` cleaned; None when cleaning changed nothing written out."""
        part = findings[i * FINDINGS_BLOCK:(i + 1) * FINDINGS_BLOCK]
        redactor.changed = False
        cleaned: list[Any] = redactor.document(part)  # a list cleans to itself
        return cleaned if redactor.changed else None

    n_blocks = -(-len(findings) // FINDINGS_BLOCK)
    done, _ = shared_out(block, n_blocks, workers)
    out: list[Any] = []
    for i in range(n_blocks):  # a worker's cleaned copies, or this process's own findings
        cleaned = done.pop(i)
        out.extend(findings[i * FINDINGS_BLOCK:(i + 1) * FINDINGS_BLOCK]
                   if cleaned is None else cleaned)
    findings[:] = out
    return findings
