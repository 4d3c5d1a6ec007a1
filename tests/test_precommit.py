"""The hook in .pre-commit-hooks.yaml, run by the real pre-commit tool on throwaway repos: it
blocks every commit that introduces a violation (in the changed file, or caused by it elsewhere
in the module), stays quiet about findings the commit did not cause and about YAML that is not
infrastructure, and the README's snippet works as written."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from scanner import __version__

ROOT = Path(__file__).resolve().parents[1]

BAD = """AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Scratch:
    Type: AWS::EC2::Volume
    Properties: {AvailabilityZone: us-east-1a, Size: 100, Encrypted: false}
"""
GOOD = BAD.replace("Encrypted: false", "Encrypted: true")

VARIABLES = 'variable "encrypt_root" {\n  type    = bool\n  default = true\n}\n'
MAIN = """resource "aws_ebs_volume" "data" {
  availability_zone = "us-east-1a"
  size              = 100
  encrypted         = var.encrypt_root
}
"""
LEGACY = """# a violation from before, in a file no commit below touches
resource "aws_ebs_volume" "legacy_scratch" {
  availability_zone = "us-east-1a"
  size              = 10
}
"""


def _pre_commit() -> list[str]:
    exe = Path(sys.executable).with_name("pre-commit")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("pre-commit")
    assert found, "pre-commit is in the test extra: pip install -e '.[test]'"
    return [found]


ENV = {**os.environ, "PRE_COMMIT_HOME": str(ROOT / ".cache" / "pre-commit"),
       "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t", "NO_COLOR": "1"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env=ENV).stdout


RELEASE_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "action.yml")
# the packages, and what a clone of the release gives users beside them (the CI recipes)
PACKAGES = ("scanner", "policies", "reports", "examples")
FIXED_DATES = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
               "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def _release_files() -> list[Path]:
    files = [ROOT / n for n in RELEASE_FILES]
    for pkg in PACKAGES:
        files += sorted(p for p in (ROOT / pkg).rglob("*")
                        if p.is_file() and "__pycache__" not in p.parts)
    return files


def hook_repo() -> Path:
    """This checkout as its users get it: a git repository of what the distribution is built
    from (uncommitted changes included), tagged with the version as docs/releasing.md says.
    Its path and commit follow from its content, so that every test (and every xdist worker)
    uses one pre-commit environment, installed once (pre-commit keys them by repo and rev)."""
    files = _release_files()
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    target = ROOT / ".cache" / f"hook-repo-{digest.hexdigest()[:16]}"
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=".hook-repo-", dir=target.parent))
    for f in files:
        dest = build / f.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest)
    env = {**ENV, **FIXED_DATES}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "release"],
                 ["tag", f"v{__version__}"]):
        subprocess.run(["git", *args], cwd=build, env=env, check=True, capture_output=True)
    try:
        build.rename(target)  # atomic: another worker may have made the same one meanwhile
    except OSError:
        shutil.rmtree(build, ignore_errors=True)
    return target


def _try_repo(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The hook of this checkout, at its release tag, run by `pre-commit run` on the staged
    files of ``repo`` (all of them with --all-files), as a commit would run it. (Not
    `pre-commit try-repo`: it installs a new environment on every call.)"""
    config = repo / ".pre-commit-config.yaml"
    config.write_text(f"repos:\n  - repo: {hook_repo()}\n    rev: v{__version__}\n"
                      "    hooks:\n      - id: gpuaudit\n")
    _git(repo, "add", config.name)  # pre-commit runs only with its config staged
    cmd = [*_pre_commit(), "run", "gpuaudit", *args]
    return subprocess.run(cmd, cwd=repo, env=ENV, capture_output=True, text=True, timeout=900)


def _module_repo(tmp_path: Path) -> Path:
    """A repository whose module passes, except for one old violation in legacy.tf."""
    repo = tmp_path / "infra"
    (repo / "gpu").mkdir(parents=True)
    _git(repo, "init", "-q")
    (repo / "gpu" / "variables.tf").write_text(VARIABLES)
    (repo / "gpu" / "main.tf").write_text(MAIN)
    (repo / "gpu" / "legacy.tf").write_text(LEGACY)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "gpu module")
    return repo


@pytest.mark.slow
def test_hook_blocks_unencrypted_volume_and_passes_fixed_one(tmp_path: Path) -> None:
    repo = tmp_path / "infra"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "stack.yaml").write_text(BAD)
    (repo / "notes.yaml").write_text("not: iac\n")
    _git(repo, "add", ".")
    bad = _try_repo(repo, "--all-files")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "EBS-001" in bad.stdout and "Scratch" in bad.stdout
    assert "notes.yaml" not in bad.stdout  # not infrastructure: ignored quietly
    (repo / "stack.yaml").write_text(GOOD)
    _git(repo, "add", ".")
    good = _try_repo(repo, "--all-files")
    assert good.returncode == 0, good.stdout + good.stderr


@pytest.mark.slow
@pytest.mark.parametrize("change", ["tfvars_added", "variable_default_flipped"])
def test_hook_blocks_a_violation_caused_by_a_changed_file_elsewhere_in_the_module(
    tmp_path: Path, change: str
) -> None:
    repo = _module_repo(tmp_path)
    if change == "tfvars_added":
        changed = "gpu/terraform.tfvars"
        (repo / changed).write_text("encrypt_root = false\n")
    else:
        changed = "gpu/variables.tf"
        (repo / changed).write_text(VARIABLES.replace("default = true", "default = false"))
    _git(repo, "add", ".")
    proc = _try_repo(repo)  # the staged files only, as `git commit` runs it
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "Files were modified" not in out
    # the resource's file and line, and the changed file that caused the violation
    assert re.search(r"EBS-001\s+gpu/main\.tf:1-5\s+aws_ebs_volume\.data", out), out
    assert f"caused by {changed}" in " ".join(out.split()), out
    assert "legacy_scratch" not in out  # there before this change: not this commit's doing
    # the same check passes once the change is undone and something harmless is committed
    # (.pre-commit-config.yaml is staged too: YAML that is not infrastructure)
    _git(repo, "reset", "-q", "--hard")
    (repo / "gpu" / "README.md").write_text("notes\n")
    (repo / "gpu" / "values.yaml").write_text("replicas: 3\n")
    _git(repo, "add", ".")
    quiet = _try_repo(repo)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "legacy_scratch" not in quiet.stdout and "nothing scanned" not in quiet.stdout


def _readme_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## pre-commit", 1)[1]
    match = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert match, "the README's pre-commit section has a YAML snippet"
    return match.group(1)


def test_readme_snippet_names_this_release() -> None:
    import yaml

    config = yaml.safe_load(_readme_snippet())
    (repo,) = config["repos"]
    # the version has one source, scanner.__version__ (tests/test_install_pin.py)
    assert repo["rev"] == f"v{__version__}"  # a release tag: docs/releasing.md creates it
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in repo["hooks"]} <= {h["id"] for h in hooks}


@pytest.mark.slow
def test_readme_snippet_works_as_written(tmp_path: Path) -> None:
    """The snippet, unchanged but for the repository URL (a local copy of this checkout,
    released as docs/releasing.md says: the tag of the version), installed with
    `pre-commit install` and run by `git commit`."""
    release = hook_repo()
    snippet = _readme_snippet()
    url = re.search(r"repo: (\S+)", snippet).group(1)
    repo = _module_repo(tmp_path)
    (repo / ".pre-commit-config.yaml").write_text(snippet.replace(url, str(release)))
    assert snippet.replace(url, "") == (repo / ".pre-commit-config.yaml").read_text().replace(
        str(release), "")  # nothing else changed
    subprocess.run([*_pre_commit(), "install"], cwd=repo, env=ENV, check=True,
                   capture_output=True, timeout=120)
    (repo / "gpu" / "terraform.tfvars").write_text("encrypt_root = false\n")
    _git(repo, "add", ".")
    blocked = subprocess.run(["git", "commit", "-m", "turn encryption off"], cwd=repo, env=ENV,
                             capture_output=True, text=True, timeout=900)
    said = " ".join((blocked.stdout + blocked.stderr).split())  # git prints hooks on stderr
    assert blocked.returncode == 1, said
    assert "EBS-001" in said and "caused by gpu/terraform.tfvars" in said
    (repo / "gpu" / "terraform.tfvars").write_text("encrypt_root = true\n")
    _git(repo, "add", ".")
    passed = subprocess.run(["git", "commit", "-m", "keep encryption on"], cwd=repo, env=ENV,
                            capture_output=True, text=True, timeout=900)
    assert passed.returncode == 0, passed.stdout + passed.stderr
