"""The one credential detector, shared by the IaC report step and the live collectors.

A string that holds anything credential-looking is replaced as a whole by :data:`REDACTED`
(a partial redaction leaks the rest of a password that has spaces in it). What counts:

- the patterns of detect-secrets' plugins (AWS access key ids and quoted secret keys, PEM and
  other private keys, GitHub, GitLab, Slack, Stripe, OpenAI, PyPI, SendGrid, npm and JWT tokens,
  Azure storage keys, ``user:password@`` in URLs), copied below from detect-secrets 1.5.0
  (Apache-2.0, see ``LICENSE-detect-secrets`` beside this file). They are vendored, not imported:
  importing detect-secrets costs ~100 ms, half the budget of a pre-commit scan (its package
  imports its scanner, filters and plugin registry). ``tests/test_redact.py`` checks the copy
  against the installed library. Left out: Twilio, Discord and Telegram patterns, which also
  match parts of ARNs and long resource names;
- ours: Terraform Cloud / Enterprise tokens, GitHub fine-grained tokens, a bare 40-character AWS
  secret access key (mixed case and digits, high entropy, not hex: git SHAs survive),
  ``password=…`` / ``token: …`` assignments, and the credential file spellings
  ``aws_secret_access_key`` / ``aws_session_token``;
- by name: a value under a key (or a tag ``Key``) named like a secret (password, secret, token,
  private key, API key …; not names that end in ``Arn``, ``Id``, ``Name``, ``Length`` …), see
  :func:`secret_name`.

Instance types, ARNs (KMS key ARNs included), AMI, subnet and VPC ids never match.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

REDACTED = "[redacted: looks like a credential]"

# detect-secrets 1.5.0, detect_secrets/plugins/<module>.py, class attribute `denylist`
# (Apache-2.0). (module, pattern, case-insensitive, triggers). Triggers are ours: lower-case
# substrings one of which the text must hold before the pattern is tried (a pattern without a
# literal prefix costs 5-10 us a string; one alternation of them all, 70 us).
VENDORED: tuple[tuple[str, str, bool, tuple[str, ...]], ...] = (
    ("aws", r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", False, ()),
    ("aws", r"aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?[\'\"]([0-9a-zA-Z/+]{40})[\'\"]",
     True, ("aws",)),
    ("private_key", r"BEGIN DSA PRIVATE KEY", False, ()),
    ("private_key", r"BEGIN EC PRIVATE KEY", False, ()),
    ("private_key", r"BEGIN OPENSSH PRIVATE KEY", False, ()),
    ("private_key", r"BEGIN PGP PRIVATE KEY BLOCK", False, ()),
    ("private_key", r"BEGIN PRIVATE KEY", False, ()),
    ("private_key", r"BEGIN RSA PRIVATE KEY", False, ()),
    ("private_key", r"BEGIN SSH2 ENCRYPTED PRIVATE KEY", False, ()),
    ("private_key", r"PuTTY-User-Key-File-2", False, ()),
    ("github_token", r"(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", False,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ("gitlab_token", r"(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\-]{20,50}(?!\w)", False, ()),
    ("basic_auth",
     r"://[^:/\?\#\[\]@!\$\&'\(\)\*\+,;=\s]+:([^:/\?\#\[\]@!\$\&'\(\)\*\+,;=\s]+)@", False,
     ()),
    ("jwt", r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?", False, ()),
    ("slack", r"xox(?:a|b|p|o|s|r)-(?:\d+-)+[a-z0-9]+", True, ("xox",)),
    ("slack", r"https://hooks\.slack\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+",
     True, ("hooks.slack.com",)),
    ("stripe", r"(?:r|s)k_live_[0-9a-zA-Z]{24}", False, ("k_live_",)),
    ("openai", r"sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", False, ()),
    ("pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}", False, ()),
    ("pypi_token", r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}", False, ()),
    ("sendgrid", r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}", False, ()),
    ("npm", r"\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*", False, ()),
    ("azure_storage_key", r"AccountKey=[a-zA-Z0-9+\/=]{88}", False, ()),
)

# (pattern, triggers)
OURS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Terraform Cloud / Enterprise API token
    (r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", (".atlasv1.",)),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,}", ("github_pat_",)),  # GitHub fine-grained token
    (r"(?i:aws_(?:secret_access_key|session_token|secret_key)[\"']?\s*[=:]\s*\S)", ("aws_",)),
    (r"(?i:-----BEGIN[A-Z0-9 ]*PRIVATE KEY)", ()),
    # an assignment, not an ARN segment (arn:aws:secretsmanager:…:secret:name); the name may
    # have a prefix (DB_PASSWORD=…, MYSQL_ROOT_PASSWORD=…, PGPASSWORD=…, API_TOKEN=…)
    (r"(?i:(?<![:/])\b\w*?(?:password|passwd|passphrase|pwd|secret|secret_?key|client_?secret"
     r"|api_?key|auth_?token|access_?token|token)[\"']?\s*[=:]\s*\S)",
     ("pass", "pwd", "secret", "key", "token")),
)

_ALWAYS: tuple[re.Pattern[str], ...] = tuple(
    [re.compile(p, re.IGNORECASE if nocase else 0) for _, p, nocase, t in VENDORED if not t]
    + [re.compile(p) for p, t in OURS if not t])
_TRIGGERED: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    [(word, re.compile(p, re.IGNORECASE if nocase else 0))
     for _, p, nocase, t in VENDORED for word in t]
    + [(word, re.compile(p)) for p, t in OURS for word in t])
# Every pattern above needs a run of 16 key characters or one of these words (lower case):
# strings with neither are passed after two cheap looks (most of a report's strings).
_RUN = re.compile(r"[A-Za-z0-9/+]{16}")
_WORDS = ("pass", "pwd", "secret", "token", "session", "private", "putty", "://", "xox",
          "api_key", "apikey", "api-key", "glpat-", "gldt-", "glft-", "glsoat-", "glrt-",
          "sg.", "accountkey", "atlasv1", "github_pat", "credential", "-----begin")
# A bare AWS secret access key: exactly 40 base64 characters, alone.
_FORTY = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")
_HEX = re.compile(r"[0-9a-f]*")

# Key names whose value is a secret (normalised: lower case, letters and digits only); from
# detect-secrets' KeywordDetector denylist, plus tokens and credentials.
_SECRET_NAME = re.compile(
    r"password|passwd|passphrase|pwd|secret|privatekey|privkey|apikey|authkey|accesskey"
    r"|clientkey|servicekey|accountkey|databasekey|dbkey|dbpass|databasepass|keypass|token"
    r"|credential|contrasena|contraseña"
)
_NOT_SECRET_SUFFIX = (
    "arn", "arns", "id", "ids", "name", "names", "length", "policy", "type", "types", "version",
    "tokens", "enabled", "rotation", "source", "count", "ttl", "expiry", "expiration", "path",
    "location", "url", "uri", "required", "mode", "options", "config", "configuration",
)
# Values under a secret-like name that are not secrets themselves.
_NOT_A_SECRET_VALUE = ("arn:", "{{resolve:", "UNKNOWN", "${", "(sensitive)", REDACTED)
_NOT_LETTERS = re.compile(r"[^a-z0-9ñ]")
_REMEMBERED = 200_000


def _entropy(text: str) -> float:
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _bare_secret_key(text: str) -> bool:
    for m in _FORTY.finditer(text):
        s = m.group()
        if (any(c.isupper() for c in s) and any(c.islower() for c in s)
                and any(c.isdigit() for c in s) and not set(s) <= _HEX_CHARS
                and _entropy(s) >= 4.2):
            return True
    return False


@functools.lru_cache(maxsize=_REMEMBERED)
def looks_like_credential(text: str) -> bool:
    """Does ``text`` hold something credential-looking (see the module docstring)?"""
    if _HEX.fullmatch(text) is not None:
        return False  # a fingerprint, a hash: none of the patterns is lower-case hex alone
    lower = text.lower()
    if _RUN.search(text) is None:
        for word in _WORDS:
            if word in lower:
                break
        else:
            return False  # most strings: no long run of key characters, no telling word
    for rx in _ALWAYS:
        if rx.search(text) is not None:
            return True
    for word, rx in _TRIGGERED:
        if word in lower and rx.search(text) is not None:
            return True
    return len(text) >= 40 and _bare_secret_key(text)


def redact_text(text: str) -> str:
    """``text``, or :data:`REDACTED` when it holds anything credential-looking."""
    return REDACTED if looks_like_credential(text) else text


@functools.lru_cache(maxsize=_REMEMBERED)
def _normal(key: str) -> str:
    return _NOT_LETTERS.sub("", key.lower())


@functools.lru_cache(maxsize=_REMEMBERED)
def secret_name(key: str) -> bool:
    """A key or tag name whose value is a secret: ``db_password``, ``MasterUserPassword``,
    ``aws_secret_access_key``, ``GITHUB_TOKEN``; not ``SecretArn``, ``HttpTokens``,
    ``PasswordLength``, ``KmsKeyId``."""
    name = _normal(key)
    return bool(_SECRET_NAME.search(name)) and not name.endswith(_NOT_SECRET_SUFFIX)


def redact_named(key: str, value: str) -> str:
    """``value`` of the key or tag ``key``: redacted when the name says it is a secret (and the
    value is not a reference to one), or when the value looks like a credential itself."""
    if value and secret_name(key) and not value.startswith(_NOT_A_SECRET_VALUE):
        return REDACTED
    return redact_text(value)
