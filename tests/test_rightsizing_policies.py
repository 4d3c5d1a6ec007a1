"""RS-001, RS-002 and RS-003 on hand-built resources: when each applies, the recommendation, the
pricing of groups (desired capacity, on-demand and spot apart), and property tests of the
recommendation (never dearer than the current type, always fits the observed memory)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies.recommend import Demand, Options, fits, recommend
from scanner.engine.evaluate import evaluate
from scanner.model import Finding, Resource
from scanner.pricing.prices import price
from scanner.telemetry import COVERAGE, TELEMETRY
from tests.model_builders import res
from tests.rs_catalog import facts_catalog, in_region

RS = ("RS-001", "RS-002", "RS-003")


def gpu(index: int, p95: float, top: float, mem: float | None, hours: int = 336,
        total: float | None = None) -> dict[str, Any]:
    return {"Index": str(index), "Hours": hours, "UtilP50": p95 / 2, "UtilP95": p95,
            "UtilMax": top, "MemUsedMaxMiB": mem, "MemTotalMiB": total}


def usage(target: str, *members: tuple[str, list[dict[str, Any]]],
          declared: bool = True) -> Resource:
    ms = [{"Id": mid, "Hours": max(g["Hours"] for g in gpus), "Gpus": gpus}
          for mid, gpus in members]
    return res(TELEMETRY, f"telemetry:{target}", declared=declared, Target=target,
               Source="history", LookbackDays=14, Hours=max(m["Hours"] for m in ms),
               Members=ms, Trend={"Start": "2026-01-01T00:00:00Z", "HoursPerPoint": 6,
                                  "UtilMax": [1.0, 2.0], "UtilP95": [1.0, 1.5]})


def coverage(declared: bool = True, **attrs: Any) -> Resource:
    return res(COVERAGE, "coverage", declared=declared, **attrs)


LIGHT_P3 = [gpu(0, 25, 25, 5000), gpu(1, 0, 0, 0), gpu(2, 0, 0, 0), gpu(3, 0, 0, 0)]


def run(*resources: Resource, policies: tuple[str, ...] = RS, catalog: Any = None,
        **params: Any) -> dict[tuple[str, str], Finding]:
    from scanner.engine.config import Config

    config = Config(policies={p: dict(params) for p in policies}) if params else None
    found = evaluate([in_region(r) for r in resources], policy_ids=policies, config=config,
                     catalog=catalog or facts_catalog())
    return {(f.policy_id, f.resource["id"]): f for f in found}


def statuses(found: dict[tuple[str, str], Finding]) -> dict[tuple[str, str], str]:
    return {k: f.status.value for k, f in found.items()}


def test_oversized_instance_gets_the_cheapest_fitting_type() -> None:
    found = run(res("ec2.instance", "aws_instance.t", InstanceType="p3.8xlarge"),
                usage("aws_instance.t", ("aws_instance.t", LIGHT_P3)), coverage())
    assert statuses(found) == {("RS-001", "aws_instance.t"): "FAIL",
                               ("RS-002", "aws_instance.t"): "PASS",
                               ("RS-003", "aws_instance.t"): "PASS"}
    f = found[("RS-001", "aws_instance.t")]
    # one V100 of four used: the host it needs is a quarter of the p3.8xlarge's (8 vCPU,
    # 61 GiB), so not a g4dn.xlarge (4 vCPU, 16 GiB) but a g4dn.4xlarge (16 vCPU, 64 GiB)
    assert f.evidence["recommended"] == "g4dn.4xlarge"
    assert [c["instance_type"] for c in f.evidence["candidates"]] == [
        "g4dn.4xlarge", "g6.4xlarge", "gr6.4xlarge"]
    assert f.evidence["demand"]["host"]["vcpu"] == 8.0
    assert f.savings is not None and f.savings.kind == "rightsize"
    assert f.savings.usd_month == pytest.approx((12.24 - 1.204) * 730)
    assert f.savings.basis.startswith("(12.24 - 1.204) $/h x 730 h x 1 instance [")
    assert f.evidence["move"]["text"] == "1 x p3.8xlarge -> 1 x g4dn.4xlarge"
    assert f.evidence["performance_risk"]["level"] == 1


def test_idle_replaces_oversized_and_saves_the_full_price() -> None:
    found = run(res("ec2.instance", "i", InstanceType="g5.2xlarge"),
                usage("i", ("i", [gpu(0, 1, 3, 300)])), coverage())
    assert statuses(found) == {("RS-002", "i"): "FAIL", ("RS-003", "i"): "PASS"}
    assert found[("RS-002", "i")].savings.usd_month == pytest.approx(1.212 * 730)  # type: ignore


def test_without_utilization_only_rs_003_speaks() -> None:
    found = run(res("ec2.instance", "i", InstanceType="g4dn.xlarge"), coverage())
    assert statuses(found) == {("RS-003", "i"): "FAIL"}
    short = run(res("ec2.instance", "i", InstanceType="g4dn.xlarge"),
                usage("i", ("i", [gpu(0, 50, 60, 1000, hours=29)])), coverage())
    assert statuses(short) == {("RS-003", "i"): "FAIL"}
    assert short[("RS-003", "i")].evidence["hours_of_data"] == 29


def test_no_result_where_utilization_was_not_looked_for() -> None:
    assert run(res("ec2.instance", "i", InstanceType="g4dn.xlarge"),
               usage("i", ("i", [gpu(0, 1, 1, 0)]))) == {}


def test_an_unreadable_utilization_file_is_unknown_not_missing() -> None:
    found = run(res("ec2.instance", "i", InstanceType="g4dn.xlarge"),
                coverage(Unreadable={"i": "history.json:3: bad"}))
    assert statuses(found) == {(p, "i"): "UNKNOWN" for p in RS}


def test_applies_to_running_nvidia_and_neuron_compute_only() -> None:
    """Stopped GPU and CPU instances are not judged; a running Neuron instance without data is
    RS-003's (like an NVIDIA one), and with idle data RS-002's; RS-001 computes no Neuron
    move."""
    stopped = res("ec2.instance", "i-stopped", declared=False, InstanceType="g5.xlarge",
                  State="stopped")
    neuron = res("ec2.instance", "i-inf", declared=False, InstanceType="inf2.xlarge",
                 State="running")
    cpu = res("ec2.instance", "i-cpu", declared=False, InstanceType="m5.large", State="running")
    assert statuses(run(stopped, neuron, cpu, coverage(declared=False))) == {
        ("RS-003", "i-inf"): "FAIL"}
    idle = run(neuron, cpu, coverage(declared=False),
               usage("i-inf", ("i-inf", [gpu(0, 0.2, 0.5, 2048)]), declared=False))
    assert statuses(idle) == {("RS-002", "i-inf"): "FAIL", ("RS-003", "i-inf"): "PASS"}
    busy = run(neuron, coverage(declared=False),
               usage("i-inf", ("i-inf", [gpu(0, 10, 90, 20000)]), declared=False))
    assert statuses(busy) == {("RS-002", "i-inf"): "PASS", ("RS-003", "i-inf"): "PASS"}


def test_group_is_judged_on_its_members_and_they_are_not_judged_alone() -> None:
    members = [res("ec2.instance", f"i-{n}", declared=False, InstanceType="p3.8xlarge",
                   State="running", AutoScalingGroupName="trainers") for n in (1, 2)]
    group = res("autoscaling.group", "trainers", declared=False, DesiredCapacity=2, MinSize=0,
                MaxSize=4, LaunchTemplate={"LaunchTemplateName": "lt"},
                Instances=[{"InstanceId": "i-1"}, {"InstanceId": "i-2"}])
    lt = res("ec2.launch_template", "lt", declared=False,
             LaunchTemplateData={"InstanceType": "p3.8xlarge"})
    found = run(*members, group, lt, coverage(declared=False),
                usage("i-1", ("i-1", LIGHT_P3), declared=False),
                usage("i-2", ("i-2", [gpu(0, 20, 30, 9000), gpu(1, 10, 12, 4000),
                                      gpu(2, 0, 0, 0), gpu(3, 0, 0, 0)]), declared=False))
    assert {k[1] for k in found} == {"trainers"}
    f = found[("RS-001", "trainers")]
    assert f.evidence["demand"]["gpus_used"] == 2  # the busiest member used two GPUs
    assert f.evidence["demand"]["peak_memory_used_mib"] == 9000
    # 30 % of a V100's 900 GB/s is 84 % of a T4's 320: no g4dn.12xlarge with 20 % headroom;
    # and two GPUs busy at once keep their NVLink: the PCIe move is a notice, not a saving
    assert f.status.value == "UNKNOWN" and f.savings is None
    assert f.evidence["possible_move"]["text"] == "2 x p3.8xlarge -> 2 x g6e.12xlarge"


def test_a_group_with_running_members_that_published_nothing_is_not_judged_idle() -> None:
    """Two running members, one publishing idle GPUs and one publishing nothing: the silent one
    may be the busy one, so neither RS-002 (the full price of both) nor RS-001 is known; a
    stopped member without data does not matter."""
    def member(n: int, state: str = "running") -> Resource:
        return res("ec2.instance", f"i-{n}", declared=False, InstanceType="g5.2xlarge",
                   State=state, AutoScalingGroupName="infer")

    group = res("autoscaling.group", "infer", declared=False, DesiredCapacity=2, MinSize=0,
                MaxSize=4, LaunchTemplate={"LaunchTemplateName": "lt"},
                Instances=[{"InstanceId": "i-1"}, {"InstanceId": "i-2"}])
    lt = res("ec2.launch_template", "lt", declared=False,
             LaunchTemplateData={"InstanceType": "g5.2xlarge"})
    seen = usage("i-1", ("i-1", [gpu(0, 1, 2, 300)]), declared=False)
    found = run(member(1), member(2), group, lt, coverage(declared=False), seen)
    assert statuses(found) == {("RS-001", "infer"): "UNKNOWN", ("RS-002", "infer"): "UNKNOWN",
                               ("RS-003", "infer"): "PASS"}
    assert "1 of its 2 running members" in found[("RS-002", "infer")].message
    stopped = run(member(1), member(2, "stopped"), group, lt, coverage(declared=False), seen)
    assert statuses(stopped)[("RS-002", "infer")] == "FAIL"


def test_gpu_group_whose_types_are_chosen_by_attributes_is_unknown_when_measured() -> None:
    """A group launching GPU types chosen by InstanceRequirements, with utilization given for
    it: which type runs is not known, so RS-001/RS-002 say UNKNOWN rather than nothing (the
    user asked); without utilization nothing is said (RS-003 speaks for named NVIDIA and
    Neuron types)."""
    group = res("autoscaling.group", "attr", DesiredCapacity=2, MinSize=0, MaxSize=4,
                MixedInstancesPolicy={"LaunchTemplate": {
                    "LaunchTemplateSpecification": {"LaunchTemplateName": "lt"}}})
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceRequirements": {
        "VCpuCount": {"Min": 4}, "MemoryMiB": {"Min": 16384}, "AcceleratorTypes": ["gpu"],
        "AcceleratorManufacturers": ["nvidia"]}})
    found = run(group, lt, usage("attr", ("attr", [gpu(0, 1, 2, 300)])), coverage())
    assert statuses(found) == {("RS-001", "attr"): "UNKNOWN", ("RS-002", "attr"): "UNKNOWN"}
    assert "not known" in found[("RS-002", "attr")].message
    assert run(group, lt, coverage()) == {}


def _spot_group(**extra: Any) -> list[Resource]:
    return [res("autoscaling.group", "g", DesiredCapacity=4, MinSize=0, MaxSize=8,
                MixedInstancesPolicy={
                    "InstancesDistribution": {"OnDemandBaseCapacity": 0,
                                              "OnDemandPercentageAboveBaseCapacity": 25},
                    "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateName": "lt"},
                                       "Overrides": [{"InstanceType": "g5.2xlarge"},
                                                     {"InstanceType": "g5.4xlarge"}]}},
                **extra),
            res("ec2.launch_template", "lt", LaunchTemplateData={}),
            usage("g", ("m1", [gpu(0, 0, 1, 100)])), coverage()]


def test_group_priced_at_desired_capacity_on_demand_and_spot_apart() -> None:
    found = run(*_spot_group())
    f = found[("RS-002", "g")]
    # 1 on-demand + 3 spot units of the cheapest override (g5.2xlarge, 1.212 $/h)
    assert f.savings.usd_month == pytest.approx(1.212 * 730 + 3 * 0.35 * 1.212 * 730)  # type: ignore
    basis = f.savings.basis  # type: ignore[union-attr]
    assert "x 1 instance" in basis and "x 3 instances" in basis
    assert "estimated at 0.35 x" in basis
    assert "1.212-1.624 $/h" in basis  # the range of the override types


def test_live_spot_price_used_and_a_moto_constant_ignored() -> None:
    live = run(*_spot_group(CurrentSpotPrices={"g5.2xlarge": "0.5"}))[("RS-002", "g")]
    assert live.savings.usd_month == pytest.approx((1.212 + 3 * 0.5) * 730)  # type: ignore
    assert "current spot g5.2xlarge" in live.savings.basis  # type: ignore[union-attr]
    tiny = run(*_spot_group(CurrentSpotPrices={"g5.2xlarge": "0.005"}))[("RS-002", "g")]
    assert tiny.savings.usd_month == pytest.approx((1.212 + 3 * 0.35 * 1.212) * 730)  # type: ignore
    assert "below 1% of on-demand" in tiny.savings.basis  # type: ignore[union-attr]


def _mixed_models(*overrides: str) -> list[Resource]:
    return [res("autoscaling.group", "g", DesiredCapacity=2, MinSize=0, MaxSize=4,
                MixedInstancesPolicy={
                    "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateName": "lt"},
                                       "Overrides": [{"InstanceType": t} for t in overrides]}}),
            res("ec2.launch_template", "lt", LaunchTemplateData={}),
            usage("g", ("m1", [gpu(0, 60, 70, 6000)])), coverage()]


def test_group_of_several_gpu_models_is_sized_on_the_strongest() -> None:
    """Utilization measured on a group whose override types hold different GPU models may come
    from the strongest of them: 60 % of an L4 (g6) is more work than 60 % of a T4 (g4dn), the
    cheapest override. The demand is taken on the strongest with a published figure, so no
    candidate too weak for it is recommended; a model without one is named in the note."""
    found = run(*_mixed_models("g4dn.xlarge", "g6.xlarge"), policies=("RS-001",))
    f = found[("RS-001", "g")]
    assert f.evidence["demand"]["gpu_model"] == "L4"
    assert f.evidence["demand"]["fp16_tflops_per_gpu"] == 121.0
    # 60 % of 121 TFLOPS is 72.6: a T4 (65) cannot do it, so nothing cheaper than a g4dn fits
    assert f.status.value == "PASS" and f.evidence["candidates"] == []
    assert "strongest, L4" in f.evidence["note"]
    unrated = run(*_mixed_models("g5.xlarge", "g6.xlarge"), policies=("RS-001",))
    g = unrated[("RS-001", "g")]
    assert g.evidence["demand"]["gpu_model"] == "L4" and "A10G has no published" in \
        g.evidence["note"]


def test_no_fp16_figure_compares_the_same_gpu_model_only() -> None:
    found = run(res("ec2.instance", "i", InstanceType="g5.12xlarge"),
                usage("i", ("i", [gpu(0, 30, 40, 6000), gpu(1, 0, 0, 0), gpu(2, 0, 0, 0),
                                  gpu(3, 0, 0, 0)])), coverage())
    f = found[("RS-001", "i")]
    assert f.evidence["recommended"] == "g5.4xlarge"  # a quarter of 48 vCPU / 192 GiB
    assert {c["gpu_model"] for c in f.evidence["candidates"]} == {"A10G"}
    assert "no published dense FP16" in f.evidence["note"]


def test_arch_vendor_and_family_limits() -> None:
    t4g = run(res("ec2.instance", "i", InstanceType="g5g.16xlarge"),
              usage("i", ("i", [gpu(0, 10, 20, 2000), gpu(1, 0, 0, 0)])), coverage())
    # stays on arm64, with half the host for one of two GPUs used
    assert t4g[("RS-001", "i")].evidence["recommended"] == "g5g.8xlarge"
    fam = run(res("ec2.instance", "i", InstanceType="p3.8xlarge"),
              usage("i", ("i", LIGHT_P3)), coverage(), policies=("RS-001",), families=["g6"])
    assert fam[("RS-001", "i")].evidence["recommended"] == "g6.4xlarge"


def test_amd_habana_and_qualcomm_types_are_not_judged() -> None:
    """g4ad (AMD Radeon Pro V520), dl1 (Habana Gaudi) and dl2q (Qualcomm AI 100) are in the
    catalogue with their vendors (and a type the catalogue lacks takes its family's vendor):
    no telemetry source reads them, so RS-003 does not call them compute without metrics, and
    RS-001/RS-002 do not judge them on a history given for them."""
    machines = [res("ec2.instance", f"i-{t}", declared=False, InstanceType=t, State="running")
                for t in ("g4ad.xlarge", "dl1.24xlarge", "dl2q.24xlarge")]
    assert run(*machines, coverage(declared=False)) == {}
    given = run(res("ec2.instance", "amd", InstanceType="g4ad.4xlarge"),
                usage("amd", ("amd", [gpu(0, 1, 2, 100)])), coverage())
    assert given == {}
    # a type of an NVIDIA family missing from the catalogue is still NVIDIA compute
    assert statuses(run(res("ec2.instance", "i", InstanceType="g9.xlarge"), coverage())) == {
        ("RS-003", "i"): "FAIL"}


def test_gpus_that_published_nothing_are_not_taken_for_idle() -> None:
    """A p4d.24xlarge has 8 GPUs: utilization of GPU 0 alone says nothing of the other seven
    (an exporter that read one device, a history that kept one), so neither "1 of 8 GPUs used"
    (RS-001) nor "idle" (RS-002) is known; a GPU whose points all fall outside the window is
    as good as absent. RS-003 still counts the hours."""
    one = run(res("ec2.instance", "i", InstanceType="p4d.24xlarge"),
              usage("i", ("i", [gpu(0, 30, 40, 20000)])), coverage())
    assert statuses(one) == {("RS-001", "i"): "UNKNOWN", ("RS-002", "i"): "UNKNOWN",
                             ("RS-003", "i"): "PASS"}
    assert "1 of its 8 GPUs" in one[("RS-001", "i")].message
    idle = run(res("ec2.instance", "i", InstanceType="p4d.24xlarge"),
               usage("i", ("i", [gpu(0, 1, 2, 100)] + [
                   {"Index": str(n), "Hours": 0, "MemUsedMaxMiB": None, "MemTotalMiB": None}
                   for n in range(1, 8)])), coverage())
    assert statuses(idle)[("RS-002", "i")] == "UNKNOWN"
    every = run(res("ec2.instance", "i", InstanceType="p4d.24xlarge"),
                usage("i", ("i", [gpu(0, 30, 40, 20000)] + [gpu(n, 0, 0, 0)
                                                             for n in range(1, 8)])),
                coverage())
    assert statuses(every)[("RS-001", "i")] == "FAIL"


@pytest.mark.parametrize(("mem", "total", "words"), [
    (35.0, 40.0, "total memory"),  # GiB written where MiB is meant
    (50000.0, 40960.0, "more memory than"),  # more than an A100 40GB holds
])
def test_memory_figures_that_do_not_fit_the_gpu_are_unknown(mem: float, total: float,
                                                             words: str) -> None:
    found = run(res("ec2.instance", "i", InstanceType="p4d.24xlarge"),
                usage("i", ("i", [gpu(n, 30 if n == 0 else 0, 40 if n == 0 else 0,
                                      mem if n == 0 else 0, total=total) for n in range(8)])),
                coverage())
    assert statuses(found) == {("RS-001", "i"): "UNKNOWN", ("RS-002", "i"): "UNKNOWN",
                               ("RS-003", "i"): "PASS"}
    assert words in found[("RS-001", "i")].message


def test_small_saving_passes_and_unknown_type_is_unknown() -> None:
    small = run(res("ec2.instance", "i", InstanceType="g4dn.2xlarge"),
                usage("i", ("i", [gpu(0, 30, 40, 2000)])), coverage(),
                policies=("RS-001",), min_saving_usd_month=500)
    assert statuses(small) == {("RS-001", "i"): "PASS"}
    unknown = run(res("ec2.instance", "i", InstanceType="g9.xlarge"),
                  usage("i", ("i", [gpu(0, 30, 40, 2000)])), coverage(), policies=("RS-001",))
    assert statuses(unknown) == {("RS-001", "i"): "UNKNOWN"}


def test_busy_machine_passes() -> None:
    found = run(res("ec2.instance", "i", InstanceType="g4dn.xlarge"),
                usage("i", ("i", [gpu(0, 90, 100, 15000)])), coverage())
    assert statuses(found) == {(p, "i"): "PASS" for p in RS}


# -- properties of the recommendation -----------------------------------------------------------

CATALOG = facts_catalog()
PRICED = sorted(t for t, s in CATALOG.instances.items()
                if s.price_usd_hour is not None and s.gpu_count and s.gpu_vendor == "nvidia")


@settings(max_examples=300, deadline=None)
@given(current=st.sampled_from(PRICED), used=st.integers(1, 8),
       mem=st.floats(0, 300_000), p95=st.floats(0, 100), mem_head=st.floats(0, 100),
       cpu_head=st.floats(0, 100))
def test_recommendation_never_costs_more_and_always_fits(current: str, used: int, mem: float,
                                                         p95: float, mem_head: float,
                                                         cpu_head: float) -> None:
    spec = CATALOG.instances[current]
    now = price(current, "us-east-1", catalog=CATALOG).usd_hour
    assert now is not None
    demand = Demand(used, mem, p95, p95)
    opts = Options(mem_head, cpu_head)
    found = recommend(spec, now, demand, CATALOG,
                      lambda t: price(t, "us-east-1", catalog=CATALOG), opts)
    prices = [c.price.usd_hour for c in found]
    assert prices == sorted(prices)
    for c in found:
        assert c.price.usd_hour is not None and c.price.usd_hour < now
        assert (c.spec.gpu_mem_gib or 0) * 1024 >= mem * (1 + mem_head / 100) - 1e-6
        assert c.spec.gpu_count is not None
        assert c.spec.gpu_count >= used or (c.spec.gpu_count < 1 and used == 1)
        assert c.projected_util_p95 * (1 + cpu_head / 100) <= 100 + 1e-6
        assert c.spec.arch == spec.arch and c.spec.gpu_vendor == spec.gpu_vendor
        assert c.spec.vcpu >= spec.vcpu * min(1.0, used / (spec.gpu_count or 1)) - 1e-6
        assert not (getattr(spec, "bf16", None) and getattr(c.spec, "bf16", None) is False)
        assert not (getattr(spec, "fp8", None) and getattr(c.spec, "fp8", None) is False)
        assert not isinstance(fits(spec, c.spec, demand, opts), str)
