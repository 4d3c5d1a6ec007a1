"""A marked (sensitive) value quoted cut short in a message (``'longsecretvalue-abcd…'``: the
sources show the first 40 or 60 characters of a value they cannot use) is redacted as well as
the whole value: a head of at least MIN_HEAD characters that ends where a cut ends."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.findings.redact import MIN_HEAD, SENSITIVE, Redactor

SECRET = "longsecretvalue-abcdefghijklmnopqrstuvwxyz-0123456789-ABCDEFGHIJ"
FORMATS = ("json", "html", "sarif", "junit", "markdown", "csv", "table")


def test_a_head_that_was_cut_is_redacted() -> None:
    r = Redactor({SECRET})
    assert r.text(f"max price {SECRET[:40]!r} is not a number") == \
        f"max price '{SENSITIVE}' is not a number"
    assert r.text(f"value {SECRET[:40]}…") == f"value {SENSITIVE}…"
    assert r.text(f"ends with {SECRET[:MIN_HEAD + 3]}") == f"ends with {SENSITIVE}"
    assert r.text(f"whole {SECRET} here") == f"whole {SENSITIVE} here"


def test_a_shared_beginning_that_goes_on_differently_is_kept() -> None:
    r = Redactor({SECRET})
    other = SECRET[:MIN_HEAD + 2] + "XYZ other text"
    assert r.text(other) == other
    short = SECRET[:MIN_HEAD - 1] + "'"
    assert r.text(short) == short  # too short to tell


TEMPLATE = """\
Parameters:
  ApiToken:
    Type: String
    NoEcho: true
Resources:
  Template:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateName: gpu
      LaunchTemplateData:
        InstanceType: g5.xlarge
        ImageId: ami-12c6146b
        InstanceMarketOptions: {MarketType: spot, SpotOptions: {MaxPrice: !Ref ApiToken}}
"""


def test_no_head_of_a_noecho_value_reaches_any_format(tmp_path: Path) -> None:
    path = tmp_path / "stack.yaml"
    path.write_text(TEMPLATE)
    out = tmp_path / "out"
    cmd = ["scan", str(path), "--cfn-param", f"ApiToken={SECRET}", "--output-dir", str(out),
           "--include-passed", "--deterministic", "--fail-on", "none"]
    for fmt in FORMATS:
        cmd += ["--format", fmt]
    res = CliRunner().invoke(cli, cmd)
    assert res.exit_code == 0, res.output
    texts = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    texts["stdout"] = res.output
    report = json.loads(texts["report.json"])
    messages = [f["message"] for f in report["findings"] if f["resource"]["id"] == "Template"]
    assert any(f"'{SENSITIVE}'" in m for m in messages), messages  # the message is there
    for name, text in texts.items():
        assert SECRET[:MIN_HEAD] not in text, name
