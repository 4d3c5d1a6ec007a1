"""No instance counted twice, and two kinds of money never added together: one test per overlap
the README lists (a template and the groups that launch it, a group and its members, RS and
ASG-001 on the same capacity), through the engine and the report summary."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.catalog import default_catalog
from scanner.engine.evaluate import evaluate
from scanner.findings.report import build_report
from scanner.model import Resource
from scanner.telemetry import COVERAGE, TELEMETRY
from tests.model_builders import res


def report(resources: list[Resource], *policies: str) -> dict[str, Any]:
    findings = evaluate(resources, policy_ids=policies)
    return build_report(findings, errors=[], notices=[], inputs={"paths": ["x"]},
                        catalog=default_catalog(), resources=len(resources), deterministic=True)


def money(doc: dict[str, Any]) -> list[tuple[str, str, float, bool]]:
    return sorted((f["policy_id"], f["savings"]["class"], f["savings"]["usd_month"],
                   f["savings"].get("counted", True))
                  for f in doc["findings"] if f["savings"])


def idle_usage(target: str) -> Resource:
    return res(TELEMETRY, f"telemetry:{target}", Target=target, Source="history", Hours=336,
               Members=[{"Id": target, "Hours": 336, "Gpus": [
                   {"Index": "0", "Hours": 336, "UtilP50": 0, "UtilP95": 0, "UtilMax": 1,
                    "MemUsedMaxMiB": 200, "MemTotalMiB": 22888}]}])


def ondemand_group(name: str = "g") -> Resource:
    return res("autoscaling.group", name, DesiredCapacity=4, MinSize=4, MaxSize=8,
               MixedInstancesPolicy={
                   "InstancesDistribution": {"OnDemandBaseCapacity": 0,
                                             "OnDemandPercentageAboveBaseCapacity": 100},
                   "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateName": "lt"},
                                      "Overrides": [{"InstanceType": "g5.2xlarge"}]}})


def test_rs_and_asg_001_on_the_same_group_count_once() -> None:
    doc = report([ondemand_group(), res("ec2.launch_template", "lt", LaunchTemplateData={}),
                  idle_usage("g"), res(COVERAGE, "c")], "RS-002", "ASG-001")
    full = 4 * 1.212 * 730  # RS-002: the whole group is idle
    mix = 3 * (1.212 - 0.35 * 1.212) * 730  # ASG-001: 3 of 4 units to spot (1 = 40% of 4)
    assert money(doc) == [("ASG-001", "saving", round(mix, 2), False),
                          ("RS-002", "saving", round(full, 2), True)]
    assert doc["summary"]["savings_usd_month"] == round(full, 2)
    assert doc["summary"]["overlapping_not_counted"] == 1


def spot_template(name: str = "lt") -> Resource:
    return res("ec2.launch_template", name, LaunchTemplateName=name, LaunchTemplateData={
        "InstanceType": "g5.xlarge",
        "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "1.0"}}})


def template_group(name: str, desired: int, maximum: int, template: str = "lt") -> Resource:
    return res("autoscaling.group", name, DesiredCapacity=desired, MinSize=0, MaxSize=maximum,
               LaunchTemplate={"LaunchTemplateName": template, "Version": "$Latest"})


OVER = (1.0 - 0.7 * 1.006) * 730  # one g5.xlarge a month over the cap


def test_a_template_s_exposure_is_its_consumers_capacity_counted_once() -> None:
    lt = spot_template()
    groups = [template_group("a", 3, 8), template_group("b", 0, 1)]  # b: MaxSize, desired 0
    instance = res("ec2.instance", "i", LaunchTemplate={"LaunchTemplateName": "lt"})
    doc = report([lt, *groups, instance], "SPOT-001")
    # the exposure sits on the template, at the capacity of everything that launches it; the
    # groups and the instance take their market from it and carry no amount of their own
    assert money(doc) == [("SPOT-001", "exposure", round(5 * OVER, 2), True)]
    (found,) = [f for f in doc["findings"] if f["savings"]]
    basis = found["savings"]["basis"]
    assert "x 5 instances" in basis and "per instance" not in basis
    assert "a: DesiredCapacity 3" in basis and "b: MaxSize 1 (desired is 0)" in basis
    assert "i: 1 instance" in basis
    assert sorted(k.rsplit("/", 1)[-1] for k in found["savings"]["capacity"]) == ["a", "b", "i"]
    assert doc["summary"]["exposure_usd_month"] == round(5 * OVER, 2)
    assert doc["summary"]["savings_usd_month"] == 0


def test_a_template_nothing_launches_has_a_finding_and_no_money() -> None:
    doc = report([spot_template()], "SPOT-001")
    (found,) = doc["findings"]
    assert found["status"] == "FAIL" and found["savings"] is None
    assert "no group or instance in the scan launches it" in found["message"]
    assert doc["summary"]["exposure_usd_month"] == 0


def test_a_group_with_its_own_spot_price_is_not_counted_on_its_template() -> None:
    """A group whose mixed instances policy sets the spot share and max price is judged on
    them; its template (which must not request spot then) adds nothing."""
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceType": "g5.xlarge"})
    group = res("autoscaling.group", "g", DesiredCapacity=2, MinSize=2, MaxSize=4,
                MixedInstancesPolicy={
                    "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 0,
                                              "SpotMaxPrice": "1.0"},
                    "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateName": "lt"},
                                       "Overrides": [{"InstanceType": "g5.xlarge"}]}})
    doc = report([lt, group], "SPOT-001")
    assert money(doc) == [("SPOT-001", "exposure", round(2 * OVER, 2), True)]
    assert "2 spot of DesiredCapacity 2" in doc["findings"][0]["savings"]["basis"]


def test_a_group_and_its_members_count_once() -> None:
    members = [res("ec2.instance", f"i-{n}", declared=False, InstanceType="g5.2xlarge",
                   State="running", AutoScalingGroupName="g") for n in (1, 2)]
    group = res("autoscaling.group", "g", declared=False, DesiredCapacity=2, MinSize=2,
                MaxSize=2, LaunchTemplate={"LaunchTemplateName": "lt"})
    lt = res("ec2.launch_template", "lt", declared=False,
             LaunchTemplateData={"InstanceType": "g5.2xlarge"})
    doc = report([*members, group, lt, idle_usage("i-1"), idle_usage("i-2"),
                  res(COVERAGE, "c", declared=False)], "RS-002")
    assert [(f["resource"]["id"], f["status"]) for f in doc["findings"]] == [("g", "FAIL")]
    assert doc["summary"]["savings_usd_month"] == round(2 * 1.212 * 730, 2)


def test_a_member_s_own_amount_is_its_group_s_capacity() -> None:
    from scanner.model.graph import ResourceIndex
    from scanner.pricing.overlap import capacity_of

    member = res("ec2.instance", "i-1", declared=False, AutoScalingGroupName="g")
    group = res("autoscaling.group", "g", declared=False)
    alone = res("ec2.instance", "i-2", declared=False)
    index = ResourceIndex([member, group, alone])
    assert capacity_of(member, index) == capacity_of(group, index)
    assert capacity_of(alone, index) != capacity_of(group, index)


def test_saving_and_exposure_are_never_added(tmp_path: Any) -> None:
    from scanner.pricing.overlap import totals

    findings = [
        {"id": "a", "status": "FAIL", "resource": {"id": "x", "kind": "k"},
         "savings": {"usd_month": 10.0, "kind": "overspend_cap", "capacity": ["c1"]}},
        {"id": "b", "status": "FAIL", "resource": {"id": "x", "kind": "k"},
         "savings": {"usd_month": 30.0, "kind": "idle", "capacity": ["c1"]}},
        {"id": "c", "status": "SUPPRESSED", "resource": {"id": "y", "kind": "k"},
         "savings": {"usd_month": 99.0, "kind": "idle", "capacity": ["c2"]}},
    ]
    got = totals(findings)
    assert got == {"savings_usd_month": 30.0, "exposure_usd_month": 10.0,
                   "overlapping_not_counted": 0}
    assert all("counted" not in f["savings"] for f in findings)


@pytest.mark.parametrize("order", [0, 1])
def test_the_larger_amount_is_counted_whatever_the_order(order: int) -> None:
    from scanner.pricing.overlap import totals

    small = {"id": "s", "status": "FAIL", "resource": {"id": "g", "kind": "k"},
             "savings": {"usd_month": 5.0, "kind": "spot_mix", "capacity": ["g"]}}
    big = {"id": "b", "status": "FAIL", "resource": {"id": "g", "kind": "k"},
           "savings": {"usd_month": 50.0, "kind": "idle", "capacity": ["g"]}}
    got = totals([small, big] if order else [big, small])
    assert got["savings_usd_month"] == 50.0
    assert small["savings"]["counted"] is False and "counted" not in big["savings"]


def test_a_templates_capacity_is_its_users_in_its_own_scope() -> None:
    """The users of every template are found in one pass (scanner.pricing.overlap): each
    template gets the groups, node groups, Batch environments and instances of its own scope
    that launch it, and nothing of another scope that names a template alike."""
    from scanner.model.graph import ResourceIndex
    from scanner.pricing.overlap import capacity_of

    def scope(name: str) -> list[Resource]:
        return [res("ec2.launch_template", "lt", scope=name),
                res("ec2.launch_template", "other", scope=name),
                res("autoscaling.group", "asg", scope=name,
                    MixedInstancesPolicy={"LaunchTemplate": {"LaunchTemplateSpecification": {
                        "LaunchTemplateId": "lt"}}}),
                res("eks.nodegroup", "ng", scope=name, LaunchTemplate={"Id": "lt"}),
                res("batch.compute_environment", "env", scope=name,
                    ComputeResources={"LaunchTemplate": {"LaunchTemplateName": "lt"}}),
                res("ec2.instance", "i", scope=name, LaunchTemplate={"LaunchTemplateId": "other"})]

    index = ResourceIndex(scope("a") + scope("b"))
    lt_a, other_a = index.resources[0], index.resources[1]
    assert capacity_of(lt_a, index) == ("a/autoscaling.group/asg",
                                        "a/batch.compute_environment/env", "a/eks.nodegroup/ng")
    assert capacity_of(other_a, index) == ("a/ec2.instance/i",)
    lonely = ResourceIndex([res("ec2.launch_template", "lt", scope="c")])
    assert capacity_of(lonely.resources[0], lonely) == ("c/ec2.launch_template/lt",)


def test_a_consumer_that_may_not_exist_or_counts_vcpus_leaves_the_count_unknown() -> None:
    from dataclasses import replace

    from scanner.model import Unknown

    lt = spot_template()
    maybe = res("autoscaling.group", "maybe", DesiredCapacity=2, MinSize=0, MaxSize=4,
                LaunchTemplate={"LaunchTemplateName": "lt"})
    maybe = replace(maybe, exists=Unknown("count = var.enabled"))
    doc = report([lt, maybe, template_group("a", 3, 8)], "SPOT-001")
    (found,) = [f for f in doc["findings"] if f["savings"]]
    assert "per instance" in found["savings"]["basis"]
    assert "maybe may not exist" in found["savings"]["basis"]
    assert "a: DesiredCapacity 3" in found["savings"]["basis"]


def test_an_instance_with_its_own_spot_price_is_not_the_template_s_capacity() -> None:
    lt = spot_template()
    own = res("ec2.instance", "own", LaunchTemplate={"LaunchTemplateName": "lt"},
              InstanceType="g5.xlarge", InstanceMarketOptions={
                  "MarketType": "spot", "SpotOptions": {"MaxPrice": "1.0"}})
    doc = report([lt, template_group("a", 2, 4), own], "SPOT-001")
    # two amounts about different capacity: both counted
    assert money(doc) == [("SPOT-001", "exposure", round(OVER, 2), True),
                          ("SPOT-001", "exposure", round(2 * OVER, 2), True)]
    assert doc["summary"]["exposure_usd_month"] == round(3 * OVER, 2)


def test_a_template_with_many_consumers_names_twenty_and_counts_all() -> None:
    from scanner.compute.extractors.launch_template import MAX_CONSUMERS_LISTED

    groups = [template_group(f"g{i:03}", 1, 2) for i in range(250)]
    doc = report([spot_template(), *groups], "SPOT-001")
    (found,) = [f for f in doc["findings"] if f["savings"]]
    basis = found["savings"]["basis"]
    assert "x 250 instances" in basis
    assert f"{250 - MAX_CONSUMERS_LISTED} more" in basis and "g249" not in basis
    assert found["savings"]["usd_month"] == round(250 * OVER, 2)
