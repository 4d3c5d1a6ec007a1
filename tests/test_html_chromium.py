"""The HTML report in real headless Chromium: it renders, stays inert and stays offline.

One browser launch per page does everything (DOM dump, screenshot, console log, net log); the
hostile report and a deliberately bad control page run in parallel, the control proving that each
detector can fail.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from reports import render
from tests.report_samples import HOSTILE, HtmlInspector, sample

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WINDOW = (1400, 1000)
CONTROL_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>control</title></head>
<body><p>control</p><img src="http://127.0.0.1:9/pixel.png" onerror="console.error('x')">
<script>console.error("control page error")</script></body></html>
"""


@dataclass
class Visit:
    dom: str
    png: bytes
    console: list[str]
    page_requests: list[str]


def _chromium_or_skip() -> str:
    if CHROMIUM:
        return CHROMIUM
    if os.environ.get("CI"):
        pytest.fail("chromium is required in CI: run tools/install_chromium.sh")
    pytest.skip("chromium not installed (tools/install_chromium.sh)")


def _launch(chromium: str, page: Path, work: Path) -> subprocess.Popen[str]:
    work.mkdir()
    args = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--mute-audio",
        f"--user-data-dir={work / 'profile'}",
        f"--screenshot={work / 'shot.png'}",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--dump-dom",
        "--enable-logging=stderr",
        "--v=0",
        f"--log-net-log={work / 'net.json'}",
        page.as_uri(),
    ]
    return subprocess.Popen(
        args,
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
    )


def _page_requests(net_log: Path) -> list[str]:
    """Network requests the page made: browser-internal ones (update checks and the like, whose
    initiator is "not an origin") are not the page's doing."""
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    out = []
    for event in log["events"]:
        params = event.get("params") or {}
        url = str(params.get("url") or "")
        if event["type"] != start or not url or url.startswith(("file:", "data:", "chrome")):
            continue
        if params.get("initiator") != "not an origin":
            out.append(url)
    return out


def _finish(proc: subprocess.Popen[str], work: Path) -> Visit:
    try:
        dom, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("chromium did not finish within 60 s")
    assert proc.returncode == 0, err[-2000:]
    shot = work / "shot.png"
    return Visit(
        dom=dom,
        png=shot.read_bytes() if shot.is_file() else b"",
        console=[line for line in err.splitlines() if ":CONSOLE" in line],
        page_requests=_page_requests(work / "net.json"),
    )


@pytest.fixture(scope="module")
def visits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Visit]:
    chromium = _chromium_or_skip()
    base = tmp_path_factory.mktemp("chromium")
    pages = {"report": base / "report.html", "control": base / "control.html"}
    pages["report"].write_text(render("html", sample("hostile")), encoding="utf-8")
    pages["control"].write_text(CONTROL_PAGE, encoding="utf-8")
    procs = {name: _launch(chromium, page, base / name) for name, page in pages.items()}
    return {name: _finish(proc, base / name) for name, proc in procs.items()}


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def test_screenshot_is_written(visits: dict[str, Visit]) -> None:
    png = visits["report"].png
    assert len(png) > 20_000  # a rendered page, not a blank canvas
    assert _png_size(png) == WINDOW


def test_hostile_strings_stay_text(visits: dict[str, Visit]) -> None:
    dom = visits["report"].dom
    page = HtmlInspector(dom)
    assert page.problems() == []
    assert "&lt;script&gt;alert('xss')&lt;/script&gt;" in dom
    for text in (
        HOSTILE["script"],
        HOSTILE["img"],
        HOSTILE["js_url"],
        HOSTILE["formula"],
        "invoice<U+202E>exe.pdf",
        "<U+001B>[2J",
    ):
        assert text in page.text, text
    assert "\u202e" not in dom and "\x1b" not in dom
    assert sum(1 for tag, _ in page.tags if tag == "tbody") == 3  # every finding rendered


def test_no_console_messages(visits: dict[str, Visit]) -> None:
    assert visits["report"].console == []


def test_no_network_requests(visits: dict[str, Visit]) -> None:
    assert visits["report"].page_requests == []


def test_detectors_catch_a_bad_page(visits: dict[str, Visit]) -> None:
    """The control page loads an image over http and logs an error: each check must see it."""
    control = visits["control"]
    assert any("control page error" in line for line in control.console)
    assert any(url.startswith("http://127.0.0.1:9/") for url in control.page_requests)
    assert HtmlInspector(control.dom).problems()
