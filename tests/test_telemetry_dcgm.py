"""DCGM exporter files as dcgm-exporter writes them (tests/fixtures/telemetry/dcgm, appended once
per hour with the scrape time): MIG instances, time-sliced pods, the host label forms and the
profiling fields give one utilization per physical GPU, and the right-sizing verdicts that follow
from it; the budgets of a hostile export apply while it is read."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.telemetry import TELEMETRY
from scanner.telemetry.dcgm import MAX_DEVICES
from scanner.telemetry.files import TelemetryFileError, parse_dcgm, parse_file
from scanner.telemetry.history import attach, load_utilization

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "telemetry"
DCGM = FIXTURES / "dcgm"
END = 1768435200  # 2026-01-15T00:00:00Z
HOURS = 48
RS = ("RS-001", "RS-002", "RS-003")


def appended(name: str, util: Callable[[int], float] = lambda h: 40.0, hours: int = HOURS,
             *, openmetrics: bool = False) -> str:
    """One scrape of the fixture per hour, each sample followed by its scrape time (ms, or
    seconds for OpenMetrics), as ``curl -s :9400/metrics | awk '{print $0, t}'`` appends."""
    scrape = (DCGM / name).read_text()
    out: list[str] = []
    for h in range(hours):
        t = END - (hours - h) * 3600 + 1800
        stamp = str(t) if openmetrics else str(t * 1000)
        for line in scrape.splitlines():
            out.append(line if line.startswith("#") else
                       f"{line.replace('@UTIL@', f'{util(h):g}')} {stamp}")
    return "\n".join(out) + ("\n# EOF\n" if openmetrics else "\n")


def gpus_of(members: dict[str, Any], host: str) -> dict[str, Any]:
    return members[host]


def test_a_busy_mig_instance_makes_its_gpu_busy_not_idle() -> None:
    members = parse_dcgm(appended("p4d-mig.prom"), "dcgm.prom")
    assert sorted(members) == ["ip-10-0-1-17.ec2.internal"]
    gpus = members["ip-10-0-1-17.ec2.internal"]
    assert sorted(gpus, key=int) == [str(g) for g in range(8)]
    busy = gpus["3"]
    assert {round(v, 4) for v in busy.util_max.values()} == {91.2345}
    assert max(busy.mem_used_max.values()) == 17210 + 13  # both instances' memory
    assert busy.mem_total == 2 * (17210 + 2771)  # 39962: the instances' memory, not 40960
    assert busy.mig == ["3g.20gb", "3g.20gb"]
    for g in ("0", "1", "2", "4", "5", "6", "7"):
        assert set(gpus[g].util_max.values()) == {0.0}


def _scan(tmp_path: Path, files: dict[str, str]) -> tuple[dict[tuple[str, str], Any],
                                                          dict[str, dict[str, Any]]]:
    result = load_terraform_dir([FIXTURES / "tf"])
    assert result.errors == []
    specs = []
    for key, text in files.items():
        path = tmp_path / f"{key.rsplit('.', 1)[-1]}.prom"
        path.write_text(text)
        specs.append(f"{key}={path}")
    attach(result, load_utilization(specs, 14))
    assert result.errors == [] and result.notices == []
    telemetry = {str(r.get("Target")): dict(r.attrs) for r in result.resources
                 if r.kind == TELEMETRY}
    found = {(f.policy_id, f.resource["id"]): f
             for f in evaluate(result.resources, policy_ids=RS)}
    return found, telemetry


def test_mig_time_slicing_and_profiling_fields_give_the_right_verdicts(tmp_path: Path) -> None:
    found, telemetry = _scan(tmp_path, {
        "aws_instance.mig": appended("p4d-mig.prom"),
        "aws_instance.shared": appended("g5-timesliced.prom", lambda h: 40.0),
        "aws_instance.prof": appended("g6e-prof.prom"),
    })
    status = {k: f.status.value for k, f in found.items()}
    # the p4d with one busy MIG instance is not idle (and no idle saving is counted for it)
    assert status[("RS-002", "aws_instance.mig")] == "PASS"
    assert status[("RS-003", "aws_instance.mig")] == "PASS"
    assert not [f for f in found.values() if f.policy_id == "RS-002" and f.status.value == "FAIL"]
    mig_gpus = telemetry["aws_instance.mig"]["Members"][0]["Gpus"]
    assert mig_gpus[3]["UtilMax"] == 91.23 and mig_gpus[3]["MigInstances"] == ["3g.20gb"] * 2
    # two pods at 40 % on one time-sliced A10G: 80 %, not one of them
    shared = telemetry["aws_instance.shared"]["Members"][0]["Gpus"][0]
    assert shared["UtilP95"] == 80.0 and shared["UtilMax"] == 80.0 and shared["SharedBy"] == 2
    assert shared["MemUsedMaxMiB"] == 9120.0  # a device figure, not counted once per pod
    assert status[("RS-002", "aws_instance.shared")] == "PASS"
    assert status[("RS-001", "aws_instance.shared")] == "PASS"
    # GPU_UTIL 100 %, SMs active 6 %: utilization is the profiling figure
    prof = telemetry["aws_instance.prof"]["Members"][0]["Gpus"][0]
    assert prof["UtilP95"] == 6.12 and prof["UtilMax"] == 6.12
    assert prof["SmActiveP95"] == 6.12 and prof["DramActiveP95"] == 4.32
    assert prof["TensorActiveMax"] == 0.0 and prof["GrEngineActiveP95"] == 99.99
    assert "DCGM_FI_PROF_SM_ACTIVE" in prof["UtilSource"]
    assert status[("RS-002", "aws_instance.prof")] == "PASS"  # 6 % is above idle (5 %)


def test_time_sliced_pods_whose_sum_is_idle_stay_idle(tmp_path: Path) -> None:
    """The negative: two pods at 1 % each are 2 % together; RS-002 still finds the GPU idle."""
    found, telemetry = _scan(tmp_path, {"aws_instance.shared": appended(
        "g5-timesliced.prom", lambda h: 1.0)})
    assert telemetry["aws_instance.shared"]["Members"][0]["Gpus"][0]["UtilMax"] == 2.0
    assert found[("RS-002", "aws_instance.shared")].status.value == "FAIL"


def test_a_sample_repeated_in_the_same_scrape_is_not_a_second_consumer() -> None:
    text = appended("g5-timesliced.prom", lambda h: 30.0, hours=2)
    twice = "".join(line + "\n" + (line + "\n" if "whisper" in line and "UTIL{" in line else "")
                    for line in text.splitlines())
    gpu = parse_dcgm(twice, "d.prom")["ip-10-0-2-41.ec2.internal"]["0"]
    assert set(gpu.util_mean.values()) == {60.0}


def test_the_host_label_forms_keep_hosts_apart() -> None:
    by_instance = parse_dcgm(appended("g5-instance-label.prom"), "d.prom")
    assert sorted(by_instance) == ["10.0.3.11:9400", "10.0.3.12:9400"]
    assert {max(g.util_max.values()) for g in by_instance["10.0.3.11:9400"].values()} == {87.0}
    assert {max(g.util_max.values()) for g in by_instance["10.0.3.12:9400"].values()} == {0.0}
    one = appended("g5-timesliced.prom", hours=1)
    lower = one.replace("Hostname=", "hostname=") + one.replace(
        'Hostname="ip-10-0-2-41.ec2.internal"', 'hostname="ip-10-0-2-99.ec2.internal"')
    assert sorted(parse_dcgm(lower, "d.prom")) == ["ip-10-0-2-41.ec2.internal",
                                                   "ip-10-0-2-99.ec2.internal"]


def test_openmetrics_timestamps_are_seconds(tmp_path: Path) -> None:
    path = tmp_path / "export.om"
    path.write_text(appended("g6e-prof.prom", openmetrics=True))
    fmt, members = parse_file(path)
    gpu = members["ip-10-0-4-8.ec2.internal"]["0"]
    assert fmt == "dcgm" and len(gpu.util_mean) == HOURS
    assert min(gpu.util_mean) == END - HOURS * 3600


@pytest.mark.parametrize(("line", "words"), [
    ('DCGM_FI_PROF_SM_ACTIVE{gpu="0"} 61.2 1768384800000', "not a ratio"),
    ('DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="a\\"} 1 1768384800000', "bad labels"),
    ('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 1 1768384800000 extra', "needs a value and a timestamp"),
])
def test_a_bad_dcgm_line_is_an_input_error_naming_it(line: str, words: str) -> None:
    good = 'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 1 1768384800000\n'
    with pytest.raises(TelemetryFileError) as err:
        parse_dcgm(good + line + "\n", "d.prom")
    assert err.value.line == 2 and words in err.value.reason


def test_a_utf16_export_with_a_bom_is_read(tmp_path: Path) -> None:
    path = tmp_path / "dcgm.prom"
    path.write_bytes(b"\xff\xfe" + appended("g6e-prof.prom", hours=2).encode("utf-16-le"))
    assert parse_file(path)[1]["ip-10-0-4-8.ec2.internal"]["0"].util_mean


def test_a_million_series_export_stops_at_the_series_budget_in_bounded_memory(
        tmp_path: Path) -> None:
    """Streamed: the budget is met while reading, before anything is built from the rest;
    the process stays far below what holding the parsed export would take."""
    path = tmp_path / "huge.prom"
    with path.open("w") as f:
        for i in range(1_000_000):
            f.write(f'DCGM_FI_DEV_GPU_UTIL{{gpu="{i % 8}",Hostname="h{i // 8}"}} 5 '
                    "1768384800000\n")
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from scanner.telemetry.files import TelemetryFileError, parse_file
        t = time.perf_counter()
        try:
            parse_file(Path({str(path)!r}))
        except TelemetryFileError as exc:
            print(exc.line, exc.reason)
        peak = next(int(line.split()[1]) for line in open("/proc/self/status")
                    if line.startswith("VmHWM:"))  # (ru_maxrss keeps the forking parent's)
        print(time.perf_counter() - t, peak // 1024)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    error, usage = proc.stdout.strip().splitlines()
    assert error.startswith(f"{MAX_DEVICES + 1} more than {MAX_DEVICES:,} GPUs"), proc.stderr
    seconds, rss_mib = usage.split()
    assert int(rss_mib) < 300, usage  # the 1M-series export held whole took 2.2 GB (125 MiB)
    assert float(seconds) < 60


def _pods(name: str, per_pod: dict[str, Callable[[int], float]]) -> str:
    """``appended`` with each pod's own utilization (``per_pod``: pod name prefix -> value)."""
    text = appended(name, lambda h: -1.0)  # placeholder, filled per line below
    out = []
    for line in text.splitlines():
        if "GPU_UTIL{" in line and not line.startswith("#"):
            head, _value, stamp = line.rsplit(" ", 2)
            hour = HOURS - (END - int(stamp) // 1000 + 1800) // 3600
            prefix = next(p for p in per_pod if f'pod="{p}' in head)
            line = f"{head} {per_pod[prefix](hour):g} {stamp}"
        out.append(line)
    return "\n".join(out) + "\n"


def test_copies_of_the_device_value_per_pod_are_counted_once(tmp_path: Path) -> None:
    """--kubernetes-virtual-gpus writes the device's utilization once per pod: three copies of
    20-28 % are 28 %, not 84 %."""
    found, telemetry = _scan(tmp_path, {"aws_instance.shared": appended(
        "g5-virtual-gpus.prom", lambda h: 20.0 + h % 9)})
    gpu = telemetry["aws_instance.shared"]["Members"][0]["Gpus"][0]
    assert (gpu["UtilMax"], gpu["SharedBy"], gpu["SharedCopies"]) == (28.0, 3, 2)
    assert gpu["MemUsedMaxMiB"] == 3120.0
    assert found[("RS-002", "aws_instance.shared")].status.value == "PASS"


def test_copies_of_an_idle_device_are_idle_not_summed_busy(tmp_path: Path) -> None:
    """The missed saving summing copies made: 1-3 % on the device, copied to three pods, is not
    3-9 %: RS-002 finds the A10G idle at its full price."""
    found, telemetry = _scan(tmp_path, {"aws_instance.shared": appended(
        "g5-virtual-gpus.prom", lambda h: 1.0 + h % 3)})
    assert telemetry["aws_instance.shared"]["Members"][0]["Gpus"][0]["UtilMax"] == 3.0
    idle = found[("RS-002", "aws_instance.shared")]
    assert idle.status.value == "FAIL" and idle.savings is not None
    assert idle.savings.usd_month == pytest.approx(1.006 * 730, abs=0.01)


def test_pods_with_their_own_figures_are_summed_never_a_false_idle(tmp_path: Path) -> None:
    """The negative: two pods whose figures differ are two workloads, each below idle (3-4 %)
    and 7 % together: the GPU is busy, whatever copy detection does; two busy pods sum."""
    low = _pods("g5-timesliced.prom", {"whisper": lambda h: 3.0 + h % 2,
                                       "embed": lambda h: 4.0 - h % 2})
    found, telemetry = _scan(tmp_path, {"aws_instance.shared": low})
    gpu = telemetry["aws_instance.shared"]["Members"][0]["Gpus"][0]
    assert gpu["UtilMax"] == 7.0 and gpu["SharedBy"] == 2 and "SharedCopies" not in gpu
    assert found[("RS-002", "aws_instance.shared")].status.value == "PASS"
    busy = _pods("g5-timesliced.prom", {"whisper": lambda h: 40.0 + h % 5,
                                        "embed": lambda h: 30.0 + h % 7})
    found, telemetry = _scan(tmp_path, {"aws_instance.shared": busy})
    gpu = telemetry["aws_instance.shared"]["Members"][0]["Gpus"][0]
    assert gpu["UtilMax"] == 80.0  # hour 34: 44 % + 36 %
    assert "SharedCopies" not in gpu and gpu["UtilP50"] > 70.0
    assert found[("RS-002", "aws_instance.shared")].status.value == "PASS"


def test_pods_that_agree_only_sometimes_are_not_copies() -> None:
    """Two pods equal at some hours and apart at one are two workloads (summed), and a pod
    that copies another over too few common times is not taken for a copy."""
    from scanner.telemetry.dcgm import copy_groups

    a = {float(t): float(t % 4) for t in range(10)}
    b = dict(a) | {5.0: 9.0}
    assert len(copy_groups([a, b])) == 2
    assert len(copy_groups([a, dict(a)])) == 1
    assert len(copy_groups([{0.0: 1.0, 1.0: 2.0}, {0.0: 1.0, 1.0: 2.0}])) == 2  # 2 common
    assert len(copy_groups([{float(t): 5.0 for t in range(9)}] * 2)) == 2  # constant
