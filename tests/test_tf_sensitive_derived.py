"""Nothing derived from a sensitive Terraform value reaches a report, in any format.

The fixture (tests/fixtures/tf_sensitive_chunks; plan.json made by real terraform with
tools/make_plan_fixtures.sh ../tf_sensitive_chunks) puts pieces of a ``sensitive = true``
variable into tags: 3-character substr() chunks (too short for a report's redaction to look
for), joined, interpolated, upper-cased, reversed, through a local, a conditional, a
for-expression, format(), replace() and a module output. The HCL source, the plan, and the
plan's ``tags_all`` (which the AWS provider repeats without terraform's sensitive marks) are
scanned to every report format; neither the secret nor any 3 characters of it appear.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.findings.redact import MIN_SENSITIVE
from scanner.sources.terraform.hcl.values import SHORT_SECRET

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "tf_sensitive_chunks"
SECRET = "Zq9xWv3Kp7LmR2"
FORMATS = ("json", "sarif", "html", "markdown", "junit", "csv", "table")
# every 3 characters of the secret, and what the fixture derives from them
LEAKS = sorted({SECRET[i:i + 3] for i in range(len(SECRET) - 2)}
               | {SECRET, "3KP", "mL7", "x-xWv", "strong-secret", "Zq9xWv"})


def test_the_short_secret_bound_is_the_redactions() -> None:
    assert SHORT_SECRET == MIN_SENSITIVE


@pytest.mark.parametrize("target", ["", "main.tf", "plan.json"])
def test_no_piece_of_the_secret_in_any_format(tmp_path: Path, target: str) -> None:
    out = tmp_path / "reports"
    args = [sys.executable, "-m", "scanner", "scan", str(FIXTURE / target) if target
            else str(FIXTURE), "--output-dir", str(out), "--include-passed",
            "--deterministic"]
    for fmt in FORMATS:
        args += ["--format", fmt]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 1, proc.stderr  # EBS-001 fails: the scan did run
    assert "Traceback" not in proc.stderr
    files = sorted(out.iterdir())
    assert len(files) == len(FORMATS)
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert [s for s in LEAKS if s in text] == [], f.name
        assert SECRET not in proc.stdout + proc.stderr
    report = (out / "report.json").read_text(encoding="utf-8")
    assert '"Name": "trainer"' in report  # what is not secret is still reported
    assert '"EBS-001"' in report and '"FAIL"' in report
