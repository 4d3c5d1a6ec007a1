"""The decision statistic: a high percentile (util_percentile, default Compute Optimizer's
P99.5) and the peak of the lookback, never the mean or p95 alone; a bursty series (peak at
least burst_ratio x p95) is sized on its peak and keeps its size."""

from __future__ import annotations

from tests.model_builders import res
from tests.rs_builders import coverage, gpu, group, member, usage
from tests.rs_builders import evaluate as run

# an inference fleet of 3 g6e.12xlarge (4 L40S each): p95 18 %, peaks 75/75/75/74 % (299 %
# summed over one node's GPUs); the host measured and small, so only the statistic decides
PEAKS = (75, 75, 75, 74)
HOST = {"HostMemUsedMaxMiB": 40 * 1024, "CpuUtilMax": 20.0}


def _fleet() -> list:
    members = [member(f"i-{n}", [gpu(g, 18, PEAKS[g], 20000) for g in range(4)], **HOST)
               for n in range(3)]
    return [*group("inference", "g6e.12xlarge", 3), coverage(), usage("inference", *members)]


def test_bursty_fleet_keeps_its_size() -> None:
    found, _ = run(*_fleet(), policies=("RS-001",))
    f = found[("RS-001", "inference")]
    # wrong move gone: on p95 (18 % of an L40S = 54 % of an L4) it went to g6.12xlarge
    assert f.savings is None and "recommended" not in f.evidence
    assert not [c for c in f.evidence["candidates"] if c["gpu_model"] == "L4"]
    # right outcome: bursty, sized on its peak, keeps its size
    assert f.status.value == "PASS"
    assert "bursty" in f.message and "keeps its size" in f.message
    demand = f.evidence["demand"]
    assert demand["bursty"] is True and demand["decision_util_percent"] == 75
    assert demand["gpu_sum_peak_percent"] == sum(PEAKS)


def _single(**stats: float) -> list:
    h = {"HostMemUsedMaxMiB": 6 * 1024, "CpuUtilMax": 30.0}
    return [res("ec2.instance", "i", InstanceType="g6e.xlarge"), coverage(),
            usage("i", member("i", [gpu(0, 20, 38, 8000, **stats)], **h))]


def test_the_high_percentile_decides_not_p95() -> None:
    """p95 20 %, P99.5 35 %, peak 38 % of an L40S (not bursty: 38 < 2 x 20). On p95 a
    g6.xlarge fits (60 % of an L4); on P99.5 it does not (105 %)."""
    found, _ = run(*_single(**{"UtilP99.5": 35.0}), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.status.value == "PASS" and f.savings is None
    assert "g6.xlarge" not in {c["instance_type"] for c in f.evidence["candidates"]}
    assert f.evidence["demand"]["decision_statistic"] == "P99.5"
    assert f.evidence["demand"]["decision_util_percent"] == 35.0


def test_without_the_percentile_the_peak_decides() -> None:
    found, _ = run(*_single(), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.status.value == "PASS" and f.savings is None
    assert f.evidence["demand"]["decision_statistic"].startswith("maximum")
    assert f.evidence["demand"]["decision_util_percent"] == 38.0


def test_percentile_and_peak_limit_are_parameters() -> None:
    """The negative of the two above: p95 20 %, peak 30 % of an L40S. Sized on the peak (no
    P99.5 given) a g6.xlarge does not fit (30 % is 90 % of an L4, 108 % with headroom); with
    util_percentile 95 it does (60 %, 72 % with headroom; the peak at 90 % within 100 %), and
    with peak_limit_percent 80 it does not again."""
    h = {"HostMemUsedMaxMiB": 6 * 1024, "CpuUtilMax": 30.0}
    series = [res("ec2.instance", "i", InstanceType="g6e.xlarge"), coverage(),
              usage("i", member("i", [gpu(0, 20, 30, 8000)], **h))]
    strict, _ = run(*series, policies=("RS-001",))
    assert "recommended" not in strict[("RS-001", "i")].evidence
    loose, _ = run(*series, policies=("RS-001",), util_percentile=95)
    f = loose[("RS-001", "i")]
    assert f.status.value == "FAIL" and f.evidence["recommended"] == "g6.xlarge"
    assert f.evidence["demand"]["decision_statistic"] == "P95"
    assert any("projected peak 90%" in r for r in f.evidence["performance_risk"]["reasons"])
    capped, _ = run(*series, policies=("RS-001",), util_percentile=95, peak_limit_percent=80)
    assert "recommended" not in capped[("RS-001", "i")].evidence


def test_burst_ratio_is_a_parameter() -> None:
    found, _ = run(*_fleet(), policies=("RS-001",), burst_ratio=10)
    assert found[("RS-001", "inference")].evidence["demand"]["bursty"] is False


def test_a_peak_summed_over_gpus_is_not_read_as_one_gpus() -> None:
    """A series at 299 % is a sum over a node's GPUs (a node-level metric under one index):
    it is not one GPU's work, so neither a move nor "idle" is known."""
    found, _ = run(res("ec2.instance", "i", InstanceType="g6e.xlarge"), coverage(),
                   usage("i", member("i", [gpu(0, 18, 299, 20000)])))
    assert {k: f.status.value for k, f in found.items()} == {
        ("RS-001", "i"): "UNKNOWN", ("RS-002", "i"): "UNKNOWN", ("RS-003", "i"): "PASS"}
    assert "299% utilization" in found[("RS-001", "i")].message
    assert found[("RS-001", "i")].savings is None
