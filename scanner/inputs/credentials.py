"""The one credential detector, shared by the IaC report step and the live collectors.

A string that holds anything credential-looking is replaced as a whole by :data:`REDACTED`
(a partial redaction leaks the rest of a password that has spaces in it). What counts:

- detect-secrets' detectors (Apache-2.0, see ``LICENSE-detect-secrets`` beside this file):
  every regular-expression plugin of detect-secrets 1.5.0 (AWS, private keys, GitHub, GitLab,
  Slack, Stripe, OpenAI, PyPI, SendGrid, npm, JWT, Azure storage, basic auth in URLs,
  Artifactory, Cloudant, IBM Cloud IAM and COS HMAC, Mailchimp, SoftLayer, Square), its keyword
  detector's words (:data:`KEYWORDS`: ``password``, ``secret``, ``api_key``, ``db_pass`` …, in
  any assignment: ``X=…``, ``X: …``, ``"X": "…"``, ``X := …``, ``X => …``, ``--x=…``,
  ``--x …``, a keyword anywhere in the name, ``SecretAccessKey=…`` too) and its base64
  high-entropy strings (a quoted run of base64 characters above :data:`BASE64_ENTROPY` bits a
  character, its default limit). The patterns are copied here,
  not imported: importing detect-secrets costs ~105 ms (its package imports requests, its
  scanner, filters and plugin registry), as much as a whole pre-commit scan.
  ``tests/test_redact.py`` checks the copy against the installed library, both ways: every
  copied pattern is the library's, and every pattern of the library is copied or listed in
  :data:`LEFT_OUT` with the reason;
- ours, where detect-secrets has no detector (each says so in :data:`OURS`): Hugging Face,
  Google API, OpenAI project / service-account / admin keys (detect-secrets' needs the
  ``T3BlbkFJ`` infix of legacy keys), Anthropic, bare npm (detect-secrets' needs an ``.npmrc``
  line), Slack app-level, Docker Hub, Databricks, Google OAuth access tokens, Terraform Cloud
  tokens, GitHub fine-grained tokens, ``Authorization:`` / ``Bearer`` headers, environment
  assignments of ``*_KEY`` / ``*_TOKEN`` variables, ``PRIVATE KEY`` blocks of every kind, and a
  bare 40-character AWS secret access key (mixed case and digits, high entropy, not hex: git
  SHAs survive);
- inside base64 (user data, ``Fn::Base64``, ``base64encode()``, gzip too): a run of base64
  that decodes to text is checked as that text (:data:`MAX_DECODED` characters, two levels);
- by name: a value under a key (or a tag ``Key``) named like a secret (password, secret, token,
  private key, API key …; not names that end in ``Arn``, ``Id``, ``Name``, ``Length`` …), see
  :func:`secret_name`.

Instance types, ARNs (KMS key ARNs included), AMI, subnet and VPC ids never match.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
import zlib
from collections import Counter

REDACTED = "[redacted: looks like a credential]"

# detect-secrets 1.5.0, detect_secrets/plugins/<module>.py, class attribute `denylist`
# (Apache-2.0). (module, pattern, case-insensitive, triggers). Triggers are ours: lower-case
# substrings one of which the text must hold before the pattern is tried (a pattern without a
# literal prefix costs 5-10 us a string; one alternation of them all, 70 us).
_Q = "(?:\"|\\'|)"  # detect-secrets' optional quote
# RegexBasedDetector.build_assignment_regex(prefix, keyword, secret)
_PRE = r"(?:(?<=\W)|(?<=^))(?:\[|)" + _Q
_SEP = _Q + r"(?:\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)" + _Q


def _assigned(prefix: str, keyword: str, secret: str) -> str:
    return _PRE + prefix + r"(?:_|-|)" + keyword + _SEP + secret + _Q


_CL_KEY = r"(?:api|)(?:key|pwd|pw|password|pass|token)"
_IBM = (r"(?:ibm(?:_|-|)cloud(?:_|-|)iam|cloud(?:_|-|)iam|ibm(?:_|-|)cloud|ibm(?:_|-|)iam|ibm"
        r"|iam|cloud|)")
_KEY_PASS = r"(?:api|)(?:_|-|)(?:key|pwd|password|pass|token)"
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
    ("gitlab_token", r"GR1348941[A-Za-z0-9_\-]{20,50}(?!\w)", False, ("gr1348941",)),
    ("gitlab_token", r"glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\-]{20,50}(?!\w)", False, ("glcbt-",)),
    ("gitlab_token", r"glimt-[A-Za-z0-9_\-]{25}(?!\w)", False, ("glimt-",)),
    ("gitlab_token", r"glptt-[A-Za-z0-9_\-]{40}(?!\w)", False, ("glptt-",)),
    ("gitlab_token", r"glagent-[A-Za-z0-9_\-]{50,1024}(?!\w)", False, ("glagent-",)),
    ("gitlab_token", r"gloas-[A-Za-z0-9_\-]{64}(?!\w)", False, ("gloas-",)),
    ("basic_auth",
     r"://[^:/\?\#\[\]@!\$\&'\(\)\*\+,;=\s]+:([^:/\?\#\[\]@!\$\&'\(\)\*\+,;=\s]+)@", False,
     ()),
    ("jwt", r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?", False, ("eyj",)),
    ("slack", r"xox(?:a|b|p|o|s|r)-(?:\d+-)+[a-z0-9]+", True, ("xox",)),
    ("slack", r"https://hooks\.slack\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+",
     True, ("hooks.slack.com",)),
    ("stripe", r"(?:r|s)k_live_[0-9a-zA-Z]{24}", False, ("k_live_",)),
    ("openai", r"sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", False, ()),
    ("pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}", False, ()),
    ("pypi_token", r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}", False, ()),
    ("sendgrid", r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}", False, ()),
    ("npm", r"\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*", False,
     ("_authtoken=",)),
    ("azure_storage_key", r"AccountKey=[a-zA-Z0-9+\/=]{88}", False, ()),
    ("artifactory", r'(?:\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\s|"|$)', False, ("akc",)),
    ("artifactory", r'(?:\s|=|:|"|^)AP[\dABCDEF][a-zA-Z0-9]{8,}(?:\s|"|$)', False, ("ap",)),
    ("cloudant", _assigned(r"(?:cloudant|cl|clou)", _CL_KEY, r"([0-9a-f]{64})"), True,
     ("cl",)),
    ("cloudant", _assigned(r"(?:cloudant|cl|clou)", _CL_KEY, r"([a-z]{24})"), True, ("cl",)),
    ("cloudant", r"(?:https?\:\/\/)[\w\-]+\:([0-9a-f]{64})\@[\w\-]+\.cloudant\.com", True,
     ("cloudant",)),
    ("cloudant", r"(?:https?\:\/\/)[\w\-]+\:([a-z]{24})\@[\w\-]+\.cloudant\.com", True,
     ("cloudant",)),
    ("ibm_cloud_iam", _assigned(_IBM, _KEY_PASS, r"([a-zA-Z0-9_\-]{44}(?![a-zA-Z0-9_\-]))"),
     True, ("key", "pwd", "pass", "token")),
    ("ibm_cos_hmac", _assigned(r"(?:(?:ibm)?[-_]?cos[-_]?(?:hmac)?|)",
                               r"(?:secret[-_]?(?:access)?[-_]?key)",
                               r"([a-f0-9]{48}(?![a-f0-9]))"), True, ("secret",)),
    ("mailchimp", r"[0-9a-z]{32}-us[0-9]{1,2}", False, ("-us",)),
    ("softlayer", _assigned(r"(?:softlayer|sl)", _KEY_PASS, r"([a-z0-9]{64})"), True, ("sl",)),
    ("softlayer", r"(?:http|https)://api.softlayer.com/soap/(?:v3|v3.1)/([a-z0-9]{64})", True,
     ("softlayer",)),
    ("square_oauth", r"sq0csp-[0-9A-Za-z\\\-_]{43}", False, ("sq0csp-",)),
)
# Regular-expression plugins of detect-secrets not used, and why.
LEFT_OUT: dict[str, str] = {
    "twilio": "AC/SK followed by 32 lower-case letters or digits: parts of long resource names",
    "discord": "three dotted runs of word characters: parts of ARNs and long resource names",
    "telegram_token": "digits, a colon and 35 word characters: an ARN's account and name",
    "ip_public": "a public IP address is evidence (a NAT gateway, an endpoint), not a secret",
}
# detect-secrets 1.5.0 detect_secrets/plugins/keyword.py DENYLIST (the words; its regexes
# assume one line of a source file of a known type, so the assignment forms are ours below).
KEYWORDS: tuple[str, ...] = (
    "api_?key", "auth_?key", "service_?key", "account_?key", "db_?key", "database_?key",
    "priv_?key", "private_?key", "client_?key", "db_?pass", "database_?pass", "key_?pass",
    "password", "passwd", "pwd", "secret", "contraseña", "contrasena",
)
# detect-secrets 1.5.0 Base64HighEntropyString's default limit (bits a character).
BASE64_ENTROPY = 4.5
# detect-secrets 1.5.0 Base64HighEntropyString: a quoted run of its charset (letters, digits,
# + / - _ =); 20 characters at least, ours (shorter runs cannot reach the limit anyway).
_QUOTED_B64 = re.compile(r"(['\"])([A-Za-z0-9+/\-_=]{20,})\1")

# Words of secret names besides detect-secrets' (tokens and credentials of every service).
# (Not "credential": messages say "no credentials: the profile … could not be found".)
_MORE_WORDS = ("passphrase", "token", "authorization", "access_?key")
_KW = "|".join(KEYWORDS + _MORE_WORDS).replace("_?", "[_-]?")  # db_pass, db-pass, dbpass
# An assignment: a name holding a keyword anywhere (its start not inside a word, an ARN segment
# or a path: arn:aws:secretsmanager:…:secret:name), an optional closing quote or bracket, one
# of = : := => (or a flag's space), and a value. ``secret_name`` then says whether the whole
# name is a secret's (``PasswordLength``, ``SecretArn``, ``HttpTokens`` are not).
# (A name, then its sign, then the value; the keyword is looked for in the name afterwards:
# one pattern with the keyword inside the name backtracks quadratically on a long word.)
_ASSIGN = re.compile(
    r"(?<![\w.:/-])([\w.-]+)[\"'`\]]{0,2}(?:\s*(?::=|=>|=|:)|\s+(?=\S))\s*"
    r"(?=[\"'`]?([^\s\"'`,;]{0,256}))")  # the value looked at, not taken: it may be a name too
_KW_RX = re.compile(_KW, re.IGNORECASE)
_FLAG = re.compile(r"--?[\w-]")

# (pattern, triggers, why it is ours)
OURS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", (".atlasv1.",),
     "Terraform Cloud / Enterprise API token: no detect-secrets plugin"),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,}", ("github_pat_",),
     "GitHub fine-grained token: detect-secrets knows ghp_/gho_/ghu_/ghs_/ghr_ only"),
    (r"(?i:aws_(?:secret_access_key|session_token|secret_key)[\"']?(?:\s*[=:]\s*|\s+)\S)",
     ("aws_",),
     "the AWS credential file's spellings with an unquoted value (detect-secrets: quoted)"),
    (r"(?i:-----BEGIN[A-Z0-9 ]*PRIVATE KEY)", (),
     "every PEM private key block (ENCRYPTED PRIVATE KEY is not in detect-secrets' list)"),
    (r"\bhf_[A-Za-z0-9]{20,}", ("hf_",), "Hugging Face token: no detect-secrets plugin"),
    (r"\bAIza[0-9A-Za-z_\-]{30,}", ("aiza",), "Google API key: no detect-secrets plugin"),
    (r"\bya29\.[0-9A-Za-z_\-]{20,}", ("ya29.",),
     "Google OAuth access token: no detect-secrets plugin"),
    (r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}", ("sk-",),
     "OpenAI project / service-account / admin key (detect-secrets needs the legacy infix)"),
    (r"\bsk-[A-Za-z0-9]{40,}\b", ("sk-",), "legacy OpenAI-style sk- key without the infix"),
    (r"\bsk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",), "Anthropic API key: no detect-secrets plugin"),
    (r"\bnpm_[A-Za-z0-9]{20,}", ("npm_",),
     "npm access token outside an .npmrc line (detect-secrets' npm plugin needs one)"),
    (r"\bxox[a-z]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}", ("xox", "xapp-"),
     "Slack app-level and refresh tokens (detect-secrets: xoxa/b/p/o/s/r with digits)"),
    (r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", ("dckr_pat_",), "Docker Hub token: no plugin"),
    (r"\bdapi[0-9a-f]{32}\b", ("dapi",), "Databricks token: no detect-secrets plugin"),
    # the head of a token cut short (a message quoting the first 40 characters of a line): a
    # well-known prefix and 8 more characters are enough to know what it was
    (r"\b(?:gh[pousr]_|github_pat_|glpat-|[sr]k_live_|sk-(?:proj|svcacct|admin|ant)-|dckr_pat_"
     r"|xox[abposre]-)[A-Za-z0-9_\-]{8,}",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "k_live_", "sk-",
      "dckr_pat_", "xox"),
     "a cut token: detect-secrets needs the whole length"),
    (r"\b(?:hf_|npm_)(?=[A-Za-z0-9]{0,40}[A-Z0-9])[A-Za-z0-9]{12,}|\bAIza[0-9A-Za-z_\-]{12,}"
     r"|\bAKIA[0-9A-Z]{12,}", ("hf_", "npm_", "aiza", "akia"),
     "a cut token whose prefix is a common word start: 12 characters, not all lower case"),
    (r"(?i:\bbearer\s+[A-Za-z0-9\-._~+/]{8,}=*)", ("bearer",),
     "an HTTP bearer token (curl -H, headers in scripts): no detect-secrets plugin"),
    # environment variables named *_KEY / *_TOKEN / *_PAT in scripts and env files: the
    # keyword detector has api_key, auth_key … but not WANDB_KEY, HF_TOKEN, OPENAI_KEY
    (r"(?<![\w-])[A-Z][A-Z0-9_]*_(?:KEY|TOKEN|PAT|SECRET)\s*[=:]\s*[\"']?"
     r"(?!arn:|alias/|\$|\{\{)[A-Za-z0-9+/=_\-.]{8,}", ("_key", "_token", "_pat", "_secret"),
     "an upper-case environment variable *_KEY=… / *_TOKEN=… (keyword detector: api_key …)"),
)



class _Lazy:
    """A pattern compiled when it is first tried: most run only behind a trigger word that
    most reports never hold, and compiling them all costs a pre-commit scan ~15 ms."""

    __slots__ = ("_rx", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._rx: re.Pattern[str] | None = None

    def search(self, text: str, *span: int) -> re.Match[str] | None:
        rx = self._rx
        if rx is None:
            rx = self._rx = re.compile(self.pattern, self.flags)
        return rx.search(text, *span)


_ALWAYS: tuple[re.Pattern[str], ...] = tuple(
    [re.compile(p, re.IGNORECASE if nocase else 0) for _, p, nocase, t in VENDORED if not t]
    + [re.compile(p) for p, t, _ in OURS if not t])
_LAZY: dict[tuple[str, int], _Lazy] = {}
_TRIGGERED: tuple[tuple[str, _Lazy], ...] = tuple(
    (word, _LAZY.setdefault((p, flags), _Lazy(p, flags)))
    for p, flags, triggers in (
        [(p, re.IGNORECASE if nocase else 0, t) for _, p, nocase, t in VENDORED]
        + [(p, 0, t) for p, t, _ in OURS])
    for word in triggers)
# Patterns of detect-secrets that backtrack over the whole text (npm's `.+`, the JWT's runs
# before a dot): tried in windows (``_windowed``), behind a trigger word.
_WINDOWED_PATTERNS = (r"\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*",
                      r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?")
WINDOW = 2048  # characters of one line a backtracking pattern is tried on at once
OVERLAP = 512  # characters consecutive windows share (a token across two is in one whole)
# Each trigger word once, with its patterns.
_BY_WORD: dict[str, list[_Lazy]] = {}
for _word, _rx in _TRIGGERED:
    _BY_WORD.setdefault(_word, []).append(_rx)
_BY_WORD_ITEMS = tuple((w, tuple(rxs)) for w, rxs in _BY_WORD.items())
_BACKTRACKING = frozenset(rx for rxs in _BY_WORD.values() for rx in rxs
                          if rx.pattern in _WINDOWED_PATTERNS)
# Every pattern above needs a run of 16 key characters or one of these words (lower case):
# strings with neither are passed after two cheap looks (most of a report's strings).
_RUN = re.compile(r"[A-Za-z0-9/+]{16}")
_WORDS = ("pass", "pwd", "secret", "token", "key", "credential", "authorization", "contrase",
          "private", "putty", "://", "xox", "xapp-", "bearer", "glpat-", "gldt-", "glft-",
          "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-", "github_pat",
          "sk-", "aiza", "ya29.", "dckr_pat", "_pat", "akc", "sq0csp", "hf_", "npm_", "akia",
          "k_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_ASSIGN_WORDS = re.compile("pass|pwd|secret|key|token|credential|authorization|contrase")
# A bare AWS secret access key: exactly 40 base64 characters, alone (after = or : too).
_FORTY = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_HEX_CHARS = frozenset("0123456789abcdefABCDEF")
_HEX = re.compile(r"[0-9a-f]*")
# base64 (standard or URL-safe) long enough to hold a credential: decoded and checked as text
_B64 = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
MAX_DECODED = 1 << 20  # characters of text decoded from base64 (and gunzipped) per string
_DEPTH = 2  # base64 inside base64

# Key names whose value is a secret (normalised: lower case, letters and digits only); from
# detect-secrets' KeywordDetector denylist, plus tokens and credentials.
_SECRET_NAME = re.compile(
    r"password|passwd|passphrase|pwd|secret|privatekey|privkey|apikey|authkey|accesskey"
    r"|clientkey|servicekey|accountkey|databasekey|dbkey|dbpass|databasepass|keypass|token"
    r"|credential|contrasena|contraseña|authorization"
)
_NOT_SECRET_SUFFIX = (
    "arn", "arns", "id", "ids", "name", "names", "length", "policy", "type", "types", "version",
    "tokens", "enabled", "rotation", "source", "count", "ttl", "expiry", "expiration", "path",
    "location", "url", "uri", "required", "mode", "options", "config", "configuration",
    "file", "files", "endpoint", "format", "manager", "store", "kms", "kmskey", "kmskeyid",
)
# Words that hold a secret word and are none (a model's tokenizer, token counts and limits).
_NOT_SECRET_WORDS = re.compile(r"tokeniz|tokensper|maxtokens|tokenlimit|tokencount")
# Values under a secret-like name that are not secrets themselves.
_NOT_A_SECRET_VALUE = ("arn:", "{{resolve:", "UNKNOWN", "${", "(sensitive)", REDACTED)
_EMPTY_VALUES = frozenset({"", "null", "none", "nil", "true", "false", "[]", "{}", "=", ":",
                           "(", "-", "''", '""'})
_NOT_LETTERS = re.compile(r"[^a-z0-9ñ]")
_REMEMBERED = 200_000


def _windowed(rx: _Lazy, text: str) -> re.Match[str] | None:
    """``rx.search`` line by line, over windows of :data:`WINDOW` characters (overlapping by
    :data:`OVERLAP`): a pattern that backtracks over the whole text costs the square of a
    window at most, not of the text."""
    for line in text.split("\n") if "\n" in text else (text,):
        for start in range(0, max(1, len(line) - OVERLAP), WINDOW - OVERLAP):
            m = rx.search(line, start, start + WINDOW)
            if m is not None:
                return m
    return None


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


def _assignment(text: str) -> bool:
    """A value assigned to a name that says it is a secret (see ``_ASSIGN``)."""
    for m in _ASSIGN.finditer(text):
        name, value = m.group(1), m.group(2)
        if _KW_RX.search(name) is None:
            continue
        sign = m.group(0)[len(name):]
        if ":" not in sign and "=" not in sign and not _FLAG.match(name):
            continue  # ``name value`` with no sign: only a flag (``--password hunter2``)
        if value.lower() in _EMPTY_VALUES or value.startswith(_NOT_A_SECRET_VALUE):
            continue
        if secret_name(name.lstrip("-")):
            return True
    return False


def _decoded(run: str) -> str | None:
    """The text a base64 run stands for (gunzipped when it is gzip), or None."""
    run = run.rstrip("=")
    if len(run) % 4 == 1:
        return None
    padded = run + "=" * (-len(run) % 4)
    try:
        raw = (base64.urlsafe_b64decode(padded) if ("-" in run or "_" in run)
               else base64.b64decode(padded, validate=True))
    except (binascii.Error, ValueError):
        return None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = zlib.decompressobj(wbits=31).decompress(raw, MAX_DECODED)
        except zlib.error:
            return None
    try:
        text = raw[:MAX_DECODED].decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return text if printable >= 0.95 * len(text) else None


def _in_base64(text: str, start: int, depth: int) -> bool:
    """Base64 from ``start`` (the first run of key characters: base64 of text holds one)."""
    for m in _B64.finditer(text, max(0, start - 8)):
        run = m.group()
        if run.islower() or run.isupper() or run.isdigit():
            continue  # names, ids, hex: base64 of text mixes cases
        decoded = _decoded(run)
        if decoded and _credential(decoded, depth + 1):
            return True
    return False


def _credential(text: str, depth: int = 0) -> bool:
    if _HEX.fullmatch(text) is not None:
        return False  # a fingerprint, a hash: none of the patterns is lower-case hex alone
    lower = text.lower()
    run = _RUN.search(text)
    if run is None:
        for word in _WORDS:
            if word in lower:
                break
        else:
            return False  # most strings: no long run of key characters, no telling word
    for rx in _ALWAYS:
        if rx.search(text) is not None:
            return True
    for word, patterns in _BY_WORD_ITEMS:
        if word in lower:
            for rx in patterns:
                if (_windowed(rx, text) if rx in _BACKTRACKING else rx.search(text)) is not None:
                    return True
    if _ASSIGN_WORDS.search(lower) is not None and _assignment(text):
        return True
    if run is None:
        return False
    if len(text) >= 40 and _bare_secret_key(text):
        return True
    for m in _QUOTED_B64.finditer(text):
        if _entropy(m.group(2)) > BASE64_ENTROPY:
            return True
    return depth < _DEPTH and _in_base64(text, run.start(), depth)


@functools.lru_cache(maxsize=_REMEMBERED)
def looks_like_credential(text: str) -> bool:
    """Does ``text`` hold something credential-looking (see the module docstring)?"""
    return _credential(text)


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
    ``PasswordLength``, ``KmsKeyId``, ``tokenizer``."""
    name = _normal(key)
    return (bool(_SECRET_NAME.search(name)) and not name.endswith(_NOT_SECRET_SUFFIX)
            and _NOT_SECRET_WORDS.search(name) is None)


def redact_named(key: str, value: str) -> str:
    """``value`` of the key or tag ``key``: redacted when the name says it is a secret (and the
    value is not a reference to one), or when the value looks like a credential itself."""
    if value and secret_name(key) and not value.startswith(_NOT_A_SECRET_VALUE):
        return REDACTED
    return redact_text(value)
