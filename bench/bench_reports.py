"""Every report format at the size of a large estate: N findings (default 200,000), half IaC
(files and lines), half live (accounts, regions, ARNs), every status, rendered to a file.

    python bench/bench_reports.py [--findings N] [--format F ...]

For each format, in a fresh process: the document is built, then rendered into a file; the
bench reports the wall and CPU time of the rendering (CPU time is the steadier of the two on
a shared machine) and the growth of the process's peak resident set
over what it held with the document built (tests/memory_peak.py), and the file's size. The
renderers write as they go, so the growth stays small and flat in N (it was the size of the
whole output, or several times it, when each format built one string). A benchmark, not a
test: it asserts nothing. Writes bench/out/reports-bench.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reports import FORMATS  # noqa: E402
from tests.report_samples import document, finding  # noqa: E402

OUT = ROOT / "bench" / "out"
ACCOUNTS = [f"{100000000000 + i}" for i in range(8)]
REGIONS = ["us-east-1", "us-west-2", "eu-west-1"]
STATUSES = ("FAIL", "FAIL", "FAIL", "PASS", "UNKNOWN", "SUPPRESSED", "FAIL", "ERROR")


def estate(n: int) -> dict[str, Any]:
    """``n`` findings: even ones of Terraform files, odd ones of live resources."""
    findings = []
    for i in range(n):
        status = STATUSES[i % len(STATUSES)]
        acct, region = ACCOUNTS[i % len(ACCOUNTS)], REGIONS[i % len(REGIONS)]
        sup = ({"by": "mute list", "reason": "scratch volumes", "expires": "2027-01-31"}
               if status == "SUPPRESSED" else None)
        if i % 2 == 0:
            module = f"modules/m{i % 400}"
            res = {"kind": "ec2.volume", "id": f"aws_ebs_volume.v{i}",
                   "address": f"module.m{i % 400}.aws_ebs_volume.v{i}", "root": "envs/prod"}
            loc = {"file": f"{module}/main.tf", "start_line": 1 + (i % 3000),
                   "end_line": 5 + (i % 3000)}
            findings.append(finding(
                "EBS-001", "EBS storage not encrypted", "high", status,
                f"aws_ebs_volume.v{i} is not encrypted.", res, location=loc,
                evidence={"encrypted": False, "size": 100 + i % 900}, suppression=sup,
                path=str(i)))
        else:
            arn = f"arn:aws:ec2:{region}:{acct}"
            res = {"kind": "ec2.instance", "id": f"i-{i:017x}", "name": f"train-{i}",
                   "arn": f"{arn}:instance/i-{i:017x}", "account": acct, "region": region,
                   "tags": {"team": f"ml-{i % 7}"}}
            findings.append(finding(
                "RS-001", "Oversized GPU compute", "medium", status,
                "p4d.24xlarge peaks at 18 GiB GPU memory; g6e.12xlarge fits.", res,
                evidence={"instance_type": "p4d.24xlarge", "gpu_util_p99": 1.5 + i % 7},
                savings={"usd_month": round(1000 + (i % 97) * 37.5, 2), "kind": "rightsize",
                         "basis": "(32.7726 - 10.1578) $/h x 730 h x 1 instance"},
                suppression=sup, path=str(i)))
    return document(findings, inputs={"paths": ["envs/prod"], "accounts": ACCOUNTS,
                                      "regions": REGIONS}, resources=n)


def one(fmt: str, n: int) -> dict[str, Any]:
    """Render ``fmt`` of an estate of ``n`` findings into a file (in this process)."""
    from reports import RenderContext, render_to
    from tests.memory_peak import peak_memory

    doc = estate(n)
    OUT.mkdir(parents=True, exist_ok=True)
    target = OUT / f"reports-{n}.{fmt}"
    ctx = RenderContext(root=ROOT, base=ROOT, report_dir=OUT)
    with peak_memory() as peak, target.open("w", encoding="utf-8") as out:
        start, cpu = time.perf_counter(), time.process_time()
        render_to(fmt, doc, out, context=ctx)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    size = target.stat().st_size
    target.unlink()
    return {"format": fmt, "findings": n, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "peak_rss_growth_mib": round(peak() / 2**20, 1), "bytes": size}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", type=int, default=200_000)
    parser.add_argument("--format", dest="formats", action="append", choices=FORMATS)
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one format
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.findings)))
        return 0
    rows = []
    for fmt in args.formats or FORMATS:
        proc = subprocess.run([sys.executable, __file__, "--one", fmt, "--findings",
                               str(args.findings)], capture_output=True, text=True, check=False)
        if proc.returncode:
            row = {"format": fmt, "findings": args.findings,
                   "failed": (proc.stderr.strip().splitlines() or ["?"])[-1]}
        else:
            row = json.loads(proc.stdout)
        rows.append(row)
        print(json.dumps(row), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "reports-bench.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
