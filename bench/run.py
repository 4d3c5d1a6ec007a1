"""`make bench`: the budgets, measured as a user runs the tool (a new process each time,
interpreter start included), side by side with their anchors in the same run. Prints a table of
medians and peak resident set sizes; writes bench/out/results.json.

Rows (budget; anchor):
- cfn-small, tf-small: one small template / .tf file as pre-commit runs it (0.3 s wall).
- plan-50k: a 50,000-resource plan JSON, all policies, JSON report; anchor `json-load`: merely
  loading the same file with Python's json module (interpreter start included). Budget: less
  wall time than the anchor, peak RSS at most 2x the file.
- hcl-2000: 2,000 Terraform stacks (bench/gen_hcl_corpus.py), all policies; anchors checkov
  restricted to its equivalent checks (CKV_AWS_3, CKV_AWS_8, CKV_AWS_106, CKV_AWS_189) and
  checkov unrestricted, on the same corpus. Budget: 1.5 s and 30x faster than checkov
  restricted.
- hcl-500, hcl-1000 (with hcl-2000): the memory line, peak RSS against corpus size.
- demo: `gpuaudit demo` (60 s).

    python bench/run.py [--only NAME ...] [--repeat N] [--checkov PATH]

checkov is the one `make checkov-venv` installs (.venv-checkov/bin/checkov) unless --checkov
names another; without one the checkov rows say so.
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
GPUAUDIT = [sys.executable, "-m", "scanner"]
# Byte-compiled modules as an installed package has them (pip compiles at install), kept under
# .cache/ rather than beside the sources: with PYTHONDONTWRITEBYTECODE (this machine's default)
# every module changed since its last .pyc was compiled again on each run (0.09 s of a run).
BENCH_ENV = {**os.environ, "PYTHONDONTWRITEBYTECODE": "",
             "PYTHONPYCACHEPREFIX": str(ROOT / ".cache" / "pycache")}
CHECKOV_EQUIVALENT = "CKV_AWS_3,CKV_AWS_8,CKV_AWS_106,CKV_AWS_189"


@dataclass
class Bench:
    name: str
    budget_s: float | None
    prepare: Callable[[], list[str]]  # the full command line
    note: str
    anchor_of: str | None = None  # the row this one is an anchor for
    repeat: int | None = None  # fewer runs for slow anchors
    extra: dict[str, object] = field(default_factory=dict)


def _run(cmd: list[str]) -> tuple[float, int, int, str]:
    """(wall s, exit code, peak RSS bytes of the process, stderr tail)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=BENCH_ENV)
    assert proc.stderr is not None
    err = proc.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, proc.returncode, usage.ru_maxrss * 1024, err[-2000:]


def _plan_50k_file() -> Path:
    plan = OUT / "plan-50k.json"
    if not plan.exists():
        subprocess.run([sys.executable, "bench/gen_plan.py", str(plan), "--resources", "50000"],
                       cwd=ROOT, check=True)
    return plan


def _plan_50k() -> list[str]:
    return [*GPUAUDIT, "scan", str(_plan_50k_file()), "--format", "json", "--output",
            str(OUT / "plan-50k.report.json"), "--quiet", "--fail-on", "none"]


def _json_load() -> list[str]:
    return [sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1], 'rb'))",
            str(_plan_50k_file())]


def _corpus(stacks: int) -> Path:
    corpus = OUT / f"hcl-{stacks}"
    if not corpus.exists():
        subprocess.run([sys.executable, "bench/gen_hcl_corpus.py", str(corpus), "--stacks",
                        str(stacks)], cwd=ROOT, check=True)
    return corpus


def _hcl(stacks: int) -> Callable[[], list[str]]:
    def prepare() -> list[str]:
        return [*GPUAUDIT, "scan", str(_corpus(stacks)), "--format", "json", "--output",
                str(OUT / f"hcl-{stacks}.report.json"), "--quiet", "--fail-on", "none"]
    return prepare


CHECKOV: list[str] = []


def _checkov(restricted: bool) -> Callable[[], list[str]]:
    def prepare() -> list[str]:
        if not CHECKOV:
            raise OSError("no checkov (make checkov-venv, or --checkov PATH)")
        cmd = [*CHECKOV, "-d", str(_corpus(2000)), "--framework", "terraform", "--quiet",
               "--compact", "--skip-download", "-o", "json", "--output-file-path",
               str(OUT / ("checkov-restricted" if restricted else "checkov-all"))]
        return [*cmd, "--check", CHECKOV_EQUIVALENT] if restricted else cmd
    return prepare


def _small_cfn() -> list[str]:
    return [*GPUAUDIT, "scan", "scanner/cli/demo/examples/cloudformation/gpu-training.yaml",
            "--fail-on", "none"]


def _small_tf() -> list[str]:
    return [*GPUAUDIT, "scan", "scanner/cli/demo/examples/terraform/main.tf", "--fail-on", "none"]


def _demo() -> list[str]:
    return [*GPUAUDIT, "demo", "--output-dir", str(OUT / "demo")]


BENCHES = [
    Bench("cfn-small", 0.3, _small_cfn, "one small CloudFormation template (pre-commit case)"),
    Bench("tf-small", 0.3, _small_tf, "one small .tf file (pre-commit case)"),
    Bench("plan-50k", None, _plan_50k, "plan JSON with 50,000 resources, all policies, JSON out"),
    Bench("json-load", None, _json_load, "python -c json.load(plan-50k.json): the anchor",
          anchor_of="plan-50k"),
    Bench("hcl-500", None, _hcl(500), "500 Terraform stacks (memory line)"),
    Bench("hcl-1000", None, _hcl(1000), "1,000 Terraform stacks (memory line)"),
    Bench("hcl-2000", 1.5, _hcl(2000), "2,000 Terraform stacks x 8 resources, all policies"),
    Bench("checkov-equiv", None, _checkov(True), f"checkov --check {CHECKOV_EQUIVALENT}, same "
          "corpus", anchor_of="hcl-2000", repeat=1),
    Bench("checkov-all", None, _checkov(False), "checkov, all its Terraform checks, same corpus",
          anchor_of="hcl-2000", repeat=1),
    Bench("demo", 60.0, _demo, "gpuaudit demo: seed moto, audit 2 regions, scan examples"),
]


def _measure(bench: Bench, repeat: int) -> dict[str, object]:
    try:
        cmd = bench.prepare()
    except (OSError, subprocess.CalledProcessError) as exc:
        return {"name": bench.name, "error": str(exc)}
    if (bench.repeat or repeat) > 1:
        _run(cmd)  # warm the page cache and .pyc files (a one-run anchor is not warmed twice)
    walls, rss, code, err = [], [], 0, ""
    for _ in range(bench.repeat or repeat):
        t, code, peak, err = _run(cmd)
        walls.append(t)
        rss.append(peak)
    row: dict[str, object] = {
        "name": bench.name, "median_s": round(statistics.median(walls), 3),
        "min_s": round(min(walls), 3), "runs": len(walls),
        "peak_rss_mib": round(max(rss) / 2**20, 1), "exit": code, "note": bench.note}
    if code > 1:
        row["stderr"] = err
    return row


def _judge(rows: dict[str, dict[str, object]]) -> None:
    """Budgets that are ratios to an anchor of the same run."""
    for row in rows.values():
        row["ok"] = row.get("exit") in (0, 1) and "error" not in row
    small = [r for n, r in rows.items() if n in ("cfn-small", "tf-small", "demo", "hcl-2000")]
    for r in small:
        budget = next(b.budget_s for b in BENCHES if b.name == r["name"])
        if budget is not None and "median_s" in r:
            r["ok"] = bool(r["ok"]) and float(r["median_s"]) <= budget  # type: ignore[arg-type]
            r["budget"] = f"{budget} s"
    plan, anchor = rows.get("plan-50k"), rows.get("json-load")
    if plan and anchor and "median_s" in plan and "median_s" in anchor:
        size = _plan_50k_file().stat().st_size / 2**20
        ratio = float(plan["peak_rss_mib"]) / size  # type: ignore[arg-type]
        plan["budget"] = (f"< json.load {anchor['median_s']} s, RSS <= 2x the "
                          f"{size:.0f} MiB file ({ratio:.1f}x)")
        plan["ok"] = bool(plan["ok"]) and float(plan["median_s"]) < float(anchor["median_s"]) \
            and ratio <= 2.0  # type: ignore[arg-type]
    hcl, equiv = rows.get("hcl-2000"), rows.get("checkov-equiv")
    if hcl and equiv and "median_s" in hcl and "median_s" in equiv:
        speedup = float(equiv["median_s"]) / float(hcl["median_s"])  # type: ignore[arg-type]
        hcl["speedup_vs_checkov_equiv"] = round(speedup, 1)
        hcl["budget"] = f"1.5 s and >= 30x checkov-equiv ({speedup:.1f}x)"
        hcl["ok"] = bool(hcl["ok"]) and speedup >= 30
    allc = rows.get("checkov-all")
    if hcl and allc and "median_s" in hcl and "median_s" in allc:
        hcl["speedup_vs_checkov_all"] = round(
            float(allc["median_s"]) / float(hcl["median_s"]), 1)  # type: ignore[arg-type]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--checkov", default=str(ROOT / ".venv-checkov" / "bin" / "checkov"))
    args = parser.parse_args()
    if Path(args.checkov).exists():
        CHECKOV.append(args.checkov)
    OUT.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, object]] = {}
    for bench in BENCHES:
        if args.only and bench.name not in args.only:
            continue
        rows[bench.name] = _measure(bench, args.repeat)
        print(f"measured {bench.name}", file=sys.stderr, flush=True)
    _judge(rows)
    print(f"{'bench':<14} {'median s':>9} {'min s':>7} {'runs':>4} {'peak MiB':>9}  ok   "
          "budget / note")
    for r in rows.values():
        if "error" in r:
            print(f"{r['name']:<14} not measured: {r['error']}")
            continue
        anchor = " (anchor)" if any(b.anchor_of for b in BENCHES if b.name == r["name"]) else ""
        print(f"{r['name']:<14} {r['median_s']:>9.3f} {r['min_s']:>7.3f} {r['runs']:>4} "
              f"{r['peak_rss_mib']:>9.1f}  {'yes' if r['ok'] else 'NO ':<4} "
              f"{r.get('budget') or r['note']}{anchor}")
    for stacks in (500, 1000, 2000):
        r = rows.get(f"hcl-{stacks}")
        if r and "peak_rss_mib" in r:
            print(f"memory line: {stacks:>5} stacks -> {r['peak_rss_mib']} MiB peak RSS")
    (OUT / "results.json").write_text(json.dumps(list(rows.values()), indent=2) + "\n")
    judged = [r for n, r in rows.items() if not any(b.anchor_of for b in BENCHES if b.name == n)]
    return 0 if all(r.get("ok") for r in judged) else 1


if __name__ == "__main__":
    sys.exit(main())
