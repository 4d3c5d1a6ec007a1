"""Terraform module source addresses: what kind of source a ``module`` block names, parsed
(registry ``[HOST/]NAMESPACE/NAME/PROVIDER``, git, an archive URL, a local path), and how it is
shown: credentials never appear (``user:pass@`` and secret query arguments removed).

The forms are terraform's (https://developer.hashicorp.com/terraform/language/modules/sources):
``//subdir`` after the package address selects a directory of it, ``?ref=`` a git revision.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

DEFAULT_REGISTRY = "registry.terraform.io"
# query arguments that carry no secret (go-getter's); every other value is shown as REDACTED
PLAIN_QUERY = frozenset({"ref", "depth", "archive"})
SSH_USERS = frozenset({"git", "ssh", "hg"})
_NAME = r"[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?"
_REGISTRY = re.compile(rf"^(?:(?P<host>[0-9A-Za-z.-]+(?::\d+)?)/)?(?P<ns>{_NAME})/"
                       rf"(?P<name>{_NAME})/(?P<provider>[0-9a-z]{{1,64}})$")
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^@/\s]*)@")
_SCP = re.compile(r"^(?P<user>[A-Za-z0-9._-]+)@(?P<host>[A-Za-z0-9.-]+):(?P<path>[^/].*)$")


@dataclass(frozen=True)
class LocalSource:
    path: str


@dataclass(frozen=True)
class RegistrySource:
    host: str
    namespace: str
    name: str
    provider: str
    subdir: str = ""

    @property
    def package(self) -> str:
        return f"{self.host}/{self.namespace}/{self.name}/{self.provider}"


@dataclass(frozen=True)
class GitSource:
    url: str  # what `git clone` takes (https://…, ssh://…, file://…, git@host:path)
    ref: str | None = None
    subdir: str = ""
    depth: int | None = None


@dataclass(frozen=True)
class ArchiveSource:
    url: str  # an http(s) URL of a .zip / .tar.gz / .tgz / .tar.bz2 / .tar.xz / .tar
    subdir: str = ""


@dataclass(frozen=True)
class OtherSource:
    """A source this scanner does not fetch (s3::, gcs::, hg::, a plain http URL to follow)."""

    text: str
    why: str


ModuleSource = LocalSource | RegistrySource | GitSource | ArchiveSource | OtherSource
ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar")


def is_local(source: str) -> bool:
    return source.startswith(("./", "../")) or source in (".", "..")


def split_subdir(address: str) -> tuple[str, str]:
    """``host/path//sub/dir?query`` → (``host/path?query``, ``sub/dir``): go-getter's rule, the
    first ``//`` after the scheme's own."""
    scheme_end = address.find("://")
    start = scheme_end + 3 if scheme_end >= 0 else 0
    i = address.find("//", start)
    if i < 0:
        return address, ""
    rest = address[i + 2:]
    query = ""
    if "?" in rest:
        rest, query = rest.split("?", 1)
        query = "?" + query
    return address[:i] + query, rest.strip("/")


def parse_source(source: str) -> ModuleSource:
    """The kind of a module source and its parts."""
    if is_local(source):
        return LocalSource(source)
    text = source.strip()
    forced = ""
    m = re.match(r"^([A-Za-z0-9]+)::(.*)$", text)
    if m:
        forced, text = m.group(1).lower(), m.group(2)
    package, subdir = split_subdir(text)
    if forced in ("s3", "gcs", "hg"):
        return OtherSource(source, f"{forced}:: sources are not fetched")
    if forced == "git" or (not forced and _looks_git(package)):
        return _git(package, subdir)
    if not forced:
        reg = _REGISTRY.match(package)
        if reg and "." not in reg.group("ns") and not package.startswith(("http:", "https:")):
            host = (reg.group("host") or DEFAULT_REGISTRY).lower()
            if reg.group("host") is None or "." in host or ":" in host or host == "localhost":
                return RegistrySource(host, reg.group("ns"), reg.group("name"),
                                      reg.group("provider"), subdir)
    if forced in ("", "http", "https") and package.startswith(("http://", "https://")):
        path = urllib.parse.urlsplit(package).path.lower()
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(package).query)
        if path.endswith(ARCHIVE_SUFFIXES) or "archive" in q:
            return ArchiveSource(package, subdir)
        return OtherSource(source, "an http URL that is not an archive (.zip, .tar.gz) is "
                                   "not followed")
    if forced:
        return OtherSource(source, f"{forced}:: sources are not fetched")
    return OtherSource(source, "not a source address this scanner knows")


def _looks_git(package: str) -> bool:
    if package.startswith(("github.com/", "bitbucket.org/", "gitlab.com/")):
        return True
    if _SCP.match(package):
        return True
    return urllib.parse.urlsplit(package.split("?", 1)[0]).path.endswith(".git") and \
        package.startswith(("https://", "ssh://", "git://", "file://"))


def _git(package: str, subdir: str) -> GitSource | OtherSource:
    base, _, query = package.partition("?")
    args = urllib.parse.parse_qs(query, keep_blank_values=True)
    ref = args.get("ref", [None])[0] or None
    depth_text = args.get("depth", [None])[0]
    depth = int(depth_text) if depth_text and depth_text.isdigit() else None
    if "sshkey" in args:
        return OtherSource(display_source(package), "a git source with an sshkey argument is "
                                                    "not fetched (use the ssh agent)")
    if base.startswith(("github.com/", "gitlab.com/", "bitbucket.org/")):
        host, _, path = base.partition("/")
        if not path.endswith(".git"):
            path += ".git"
        base = f"https://{host}/{path}"
    if not (base.startswith(("https://", "ssh://", "git://", "file://", "http://"))
            or _SCP.match(base)):
        return OtherSource(display_source(package), "not a git URL this scanner knows")
    return GitSource(base, ref, subdir, depth)


def display_source(source: str) -> str:
    """The source as it may be shown: no ``user:password@`` (a user name alone stays, for
    ``ssh://git@…``), no value of a query argument that may be a secret."""
    text = _USERINFO.sub(_strip_userinfo, source)
    if "?" in text:
        head, _, query = text.partition("?")
        parts = []
        for item in query.split("&"):
            key, eq, _value = item.partition("=")
            parts.append(item if key.lower() in PLAIN_QUERY or not eq else f"{key}=REDACTED")
        text = head + "?" + "&".join(parts)
    return text


def _strip_userinfo(m: re.Match[str]) -> str:
    """A conventional ssh user name stays; any other user name may be a token: removed."""
    if m.group("user").lower() in SSH_USERS:
        return m.group(0)
    return m.group("scheme") + "REDACTED@"


def redact_text(text: str, *secrets: str) -> str:
    """Any text (git's stderr, an exception) with URL credentials and these strings removed."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, display_source(s))
    return _USERINFO.sub(_strip_userinfo, text)
