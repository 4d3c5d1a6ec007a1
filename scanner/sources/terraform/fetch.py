"""Fetching remote Terraform modules into a cache (``scan --fetch-modules``).

Sources (scanner.sources.terraform.module_sources): git (``git::https://…``, ``git::ssh://…``,
``github.com/ORG/REPO``, ``git::file://…``; ``?ref=``, ``//subdir``), archives over http(s)
(.zip, .tar.gz …), and registry modules (``[HOST/]NAMESPACE/NAME/PROVIDER`` with a ``version``
constraint), resolved by the registry protocol: service discovery at
``https://HOST/.well-known/terraform.json`` (``modules.v1``), the ``versions`` list, the newest
version that satisfies the constraint, and its ``download`` endpoint, whose
``X-Terraform-Get`` header (or JSON ``location``) names a git or archive source. A loopback
host (127.0.0.1, localhost, ::1) is spoken to over http: a registry or mirror on this
machine; every other host over https.

Cache: ``CACHE/git/KEY``, ``CACHE/archive/KEY``, KEY a hash of the source and the resolved
commit (git) or URL (archives: a registry version's download URL names its version). A
directory there is complete (written beside it, then renamed). Git is run without prompts
(``GIT_TERMINAL_PROMPT=0``, ssh ``BatchMode``; the user's credential helpers and ssh agent
serve private repositories), with only the https, ssh, git and file transports, without
hooks, with a timeout. What an archive holds is checked before anything is written: every
member inside the target (no absolute path, no ``..``, no link out), a budget of files and
bytes; a git tree is checked the same way before it is checked out. No message names a credential.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.sources.terraform.module_sources import (
    ArchiveSource,
    GitSource,
    LocalSource,
    OtherSource,
    RegistrySource,
    display_source,
    parse_source,
    redact_text,
)
from scanner.sources.terraform.versions import VersionError, newest

TIMEOUT_S = 60.0  # each network call and each git command
MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024  # an archive as downloaded
MAX_MODULE_BYTES = 256 * 1024 * 1024  # a module's files, extracted or checked out
MAX_MODULE_FILES = 20_000  # a module's files and directories
MAX_JSON_BYTES = 4 * 1024 * 1024  # a registry answer
MAX_FETCHES = 200  # distinct sources fetched in one run
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_GIT_REPOSITORY_ENV = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
                                 "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                                 "GIT_NAMESPACE", "GIT_COMMON_DIR"})


class FetchError(Exception):
    """A module source that could not be fetched; the message holds no credentials."""


def default_cache_dir() -> Path:
    """``$GPUAUDIT_CACHE_DIR/modules``, else the user cache directory's gpuaudit/modules
    (``~/.cache/gpuaudit/modules`` on Linux)."""
    env = os.environ.get("GPUAUDIT_CACHE_DIR", "").strip()
    if env:
        return Path(env) / "modules"
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("gpuaudit")) / "modules"
    except ImportError:  # pragma: no cover - platformdirs is a dependency of click's kin
        return Path.home() / ".cache" / "gpuaudit" / "modules"


@dataclass
class ModuleFetcher:
    """``fetcher(source, version, where)`` → the module's directory in the cache; raises
    FetchError. Results are remembered for the run (one fetch per source and version)."""

    cache_dir: Path
    timeout: float = TIMEOUT_S
    max_bytes: int = MAX_MODULE_BYTES
    max_files: int = MAX_MODULE_FILES
    max_download: int = MAX_DOWNLOAD_BYTES
    _done: dict[tuple[str, str | None], str | FetchError] = field(default_factory=dict)
    _discovery: dict[str, str] = field(default_factory=dict)

    def __call__(self, source: str, version: str | None, where: str = "") -> str:
        key = (source, version)
        hit = self._done.get(key)
        if hit is None:
            if len(self._done) >= MAX_FETCHES:
                raise FetchError(f"more than {MAX_FETCHES} module sources in one run: not "
                                 "fetched")
            try:
                hit = self._fetch(source, version)
            except FetchError as exc:
                hit = exc
            except (OSError, ValueError) as exc:  # a cache that cannot be written, …
                hit = FetchError(redact_text(f"{type(exc).__name__}: {exc}", source))
            self._done[key] = hit
        if isinstance(hit, FetchError):
            raise hit
        return hit

    # -- by kind of source -------------------------------------------------------------------

    def _fetch(self, source: str, version: str | None) -> str:
        parsed = parse_source(source)
        if isinstance(parsed, RegistrySource):
            return self._registry(parsed, version)
        if version is not None:
            raise FetchError("a version constraint is only valid for a registry module "
                             f"source, not {display_source(source)!r}")
        return self._package(parsed, source)

    def _package(self, parsed: object, source: str) -> str:
        if isinstance(parsed, GitSource):
            return self._git(parsed)
        if isinstance(parsed, ArchiveSource):
            return self._archive(parsed)
        if isinstance(parsed, OtherSource):
            raise FetchError(parsed.why)
        if isinstance(parsed, LocalSource):
            raise FetchError("a local path is not a package to fetch")
        raise FetchError(f"{display_source(source)!r} is not a source this scanner fetches")

    def _registry(self, src: RegistrySource, constraint: str | None) -> str:
        base = self._modules_endpoint(src.host)
        package = f"{src.namespace}/{src.name}/{src.provider}"
        url = urllib.parse.urljoin(base, f"{package}/versions")
        doc = self._get_json(url, f"the versions of {src.package}")
        try:
            listed = [v.get("version") for m in doc.get("modules", [])
                      for v in m.get("versions", []) if isinstance(v, dict)]
        except (AttributeError, TypeError):  # not a dict, or not a list (not iterable)
            raise FetchError(f"the registry's versions of {src.package} are not in the "
                             "registry protocol's form") from None
        try:
            chosen = newest(constraint, [v for v in listed if isinstance(v, str)])
        except VersionError as exc:
            raise FetchError(f"invalid version constraint: {exc}") from None
        if chosen is None:
            shown = ", ".join(sorted(v for v in listed if isinstance(v, str))[-10:]) or "none"
            raise FetchError(f"no version of {src.package} matches {constraint or 'any'!r} "
                             f"(the registry lists: {shown})")
        download = urllib.parse.urljoin(base, f"{package}/{urllib.parse.quote(chosen)}/download")
        location = self._download_location(download, src.package)
        target = parse_source(urllib.parse.urljoin(download, location)
                              if location.startswith(("/", "./", "../")) else location)
        if isinstance(target, RegistrySource | LocalSource):
            raise FetchError(f"the registry's download of {src.package} {chosen} names "
                             "another registry module or a local path: not followed")
        directory = self._package(target, location)
        return _subdir(directory, src.subdir)

    # -- the registry protocol ---------------------------------------------------------------

    def _base(self, host: str) -> str:
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
        scheme = "http" if name.lower() in LOOPBACK else "https"
        return f"{scheme}://{host}/"

    def _modules_endpoint(self, host: str) -> str:
        hit = self._discovery.get(host)
        if hit is None:
            root = self._base(host)
            doc = self._get_json(urllib.parse.urljoin(root, ".well-known/terraform.json"),
                                 f"the service discovery of {host}")
            endpoint = doc.get("modules.v1") if isinstance(doc, dict) else None
            if not isinstance(endpoint, str) or not endpoint:
                raise FetchError(f"{host} offers no module registry (no modules.v1 in its "
                                 "service discovery)")
            hit = urllib.parse.urljoin(root, endpoint)
            if not hit.endswith("/"):
                hit += "/"
            self._discovery[host] = hit
        return hit

    def _open(self, url: str, what: str) -> tuple[int, dict[str, str], bytes]:
        scheme = urllib.parse.urlsplit(url).scheme
        if scheme not in ("http", "https"):
            raise FetchError(f"{what}: not an http(s) URL")
        request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                       "User-Agent": "gpuaudit"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                body = resp.read(MAX_JSON_BYTES + 1)
                headers = {k.lower(): v for k, v in resp.headers.items()}
                return resp.status, headers, body
        except urllib.error.HTTPError as exc:
            raise FetchError(f"{what}: HTTP {exc.code} from {display_source(url)}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            why = getattr(exc, "reason", exc)
            raise FetchError(redact_text(f"{what}: {display_source(url)}: {why}", url)) \
                from None

    def _get_json(self, url: str, what: str) -> dict[str, Any]:
        _status, _headers, body = self._open(url, what)
        if len(body) > MAX_JSON_BYTES:
            raise FetchError(f"{what}: the answer is over {MAX_JSON_BYTES >> 20} MiB")
        try:
            doc = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise FetchError(f"{what}: the answer is not JSON") from None
        if not isinstance(doc, dict):
            raise FetchError(f"{what}: the answer is not a JSON object")
        return doc

    def _download_location(self, url: str, package: str) -> str:
        _status, headers, body = self._open(url, f"the download of {package}")
        location = headers.get("x-terraform-get")
        if not location and body:
            try:
                doc = json.loads(body.decode("utf-8"))
                location = doc.get("location") if isinstance(doc, dict) else None
            except (UnicodeDecodeError, ValueError, RecursionError):
                location = None
        if not isinstance(location, str) or not location.strip():
            raise FetchError(f"the registry names no source for {package} (no "
                             "X-Terraform-Get header)")
        return location.strip()

    # -- git ----------------------------------------------------------------------------------

    def _git(self, src: GitSource) -> str:
        commit = self._resolve(src)
        key = _key("git", src.url, commit or src.ref or "HEAD")
        final = self.cache_dir / "git" / key
        if not (commit and final.is_dir()):
            # a tag or branch (or HEAD) is cloned alone; a commit id needs the history
            named = commit is not None and (src.ref is None or commit != src.ref.lower())
            final = self._clone(src, final, shallow=named)
        return _subdir(str(final), src.subdir)

    def _run_git(self, args: list[str], cwd: str | None, url: str) -> str:
        # the user's git configuration and credential helpers stay (private repositories);
        # what would point git at another repository, or let it prompt, does not
        env = {k: v for k, v in os.environ.items() if k not in _GIT_REPOSITORY_ENV}
        ssh = env.get("GIT_SSH_COMMAND") or "ssh"
        env.update(GIT_TERMINAL_PROMPT="0", GIT_PROTOCOL_FROM_USER="0",
                   GIT_SSH_COMMAND=f"{ssh} -o BatchMode=yes -o ConnectTimeout=20")
        command = ["git", "-c", "protocol.ext.allow=never", "-c", "protocol.file.allow=always",
                   "-c", "core.hooksPath=/dev/null", "-c", "core.symlinks=false", *args]
        try:
            done = subprocess.run(command, cwd=cwd, env=env, capture_output=True,
                                  timeout=self.timeout, stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired:
            raise FetchError(f"git {args[0]} of {display_source(url)} took more than "
                             f"{self.timeout:g} s") from None
        except OSError as exc:
            raise FetchError(f"git could not be run: {exc.strerror or exc}") from None
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            last = next((line for line in reversed(err) if line.strip()), "failed")
            raise FetchError(redact_text(f"git {args[0]} of {display_source(url)}: "
                                         f"{last[:300]}", url))
        return done.stdout.decode("utf-8", "replace")

    def _resolve(self, src: GitSource) -> str | None:
        """The commit ``ref`` names (a tag, a branch, HEAD), when the remote lists it."""
        ref = src.ref
        if ref and len(ref) == 40 and all(c in "0123456789abcdef" for c in ref.lower()):
            return ref.lower()
        patterns = [ref, f"{ref}^{{}}"] if ref else ["HEAD"]
        out = self._run_git(["ls-remote", "--", src.url, *patterns], None, src.url)
        found: dict[str, str] = {}
        for line in out.splitlines():
            sha, _, name = line.partition("\t")
            found[name.strip()] = sha.strip()
        if not ref:
            return found.get("HEAD")
        for name in (f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}", f"refs/heads/{ref}", ref):
            if name in found:
                return found[name]
        return None  # a short commit id: known once cloned

    def _clone(self, src: GitSource, final: Path, *, shallow: bool = False) -> Path:
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=self.cache_dir))
        try:
            repo = work / "repo"
            only = ["--depth", "1", *(["--branch", src.ref] if src.ref else [])] \
                if shallow else []
            self._run_git(["clone", "--quiet", "--no-checkout", *only, "--", src.url,
                           str(repo)], None, src.url)
            if src.ref:
                commit = self._rev(repo, src)
            else:
                commit = self._run_git(["rev-parse", "--verify", "HEAD^{commit}"], str(repo),
                                       src.url).strip()
            self._check_tree(repo, commit, src.url)
            self._run_git(["checkout", "--quiet", "--detach", commit], str(repo), src.url)
            shutil.rmtree(repo / ".git", ignore_errors=True)
            final = final.parent / _key("git", src.url, commit)
            return _install(repo, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _rev(self, repo: Path, src: GitSource) -> str:
        for candidate in (f"refs/tags/{src.ref}", f"origin/{src.ref}", str(src.ref)):
            try:
                return self._run_git(["rev-parse", "--verify", "--quiet",
                                      f"{candidate}^{{commit}}"], str(repo), src.url).strip()
            except FetchError:
                continue
        raise FetchError(f"no ref {src.ref!r} in {display_source(src.url)}")

    def _check_tree(self, repo: Path, commit: str, url: str) -> None:
        """The budget and the paths of a commit's tree, before it is checked out."""
        out = self._run_git(["ls-tree", "-r", "-l", "-z", "--full-tree", commit], str(repo),
                            url)
        files = 0
        total = 0
        for entry in out.split("\0"):
            if not entry:
                continue
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            files += 1
            if len(parts) >= 4 and parts[3].isdigit():
                total += int(parts[3])
            if files > self.max_files or total > self.max_bytes:
                raise FetchError(f"{display_source(url)} at {commit[:12]} holds more than "
                                 f"{self.max_files:,} files or {self.max_bytes >> 20} MiB: "
                                 "not checked out")
            if parts and parts[0] == "160000":
                continue  # a submodule: not fetched
            _safe_member(path)

    # -- archives -----------------------------------------------------------------------------

    def _archive(self, src: ArchiveSource) -> str:
        final = self.cache_dir / "archive" / _key("archive", src.url, "")
        if not final.is_dir():
            data = self._download(src.url)
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=self.cache_dir))
            try:
                out = work / "module"
                out.mkdir()
                extract(data, _archive_type(src.url), out, max_files=self.max_files,
                        max_bytes=self.max_bytes)
                final = _install(out, final)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        return _subdir(str(final), src.subdir)

    def _download(self, url: str) -> bytes:
        shown = display_source(url)
        request = urllib.request.Request(url, headers={"User-Agent": "gpuaudit"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                length = resp.headers.get("Content-Length")
                if length and length.isdigit() and int(length) > self.max_download:
                    raise FetchError(f"{shown} is over {self.max_download >> 20} MiB")
                data: bytes = resp.read(self.max_download + 1)
        except urllib.error.HTTPError as exc:
            raise FetchError(f"HTTP {exc.code} from {shown}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise FetchError(redact_text(f"{shown}: {getattr(exc, 'reason', exc)}", url)) \
                from None
        if len(data) > self.max_download:
            raise FetchError(f"{shown} is over {self.max_download >> 20} MiB")
        return data


def _key(kind: str, url: str, rev: str) -> str:
    return hashlib.sha256(f"{kind}\0{url}\0{rev}".encode()).hexdigest()[:32]


def _install(built: Path, final: Path) -> Path:
    """Move a complete directory into the cache (another process may have put it there
    first: then that one is kept)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(built, final)
    except OSError:
        if not final.is_dir():
            raise
    return final


def _subdir(directory: str, subdir: str) -> str:
    if not subdir:
        return directory
    _safe_member(subdir)
    target = os.path.normpath(os.path.join(directory, subdir))
    if not os.path.isdir(target):
        raise FetchError(f"the package has no directory {subdir!r}")
    real, base = os.path.realpath(target), os.path.realpath(directory)
    if not (real == base or real.startswith(base + os.sep)):
        raise FetchError(f"the directory {subdir!r} leads out of the package")
    return target


def _safe_member(name: str) -> str:
    """A member path of a package, refused when absolute or when it climbs out."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":"):
        raise FetchError(f"the package holds an absolute path ({name[:100]!r}): refused")
    norm = posixpath.normpath(clean)
    if norm == ".." or norm.startswith("../") or "\0" in norm:
        raise FetchError(f"the package holds a path out of it ({name[:100]!r}): refused")
    return norm


def _archive_type(url: str) -> str:
    path = urllib.parse.urlsplit(url).path.lower()
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    forced = (q.get("archive") or [""])[0].lower()
    for suffix, kind in ((".zip", "zip"), (".tar.gz", "tgz"), (".tgz", "tgz"),
                         (".tar.bz2", "tbz2"), (".tbz2", "tbz2"), (".tar.xz", "txz"),
                         (".txz", "txz"), (".tar", "tar")):
        if forced in (suffix.lstrip("."), kind) or (not forced and path.endswith(suffix)):
            return kind
    raise FetchError("not an archive type this scanner extracts")


def extract(data: bytes, kind: str, out: Path, *, max_files: int = MAX_MODULE_FILES,
            max_bytes: int = MAX_MODULE_BYTES) -> None:
    """Extract an archive into ``out``: every member checked first (inside ``out``, within
    the budgets of files and bytes), then only regular files and directories written (links
    and devices are not)."""
    if kind == "zip":
        _extract_zip(data, out, max_files, max_bytes)
    else:
        _extract_tar(data, {"tgz": "r:gz", "tbz2": "r:bz2", "txz": "r:xz", "tar": "r:"}[kind],
                     out, max_files, max_bytes)


def _budget(files: int, total: int, max_files: int, max_bytes: int) -> None:
    if files > max_files:
        raise FetchError(f"the archive holds more than {max_files:,} files: not extracted")
    if total > max_bytes:
        raise FetchError(f"the archive expands to more than {max_bytes >> 20} MiB: not "
                         "extracted")


def _extract_zip(data: bytes, out: Path, max_files: int, max_bytes: int) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise FetchError(f"not a zip archive: {exc}") from None
    with archive:
        members = archive.infolist()
        _budget(len(members), sum(m.file_size for m in members), max_files, max_bytes)
        plan = []
        for m in members:
            name = _safe_member(m.filename)
            mode = (m.external_attr >> 16) & 0o170000
            if mode == 0o120000:
                raise FetchError(f"the archive holds a symbolic link ({m.filename[:100]!r}): "
                                 "refused")
            plan.append((m, name))
        written = 0
        for m, name in plan:
            target = out / name
            if m.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(m) as src, open(target, "wb") as dst:
                    written = _copy(src.read, dst.write, written, max_bytes)
            except (zipfile.BadZipFile, zlib_error(), OSError, RuntimeError) as exc:
                raise FetchError(f"the archive could not be read: {exc}") from None


def _copy(read: Callable[[int], bytes], write: Callable[[bytes], object], written: int,
          max_bytes: int) -> int:
    """Copy with the byte budget counted as written (a member may lie about its size)."""
    while True:
        chunk = read(1 << 20)
        if not chunk:
            return written
        written += len(chunk)
        if written > max_bytes:
            raise FetchError(f"the archive expands to more than {max_bytes >> 20} MiB: "
                             "not extracted")
        write(chunk)


def zlib_error() -> type[Exception]:
    import zlib

    return zlib.error


def _extract_tar(data: bytes, mode: str, out: Path, max_files: int, max_bytes: int) -> None:
    try:
        # call-overload: the stubs type each mode literal; mode is a read mode ("r:gz", "r:")
        archive = tarfile.open(fileobj=io.BytesIO(data), mode=mode)  # type: ignore[call-overload]  # noqa: SIM115
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise FetchError(f"not a {mode[2:] or 'tar'} archive: {exc}") from None
    with archive:
        plan: list[tuple[tarfile.TarInfo, str]] = []
        files = 0
        total = 0
        try:
            for m in archive:  # streamed: stops at the budget, not after the whole bomb
                files += 1
                total += max(m.size, 0) if m.isreg() else 0
                _budget(files, total, max_files, max_bytes)
                name = _safe_member(m.name)
                if m.issym() or m.islnk():
                    link = m.linkname if m.islnk() else posixpath.join(
                        posixpath.dirname(name), m.linkname)
                    _safe_member(link)  # a link out of it refuses the whole archive
                    continue  # links are not written
                if m.isreg() or m.isdir():
                    plan.append((m, name))
        except (tarfile.TarError, OSError, EOFError, zlib_error()) as exc:
            raise FetchError(f"the archive could not be read: {exc}") from None
        written = 0
        for m, name in plan:
            target = out / name
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            src = archive.extractfile(m)
            if src is None:
                continue
            with src, open(target, "wb") as dst:
                written = _copy(src.read, dst.write, written, max_bytes)
