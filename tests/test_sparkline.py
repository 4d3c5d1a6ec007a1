"""The utilization sparkline of right-sizing findings: a pure function to an SVG string of numbers,
hooked into the HTML report without script or network (checked in real Chromium), and the money
of the summary shown apart (saving, exposure) in every format."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from reports import render
from reports.html import CSP, script_hash
from reports.sparkline import sparkline
from tests.cdp import Browser
from tests.report_samples import HOSTILE, HtmlInspector, document, finding
from tests.test_html_chromium import _chromium_or_fail

ALLOWED_SVG = {"svg", "title", "rect", "polyline", "circle"}


def test_sparkline_is_numbers_only_and_breaks_on_gaps() -> None:
    svg = sparkline([0, 50, None, 100, 120, -3], [0, 25, None, 80, None, 0],
                    label=HOSTILE["script"])
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<script" not in svg and "&lt;script&gt;" in svg  # the label is escaped
    tags = set(re.findall(r"<([a-z]+)", svg))
    assert tags <= ALLOWED_SVG
    lines = re.findall(r'<polyline points="([^"]+)"[^>]*stroke="#0969da"', svg)
    assert len(lines) == 2  # split at the gap
    ys = [float(p.split(",")[1]) for seg in lines for p in seg.split()]
    assert min(ys) >= 0 and max(ys) <= 32  # clamped to 0-100 %
    assert sparkline([None, None]).count("<polyline") == 0
    assert "<circle" in sparkline([None, 40.0, None])


def rs_doc(trend: dict[str, Any]) -> dict[str, Any]:
    res = {"kind": "ec2.instance", "id": "i-0abc", "account": "123456789012",
           "region": "us-east-1"}
    f = finding("RS-001", "GPU compute is oversized", "medium", "FAIL",
                "p3.8xlarge is oversized", res,
                evidence={"utilization_trend": trend, "hours_of_data": 336},
                savings={"usd_month": 8551.22, "kind": "rightsize", "class": "saving",
                         "basis": "(12.24 - 0.526) $/h x 730 h x 1 instance"})
    spot = finding("SPOT-001", "Spot max price above the cap", "medium", "FAIL", "over the cap",
                   res | {"id": "lt-1", "kind": "ec2.launch_template"},
                   savings={"usd_month": 100.0, "kind": "overspend_cap", "class": "exposure",
                            "basis": "(1 - 0.7) $/h x 730 h per instance"})
    doc = document([f, spot], inputs={"accounts": ["123456789012"], "regions": ["us-east-1"]})
    doc["summary"]["savings_usd_month"] = 8551.22
    doc["summary"]["exposure_usd_month"] = 100.0
    return doc


TREND = {"Start": "2026-01-01T00:00:00Z", "HoursPerPoint": 6,
         "UtilMax": [float(i % 30) for i in range(56)],
         "UtilP95": [float(i % 20) if i % 9 else None for i in range(56)]}


def test_html_shows_the_sparkline_and_keeps_its_csp() -> None:
    page = render("html", rs_doc(TREND))
    assert f'content="{CSP}"'.replace("'", "&#39;") in page
    assert f"script-src '{script_hash()}';" in CSP  # the page's one script, and no other
    svgs = [s for s in re.findall(r"<svg.*?</svg>", page, re.S) if 'class="chart"' not in s]
    assert len(svgs) == 1  # the sparkline (the other is the saving-by-policy chart)
    assert set(re.findall(r"<([a-z]+)", svgs[0])) <= ALLOWED_SVG
    assert "6-hour max (solid) and p95 (dashed)" in page
    assert "exposure / month" in page and "$100.00" in page


def test_a_hostile_trend_cannot_inject() -> None:
    bad = {"Start": HOSTILE["script"], "HoursPerPoint": HOSTILE["img"],
           "UtilMax": [HOSTILE["script"], 5, {"x": 1}, True], "UtilP95": HOSTILE["js_url"]}
    page = render("html", rs_doc(bad))
    svg = next(s for s in re.findall(r"<svg.*?</svg>", page, re.S) if 'class="chart"' not in s)
    assert set(re.findall(r"<([a-z]+)", svg)) <= ALLOWED_SVG
    assert "alert" not in svg and "javascript" not in svg
    outside = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    assert HtmlInspector(outside).problems() == []


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_every_summary_shows_saving_and_exposure_apart(fmt: str) -> None:
    text = render(fmt, rs_doc(TREND))
    assert "8,551.22" in text and "$100.00" in text
    assert re.search(r"[Ee]xposure", text)
    assert "8,651.22" not in text  # never added together


def test_junit_sarif_csv_say_which_kind_of_money() -> None:
    doc = rs_doc(TREND)
    assert "exposure (worst case): $100.00/month" in render("junit", doc)
    # SARIF holds IaC findings only (live ones have no file): the same two amounts, declared
    iac = rs_doc(TREND)
    for f in iac["findings"]:
        f["location"] = {"file": "main.tf", "start_line": 3, "end_line": 9}
    sarif = render("sarif", iac)
    assert "Worst-case exposure $100.00/month" in sarif
    assert "Estimated saving $8,551.22/month" in sarif
    csv = render("csv", doc)
    assert ",rightsize,saving," in csv and ",overspend_cap,exposure," in csv


def test_chromium_renders_the_sparkline_without_script_or_network(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render("html", rs_doc(TREND)), encoding="utf-8")
    with Browser(_chromium_or_fail()) as browser:
        browser.open(page)
        assert browser.console() == [] and browser.requests() == []
        assert browser.evaluate("document.querySelectorAll('svg polyline').length") >= 1
        assert len(browser.screenshot()) > 20_000
