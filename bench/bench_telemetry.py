"""`make bench-telemetry`: right-sizing telemetry at fleet size, two parts.

DCGM: a 10,000-host DCGM exporter export (8 GPUs each, GPU_UTIL, FB_USED and FB_FREE in
dcgm-exporter's label layout, ``--dcgm-scrapes`` timestamped scrapes) written to bench/out and read
by ``scanner.telemetry.files.parse_file`` in a fresh process: wall time, CPU and peak memory
(VmHWM) against the budgets ``DCGM_BUDGET_S`` and ``DCGM_BUDGET_MIB`` (over either fails).

CloudWatch: against a fake CloudWatch client (not moto: moto needs ~3 s per 1,000 points stored
and would measure itself).

1,000 GPU instances x 4 GPUs x 14 days of hourly points. The fake answers ListMetrics in pages of
500 (with every series listed twice, as moto does) and GetMetricData with the points each query
asks for, enforcing the API's limits (500 queries and 100,800 data points per call: a call over
them fails the bench). Reports the GetMetricData calls against the lower bound
``max(ceil(queries / 500), ceil(points / 100800))``, and the time of the local work: turning the
answers' timestamps into numbers and aggregating (p50/p95/max, peak memory, hours, trend), median
of ``--repeat`` runs. ``--profile`` prints where that time goes.

    python bench/bench_telemetry.py [--instances 1000] [--gpus 4] [--days 14] [--repeat 3]
                                    [--dcgm-hosts 10000] [--dcgm-scrapes 1]
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import json
import pstats
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scanner.telemetry import cloudwatch as cw  # noqa: E402

END = dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc)
DCGM_BUDGET_S = 20.0  # wall seconds to read the 10,000-host export (one scrape; 5.5 s measured)
DCGM_BUDGET_MIB = 512  # peak resident memory of the process reading it (265 MiB measured)
_FIELDS = (("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
           ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
           ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."))


def write_dcgm_export(path: Path, hosts: int, gpus: int, scrapes: int) -> int:
    """A fleet's DCGM exporter scrapes, each sample with its timestamp (ms); the line count."""
    rng = random.Random(11)
    lines = 0
    stamp0 = int(END.timestamp() * 1000) - scrapes * 3_600_000
    with path.open("w") as f:
        for name, text in _FIELDS:
            f.write(f"# HELP {name} {text}\n# TYPE {name} gauge\n")
            for s in range(scrapes):
                stamp = stamp0 + s * 3_600_000
                for h in range(hosts):
                    host = f"ip-10-{h >> 16 & 255}-{h >> 8 & 255}-{h & 255}.ec2.internal"
                    busy = h % 3 == 0
                    for g in range(gpus):
                        value = (rng.randint(20, 95) if busy else rng.randint(0, 2)) \
                            if name.endswith("UTIL") else (rng.randint(1000, 22000)
                                                           if busy else 0)
                        f.write(f'{name}{{gpu="{g}",UUID="GPU-{h:08x}-{g:04x}-4b6a-9d8e-7f6a5b4c'
                                f'3d2e",pci_bus_id="00000000:00:{0x16 + g:02X}.0",device="nvidia'
                                f'{g}",modelName="NVIDIA A10G",Hostname="{host}",DCGM_FI_DRIVER_'
                                f'VERSION="550.127.05"}} {value} {stamp}\n')
                        lines += 1
    return lines


def bench_dcgm(hosts: int, gpus: int, scrapes: int) -> dict[str, Any]:
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"dcgm-{hosts}-hosts.prom"
    lines = write_dcgm_export(path, hosts, gpus, scrapes)
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from scanner.telemetry.files import parse_file\n"
        "wall, cpu = time.perf_counter(), time.process_time()\n"
        f"fmt, members = parse_file(Path({str(path)!r}))\n"
        "peak = next(int(line.split()[1]) for line in open('/proc/self/status')\n"
        "            if line.startswith('VmHWM:'))  # ru_maxrss keeps the parent's\n"
        "print(time.perf_counter() - wall, time.process_time() - cpu, peak // 1024,\n"
        "      len(members), sum(len(g) for g in members.values()))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    wall, cpu, rss, got_hosts, got_gpus = proc.stdout.split()
    result = {"hosts": hosts, "gpus": hosts * gpus, "scrapes": scrapes, "lines": lines,
              "bytes": path.stat().st_size, "read_s": round(float(wall), 2),
              "read_cpu_s": round(float(cpu), 2), "peak_rss_mib": int(rss),
              "budget_s": DCGM_BUDGET_S, "budget_mib": DCGM_BUDGET_MIB}
    path.unlink()
    assert int(got_hosts) == hosts and int(got_gpus) == hosts * gpus, proc.stdout
    return result


class FakeCloudWatch:
    """What the collector's reader sees: list_metrics and get_metric_data (all pages)."""

    def __init__(self, instances: int, gpus: int) -> None:
        self.metrics: dict[str, list[dict[str, Any]]] = {}
        for name in cw.METRICS:
            listed = []
            for i in range(instances):
                for g in range(gpus):
                    dims = [{"Name": "InstanceId", "Value": f"i-{i:017x}"},
                            {"Name": "index", "Value": str(g)},
                            {"Name": "host", "Value": f"ip-10-0-{i // 250}-{i % 250}"},
                            {"Name": "name", "Value": "NVIDIA A10G"}]
                    item = {"Namespace": "CWAgent", "MetricName": name, "Dimensions": dims}
                    listed += [item, item]  # moto lists series twice; so might a slow page
            self.metrics[name] = listed
        self.list_calls = 0
        self.data_calls = 0
        self.points = 0
        self._times: dict[tuple[int, int, int], list[dt.datetime]] = {}
        rng = random.Random(7)
        self._values = [[rng.random() * 100 for _ in range(24 * 60)] for _ in range(64)]

    def list_metrics(self, metric_name: str, namespace: str = "CWAgent") -> list[dict[str, Any]]:
        items = self.metrics.get(metric_name, [])
        self.list_calls += max(1, -(-len(items) // 500))  # one call per page of 500
        return items

    def get_metric_data(self, queries: list[dict[str, Any]], start: dt.datetime,
                        end: dt.datetime) -> list[dict[str, Any]]:
        self.data_calls += 1
        span = int((end - start).total_seconds())
        out = []
        points = 0
        for q in queries:
            period = q["MetricStat"]["Period"]
            n = span // period
            points += n
            key = (int(start.timestamp()), period, n)
            times = self._times.get(key)
            if times is None:
                times = self._times[key] = [start + dt.timedelta(seconds=period * k)
                                            for k in range(n)]
            values = self._values[hash(q["Id"]) % 64][:n]
            out.append({"Id": q["Id"], "Timestamps": times, "Values": values,
                        "StatusCode": "Complete"})
        if len(queries) > cw.MAX_QUERIES or points > cw.MAX_POINTS:
            raise RuntimeError(f"GetMetricData over the limits: {len(queries)} queries, "
                               f"{points} points")
        self.points += points
        return out


def run_once(instances: int, gpus: int, days: float, profile: bool) -> dict[str, Any]:
    fake = FakeCloudWatch(instances, gpus)
    ids = [f"i-{i:017x}" for i in range(instances)]
    window = cw.live_window(END.timestamp(), days)
    found = cw.discover(fake, ids)
    assert found is not None
    queries = cw.plan_queries(found, window)
    calls = cw.batches(queries)
    answers = [fake.get_metric_data([q.as_api() for q in call],
                                    dt.datetime.fromtimestamp(window.start, dt.timezone.utc),
                                    dt.datetime.fromtimestamp(window.end, dt.timezone.utc))
               for call in calls]

    profiler = cProfile.Profile() if profile else None
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    data: dict[str, Any] = {}
    for call, answer in zip(calls, answers, strict=True):  # what fetch does with each answer
        cw.parse(answer, call, data)
    records = cw.aggregate(queries, data, window, days)
    if profiler:
        profiler.disable()
    local = time.perf_counter() - wall
    local_cpu = time.process_time() - cpu
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(15)
    assert len(records) == instances
    return {"instances": instances, "gpus": instances * gpus, "hours": window.hours,
            "queries": len(queries), "points": fake.points,
            "get_metric_data_calls": len(calls), "minimum_calls": cw.minimum_calls(queries),
            "list_metrics_calls": fake.list_calls, "local_s": local, "local_cpu_s": local_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--days", type=float, default=14)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--dcgm-hosts", type=int, default=10_000)
    parser.add_argument("--dcgm-scrapes", type=int, default=1)
    args = parser.parse_args()
    dcgm = bench_dcgm(args.dcgm_hosts, 8, args.dcgm_scrapes)
    print(f"DCGM export: {dcgm['hosts']:,} hosts x 8 GPUs x {dcgm['scrapes']} scrape(s), "
          f"{dcgm['lines']:,} samples, {dcgm['bytes'] / 1048576:.0f} MiB: read in "
          f"{dcgm['read_s']:.2f} s wall ({dcgm['read_cpu_s']:.2f} s CPU), peak "
          f"{dcgm['peak_rss_mib']} MiB (budgets {DCGM_BUDGET_S:g} s, {DCGM_BUDGET_MIB} MiB)")
    runs = [run_once(args.instances, args.gpus, args.days, args.profile and i == 0)
            for i in range(args.repeat)]
    result = dict(runs[0])
    times = [r["local_s"] for r in runs]
    result["local_s"] = round(statistics.median(times), 3)
    result["local_s_best"] = round(min(times), 3)
    result["local_cpu_s"] = round(statistics.median(r["local_cpu_s"] for r in runs), 3)
    print(f"{result['instances']} instances x {args.gpus} GPUs x {result['hours']} hours: "
          f"{result['queries']} queries, {result['points']:,} points")
    print(f"GetMetricData calls: {result['get_metric_data_calls']} "
          f"(lower bound {result['minimum_calls']}); ListMetrics pages: "
          f"{result['list_metrics_calls']}")
    print(f"local parsing + aggregation: {result['local_s']:.2f} s median wall, "
          f"{result['local_s_best']:.2f} s best of {args.repeat}, {result['local_cpu_s']:.2f} s "
          "CPU (budget 2 s)")
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "telemetry.json").write_text(json.dumps(result | {"dcgm": dcgm}, indent=2) + "\n")
    if result["get_metric_data_calls"] != result["minimum_calls"]:
        sys.exit("more GetMetricData calls than the limits require")
    if dcgm["scrapes"] == 1 and (dcgm["read_s"] > DCGM_BUDGET_S
                                 or dcgm["peak_rss_mib"] > DCGM_BUDGET_MIB):
        sys.exit("the DCGM export took more than its budget")


if __name__ == "__main__":
    main()
