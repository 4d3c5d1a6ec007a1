"""The HTML report in real headless Chromium, driven over the DevTools protocol (tests/cdp.py):
it renders, stays inert and offline, its one script runs under the strict CSP (and a script
that is not the hashed one does not), and a user can filter, search and sort it."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from reports import RenderContext, render
from reports.html import CSP, STATIC_ROWS, script_hash
from tests.cdp import CHROMIUM, Browser
from tests.report_samples import (
    HOSTILE,
    HtmlInspector,
    document,
    finding,
    inline_scripts,
    sample,
)

WINDOW = (1400, 1000)
CONTROL_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>control</title></head>
<body><p>control</p><img src="http://127.0.0.1:9/pixel.png" onerror="console.error('x')">
<script>console.error("control page error")</script></body></html>
"""
VISIBLE = "el => el.getClientRects().length > 0"


def _chromium_or_fail() -> str:
    if not CHROMIUM:
        pytest.fail("chromium is required: run tools/install_chromium.sh")
    return CHROMIUM


def many_volumes(n: int = 60, hostile: bool = False) -> dict:
    """One policy with more findings than a group shows open, and one small group. With
    ``hostile``, the last volume carries hostile strings (it is listed from the page's data)."""
    findings = [
        finding("EBS-001", "EBS storage not encrypted", "high", "FAIL",
                f"Volume vol-{i:04d} is not encrypted."
                + (f" {HOSTILE['script']} </script><script>window.__xss=1</script> "
                   f"{HOSTILE['img']} {HOSTILE['rtl']}" if hostile and i == n - 1 else ""),
                {"kind": "ec2.volume", "id": f"vol-{i:04d}", "account": "123456789012",
                 "region": "us-east-1", "name": "needle-in-a-haystack" if i == 41 else None},
                evidence={"Encrypted": False, "Size": 100 + i,
                          "attachments": [{"InstanceId": f"i-{i:04d}", "Device": "/dev/sdf"}]},
                path=str(i))
        for i in range(n)
    ]
    findings.append(finding(
        "RS-002", "Idle GPU compute", "high", "FAIL", "Idle for 14 days.",
        {"kind": "ec2.instance", "id": "i-idle", "account": "123456789012",
         "region": "us-east-1"},
        savings={"usd_month": 4135.45, "kind": "idle", "basis": "5.672 $/h x 730 h"}))
    return document(findings, inputs={"accounts": ["123456789012"], "regions": ["us-east-1"]})


def with_spend(doc: dict, *, denied: bool = False) -> dict:
    """``doc`` with the spend ``audit --with-spend`` writes (the report code's own builder):
    read whole, or (``denied``) one region's read refused, its reason a hostile string."""
    from scanner.findings.spend import spend_document, with_saving_share

    account = "123456789012"
    rows = [{"account": account, "region": "us-east-1", "instance_type": "p4d.24xlarge",
             "usd": 400000.00},
            {"account": account, "region": "eu-west-1", "instance_type": "g5.xlarge",
             "usd": 13677.80}]
    if denied:
        spend = spend_document(
            "2026-11-01", "2026-12-01", rows=rows[:1],
            read=[{"account": account, "regions": ["us-east-1"]}],
            not_read=[{"account": account, "regions": ["eu-west-1"],
                       "reason": f"ce:GetCostAndUsage: AccessDenied {HOSTILE['script']}"}],
            estimated=False, no_data=False)
    else:
        spend = spend_document(
            "2026-11-01", "2026-12-01", rows=rows,
            read=[{"account": account, "regions": ["eu-west-1", "us-east-1"]}], not_read=[],
            estimated=False, no_data=False)
    return {**doc, "spend": with_saving_share(spend, doc["summary"])}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser(_chromium_or_fail(), width=WINDOW[0], height=WINDOW[1]) as b:
        yield b


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("chromium")
    out = {}
    for name, doc in (("hostile", sample("hostile")), ("iac", sample("iac")),
                      ("live", sample("live")), ("many", many_volumes()),
                      ("huge", many_volumes(STATIC_ROWS + 150, hostile=True)),
                      ("spend", with_spend(sample("live"))),
                      ("spend_denied", with_spend(sample("live"), denied=True))):
        out[name] = base / f"{name}.html"
        out[name].write_text(render("html", doc), encoding="utf-8")
    out["control"] = base / "control.html"
    out["control"].write_text(CONTROL_PAGE, encoding="utf-8")
    return out


def _fresh(browser: Browser, page: Path) -> None:
    browser.events.clear()
    browser.open(page)


def _visible(browser: Browser, selector: str) -> list[str]:
    """The ids of the visible elements matching ``selector``."""
    return list(browser.evaluate(
        f"[...document.querySelectorAll({selector!r})].filter({VISIBLE}).map(e => e.id)"))


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def test_hostile_strings_stay_text_and_nothing_runs_or_loads(
    browser: Browser, pages: dict[str, Path]
) -> None:
    _fresh(browser, pages["hostile"])
    dom = browser.evaluate("document.documentElement.outerHTML")
    page = HtmlInspector(dom)
    assert page.problems() == []
    assert "&lt;script&gt;alert('xss')&lt;/script&gt;" in dom
    text = browser.evaluate("document.body.innerText + document.body.textContent")
    for needle in (HOSTILE["script"], HOSTILE["img"], HOSTILE["js_url"], HOSTILE["formula"],
                   "invoice<U+202E>exe.pdf", "<U+001B>[2J"):
        assert needle in text, needle
    assert "\u202e" not in dom and "\x1b" not in dom
    findings = [a for tag, a in page.tags if tag == "tbody" and "finding" in (a.get("class") or "")]
    assert len(findings) == 3  # every finding rendered
    assert browser.evaluate("typeof window.alert === 'function' && !window.__xss") is True
    png = browser.screenshot()
    assert len(png) > 20_000 and _png_size(png) == WINDOW  # a rendered page, not blank
    assert browser.console() == []
    assert browser.requests() == []


@pytest.mark.parametrize("name", ["iac", "live", "many"])
def test_no_console_messages_and_no_network(
    browser: Browser, pages: dict[str, Path], name: str
) -> None:
    _fresh(browser, pages[name])
    assert browser.evaluate("document.getElementById('tools').hidden") is False  # script ran
    assert browser.console() == []
    assert browser.requests() == []


def test_detectors_catch_a_bad_page(browser: Browser, pages: dict[str, Path]) -> None:
    """The control page loads an image over http and logs an error: each check must see it."""
    _fresh(browser, pages["control"])
    assert any("control page error" in line for line in browser.console())
    assert any(url.startswith("http://127.0.0.1:9/") for url in browser.requests())
    assert HtmlInspector(pages["control"].read_text()).problems()


def test_the_script_runs_by_its_hash_only(
    browser: Browser, pages: dict[str, Path], tmp_path: Path
) -> None:
    html = pages["iac"].read_text(encoding="utf-8")
    assert [s for s in inline_scripts(html)] and f"script-src '{script_hash()}'" in CSP
    assert "'unsafe-inline'" not in CSP.split("script-src", 1)[1].split(";")[0]
    # one character changed: the hash no longer matches and the browser refuses the script
    tampered = tmp_path / "tampered.html"
    tampered.write_text(html.replace('"use strict";', '"use strict"; ', 1), encoding="utf-8")
    _fresh(browser, tampered)
    assert browser.evaluate("document.getElementById('tools').hidden") is True
    assert any("Content Security Policy" in line for line in browser.console())


def test_a_filter_shows_only_its_findings(browser: Browser, pages: dict[str, Path]) -> None:
    doc = sample("iac")
    by_status: dict[str, set[str]] = {}
    for f in doc["findings"]:
        by_status.setdefault(f["status"], set()).add(f"f-{f['id']}")
    _fresh(browser, pages["iac"])
    shown = set(_visible(browser, "tbody.finding"))
    assert shown == set().union(*(v for k, v in by_status.items() if k != "PASS"))
    browser.click("label[for=show-FAIL]")
    assert set(_visible(browser, "tbody.finding")) == by_status["FAIL"]
    hidden_groups = browser.evaluate(
        f"[...document.querySelectorAll('details.group')].filter(e => !({VISIBLE})(e))"
        ".map(e => e.id)")
    assert set(hidden_groups) == {"p-ASG-001", "p-ASG-002"}  # no FAIL in them: hidden
    browser.click("label[for=show-SUPPRESSED]")
    assert set(_visible(browser, "tbody.finding")) == by_status["SUPPRESSED"]
    browser.click("label[for=show-all]")
    assert set(_visible(browser, "tbody.finding")) == {f"f-{f['id']}" for f in doc["findings"]}


def test_search_finds_across_closed_groups(browser: Browser, pages: dict[str, Path]) -> None:
    _fresh(browser, pages["many"])
    assert browser.evaluate("document.getElementById('p-EBS-001').open") is False  # 60: closed
    browser.click("#search")
    browser.type("needle-in-a")
    browser.press_enter()
    rows = _visible(browser, "tbody.finding")
    assert len(rows) == 1 and browser.evaluate(
        f"document.getElementById({rows[0]!r}).textContent.includes('vol-0041')")
    assert browser.evaluate("document.getElementById('p-EBS-001').open") is True
    assert _visible(browser, "details.group") == ["p-EBS-001"]  # RS-002 has no match
    assert browser.evaluate("document.getElementById('matches').textContent") == (
        "1 of 61 shown")
    # two words must both match (here: in the evidence table of every volume)
    browser.evaluate("(() => { const s = document.getElementById('search'); s.value = '';"
                     " s.focus(); })()")
    browser.type("sdf i-0007")
    browser.press_enter()
    assert len(_visible(browser, "tbody.finding")) == 1
    browser.evaluate("(() => { const s = document.getElementById('search'); s.value = '';"
                     " s.focus(); })()")
    browser.type("vol-004")
    browser.press_enter()
    assert len(_visible(browser, "tbody.finding")) == 10


def test_sort_by_saving_puts_the_largest_saving_first(
    browser: Browser, pages: dict[str, Path]
) -> None:
    _fresh(browser, pages["many"])
    order = "[...document.querySelectorAll('details.group')].map(e => e.id)"
    assert browser.evaluate(order) == ["p-RS-002", "p-EBS-001"]  # severity tie: saving first
    _fresh(browser, pages["iac"])
    before = browser.evaluate(order)
    assert before[0] in ("p-EBS-001", "p-VPC-004")  # high first by severity
    browser.click("#sort")
    browser.evaluate("(() => { const s = document.getElementById('sort'); s.value = 'saving';"
                     " s.dispatchEvent(new Event('change')); })()")
    assert browser.evaluate(order)[0] == "p-SPOT-001"  # no saving anywhere: exposure next


def test_file_links_open_the_file_relative_to_the_report(
    browser: Browser, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "infra" / "gpu").mkdir(parents=True)
    (repo / "infra" / "gpu" / "main.tf").write_text("# the file\n", encoding="utf-8")
    doc = sample("iac")
    out_dir = repo / "out" / "html"
    out_dir.mkdir(parents=True)
    page = out_dir / "report.html"
    page.write_text(render("html", doc, context=RenderContext(root=repo, base=repo,
                                                              report_dir=out_dir)))
    _fresh(browser, page)
    links = browser.evaluate("[...document.querySelectorAll('a.file')].map(a => "
                             "[a.getAttribute('href'), a.href])")
    hrefs = {raw for raw, _ in links}
    assert "../../infra/gpu/main.tf" in hrefs
    resolved = {full for _, full in links}
    assert (repo / "infra" / "gpu" / "main.tf").as_uri() in resolved
    assert browser.console() == [] and browser.requests() == []


def test_a_large_group_lists_the_rest_from_its_data(
    browser: Browser, pages: dict[str, Path]
) -> None:
    """More findings than a group writes as HTML: a button lists the rest, the search finds
    them, and a hostile string in the data stays text."""
    total = STATIC_ROWS + 150
    _fresh(browser, pages["huge"])
    count = "document.querySelectorAll('#p-EBS-001 tbody.finding').length"
    assert browser.evaluate(count) == STATIC_ROWS
    browser.click("#p-EBS-001 > summary")  # open the closed group
    assert browser.evaluate("document.querySelector('#p-EBS-001 .rest-note').hidden") is True
    browser.click("#search")
    browser.type(f"vol-{total - 1:04d}")
    browser.press_enter()
    rows = _visible(browser, "tbody.finding")
    assert len(rows) == 1
    text = browser.evaluate(f"document.getElementById({rows[0]!r}).textContent")
    assert HOSTILE["script"] in text and "invoice<U+202E>exe.pdf" in text
    assert browser.evaluate("window.__xss === undefined")
    assert browser.evaluate("document.querySelectorAll('script').length") == 2  # data, code
    browser.evaluate("(() => { const s = document.getElementById('search'); s.value = '';"
                     " s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()")
    browser.click("#p-EBS-001 button.more")
    assert browser.evaluate(count) == total  # all listed (the one found was listed already)
    assert browser.evaluate("document.querySelector('#p-EBS-001 button.more').hidden") is True
    assert browser.evaluate(f"document.getElementById({rows[0]!r}).querySelector("
                            "'table.ev.list') !== null")  # its evidence list is a table
    assert browser.console() == [] and browser.requests() == []


def _search(browser: Browser, text: str) -> None:
    browser.evaluate("(() => { const s = document.getElementById('search'); s.value = '';"
                     " s.focus(); })()")
    browser.type(text)
    browser.press_enter()


def test_the_search_counts_only_the_findings_the_filter_shows(
    browser: Browser, pages: dict[str, Path]
) -> None:
    """"module.train" is in 5 findings; one is a PASS, which "Needs attention" does not show:
    the counter says 4 of the 6 shown (it said 5 of 7), and under "Failing" 2 of 4."""
    _fresh(browser, pages["iac"])
    shown = len(_visible(browser, "tbody.finding"))
    assert shown == 6
    _search(browser, "module.train")
    rows = _visible(browser, "tbody.finding")
    assert len(rows) == 4
    assert browser.evaluate("document.getElementById('matches').textContent") == "4 of 6 shown"
    browser.click("label[for=show-FAIL]")  # the counter follows the filter
    assert len(_visible(browser, "tbody.finding")) == 2
    assert browser.evaluate("document.getElementById('matches').textContent") == "2 of 4 shown"


def test_a_group_with_no_finding_shown_is_hidden(
    browser: Browser, pages: dict[str, Path]
) -> None:
    """EBS-001 has a FAIL and a PASS; the search matches only its PASS, which the filter hides:
    the group is hidden, not left as an empty heading."""
    _fresh(browser, pages["iac"])
    _search(browser, "module.train")
    groups = _visible(browser, "details.group")
    assert "p-EBS-001" not in groups
    assert set(groups) == {"p-ASG-001", "p-SPOT-001", "p-ASG-002", "p-VPC-001"}
    browser.click("label[for=show-all]")
    _search(browser, "module.train")
    assert "p-EBS-001" in _visible(browser, "details.group")  # the PASS is shown now


def test_evidence_is_collapsed_with_readable_labels(
    browser: Browser, pages: dict[str, Path]
) -> None:
    _fresh(browser, pages["iac"])
    opened = browser.evaluate(
        "[...document.querySelectorAll('tbody.finding details')].filter(d => "
        "d.querySelector('summary').textContent === 'Evidence').map(d => d.open)")
    assert opened and not any(opened)  # collapsed, in open groups too
    heads = browser.evaluate("[...document.querySelectorAll('table.ev th')]"
                             ".map(th => th.textContent)")
    assert "GPU resources" in heads and "Max price ratio" in heads
    assert not [h for h in heads if "_" in h], heads
    # the rows the script lists from the page's data say them the same way
    _fresh(browser, pages["huge"])
    browser.click("#search")
    _search(browser, f"vol-{STATIC_ROWS + 149:04d}")  # listed from the data by the search
    [row] = _visible(browser, "tbody.finding")
    info = browser.evaluate(
        f"(() => {{ const b = document.getElementById({row!r}); const d = b.querySelector("
        "'details'); return [d.open, [...b.querySelectorAll('table.ev th')]"
        ".map(th => th.textContent)]; })()")
    assert info[0] is False and "Attachments" in info[1] and "attachments" not in info[1]


def test_exposure_and_saving_are_separate_columns(
    browser: Browser, pages: dict[str, Path]
) -> None:
    _fresh(browser, pages["iac"])
    heads = browser.evaluate("[...document.querySelector('#p-SPOT-001 thead tr').cells]"
                             ".map(c => c.textContent)")
    assert heads[-2:] == ["Saving / mo", "Exposure / mo"]
    cells = browser.evaluate("[...document.querySelector('#p-SPOT-001 tbody.finding tr.head')"
                             ".cells].map(c => c.textContent.trim())")
    assert cells[-2] == "" and cells[-1] == "≤ $21,534.60"


def test_the_spend_is_shown_beside_the_coverage_with_the_saving_as_its_share(
    browser: Browser, pages: dict[str, Path]
) -> None:
    _fresh(browser, pages["spend"])
    assert _visible(browser, "#spend") == ["spend"]
    text = browser.evaluate("document.getElementById('spend').innerText")
    # the Markdown line's facts: the period, the month's actual spend, the saving's share
    # ($20,683.89 / $413,677.80 = 5.0 %)
    assert "Actual GPU spend (2026-11-01 to 2026-12-01, Cost Explorer): $413,677.80" in text
    assert "the estimated monthly saving is 5.0% of it" in text
    assert "not read" not in text
    # under the summary cards (and the coverage line, when the report has one)
    assert browser.evaluate("document.getElementById('spend').previousElementSibling"
                            ".matches('section.cards, #coverage')") is True
    assert browser.evaluate("document.getElementById('spend').classList.contains('err')") \
        is False
    assert browser.console() == [] and browser.requests() == []


def test_a_spend_not_read_is_said_and_why_never_an_amount_of_0(
    browser: Browser, pages: dict[str, Path]
) -> None:
    _fresh(browser, pages["spend_denied"])
    assert _visible(browser, "#spend") == ["spend"]
    text = browser.evaluate("document.getElementById('spend').innerText")
    assert "Actual GPU spend (2026-11-01 to 2026-12-01): not read:" in text
    assert "AccessDenied" in text and HOSTILE["script"] in text  # the reason, as text
    assert "the accounts read spent $400,000.00, which is not the total" in text
    assert "$0.00" not in text and "% of it" not in text and "$413,677.80" not in text
    assert browser.evaluate("document.getElementById('spend').classList.contains('err')")
    assert browser.evaluate("typeof window.alert === 'function' && !window.__xss") is True
    assert browser.console() == [] and browser.requests() == []


@pytest.mark.parametrize("name", ["live", "iac"])
def test_no_spend_element_without_a_spend(browser: Browser, pages: dict[str, Path],
                                          name: str) -> None:
    _fresh(browser, pages[name])
    assert browser.evaluate("document.querySelectorAll('#spend, .spend').length") == 0
    assert "Actual GPU spend" not in browser.evaluate("document.body.innerText")
