"""`make bench`: wall-clock budgets of the issues, measured as a user runs the tool (a new
process each time, interpreter start included). Prints a table; writes bench/out/results.json.

    python bench/run.py [--only NAME ...] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
GPUAUDIT = [sys.executable, "-m", "scanner.cli"]
# Byte-compiled modules as an installed package has them (pip compiles at install), kept under
# .cache/ rather than beside the sources: with PYTHONDONTWRITEBYTECODE (this machine's default)
# every module changed since its last .pyc was compiled again on each run (0.09 s of a run).
BENCH_ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "",
             "PYTHONPYCACHEPREFIX": str(ROOT / ".cache" / "pycache")}


@dataclass
class Bench:
    name: str
    budget_s: float
    prepare: Callable[[], list[str]]  # returns the gpuaudit arguments
    note: str


def _run(args: list[str]) -> tuple[float, int, str]:
    start = time.perf_counter()
    proc = subprocess.run([*GPUAUDIT, *args], cwd=ROOT, capture_output=True, text=True,
                          env=BENCH_ENV)
    return time.perf_counter() - start, proc.returncode, proc.stderr[-2000:]


def _plan_50k() -> list[str]:
    plan = OUT / "plan-50k.json"
    if not plan.exists():
        subprocess.run([sys.executable, "bench/gen_plan.py", str(plan), "--resources", "50000"],
                       cwd=ROOT, check=True)
    return ["scan", str(plan), "--format", "json", "--output", str(OUT / "plan-50k.report.json"),
            "--quiet", "--fail-on", "none"]


def _hcl_2000() -> list[str]:
    corpus = OUT / "hcl-2000"
    if not corpus.exists():
        subprocess.run([sys.executable, "bench/gen_hcl_corpus.py", str(corpus), "--stacks",
                        "2000"], cwd=ROOT, check=True)
    return ["scan", str(corpus), "--format", "json", "--output",
            str(OUT / "hcl-2000.report.json"), "--quiet", "--fail-on", "none"]


def _small_cfn() -> list[str]:
    return ["scan", "scanner/demo/examples/cloudformation/gpu-training.yaml", "--fail-on", "none"]


def _small_tf() -> list[str]:
    return ["scan", "scanner/demo/examples/terraform/main.tf", "--fail-on", "none"]


def _demo() -> list[str]:
    return ["demo", "--output-dir", str(OUT / "demo")]


BENCHES = [
    Bench("cfn-small", 0.5, _small_cfn, "one small CloudFormation template (pre-commit case)"),
    Bench("tf-small", 0.5, _small_tf, "one small .tf file (pre-commit case)"),
    Bench("plan-50k", 5.0, _plan_50k, "plan JSON with 50,000 resources, all policies, JSON out"),
    Bench("hcl-2000", 3.0, _hcl_2000, "2,000 Terraform stacks x 8 resources, all policies"),
    Bench("demo", 60.0, _demo, "gpuaudit demo: seed moto, audit 2 regions, scan examples"),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for bench in BENCHES:
        if args.only and bench.name not in args.only:
            continue
        try:
            argv = bench.prepare()
        except (OSError, subprocess.CalledProcessError) as exc:
            rows.append({"name": bench.name, "error": str(exc)})
            continue
        _run(argv)  # warm the page cache and .pyc files
        times, code, err = [], 0, ""
        for _ in range(args.repeat):
            t, code, err = _run(argv)
            times.append(t)
        med = statistics.median(times)
        rows.append({"name": bench.name, "median_s": round(med, 3), "min_s": round(min(times), 3),
                     "budget_s": bench.budget_s, "ok": med <= bench.budget_s and code in (0, 1),
                     "exit": code, "note": bench.note, **({"stderr": err} if code > 1 else {})})
    print(f"{'bench':<10} {'median s':>9} {'min s':>7} {'budget s':>9}  ok    note")
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<10} error: {r['error']}")
            continue
        print(f"{r['name']:<10} {r['median_s']:>9.3f} {r['min_s']:>7.3f} {r['budget_s']:>9.1f}  "
              f"{'yes' if r['ok'] else 'NO ':<5} {r['note']} (exit {r['exit']})")
    (OUT / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    extra = ROOT / "bench" / "bench_live.py"
    if extra.exists() and (not args.only or "live" in args.only):
        print("\nlive audit benchmark: python bench/bench_live.py (seeds a moto server; slow)")
    return 0 if all(r.get("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
