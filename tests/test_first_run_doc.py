"""docs/first-run.md as a new user follows it: every `sh` block, in order, in one shell in an
empty directory, with GPUAUDIT_SRC the checkout as users get it (a git repository of the release
files, tagged; the one the pre-commit tests use). The new virtualenv sees this environment's
packages (``--system-site-packages``), so the install builds gpuaudit itself and downloads
nothing else."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from scanner import __version__
from tests.test_precommit import ENV, hook_repo

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "first-run.md"


def _blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    blocks = _blocks()
    assert len(blocks) == 5, "install, scan, fix, pre-commit, CI"
    shims = tmp_path / "shims"
    shims.mkdir()
    # `python3 -m venv DIR` as written, with this environment's packages visible
    (shims / "python3").write_text(
        f'#!/bin/sh\nif [ "$1 $2" = "-m venv" ]; then shift 2; '
        f'exec "{sys.executable}" -m venv --system-site-packages "$@"; fi\n'
        f'exec "{sys.executable}" "$@"\n')
    (shims / "python3").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {**ENV, "GPUAUDIT_SRC": str(hook_repo()), "GPUAUDIT_REV": f"v{__version__}",
           "PATH": f"{shims}{os.pathsep}{ENV['PATH']}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)  # the installed gpuaudit, not this checkout
    script = "set -euo pipefail\n" + "\n".join(blocks)
    proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    first_scan, _, after_fix = out.partition("exit code 1")
    assert after_fix, out[-4000:]  # the first scan failed on a high finding
    assert "EBS-001" in first_scan and "SPOT-001" in first_scan
    assert "Passed" in after_fix  # the pre-commit hook on the fixed file
    assert proc.stdout.rstrip().endswith("1")  # the recipe names the action
    fixed = (work / "infra" / "gpu.tf").read_text()
    assert "encrypted   = true" in fixed and 'max_price = "3.50"' in fixed
