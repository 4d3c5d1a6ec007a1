"""What a move must keep besides GPU count and compute: BF16/FP8 and the Tensor Core
generation, the GPU memory needed (observed peak + memory_headroom), the GPU's memory
bandwidth, and the host's vCPU and memory (measured where the source gives them, else the
used GPUs' share of the current host)."""

from __future__ import annotations

import pytest

from policies.recommend import Demand, Options, fits
from scanner.catalog import default_catalog
from tests.model_builders import res
from tests.rs_builders import coverage, gpu, member, usage
from tests.rs_builders import evaluate as run
from tests.rs_catalog import facts_catalog, with_facts

T4_WITH = {"bf16": True, "fp8": True, "tensor_core_gen": 4}  # a T4 it is not: one fact each


def _l4(**host: float) -> list:
    return [res("ec2.instance", "i", InstanceType="g6.xlarge"), coverage(),
            usage("i", member("i", [gpu(0, 10, 15, 6000)], **host))]


def test_l4_is_not_sent_to_t4_without_bf16() -> None:
    found, _ = run(*_l4(), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert not [c for c in f.evidence["candidates"] if c["gpu_model"] == "T4"]
    assert f.evidence.get("recommended") != "g4dn.xlarge" and f.savings is None
    assert f.status.value == "PASS"


def test_the_same_t4_with_bf16_fp8_and_the_generation_would_be_taken() -> None:
    """The negative: the only thing between the L4 and the (cheaper) T4 is what the T4
    lacks; a catalogue that gave it all three makes g4dn.xlarge the move."""
    catalog = with_facts(default_catalog(), {"g4dn.xlarge": T4_WITH})
    found, _ = run(*_l4(), policies=("RS-001",), catalog=catalog)
    assert found[("RS-001", "i")].evidence["recommended"] == "g4dn.xlarge"


@pytest.mark.parametrize(("lacks", "why"), [
    ({"bf16": False}, "no BF16"), ({"fp8": False}, "no FP8"),
    ({"tensor_core_gen": 3}, "Tensor Core generation 3 below 4")])
def test_each_lost_capability_excludes_the_candidate(lacks: dict, why: str) -> None:
    catalog = with_facts(default_catalog(), {"g4dn.xlarge": T4_WITH | lacks})
    demand = Demand(1, 6000, 10, 15, util_high=15)
    assert fits(catalog.instances["g6.xlarge"], catalog.instances["g4dn.xlarge"], demand,
                Options(region="us-east-1")) == why


def test_gpu_memory_needed_is_the_peak_plus_headroom() -> None:
    """20 GiB used on an L40S: 24 GiB needed, more than an L4's 22.35."""
    found, _ = run(res("ec2.instance", "i", InstanceType="g6e.xlarge"), coverage(),
                   usage("i", member("i", [gpu(0, 5, 8, 20 * 1024)])), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert not [c for c in f.evidence["candidates"] if c["gpu_memory_gib"] < 24]
    assert "g6.xlarge" not in {c["instance_type"] for c in f.evidence["candidates"]}


# one A100 of a p4d.24xlarge's eight at p95 15 % / peak 18 %, 15 GB of GPU memory: on compute
# alone an L4 does it (18 % of 312 TFLOPS is 46 % of 121)
ONE_OF_EIGHT = [gpu(0, 15, 18, 15000)] + [gpu(n, 0, 0, 0) for n in range(1, 8)]


def test_one_gpu_p4d_keeps_its_bandwidth_and_measured_host() -> None:
    host = {"HostMemUsedMaxMiB": 200 * 1024, "CpuUtilMax": 30.0}
    found, _ = run(res("ec2.instance", "i", InstanceType="p4d.24xlarge"), coverage(),
                   usage("i", member("i", ONE_OF_EIGHT, **host)), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.status.value == "FAIL"
    assert f.evidence["recommended"] != "g6.xlarge"
    assert not [c for c in f.evidence["candidates"] if c["gpu_model"] == "L4"]
    need = f.evidence["demand"]["host"]
    assert need["measured"] is True
    assert need["vcpu"] == pytest.approx(0.30 * 96 * 1.2, abs=0.1)
    assert need["memory_gib"] == pytest.approx(200 * 1.2, abs=0.1)
    best = f.evidence["candidates"][0]
    assert best["instance_type"] == f.evidence["recommended"]
    assert best["vcpu"] >= need["vcpu"] and best["memory_gib"] >= need["memory_gib"]
    assert best["projected_bandwidth_percent"] * 1.2 <= 100


def test_one_gpu_p4d_without_host_metrics_takes_the_gpus_share() -> None:
    found, _ = run(res("ec2.instance", "i", InstanceType="p4d.24xlarge"), coverage(),
                   usage("i", member("i", ONE_OF_EIGHT)), policies=("RS-001",))
    f = found[("RS-001", "i")]
    need = f.evidence["demand"]["host"]
    assert need["measured"] is False and need["vcpu"] == 12 and need["memory_gib"] == 144
    assert f.evidence["recommended"] != "g6.xlarge"
    assert not [c for c in f.evidence["candidates"] if c["gpu_model"] == "L4"]
    assert any("host vCPU/memory not measured" in r
               for r in f.evidence["performance_risk"]["reasons"])


def test_bandwidth_alone_excludes_an_l4() -> None:
    """g6.16xlarge has the host (64 vCPU, 256 GiB) and the compute for the one A100, but 18 %
    of 1555 GB/s is 93 % of its 300 GB/s (112 % with headroom)."""
    catalog = facts_catalog()
    demand = Demand(1, 15000, 15, 18, util_high=18)
    assert fits(catalog.instances["p4d.24xlarge"], catalog.instances["g6.16xlarge"], demand,
                Options(region="us-east-1")) == "not enough GPU memory bandwidth"
    assert not isinstance(fits(catalog.instances["p4d.24xlarge"],
                               catalog.instances["g6.16xlarge"],
                               Demand(1, 15000, 5, 6, util_high=6),
                               Options(region="us-east-1")), str)
