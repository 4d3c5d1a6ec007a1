"""A group is judged whole: its N instances against M of a candidate type, each member's work
moved whole (its used GPUs on GPUs of their own, never two GPUs' work on one; its host need
beside the others'), never below two instances where there were several, and not for
collective work. The move says how many of which; the basis spells N x a against M x b."""

from __future__ import annotations

import pytest

from tests.model_builders import res
from tests.rs_builders import coverage, gpu, group, member, usage
from tests.rs_builders import evaluate as run
from tests.rs_catalog import facts_catalog, with_facts


def _members(n: int, p95: float = 10, top: float = 12, mem: float = 8000) -> list:
    return [member(f"i-{k}", [gpu(0, p95, top, mem)]) for k in range(n)]


def test_two_g5_2xlarge_are_never_one_g5_4xlarge() -> None:
    """Two members each using their one A10G: one g5.4xlarge has one GPU for two GPUs' work,
    so it carries one member and two would cost more; nothing cheaper fits."""
    found, _ = run(*group("web", "g5.2xlarge", 2), coverage(), usage("web", *_members(2)),
                   policies=("RS-001",))
    f = found[("RS-001", "web")]
    assert f.status.value == "PASS" and f.savings is None
    assert not [c for c in f.evidence["candidates"]
                if c["instance_type"] == "g5.4xlarge" and c["count"] < 2]


def test_a_group_move_names_how_many_of_which() -> None:
    found, _ = run(*group("infer", "g6e.xlarge", 3), coverage(), usage("infer", *_members(3)),
                   policies=("RS-001",))
    f = found[("RS-001", "infer")]
    assert f.status.value == "FAIL"
    move = f.evidence["move"]
    assert move["text"] == "3 x g6e.xlarge -> 3 x g6f.4xlarge"
    assert move["from"] == {"count": 3, "instance_type": "g6e.xlarge"}
    assert f.savings is not None
    assert f.savings.basis.startswith("(1.861 - 0.95) $/h x 730 h x 3 instances [")
    assert f.savings.usd_month == pytest.approx((1.861 - 0.95) * 730 * 3)


CHEAP_G6_12 = {"g6.12xlarge": {"price_usd_hour": 1.5, "prices": {"us-east-1": 1.5}}}


def test_n_small_against_m_large_with_the_arithmetic_in_the_basis() -> None:
    """Four g6e.xlarge members, each one L40S lightly used and a quarter of its host needed at
    most (4 vCPU, 32 GiB: the whole g6e.xlarge host, not measured): a g6.12xlarge (4 L4, 48
    vCPU, 192 GiB) carries min(4/1, 48/4, 192/32) = 4 members; at least 2 are kept. With a
    g6.12xlarge priced at 1.5 $/h, 2 of them (3 $/h) cost less than 4 g6f.4xlarge (3.8 $/h)."""
    catalog = with_facts(facts_catalog(), CHEAP_G6_12)
    found, _ = run(*group("infer", "g6e.xlarge", 4), coverage(), usage("infer", *_members(4)),
                   policies=("RS-001",), catalog=catalog)
    f = found[("RS-001", "infer")]
    move = f.evidence["move"]
    assert move["text"] == "4 x g6e.xlarge -> 2 x g6.12xlarge"
    assert "ceil(4 / 4) = 1, at least 2 kept" in move["basis"]
    assert f.savings is not None
    assert f.savings.basis.startswith("(7.444 - 3) $/h x 730 h x 1 group [4 x 1.861 $/h "
                                      "g6e.xlarge -> 2 x 1.5 $/h g6.12xlarge")
    assert f.savings.usd_month == pytest.approx((4 * 1.861 - 2 * 1.5) * 730)
    assert f.evidence["performance_risk"]["level"] == 2
    assert any("4 instances consolidated into 2" in r
               for r in f.evidence["performance_risk"]["reasons"])


def test_collective_work_is_never_consolidated() -> None:
    catalog = with_facts(facts_catalog(), CHEAP_G6_12)
    data = {"NetworkInterfaces": [{"DeviceIndex": 0, "InterfaceType": "efa"}]}
    found, _ = run(*group("infer", "g6e.xlarge", 4, LaunchTemplateData=data), coverage(),
                   usage("infer", *_members(4)), policies=("RS-001",), catalog=catalog)
    f = found[("RS-001", "infer")]
    assert all(c["count"] == 4 for c in f.evidence["candidates"])
    assert f.evidence.get("move", {}).get("to", {}).get("count", 4) == 4


def test_standalone_instances_are_judged_one_by_one() -> None:
    machines = [res("ec2.instance", f"aws_instance.web[{k}]", InstanceType="g6e.xlarge")
                for k in range(2)]
    found, _ = run(*machines, coverage(),
                   *(usage(m.id, member(m.id, [gpu(0, 10, 12, 8000)])) for m in machines),
                   policies=("RS-001",))
    for m in machines:
        f = found[("RS-001", m.id)]
        assert f.evidence["move"]["text"] == "1 x g6e.xlarge -> 1 x g6f.4xlarge"
        assert "x 1 instance [" in f.savings.basis  # type: ignore[union-attr]
