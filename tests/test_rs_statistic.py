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
    """The negative of the two above: sized on p95 with a peak allowed up to 150 % of the
    candidate, the same series does go to a g6.xlarge; with the peak limit at 100 % it does
    not (38 % of an L40S is 114 % of an L4)."""
    loose, _ = run(*_single(**{"UtilP95": 20.0}), policies=("RS-001",), util_percentile=95,
                   peak_limit_percent=150)
    assert loose[("RS-001", "i")].evidence["recommended"] == "g6.xlarge"
    assert loose[("RS-001", "i")].status.value == "FAIL"
    peak_bound, _ = run(*_single(), policies=("RS-001",), util_percentile=95)
    assert "recommended" not in peak_bound[("RS-001", "i")].evidence


def test_burst_ratio_is_a_parameter() -> None:
    found, _ = run(*_fleet(), policies=("RS-001",), burst_ratio=10)
    assert found[("RS-001", "inference")].evidence["demand"]["bursty"] is False
