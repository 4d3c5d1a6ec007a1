"""The hook in .pre-commit-hooks.yaml, run by the real pre-commit tool on a throwaway repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

BAD = """AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Scratch:
    Type: AWS::EC2::Volume
    Properties: {AvailabilityZone: us-east-1a, Size: 100, Encrypted: false}
"""
GOOD = BAD.replace("Encrypted: false", "Encrypted: true")


def _pre_commit() -> list[str]:
    exe = Path(sys.executable).with_name("pre-commit")
    if exe.exists():
        return [str(exe)]
    if shutil.which("pre-commit"):
        return ["pre-commit"]
    pytest.skip("pre-commit is not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.mark.slow
def test_hook_blocks_unencrypted_volume_and_passes_fixed_one(tmp_path: Path) -> None:
    repo = tmp_path / "infra"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "stack.yaml").write_text(BAD)
    (repo / "notes.yaml").write_text("not: iac\n")
    _git(repo, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(ROOT / ".cache" / "pre-commit"),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    cmd = [*_pre_commit(), "try-repo", str(ROOT), "gpuaudit", "--all-files"]
    bad = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "EBS-001" in bad.stdout and "Scratch" in bad.stdout
    (repo / "stack.yaml").write_text(GOOD)
    _git(repo, "add", ".")
    good = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    assert good.returncode == 0, good.stdout + good.stderr
