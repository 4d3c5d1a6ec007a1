"""The HTML report at the size of a large account: N findings (default 20,000) rendered to HTML,
then opened in headless Chromium over the DevTools protocol. Reports the file size, the time
to write the HTML, the time until Chromium's load event (the page parsed, styled, laid out and
its script run), first contentful paint, and how long a status filter, a search and a re-sort
take to show (input to the next frame): the page must stay usable.

    python bench/bench_html.py [--findings N] [--repeat R]

Budget (issue 14): 20,000 findings render in at most 3 s. Writes bench/out/html-bench.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reports import render  # noqa: E402
from tests.cdp import CHROMIUM, Browser  # noqa: E402
from tests.report_samples import document, finding  # noqa: E402

OUT = ROOT / "bench" / "out"
BUDGET_S = 3.0
ACCOUNTS = [f"{100000000000 + i}" for i in range(8)]
REGIONS = ["us-east-1", "us-west-2", "eu-west-1"]
FRAME = ("new Promise(r => requestAnimationFrame(() => setTimeout(() => "
         "r(performance.now() - t0), 0)))")


def estate(n: int) -> dict[str, Any]:
    """A live audit's report: mostly unencrypted volumes (EBS-001), then instances (RS-*),
    launch templates (SPOT-001), groups (ASG-*), some UNKNOWN, SUPPRESSED and PASS."""
    findings = []
    for i in range(n):
        acct, region = ACCOUNTS[i % len(ACCOUNTS)], REGIONS[i % len(REGIONS)]
        arn = f"arn:aws:ec2:{region}:{acct}"
        kind = i % 20
        if kind < 14:
            res = {"kind": "ec2.volume", "id": f"vol-{i:017x}", "name": f"ckpt-{i}",
                   "arn": f"{arn}:volume/vol-{i:017x}", "account": acct, "region": region,
                   "tags": {"team": f"ml-{i % 7}", "Name": f"ckpt-{i}"}}
            status = "PASS" if i % 9 == 0 else "SUPPRESSED" if i % 31 == 0 else "FAIL"
            findings.append(finding(
                "EBS-001", "EBS storage not encrypted", "high", status,
                f"Volume vol-{i:017x} ({100 + i % 900} GiB gp3) is not encrypted.", res,
                evidence={"Encrypted": False, "Size": 100 + i % 900, "VolumeType": "gp3",
                          "Attachments": [{"InstanceId": f"i-{i:017x}", "Device": "/dev/sdf",
                                           "State": "attached"}]},
                suppression={"by": "mute list", "reason": "scratch", "expires": None}
                if status == "SUPPRESSED" else None))
        elif kind < 17:
            res = {"kind": "ec2.instance", "id": f"i-{i:017x}", "name": f"train-{i}",
                   "arn": f"{arn}:instance/i-{i:017x}", "account": acct, "region": region}
            idle = kind == 14
            findings.append(finding(
                "RS-002" if idle else "RS-001", "Idle GPU compute" if idle
                else "Oversized GPU compute", "high" if idle else "medium", "FAIL",
                "Every GPU stayed at or below 5% for 14 days." if idle
                else "p4d.24xlarge peaks at 18 GiB GPU memory; g6e.12xlarge fits.", res,
                evidence={"instance_type": "p4d.24xlarge", "gpu_util_p99": 1.5 + i % 7,
                          "hours_of_data": 336},
                savings={"usd_month": round(1000 + (i % 97) * 37.5, 2),
                         "kind": "idle" if idle else "rightsize",
                         "basis": "(32.7726 - 10.1578) $/h x 730 h x 1 instance"}))
        elif kind < 19:
            res = {"kind": "ec2.launch_template", "id": f"lt-{i:017x}", "name": f"spot-{i}",
                   "account": acct, "region": region}
            findings.append(finding(
                "SPOT-001", "Spot max price above the cap", "medium",
                "UNKNOWN" if i % 5 == 0 else "FAIL",
                "Spot max price 9.8 $/h is above 0.7 x on-demand (6.88 $/h).", res,
                evidence={"max_price": 9.8, "on_demand": 9.83, "cap": 6.88},
                savings={"usd_month": 2124.3, "kind": "exposure",
                         "basis": "(9.8 - 6.88) $/h x 730 h, per instance"}))
        else:
            res = {"kind": "autoscaling.group", "id": f"asg-{i}", "name": f"asg-{i}",
                   "account": acct, "region": region}
            findings.append(finding(
                "ASG-002", "Spot pools not diversified", "low", "FAIL",
                "Only 1 instance type (p4d.24xlarge) in the spot pools.", res,
                evidence={"instance_types": ["p4d.24xlarge"], "min_instance_types": 2}))
    return document(findings, inputs={"accounts": ACCOUNTS, "regions": REGIONS},
                    resources=n)


def measure(n: int, repeat: int) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    doc = estate(n)
    start = time.perf_counter()
    html = render("html", doc)
    write_s = time.perf_counter() - start
    page = OUT / f"report-{n}.html"
    page.write_text(html, encoding="utf-8")
    if not CHROMIUM:
        raise SystemExit("chromium is required: bash tools/install_chromium.sh")
    runs = []
    with Browser(CHROMIUM) as browser:
        for _ in range(repeat):
            browser.events.clear()
            load = browser.open(page)
            nav = browser.evaluate(
                "(() => { const n = performance.getEntriesByType('navigation')[0];"
                " const p = performance.getEntriesByName('first-contentful-paint')[0];"
                " return [n.domContentLoadedEventEnd, n.loadEventEnd, p ? p.startTime : null];"
                " })()")
            filt = browser.evaluate(
                "(() => { const t0 = performance.now();"
                " document.querySelector('label[for=show-FAIL]').click(); return " + FRAME +
                "; })()")
            search = browser.evaluate(
                "(() => { const t0 = performance.now(); const s = document.getElementById"
                "('search'); s.value = 'ckpt-1234 ml-2'; s.dispatchEvent(new KeyboardEvent"
                "('keydown', {key: 'Enter'})); return " + FRAME + "; })()")
            matches = browser.evaluate("document.getElementById('matches').textContent")
            resort = browser.evaluate(
                "(() => { const t0 = performance.now(); const s = document.getElementById"
                "('sort'); s.value = 'saving'; s.dispatchEvent(new Event('change')); return "
                + FRAME + "; })()")
            problems = browser.console() + browser.requests()
            runs.append({"load_s": load, "dom_content_loaded_ms": nav[0],
                         "load_event_ms": nav[1], "first_paint_ms": nav[2],
                         "filter_ms": filt, "search_ms": search, "sort_ms": resort,
                         "search_result": matches, "problems": problems})
    med = {k: statistics.median(r[k] for r in runs)
           for k in ("load_s", "load_event_ms", "first_paint_ms", "filter_ms", "search_ms",
                     "sort_ms") if all(r[k] is not None for r in runs)}
    return {"findings": n, "bytes": len(html.encode("utf-8")), "write_html_s": write_s,
            "median": med, "runs": runs, "budget_s": BUDGET_S}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    result = measure(args.findings, args.repeat)
    (OUT / "html-bench.json").write_text(json.dumps(result, indent=2) + "\n")
    med = result["median"]
    print(f"findings: {result['findings']:,}   HTML: {result['bytes'] / 1e6:.1f} MB, written "
          f"in {result['write_html_s']:.2f} s")
    print(f"Chromium (median of {args.repeat}): load event {med['load_event_ms'] / 1000:.2f} s "
          f"(budget {BUDGET_S:.0f} s), first paint {med.get('first_paint_ms', 0) / 1000:.2f} s; "
          f"filter {med['filter_ms']:.0f} ms, search {med['search_ms']:.0f} ms "
          f"({result['runs'][0]['search_result']}), sort {med['sort_ms']:.0f} ms")
    problems = result["runs"][0]["problems"]
    if problems:
        print("console/network:", problems)
    ok = med["load_event_ms"] / 1000 <= BUDGET_S and not problems
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
