"""CSV and Markdown escaping (issue 11, section 4): a carriage return or a control byte never
splits a CSV row or starts a formula cell; Markdown for pull-request comments pings nobody and
keeps its tables whole."""

from __future__ import annotations

import csv
import io
import re

import pytest

from reports import render
from tests.report_samples import document, finding

NASTY = [
    "=HYPERLINK(\"http://x\",\"y\")",
    "\r=cmd|' /C calc'!A0",
    "\x00=1+1",
    "\x0b+SUM(A1)",
    " \t-2+3",
    "@SUM(1)",
    "\uff1d1+1",
    "line one\r\nline two\rline three\nend",
    "tab\tin the middle",
    "ping @octocat and @acme/platform-team, mail ops@example.com",
    "a|b || c\\",
]


def _doc() -> dict:
    findings = [
        finding("EBS-001", "EBS storage not encrypted", "high", "FAIL", text,
                {"kind": "ec2.volume", "id": f"vol-{i}", "name": text,
                 "tags": {"owner": text}},
                location={"file": f"dir/{text}.yaml", "start_line": 1, "end_line": 2},
                evidence={"Note": text})
        for i, text in enumerate(NASTY)
    ]
    return document(findings, inputs={"paths": ["."]},
                    errors=[{"kind": "input", "path": "x\r\n=1", "reason": "@octocat broke it"}],
                    notices=[{"path": "n", "message": "thanks @acme/team\nnext line"}])


def test_csv_rows_are_never_split_and_no_cell_is_a_formula() -> None:
    text = render("csv", _doc())
    assert text.count("\n") == len(NASTY) + 1  # header + one line per finding
    assert "\r" not in text and "\x00" not in text and "\x0b" not in text
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == len(NASTY) + 1
    for row in rows[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r", "\uff1d")), cell
    messages = {row[5] for row in rows[1:]}
    assert "line one<U+000D> line two<U+000D>line three end" in messages
    assert "'=HYPERLINK(\"http://x\",\"y\")" in messages
    assert "<U+0000>=1+1" in messages


def test_csv_keeps_numbers_numbers() -> None:
    doc = _doc()
    doc["findings"][0]["savings"] = {"usd_month": -3.5, "basis": "x", "kind": "rightsize"}
    rows = list(csv.DictReader(io.StringIO(render("csv", doc), newline="")))
    assert "-3.5" in {row["savings_usd_month"] for row in rows}


def test_markdown_pings_nobody_and_keeps_tables() -> None:
    out = render("markdown", _doc())
    assert not re.search(r"@(?!&#8203;)[A-Za-z0-9_-]", out), out
    assert "@&#8203;octocat" in out and "@&#8203;acme/platform-team" in out
    for line in out.splitlines():
        if line.startswith("|"):
            assert line.endswith("|")
    rows = [line for line in out.splitlines() if line.startswith("| high")]
    assert len(rows) == len(NASTY)
    cols = {len(re.findall(r"(?<!\\)\|", line)) for line in rows}
    assert cols == {8}  # seven columns, the last the compliance controls


@pytest.mark.parametrize("fmt", ["markdown"])
def test_report_diff_markdown_pings_nobody(fmt: str) -> None:
    from reports.diff import diff_reports, render_diff_markdown

    old = _doc()
    new = _doc()
    old["findings"] = old["findings"][:1]
    out = render_diff_markdown(diff_reports(old, new, old_name="a", new_name="b"))
    assert "@octocat" not in out and "@acme" not in out
