"""Every move carries a performance risk (0-4, Compute Optimizer's scale) with its reasons; a
move above max_risk_for_saving is a notice (UNKNOWN, no saving). Prepaid capacity (a capacity
block, a targeted reservation) books no right-sizing or idle saving; spot capacity is priced
at its spot price."""

from __future__ import annotations

import pytest

from tests.model_builders import res
from tests.rs_builders import coverage, gpu, member, usage
from tests.rs_builders import evaluate as run
from tests.rs_catalog import facts_catalog, without

LIGHT = [gpu(0, 25, 25, 5000), gpu(1, 0, 0, 0), gpu(2, 0, 0, 0), gpu(3, 0, 0, 0)]
TWO = [gpu(0, 20, 22, 3500), gpu(1, 20, 22, 3500), gpu(2, 0, 0, 300), gpu(3, 0, 0, 300)]


def _p3(gpus: list = LIGHT, **attrs: object) -> list:
    return [res("ec2.instance", "i", InstanceType="p3.8xlarge", **attrs), coverage(),
            usage("i", member("i", gpus))]


def test_every_move_carries_its_risk_and_reasons() -> None:
    found, _ = run(*_p3(), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.status.value == "FAIL" and f.savings is not None
    risk = f.evidence["performance_risk"]
    assert 0 <= risk["level"] <= 2 and risk["name"] in ("very low", "low", "medium")
    assert risk["reasons"]
    for c in f.evidence["candidates"]:
        assert 0 <= c["performance_risk"] <= 4 and c["risk_reasons"]


def test_two_gpus_busy_keep_their_nvlink() -> None:
    """Two V100s used at once on a p3.8xlarge: a move to PCIe T4s loses the link between them,
    a high risk, so a notice naming it, never a saving."""
    found, _ = run(*_p3(TWO), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.status.value == "UNKNOWN" and f.savings is None
    assert f.evidence["possible_move"]["text"] == "1 x p3.8xlarge -> 1 x g4dn.12xlarge"
    assert "high: 2 GPUs used: pcie in place of nvlink" in f.message


def test_a_risk_above_the_limit_is_a_notice_not_a_saving() -> None:
    found, notices = run(*_p3(TWO), policies=("RS-001",), max_risk_for_saving=1)
    f = found[("RS-001", "i")]
    assert f.status.value == "UNKNOWN" and f.savings is None
    assert "recommended" not in f.evidence
    assert f.evidence["possible_move"]["text"] == "1 x p3.8xlarge -> 1 x g4dn.12xlarge"
    assert any(n.startswith("RS-001 i: 1 x p3.8xlarge -> 1 x g4dn.12xlarge may fit")
               for n in notices)


def test_a_fact_missing_from_the_catalogue_is_a_high_risk() -> None:
    """g4dn.4xlarge without its Tensor Core generation: a high-risk move, passed over for
    the next safe one (g6.4xlarge); with every candidate so, the result is a notice."""
    catalog = without(facts_catalog(), "g4dn.4xlarge", "tensor_core_gen")
    found, _ = run(*_p3(), policies=("RS-001",), catalog=catalog)
    f = found[("RS-001", "i")]
    assert f.evidence["recommended"] == "g6.4xlarge"
    bare = without(facts_catalog(), "p3.8xlarge", "gpu_mem_bandwidth_gbs")
    found, notices = run(*_p3(), policies=("RS-001",), catalog=bare)
    f = found[("RS-001", "i")]
    assert f.status.value == "UNKNOWN" and f.savings is None
    assert any("memory bandwidth of p3.8xlarge not in the catalogue" in r
               for r in f.evidence["performance_risk"]["reasons"])
    assert notices


CAPACITY_BLOCK = {"InstanceMarketOptions": {"MarketType": "capacity-block"}}
TARGETED = {"CapacityReservationSpecification": {
    "CapacityReservationTarget": {"CapacityReservationId": "cr-0123456789abcdef0"}}}
OPEN = {"CapacityReservationSpecification": {"CapacityReservationPreference": "open"}}


@pytest.mark.parametrize(("attrs", "words"), [(CAPACITY_BLOCK, "a capacity block"),
                                              (TARGETED, "a targeted capacity reservation")])
def test_prepaid_capacity_books_no_saving(attrs: dict, words: str) -> None:
    found, _ = run(*_p3(**attrs), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.status.value == "FAIL" and f.savings is None
    assert f"prepaid capacity ({words}): no saving is booked" in f.message
    idle, _ = run(res("ec2.instance", "n", InstanceType="g5.2xlarge", **attrs), coverage(),
                  usage("n", member("n", [gpu(0, 1, 2, 300)])), policies=("RS-002",))
    g = idle[("RS-002", "n")]
    assert g.status.value == "FAIL" and g.savings is None and "no saving is booked" in g.message


def test_an_open_reservation_is_not_prepaid() -> None:
    found, _ = run(*_p3(**OPEN), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.savings is not None and f.savings.usd_month > 0


def test_spot_capacity_saves_at_its_spot_price() -> None:
    found, _ = run(*_p3(InstanceMarketOptions={"MarketType": "spot"}), policies=("RS-001",))
    f = found[("RS-001", "i")]
    assert f.savings is not None
    assert f.savings.usd_month == pytest.approx(0.35 * (12.24 - 1.204) * 730)
    assert "spot p3.8xlarge estimated at 0.35 x" in f.savings.basis


def test_a_risky_move_below_the_minimum_saving_passes() -> None:
    found, notices = run(*_p3(TWO), policies=("RS-001",), max_risk_for_saving=1,
                         min_saving_usd_month=100_000)
    assert found[("RS-001", "i")].status.value == "PASS" and not notices
