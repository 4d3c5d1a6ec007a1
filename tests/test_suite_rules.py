"""The suite's own rules (tests/conftest.py): a skipped test fails the run, except on a
development machine that allows it explicitly, and never in CI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SUITE = '''
import pytest

def test_runs():
    assert True

def test_skips():
    pytest.skip("a tool is missing")

@pytest.mark.skipif(True, reason="a file is missing")
def test_skipped_by_marker():
    pass

@pytest.mark.xfail(strict=True, reason="a known disagreement")
def test_expected_to_fail():
    assert False
'''


def _run(tmp_path: Path, suite: str = SUITE, **env: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_sample.py").write_text(suite)
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "GPUAUDIT_ALLOW_SKIP")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-rfs", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**base, **env})


def test_a_skip_is_a_failure(tmp_path: Path) -> None:
    proc = _run(tmp_path)
    assert proc.returncode == 1, proc.stdout
    # the test's own skip fails; a marker's (in setup) is an error
    assert "1 failed, 1 passed, 1 xfailed, 1 error" in proc.stdout, proc.stdout
    assert "a tool is missing" in proc.stdout and "a file is missing" in proc.stdout


def test_a_module_level_skip_stops_the_run_and_ci_ignores_the_allowance(tmp_path: Path) -> None:
    proc = _run(tmp_path, "import pytest\npytest.importorskip('no_such_module_anywhere')\n",
                CI="true", GPUAUDIT_ALLOW_SKIP="1")
    assert proc.returncode == 2, proc.stdout  # a collection error interrupts the session
    assert "skip counts as a failure" in proc.stdout and "no_such_module_anywhere" in proc.stdout


def test_a_development_machine_may_allow_skips(tmp_path: Path) -> None:
    proc = _run(tmp_path, GPUAUDIT_ALLOW_SKIP="1")
    assert proc.returncode == 0, proc.stdout
    assert "1 passed, 2 skipped, 1 xfailed" in proc.stdout, proc.stdout


def test_no_test_reads_outside_the_checkout() -> None:
    """A fresh clone alone runs every test: nothing under tests/ points at ../shared (the
    corpora and the SARIF schema are vendored in tests/fixtures/ with their licences)."""
    import re

    pattern = re.compile(r"""/\s*["']shared["']|\.\./shared/(corpora|reference)|/work/shared""")
    offenders = [f"{p.name}:{n}" for p in sorted(HERE.glob("*.py"))
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if pattern.search(line) and p.name != "test_suite_rules.py"]
    assert offenders == []
    for vendored in ("corpora/terraform-aws-vpc/LICENSE", "corpora/terraform-aws-autoscaling/"
                     "LICENSE", "corpora/aws-cloudformation-templates/LICENSE.txt",
                     "sarif/NOTICE.md", "sarif/sarif-schema-2.1.0.json"):
        assert (HERE / "fixtures" / vendored).is_file(), vendored
