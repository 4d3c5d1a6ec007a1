"""References amplify: a value that is small in memory (one string referenced many times) can be
huge once written in a report. Sources refuse such a value with an input error naming it, and
the report bounds every string and every finding's evidence, so a small hostile input never
becomes a large report (issue 11, section 3: one budget on every amplification)."""

from __future__ import annotations

import json
from pathlib import Path

from reports import render
from scanner.findings.redact import MAX_EVIDENCE, MAX_TEXT, redact_document
from scanner.inputs.sizes import bounded, exceeds
from scanner.model import Unknown
from scanner.sources.scan import scan_paths
from tests.report_samples import document, finding

FAN_OUT = """AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Big: {{Type: String, Default: '{big}'}}
Mappings:
{mappings}
Resources:
  Vol:
    Type: AWS::EC2::Volume
    Properties:
      AvailabilityZone: us-east-1a
      Encrypted: false
      Tags:
        - Key: note
          Value: !Join ['', !FindInMap [M0, a, b]]
      Description: !FindInMap [M0, a, b]
  Other:
    Type: AWS::EC2::Volume
    Properties: {{AvailabilityZone: us-east-1a, Encrypted: true}}
"""


def _fan_out_template(levels: int, fan: int, width: int) -> str:
    lines = []
    for level in range(levels + 1):
        inner = (", ".join([f"!FindInMap [M{level + 1}, a, b]"] * fan) if level < levels
                 else "!Ref Big")
        lines.append(f"  M{level}: {{a: {{b: [{inner}]}}}}")
    return FAN_OUT.format(big="x" * width, mappings="\n".join(lines))


def test_cloudformation_refuses_a_property_that_references_amplify(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(_fan_out_template(levels=3, fan=10, width=4000))
    result = scan_paths([tmp_path / "t.yaml"])
    vol = next(r for r in result.resources if r.id == "Vol")
    other = next(r for r in result.resources if r.id == "Other")
    assert isinstance(vol.attrs["Description"], Unknown)
    assert any("property Description" in e.reason and "MiB of text" in e.reason
               for e in result.errors), result.errors
    assert other.attrs["Encrypted"] is True  # the rest of the template is read
    written = sum(len(json.dumps(v, default=str)) for r in result.resources
                  for v in r.attrs.values())
    assert written < 4 * 1024 * 1024


def test_a_small_fan_out_is_read_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(_fan_out_template(levels=1, fan=3, width=10))
    result = scan_paths([tmp_path / "t.yaml"])
    vol = next(r for r in result.resources if r.id == "Vol")
    assert vol.attrs["Description"] == [["x" * 10]] * 3
    assert result.errors == []


def test_terraform_refuses_an_attribute_that_references_amplify(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("a" * (1024 * 1024))
    (tmp_path / "main.tf").write_text(
        'locals {\n  big = file("${path.module}/big.txt")\n}\n'
        'resource "aws_ebs_volume" "v" {\n  availability_zone = "us-east-1a"\n'
        '  encrypted = false\n  tags = { for i in range(40) : "k${i}" => local.big }\n}\n'
        'resource "aws_vpc" "ok" {\n  cidr_block = "10.0.0.0/16"\n}\n')
    result = scan_paths([tmp_path])
    vol = next(r for r in result.resources if r.id == "aws_ebs_volume.v")
    assert not any(isinstance(v, str) and len(v) > 1000 for v in vol.tags.values())
    assert any("MiB of text" in e.reason and e.line == 4 for e in result.errors), result.errors
    assert vol.attrs["Encrypted"] is False  # the other attributes stay known
    assert any(r.id == "aws_vpc.ok" for r in result.resources)


def test_the_report_bounds_strings_and_evidence() -> None:
    huge = "y" * (5 * MAX_TEXT)
    f = finding("EBS-001", "t", "high", "FAIL", huge, {"kind": "ec2.volume", "id": "v"},
                evidence={"list": [huge] * 10_000, "deep": {"a": {"b": huge}}})
    doc = redact_document(document([f], inputs={"paths": ["x"]}))
    text = render("json", doc)
    assert len(text) < 2 * MAX_EVIDENCE
    out = json.loads(text)["findings"][0]
    assert out["message"].endswith("more characters]")
    assert out["evidence"]["list"][-1].endswith("more items]") or \
        "cut: too large" in json.dumps(out["evidence"])


def test_the_size_helpers() -> None:
    assert exceeds(["a" * 10] * 10, 50) and not exceeds(["a" * 10] * 3, 50)
    assert exceeds({"k": [[["x"]]]}, 3)
    assert bounded(list(range(300)), 10_000, items=5) == [0, 1, 2, 3, 4, "… [295 more items]"]


def test_a_million_absurd_numbers_are_one_unknown_not_a_million(tmp_path: Path) -> None:
    """1e308 is no AWS value: each becomes Unknown. A list of a million of them (a for
    expression in a for expression, three references) held a new Unknown with its text per
    element: 540 MiB from a 300-byte file (found by tests/test_hcl_fuzz.py)."""
    from tests.memory_peak import peak_memory

    (tmp_path / "main.tf").write_text(
        "locals {\n  l0 = 1e308\n  l1 = [for i in range(1000) : local.l0]\n"
        "  l2 = [for i in range(1000) : local.l1]\n}\n"
        'resource "aws_ebs_volume" "v" {\n  size = local.l2\n'
        '  tags = { a = local.l2, b = local.l2 }\n}\n')
    with peak_memory() as peak:
        result = scan_paths([tmp_path])
    assert peak() < 128 * 2**20, f"{peak() / 2**20:.0f} MiB"
    (vol,) = [r for r in result.resources if r.id == "aws_ebs_volume.v"]
    size = vol.attrs["Size"]
    first = size[0][0] if isinstance(size, list) else size
    assert isinstance(first, Unknown) and "too large" in first.reason


def test_absurd_numbers_of_a_template_share_one_unknown() -> None:
    from scanner.inputs.numbers import sane_number

    assert sane_number(1e308) is sane_number(-1e300)
    assert sane_number(float("nan")) is sane_number(float("inf"))
    assert sane_number(12) == 12
