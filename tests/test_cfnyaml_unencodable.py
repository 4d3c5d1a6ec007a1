"""Text that cannot be written as UTF-8 (a JSON ``"\\ud800"`` escape decodes to a lone
surrogate) never costs the report: every format is written, valid UTF-8, the character shown as
its ``\\uXXXX`` escape; a YAML reader that refuses the escape gives an input error naming the
file and line (tests/fixtures/cfnyaml_unencodable/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from scanner.cli.options import FORMATS as CLI_FORMATS
from scanner.findings.schema import validate_report

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "cfnyaml_unencodable"
SARIF_SCHEMA = ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
FORMATS = CLI_FORMATS  # every format the command writes


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("reports")
    args = [a for fmt in FORMATS for a in ("--format", fmt)]
    proc = subprocess.run([sys.executable, "-m", "scanner", "scan", str(FIXTURES), *args,
                           "--output-dir", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr  # the NodePool file is an input error
    # by what follows "report.": json, sarif, junit.xml, asff.json, ocsf.json ...
    files = {p.name.split(".", 1)[1]: p.read_bytes() for p in out.iterdir()}
    assert files, proc.stderr
    return files


def test_every_format_is_written_as_valid_utf8(reports: dict[str, bytes]) -> None:
    assert len(reports) == len(FORMATS)
    for name, data in reports.items():
        text = data.decode("utf-8")  # strict: raises on anything that is not UTF-8
        assert "\ud800" not in text and "\udfff" not in text, name


def test_the_json_report_keeps_the_finding_and_names_the_error(
        reports: dict[str, bytes]) -> None:
    doc = json.loads(reports["json"].decode("utf-8"))
    assert validate_report(doc) == []
    (finding,) = [f for f in doc["findings"] if f["policy_id"] == "EBS-001"]
    assert finding["status"] == "FAIL"  # unencrypted, whatever its name
    assert finding["resource"]["id"] == "GpuScratch\\udfff"
    assert finding["resource"]["tags"]["Name"] == "scratch-\\ud800"
    (error,) = doc["errors"]
    assert error["path"].endswith("nodepool.json") and error["line"] == 4
    assert "Unicode" in error["reason"]


def test_the_sarif_report_is_valid(reports: dict[str, bytes]) -> None:
    log = json.loads(reports["sarif"].decode("utf-8"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    assert list(jsonschema.Draft4Validator(schema).iter_errors(log)) == []
    assert any("GpuScratch" in json.dumps(r) for r in log["runs"][0]["results"])


def test_the_html_report_shows_the_escape(reports: dict[str, bytes]) -> None:
    assert "scratch-\\ud800" in reports["html"].decode("utf-8")
