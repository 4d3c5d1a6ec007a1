"""Which findings a change is answerable for: the pre-commit hook and pull-request scans.

When files are named one by one (pre-commit passes the changed files), a finding is reported
when either

1. its resource is declared in a named file (a template or plan named counts whole), or
2. it is new: the same root module evaluated as of the base commit (``HEAD`` by default,
   ``--diff-base REF`` otherwise) did not give this result (same policy, resource, attribute
   and status). A ``default = false`` flipped in ``variables.tf``, a ``terraform.tfvars``
   added, a local module or an encryption default changed elsewhere in the module: each
   changes results on resources declared in other, unchanged files, and only those changed
   results are reported, with the changed files that caused them named in the message.

Results that were already there before the change stay quiet. This is sound for everything
gpuaudit reads from the repository (all inputs other than the changed files are the same in
both evaluations), and costs a second evaluation of the affected root modules only.

The affected root modules are the directories of the named Terraform files (``.tf``,
``.tf.json``, ``terraform.tfvars``, ``*.auto.tfvars``, their ``.json`` forms) and every root
module that uses one of those directories as a local module (``source = "../modules/gpu"``),
found with ``git grep``. The base version of each root and of the local modules it calls is
read from git (``git ls-tree``, ``git cat-file``) into a temporary directory; nothing in the
working tree is touched. Without git (or outside a repository), every finding of the affected
roots is reported, because any of them could depend on the named files; with no base commit
yet (the first commit), every finding is new.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from scanner.model import Finding, Resource, SourceKind, Status
from scanner.sources.terraform.layout import (
    TF_FAMILY,
    TF_FILES,
    module_file,
)

_LOCAL_SOURCE = re.compile(r'source"?\s*[=:]\s*"(\.\.?(?:/[^"]*)?)"')
GIT_TIMEOUT = 60
_FOUND = re.compile(r"^[0-9a-f]{40,64} \w+ \d+$")
DEFAULT_BASE = "HEAD"


class BaseRefError(Exception):
    """``--diff-base REF`` names no commit: an error (exit 2), never "no base" (which would
    make every finding new with the change). The message names the ref and why."""

    def __init__(self, ref: str, why: str) -> None:
        super().__init__(f"--diff-base {ref}: {why}")
        self.ref = ref


def is_terraform(path: str) -> bool:
    return path.lower().endswith(TF_FAMILY)


class Git:
    """The few read-only git commands this needs, in one repository."""

    def __init__(self, top: Path) -> None:
        self.top = top

    @classmethod
    def find(cls, start: Path) -> Git | None:
        out = _git(start, "rev-parse", "--show-toplevel")
        return cls(Path(out.strip())) if out else None

    def commit(self, ref: str) -> str | None:
        out = _git(self.top, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        return out.strip() if out else None

    def has_commits(self) -> bool:
        """False in a repository whose first commit is still to be made (HEAD is unborn)."""
        return bool((_git(self.top, "rev-list", "-n", "1", "--all") or "").strip())

    def base(self, ref: str) -> str | None:
        """The commit ``ref`` names; None only for ``HEAD`` before the first commit (no base
        yet: everything is new). A ref that names no commit is a BaseRefError."""
        if not ref or ref.startswith("-") or "\x00" in ref:
            raise BaseRefError(ref, "is not a git revision")
        commit = self.commit(ref)
        if commit is not None:
            return commit
        if ref == DEFAULT_BASE and not self.has_commits():
            return None
        raise BaseRefError(ref, f"names no commit of the repository {self.top}")

    def callers(self) -> dict[str, set[str]]:
        """Directory (repository-relative) -> directories whose tracked Terraform files use
        it as a local module source."""
        out = _git(self.top, "grep", "-I", "-l", "-z", "-E",
                   r'source"?[[:space:]]*[=:][[:space:]]*"\.\.?/', "--", "*.tf", "*.tf.json")
        edges: dict[str, set[str]] = {}
        for rel in filter(None, (out or "").split("\0")):
            try:
                text = (self.top / rel).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            caller = posixpath.dirname(rel) or "."
            for source in _LOCAL_SOURCE.findall(text):
                callee = posixpath.normpath(posixpath.join(caller, source))
                edges.setdefault(callee, set()).add(caller)
        return edges

    def tree(self, commit: str) -> dict[str, str]:
        """Repository-relative path -> blob id of the Terraform files of a commit."""
        out = _git(self.top, "ls-tree", "-r", "-z", "--full-tree", commit) or ""
        files: dict[str, str] = {}
        for entry in filter(None, out.split("\0")):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and is_terraform(path):
                files[path] = parts[2]
        return files

    def blobs(self, ids: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        proc = subprocess.run(["git", "cat-file", "--batch"], cwd=self.top, check=False,
                              input=("\n".join(wanted) + "\n").encode(), capture_output=True,
                              timeout=GIT_TIMEOUT)
        data, pos, out = proc.stdout, 0, {}
        for blob in wanted:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            pos = end + 1
            if len(header) != 3:  # "<id> missing"
                continue
            size = int(header[2])
            out[blob] = data[pos:pos + size]
            pos += size + 1
        return out


def _git(cwd: Path, *args: str) -> str | None:
    if shutil.which("git") is None:
        return None
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


@dataclass
class ChangeScope:
    """What a change touched, and the base results to tell new findings from old ones."""

    named: frozenset[str]  # real paths of the files named
    roots: dict[str, list[str]] = field(default_factory=dict)  # root real path -> changed files
    # (root real path, fingerprint, status) of the base's non-PASS results; None: no base
    # could be evaluated, so every finding of an affected root counts
    before: set[tuple[str, str, str]] | None = None
    base: str | None = None  # the commit compared with, for the message
    tf_named: bool = False  # a Terraform file is named: findings elsewhere may be left out

    def report(self, resource: Resource, finding: Finding) -> Finding | None:
        """The finding to report (with its cause when it is new here), or None."""
        prov = resource.provenance
        if prov.source is not SourceKind.TERRAFORM_HCL or prov.file is None:
            return finding  # a template or plan is named whole
        if _real(prov.file) in self.named:
            return finding
        root = _real(resource.scope)
        changed = self.roots.get(root)
        if changed is None or finding.status is Status.PASS:
            return None
        if self.before is not None and (root, finding.id, finding.status.value) in self.before:
            return None  # as it was before the change
        cause = ", ".join(changed)
        note = (f" [new with this change, caused by {cause}]" if self.before is not None
                else f" [may depend on {cause}]")
        return replace(finding, message=finding.message + note)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (as locations are)."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else Path(rel)


def affected_roots(named_tf: Sequence[Path], git: Git | None) -> dict[str, list[str]]:
    """Root module directory (real path) -> the named files it reads (as given)."""
    dirs: dict[str, list[str]] = {}
    for path in named_tf:
        dirs.setdefault(_real(str(path.parent)), []).append(str(path))
    roots: dict[str, list[str]] = {d: list(files) for d, files in dirs.items()}
    if git is None:
        return roots
    edges = git.callers()
    top = _real(str(git.top))
    for d, files in dirs.items():
        rel = os.path.relpath(d, top)
        if rel.startswith(".."):
            continue
        for caller in _top_callers(posixpath.normpath(rel.replace(os.sep, "/")), edges):
            roots.setdefault(_real(os.path.join(top, caller)), []).extend(files)
    return {root: sorted(set(files)) for root, files in roots.items()}


def _top_callers(start: str, edges: dict[str, set[str]]) -> set[str]:
    """The directories that reach ``start`` through local module calls and are called by
    nobody (the root modules that evaluate it)."""
    seen: set[str] = set()
    stack = list(edges.get(start, ()))
    tops: set[str] = set()
    while stack:
        d = stack.pop()
        if d in seen or d == start:
            continue
        seen.add(d)
        up = edges.get(d)
        if up:
            stack.extend(up)
        else:
            tops.add(d)
    return tops


def materialize(git: Git, commit: str, roots: Collection[str], dest: Path) -> dict[str, Path]:
    """Write the base's version of each root module and of the local modules it calls under
    ``dest`` (same repository-relative layout); root real path -> its copy (absent: the root
    did not exist at the base)."""
    tree = git.tree(commit)
    by_dir: dict[str, list[str]] = {}
    for path in tree:
        by_dir.setdefault(posixpath.dirname(path), []).append(path)
    top = _real(str(git.top))
    wanted: set[str] = set()
    out: dict[str, Path] = {}
    for root in roots:
        rel = posixpath.normpath(os.path.relpath(root, top).replace(os.sep, "/"))
        rel = "" if rel == "." else rel
        if rel.startswith("..") or not any(p.endswith(TF_FILES) for p in by_dir.get(rel, ())):
            continue
        out[root] = dest / rel
        stack = [rel]
        while stack:
            d = stack.pop()
            if d in wanted:
                continue
            wanted.add(d)
            files = by_dir.get(d, [])
            blobs = git.blobs(tree[p] for p in files if p.endswith(TF_FILES))
            for p in files:
                text = blobs.get(tree[p], b"").decode("utf-8", "replace")
                for source in _LOCAL_SOURCE.findall(text):
                    target = posixpath.normpath(posixpath.join(d, source))
                    stack.append("" if target == "." else target)
    paths = [p for d in wanted for p in by_dir.get(d, [])]
    blobs = git.blobs(tree[p] for p in paths)
    for p in paths:
        copied = dest / p
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.write_bytes(blobs.get(tree[p], b""))
    for root, copy in out.items():
        installed = Path(root) / ".terraform"
        if installed.is_dir() and not (copy / ".terraform").exists():
            (copy / ".terraform").symlink_to(installed, target_is_directory=True)
    return out


def deleted_since(paths: Sequence[Path], base_ref: str) -> list[Path]:
    """The named files that are gone from the working tree but were in the base commit: a
    pull request's deleted files (``git diff --diff-filter=D``). A Terraform file's directory
    is evaluated as of now and as of the base, like a changed file's; a deleted template has
    nothing left to judge. Any other missing path stays an input error."""
    tops: dict[str, tuple[Git, str] | None] = {}  # existing directory -> its repo and base
    asked: dict[tuple[str, str], list[tuple[Path, str]]] = {}  # (top, commit) -> (path, rel)
    for path in paths:
        if path.exists():
            continue
        here = next((d for d in Path(os.path.abspath(path)).parents if d.is_dir()), None)
        if here is None:
            continue
        if str(here) not in tops:  # its directory may be gone too: the nearest one that is not
            git = Git.find(here)
            commit = git.base(base_ref) if git else None
            tops[str(here)] = (git, commit) if git and commit else None
        found = tops[str(here)]
        if found is None:
            continue
        git, commit = found
        rel = os.path.relpath(_real(str(path)), _real(str(git.top)))
        if not rel.startswith("..") and "\n" not in rel:  # one name a line, below
            asked.setdefault((str(git.top), commit), []).append((path, rel.replace(os.sep, "/")))
    out: list[Path] = []
    for (top, commit), wanted in asked.items():  # one git process per repository
        proc = subprocess.run(["git", "cat-file", "--batch-check"], cwd=top, check=False,
                              capture_output=True, timeout=GIT_TIMEOUT, input="".join(
                                  f"{commit}:{rel}\n" for _, rel in wanted).encode())
        answers = proc.stdout.decode("utf-8", "replace").splitlines()
        out += [path for (path, _), answer in zip(wanted, answers, strict=False)
                if _FOUND.match(answer)]  # "<id> blob <size>"; else "<name> missing"
    return out


@dataclass
class Prepared:
    scope: ChangeScope
    extra_inputs: list[Path]  # module files of the roots to evaluate besides the named files

    @property
    def narrow(self) -> Callable[[Resource, Finding], Finding | None] | None:
        """What the engine asks of each finding; None when every file named is read whole
        (templates and plans only: each of their findings is reported as it is, so the engine
        need not build the PASS results it would only count)."""
        return self.scope.report if self.scope.tf_named else None


def prepare(
    paths: Sequence[Path],
    *,
    var_files: Sequence[Path] = (),
    variables: dict[str, str] | None = None,
    base_ref: str = DEFAULT_BASE,
    config_path: Path | None = None,
    policy_ids: Collection[str] | None = None,
    skip_ids: Collection[str] = (),
) -> Prepared:
    """The change scope of files named one by one, and the root modules to evaluate."""
    named = frozenset(_real(str(p)) for p in paths)
    tf = [p for p in paths if is_terraform(p.name)]
    scope = ChangeScope(named=named, tf_named=bool(tf))
    if not tf:
        return Prepared(scope, [])
    start = tf[0].parent if tf[0].parent != Path("") else Path(".")
    start = next((d for d in (start, *start.parents) if d.is_dir()), Path("."))  # deleted
    git = Git.find(start)
    # a root whose directory was deleted has nothing left to report: not evaluated at the base
    scope.roots = {root: files for root, files in affected_roots(tf, git).items()
                   if os.path.isdir(root)}
    named_dirs = {_real(str(p.parent)) for p in tf if p.exists()}  # a deleted one's: not
    extra = [_shown(f) for root in scope.roots if root not in named_dirs
             if (f := module_file(Path(root))) is not None]
    if git is None:
        if base_ref != DEFAULT_BASE:
            raise BaseRefError(base_ref, f"{_shown(start)} is not in a git repository")
        return Prepared(scope, extra)
    commit = git.base(base_ref)
    scope.base = base_ref
    if commit is None:  # no base yet (the first commit): everything in the roots is new
        scope.before = set()
        return Prepared(scope, extra)
    try:
        scope.before = _before(git, commit, scope.roots, var_files, variables or {},
                               config_path, policy_ids, skip_ids)
    except Exception:  # the base cannot be evaluated (a bad config, say): report all
        scope.before = None
    return Prepared(scope, extra)


def _before(
    git: Git,
    commit: str,
    roots: Collection[str],
    var_files: Sequence[Path],
    variables: dict[str, str],
    config_path: Path | None,
    policy_ids: Collection[str] | None,
    skip_ids: Collection[str],
) -> set[tuple[str, str, str]]:
    from scanner.engine.config import load_config
    from scanner.engine.evaluate import run
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    with tempfile.TemporaryDirectory(prefix="gpuaudit-base-") as tmp:
        dest = Path(tmp)
        copies = materialize(git, commit, roots, dest)
        if not copies:
            return set()
        top = _real(str(git.top))
        old_vars = []
        for f in var_files:  # a variables file of the repository as it was at the base
            rel = os.path.relpath(_real(str(f)), top)
            old_vars.append(dest / rel if not rel.startswith("..") and (dest / rel).exists()
                            else f)
        inputs = [m for copy in copies.values() if (m := module_file(copy)) is not None]
        result = load_terraform_dir(inputs, var_files=old_vars, variables=variables)
        back = {_real(str(copy)): root for root, copy in copies.items()}
        # each copy's resources are evaluated as the root they stand for, so that whatever a
        # finding's identity includes of its root module is the same before and after
        resources = [replace(r, scope=back.get(_real(r.scope), r.scope)) for r in result.resources]
        before: set[tuple[str, str, str]] = set()

        def note(resource: Resource, finding: Finding) -> None:
            root = _real(resource.scope)
            if root in roots and finding.status is not Status.PASS:
                before.add((root, finding.id, finding.status.value))
            return None

        run(resources, config=load_config(config_path), policy_ids=policy_ids,
            skip_ids=skip_ids, include_passed=True, narrow=note)
        return before
