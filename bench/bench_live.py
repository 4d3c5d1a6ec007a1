"""Live-audit benchmark: gpuaudit and Prowler side by side on the same seeded moto server.

    python bench/bench_live.py [--repeat 3] [--volumes 5000 --instances 500 ...] [--skip-prowler]

1. Starts moto on 127.0.0.1 (bench/seed_live.py's server, which counts every request by
   service, region and operation) and seeds it over us-east-1 and us-west-2 (default: 5,000
   volumes, 500 instances, 200 launch templates, 100 Auto Scaling groups, plus networks).
2. Times `gpuaudit audit --endpoint-url URL --regions us-east-1,us-west-2 --format json -o ...`
   (a new process each run, interpreter start included; median of --repeat, after one untimed
   run that warms the freshly seeded server up, as Prowler later finds it) and records the API
   calls per operation that the server received, beside the report's own coverage `calls`.
   DescribeRouteTables must be one paginated walk per region.
3. Installs Prowler in its own virtualenv (bench/out/prowler-venv, `pip install prowler`) and
   times `prowler aws --checks ec2_ebs_default_encryption ec2_ebs_volume_encryption
   autoscaling_group_multiple_instance_types --region us-east-1 us-west-2` against the same
   server (boto3 honours AWS_ENDPOINT_URL), with the same fake credentials; its calls are counted
   the same way. If Prowler cannot be installed or run, the reason is printed and recorded.
4. Times gpuaudit once more with only the policies that judge what those three checks judge
   (`--policy EBS-002 --policy EBS-001 --policy ASG-002`), for a like-for-like line.
5. Prints a table and writes bench/out/live.json. The target: gpuaudit's whole audit at least
   10x faster than Prowler.

The server is moto in one Python process, so both tools also pay moto's rendering time (for the
same DescribeVolumes / DescribeInstances of 5,500 volumes and 500 instances); the table shows it
(moto CPU s) beside each tool's own CPU. By default the server looks EC2 tags up by resource id
(moto 5.2.5 scans every tag of the region per resource: quadratic, ``--stock-moto`` keeps it) and
does not load moto's built-in AMIs (their ~1,300 snapshots per region are not part of the seeded
estate and Prowler reads each one's attributes; ``--moto-default-amis`` loads them).
With ``--latency-ms`` gpuaudit runs with ``--endpoint-concurrency 0`` (requests side by side, as
to a remote endpoint); otherwise with its default for a local endpoint, one request at a time.
Exit code: 0 when gpuaudit's report has no errors and DescribeRouteTables was one walk per region
(the speed ratio is reported, not enforced).

``--account`` measures the same two commands against the AWS account the machine's own
credentials reach (profile, environment, role: the standard chain; ``--regions``), with nothing
seeded and no emulator: the ratio where the server's time is not on this machine. There is no
server-side count there: gpuaudit's calls come from its report's coverage, Prowler's are not
known, and there is no floor. Both tools only read (gpuaudit refuses anything undeclared;
Prowler's checks are reads).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import seed_live  # noqa: E402 - bench/ is not a package

REGIONS = ("us-east-1", "us-west-2")
PROWLER_CHECKS = (
    "ec2_ebs_default_encryption",
    "ec2_ebs_volume_encryption",
    "autoscaling_group_multiple_instance_types",
)
# gpuaudit's policies that judge what Prowler's three checks judge (in that order): the same
# checks, timed beside the whole audit (which is what the target is about).
SAME_CHECKS = ("EBS-002", "EBS-001", "ASG-002")
PROWLER_VENV = OUT / "prowler-venv"
TARGET_RATIO = 10.0


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fake_env(url: str | None, home: Path) -> dict[str, str]:
    """No AWS setting of the machine; fake credentials; empty config and credential files."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_SESSION_TOKEN="testing",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_DISABLE_REQUEST_COMPRESSION="true",
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=str(home / "aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(home / "aws-credentials"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    if url:
        env["AWS_ENDPOINT_URL"] = url
    return env


# -- the server ------------------------------------------------------------------------------------


class Server:
    def __init__(
        self, log_path: Path, *, stock_moto: bool = False, default_amis: bool = False
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(log_path, "ab")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
        # moto's built-in AMIs come with about 1,300 snapshots per region that the account
        # appears to own: not part of the seeded estate (Prowler reads each one's attributes)
        env["MOTO_EC2_LOAD_DEFAULT_AMIS"] = "true" if default_amis else "false"
        self.proc = subprocess.Popen(
            seed_live.serve_command(self.port, stock_moto=stock_moto),
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.calls()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the moto server did not start (see {log_path})") from None
                time.sleep(0.2)

    def env(self, work: Path, *, endpoint: bool) -> dict[str, str]:
        """Fake credentials; the server as every service's endpoint when ``endpoint``."""
        return fake_env(self.url if endpoint else None, work)

    def cpu(self) -> float:
        """CPU seconds (user + system) the server process has used so far (Linux /proc)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def calls(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.url}/bench/calls", timeout=30) as resp:
            return list(json.loads(resp.read()))

    def set_latency(self, ms: float) -> None:
        req = urllib.request.Request(f"{self.url}/bench/latency?ms={ms:g}", method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()

    def reset_calls(self) -> None:
        req = urllib.request.Request(f"{self.url}/bench/calls/reset", method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()


class Account:
    """``--account``: the account the machine's credentials reach. Nothing to start or seed; no
    server-side counts or CPU (they are on AWS's side)."""

    url: str | None = None

    def env(self, work: Path, *, endpoint: bool) -> dict[str, str]:
        del work, endpoint  # the machine's own AWS settings, as they are
        return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def cpu(self) -> float:
        return float("nan")  # on AWS's side

    def calls(self) -> list[dict[str, Any]]:
        return []

    def reset_calls(self) -> None:
        pass

    def stop(self) -> None:
        pass


Target = Server | Account


def by_operation(rows: list[dict[str, Any]]) -> dict[str, int]:
    """ "service:Operation" -> calls, summed over regions."""
    out: Counter[str] = Counter()
    for r in rows:
        out[f"{r['service']}:{r['operation']}"] += int(r["calls"])
    return dict(sorted(out.items()))


def server_seconds(rows: list[dict[str, Any]]) -> float:
    """Seconds moto spent answering, summed over requests (concurrent ones overlap)."""
    return round(sum(float(r.get("server_s", 0.0)) for r in rows), 2)


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def per_region(rows: list[dict[str, Any]], operation: str) -> dict[str, int]:
    return {r["region"]: int(r["calls"]) for r in rows if r["operation"] == operation}


# -- gpuaudit --------------------------------------------------------------------------------------


def run_gpuaudit(
    server: Target,
    repeat: int,
    work: Path,
    regions: Sequence[str],
    extra: Sequence[str] = (),
    report: Path = OUT / "live-gpuaudit.json",
) -> dict[str, Any]:
    cmd = [*gpuaudit_command(server, report, regions), *extra]
    env = server.env(work, endpoint=False)  # gpuaudit is given --endpoint-url
    env["PYTHONPATH"] = str(ROOT)
    times: list[float] = []
    cpu: list[float] = []
    server_cpu: list[float] = []
    calls: list[dict[str, Any]] = []
    # One untimed run first: moto's first answers after seeding are up to 40% slower (6.1-7.6 s
    # where the later runs take 4.7-5.3 s); Prowler, which runs after these, meets a warm server.
    subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, check=False)
    for i in range(repeat):
        server.reset_calls()
        cpu0, scpu0 = child_cpu(), server.cpu()
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, check=False)
        elapsed = time.perf_counter() - start
        cpu.append(child_cpu() - cpu0)
        server_cpu.append(server.cpu() - scpu0)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"gpuaudit exited {proc.returncode}: {proc.stderr[-3000:]}")
        times.append(elapsed)
        if i == 0:
            calls = server.calls()
        log(f"gpuaudit run {i + 1}/{repeat}: {elapsed:.2f} s (exit {proc.returncode})")
    floor = server_floor(server, cmd, env, work) if isinstance(server, Server) else None
    return summarize(report, cmd, times, cpu, server_cpu, calls) | {"server_floor_s": floor}


def server_floor(server: Server, cmd: list[str], env: dict[str, str], work: Path) -> float:
    """The moto server's CPU to answer gpuaudit's reads one request at a time (no contention):
    the least time any client that reads this estate through this server can take."""
    seq = [*cmd, "--max-workers", "1", "--endpoint-concurrency", "1"]
    samples = []
    for _ in range(2):
        scpu0 = server.cpu()
        subprocess.run(seq, cwd=work, env=env, capture_output=True, text=True, check=False)
        samples.append(server.cpu() - scpu0)
    return round(min(samples), 2)


def gpuaudit_command(server: Target, report: Path, regions: Sequence[str]) -> list[str]:
    endpoint = ["--endpoint-url", server.url] if server.url else []
    return [
        sys.executable,
        "-m",
        "scanner",
        "audit",
        *endpoint,
        "--regions",
        ",".join(regions),
        "--format",
        "json",
        "-o",
        str(report),
        "--quiet",
    ]


def summarize(
    report: Path,
    cmd: list[str],
    times: list[float],
    cpu: list[float],
    server_cpu: list[float],
    calls: list[dict[str, Any]],
) -> dict[str, Any]:
    doc = json.loads(report.read_text())
    coverage_calls: Counter[str] = Counter()
    for row in doc.get("coverage", []):
        coverage_calls[row["service"]] += int(row.get("calls", 0))
    fails = Counter(f["policy_id"] for f in doc["findings"] if f["status"] == "FAIL")
    volume_fails = sum(
        1
        for f in doc["findings"]
        if f["policy_id"] == "EBS-001"
        and f["status"] == "FAIL"
        and f["resource"]["kind"] == "ec2.volume"
    )
    return {
        "command": " ".join(cmd[2:]),
        "wall_s": [round(t, 3) for t in times],
        "median_s": round(statistics.median(times), 3),
        "cpu_s_median": round(statistics.median(cpu), 2),
        "server_cpu_s_median": _seconds(statistics.median(server_cpu)),
        "server_s_first_run": server_seconds(calls),
        "calls_by_operation": by_operation(calls),
        "calls_total": sum(int(r["calls"]) for r in calls) if calls else None,
        "calls_by_region_operation": calls,
        "coverage_calls_by_collector": dict(sorted(coverage_calls.items())),
        "coverage_calls_total": sum(coverage_calls.values()),
        "describe_route_tables_per_region": per_region(calls, "DescribeRouteTables"),
        "errors": doc.get("errors", []),
        "summary": doc.get("summary", {}),
        "fails_by_policy": dict(sorted(fails.items())),
        "unencrypted_volumes": volume_fails,
    }


# -- Prowler ---------------------------------------------------------------------------------------


def ensure_prowler() -> tuple[Path | None, str]:
    """(path to the prowler executable, version) or (None, why not)."""
    exe = PROWLER_VENV / "bin" / "prowler"
    if not exe.exists():
        log(f"creating {PROWLER_VENV} and installing prowler from PyPI (a few minutes)")
        base = getattr(sys, "_base_executable", sys.executable)
        steps = [
            [base, "-m", "venv", str(PROWLER_VENV)],
            [
                str(PROWLER_VENV / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--upgrade",
                "pip",
            ],
            [str(PROWLER_VENV / "bin" / "python"), "-m", "pip", "install", "-q", "prowler"],
        ]
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                lines = [ln for ln in proc.stderr.splitlines() if "is ignored" not in ln]
                return None, f"`{' '.join(step[-3:])}` failed: " + "\n".join(lines[-15:])
    proc = subprocess.run(
        [str(exe), "--version"], capture_output=True, text=True, check=False, timeout=300
    )
    if proc.returncode != 0:
        return None, f"`prowler --version` failed: {proc.stderr[-2000:]}"
    return exe, proc.stdout.strip()


def run_prowler(
    server: Target, work: Path, regions: Sequence[str], timeout: float
) -> dict[str, Any]:
    exe, version = ensure_prowler()
    if exe is None:
        return {"ok": False, "error": version}
    out_dir = Path(tempfile.mkdtemp(prefix="prowler-out-", dir=work))
    cmd = [
        str(exe),
        "aws",
        "--checks",
        *PROWLER_CHECKS,
        "--region",
        *regions,
        "--no-banner",
        "--no-color",
        "--ignore-exit-code-3",  # 3 = some check FAILed: expected here
        "--output-formats",
        "json-ocsf",
        "--output-directory",
        str(out_dir),
    ]
    env = server.env(work, endpoint=True)
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    version_proc = subprocess.run(
        [str(exe), "--version"], env=env, capture_output=True, text=True, check=False
    )
    startup = time.perf_counter() - start
    del version_proc
    server.reset_calls()
    cpu0, scpu0 = child_cpu(), server.cpu()
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=work, env=env, capture_output=True, text=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "version": version, "error": f"timed out after {timeout:.0f} s"}
    elapsed = time.perf_counter() - start
    cpu, server_cpu = child_cpu() - cpu0, server.cpu() - scpu0
    calls = server.calls()
    result: dict[str, Any] = {
        "version": version,
        "command": " ".join(["prowler", *cmd[1:-1], "DIR"]),
        "wall_s": round(elapsed, 3),
        "startup_s": round(startup, 3),
        "cpu_s": round(cpu, 2),
        "server_cpu_s": _seconds(server_cpu),
        "server_s": server_seconds(calls),
        "exit_code": proc.returncode,
        "calls_by_operation": by_operation(calls),
        "calls_total": sum(int(r["calls"]) for r in calls) if calls else None,
        "calls_by_region_operation": calls,
    }
    if proc.returncode != 0:
        result.update(ok=False, error=(proc.stderr or proc.stdout)[-3000:])
        return result
    findings: list[dict[str, Any]] = []
    for path in sorted(out_dir.glob("*.ocsf.json")):
        findings += json.loads(path.read_text() or "[]")
    by_check: dict[str, Counter[str]] = {}
    for f in findings:
        check = str(f.get("metadata", {}).get("event_code") or f.get("finding_info", {}).get("uid"))
        by_check.setdefault(check, Counter())[str(f.get("status_code"))] += 1
    result.update(
        ok=True,
        findings_by_check={k: dict(sorted(v.items())) for k, v in sorted(by_check.items())},
        unencrypted_volumes=by_check.get("ec2_ebs_volume_encryption", Counter()).get("FAIL", 0),
    )
    shutil.rmtree(out_dir, ignore_errors=True)
    return result


# -- report ----------------------------------------------------------------------------------------


def table(result: dict[str, Any]) -> str:
    g, p = result["gpuaudit"], result.get("prowler") or {}
    lines = []
    if "seeded" in result:
        created = result["seeded"]["created"]
        totals: Counter[str] = Counter()
        for region in created.values():
            totals.update(region)
        lines.append(
            "seeded ({}): {} standalone volumes (+1 root volume per instance), {} instances, "
            "{} launch templates, {} Auto Scaling groups, {} VPCs, {} subnets; {:.0f} s".format(
                ", ".join(created),
                totals["volumes"],
                totals["instances"],
                totals["launch_templates"],
                totals["asgs"],
                totals["vpcs"],
                totals["subnets"],
                result["seeded"]["seconds"],
            )
        )
    lines.append(f"server: {result['server']}")
    lines.append("")
    lines.append(
        f"{'tool':<22}{'wall s':>8}{'CPU s':>8}{'moto CPU s':>12}{'API calls':>11}"
        f"{'unencr. vols':>14}"
    )
    lines.append("-" * 75)
    lines += _gpuaudit_rows("gpuaudit (median)", g, "runs: {}")
    s = result.get("gpuaudit_same_checks")
    if s:
        lines += _gpuaudit_rows("  same 3 checks", s, f"({' '.join(SAME_CHECKS)}; runs: {{}})")
    if p.get("ok"):
        p_calls = "n/a" if p["calls_total"] is None else p["calls_total"]
        lines.append(
            f"{p['version']:<22}{p['wall_s']:>8.2f}{p['cpu_s']:>8.2f}"
            f"{_num(p['server_cpu_s']):>12}{p_calls!s:>11}{p['unencrypted_volumes']:>14}"
        )
        lines.append(f"  of which start-up (prowler --version): {p['startup_s']:.2f} s")
        ratio = result["ratio"]
        verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
        lines.append(
            f"ratio Prowler / gpuaudit: {ratio:.1f}x ({verdict} the {TARGET_RATIO:.0f}x target)"
        )
        if "ratio_same_checks" in result:
            lines.append(
                f"  with only the same 3 checks: {result['ratio_same_checks']:.1f}x"
            )
        if g["server_floor_s"] is not None:
            lines.append(
                f"  bound: moto needs {g['server_floor_s']:.2f} s of CPU to answer gpuaudit's "
                f"reads one at a time, so no client reading this estate here can beat "
                f"{result['ratio_bound']:.1f}x"
            )
    elif p:
        lines.append(f"Prowler did not run: {p.get('error')}")
    lines.append("CPU s = the tool's own processes (user + system)")
    if g["server_cpu_s_median"] is not None:
        lines.append(
            "moto CPU s = the moto server's CPU while the tool ran (one Python process: its "
            "requests are answered one at a time)"
        )
    if g["calls_total"] is None:
        lines.append(
            f"gpuaudit coverage rows: {g['coverage_calls_total']} calls "
            f"{g['coverage_calls_by_collector']} (no server-side count against AWS)"
        )
        return "\n".join(lines)
    lines.append("")
    lines.append("API calls per operation (both regions; server-side count)")
    ops = sorted(set(g["calls_by_operation"]) | set(p.get("calls_by_operation", {})))
    lines.append(f"  {'operation':<48}{'gpuaudit':>10}{'prowler':>10}")
    for op in ops:
        pv = p.get("calls_by_operation", {}).get(op, "")
        gv = g["calls_by_operation"].get(op, "")
        lines.append(f"  {op:<48}{gv!s:>10}{pv!s:>10}")
    rt = g["describe_route_tables_per_region"]
    lines.append(f"DescribeRouteTables per region (gpuaudit): {rt}")
    lines.append(
        f"gpuaudit coverage rows: {g['coverage_calls_total']} calls "
        f"{g['coverage_calls_by_collector']}"
    )
    return "\n".join(lines)


def _gpuaudit_rows(label: str, g: dict[str, Any], runs: str) -> list[str]:
    """A gpuaudit row of the table, and the line of its runs (``runs``: a template, {} = them)."""
    # without a server to count them: the report's coverage (collectors' calls, no STS)
    calls = g["calls_total"] if g["calls_total"] is not None else g["coverage_calls_total"]
    return [
        f"{label:<22}{g['median_s']:>8.2f}{g['cpu_s_median']:>8.2f}"
        f"{_num(g['server_cpu_s_median']):>12}{calls:>11}{g['unencrypted_volumes']:>14}",
        "  " + runs.format(", ".join(f"{t:.2f}" for t in g["wall_s"])),
    ]


def _seconds(value: float) -> float | None:
    """Rounded; None when not measured (NaN: no server on this machine)."""
    return None if math.isnan(value) else round(value, 2)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in asdict(seed_live.Scale()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=default)
    parser.add_argument("--repeat", type=int, default=3, help="gpuaudit runs (median)")
    parser.add_argument("--skip-prowler", action="store_true")
    parser.add_argument(
        "--stock-moto",
        action="store_true",
        help="keep moto's per-resource tag scan (quadratic server time, paid by both tools)",
    )
    parser.add_argument(
        "--moto-default-amis",
        action="store_true",
        help="load moto's built-in AMIs (and their ~1,300 snapshots per region) as well",
    )
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=0,
        help="delay every request of the measured runs by this much (a round trip to AWS)",
    )
    parser.add_argument(
        "--account",
        action="store_true",
        help="no emulator: both tools read the account the machine's AWS credentials reach",
    )
    parser.add_argument(
        "--regions",
        default=",".join(REGIONS),
        help=f"comma-separated (default {','.join(REGIONS)})",
    )
    parser.add_argument("--prowler-timeout", type=float, default=3600)
    parser.add_argument("--output", type=Path, default=OUT / "live.json")
    args = parser.parse_args(argv)
    regions = tuple(r.strip() for r in args.regions.split(",") if r.strip())
    if not regions:
        parser.error("--regions names no region")
    if args.account and (args.latency_ms or args.stock_moto or args.moto_default_amis):
        parser.error("--account reads a real account: no emulator option applies")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        work = Path(tmp)
        if args.account:
            result = {"server": "the AWS account of this machine's credentials (no emulator)"}
            measure(result, Account(), args, work, regions)
        else:
            result = on_moto(args, work, regions)
    rt = result["gpuaudit"]["describe_route_tables_per_region"]
    if not args.account:
        # moto answers DescribeRouteTables in one page when no MaxResults is sent: one walk
        # per region is then exactly one call per region (and never one per subnet or VPC)
        result["route_tables_one_walk_per_region"] = rt == {r: 1 for r in regions}
    args.output.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    print(table(result))
    print(f"\nwritten: {args.output}")
    ok = (
        result.get("route_tables_one_walk_per_region", True)
        and not result["gpuaudit"]["errors"]
        and not result["gpuaudit_same_checks"]["errors"]
    )
    return 0 if ok else 1


def on_moto(args: argparse.Namespace, work: Path, regions: Sequence[str]) -> dict[str, Any]:
    scale = seed_live.Scale(**{k: getattr(args, k) for k in asdict(seed_live.Scale())})
    server = Server(
        OUT / "live-moto.log",
        stock_moto=args.stock_moto,
        default_amis=args.moto_default_amis,
    )
    try:
        log(f"moto server {server.url}; seeding {asdict(scale)}")
        seeded = seed_live.seed(server.url, scale, regions)
        server.set_latency(args.latency_ms)
        result: dict[str, Any] = {
            "server": "moto "
            + _moto_version()
            + (" (stock tag lookup" if args.stock_moto else " (EC2 tags indexed by id")
            + (", with" if args.moto_default_amis else ", without")
            + " its built-in AMIs"
            + (f", {args.latency_ms:g} ms added to every request)" if args.latency_ms else ")"),
            "seeded": asdict(seeded),
        }
        # With latency added the endpoint stands for a remote one: requests go side by side
        # (gpuaudit sends a local endpoint one request at a time by default).
        extra = ["--endpoint-concurrency", "0"] if args.latency_ms else []
        measure(result, server, args, work, regions, extra)
    finally:
        server.stop()
    return result


def measure(
    result: dict[str, Any],
    target: Target,
    args: argparse.Namespace,
    work: Path,
    regions: Sequence[str],
    extra: Sequence[str] = (),
) -> None:
    """gpuaudit's runs, then Prowler's, into ``result``, with the ratio (and its bound)."""
    result["machine"] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    result["regions"] = list(regions)
    result["gpuaudit"] = run_gpuaudit(target, max(1, args.repeat), work, regions, extra)
    same = [arg for pid in SAME_CHECKS for arg in ("--policy", pid)]
    result["gpuaudit_same_checks"] = run_gpuaudit(
        target, max(1, args.repeat), work, regions, [*extra, *same],
        OUT / "live-gpuaudit-same-checks.json",
    )
    if args.skip_prowler:
        return
    result["prowler"] = run_prowler(target, work, regions, args.prowler_timeout)
    if not result["prowler"].get("ok"):
        return
    result["ratio"] = round(result["prowler"]["wall_s"] / result["gpuaudit"]["median_s"], 1)
    result["meets_target"] = result["ratio"] >= TARGET_RATIO
    same_s = result["gpuaudit_same_checks"]["median_s"]
    result["ratio_same_checks"] = round(result["prowler"]["wall_s"] / same_s, 1)
    floor = result["gpuaudit"]["server_floor_s"]
    if floor is not None:
        result["ratio_bound"] = round(result["prowler"]["wall_s"] / max(floor, 0.01), 1)


def _moto_version() -> str:
    import moto

    return str(moto.__version__)


if __name__ == "__main__":
    sys.exit(main())
