"""Collective work keeps its interconnect: a 4-node p4d.24xlarge training group (EFA on every
network card, a cluster placement group) whose GPUs run at about a third is not sent to
g6.48xlarge (L4 on PCIe: no NVLink), whatever that would save; without any sign of collective
work the same move is a medium-risk saving, named as such."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.engine.evaluate import evaluate as evaluate_resources
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.telemetry.history import attach, load_utilization
from tests.rs_builders import coverage, gpu, group, member, usage
from tests.rs_builders import evaluate as run
from tests.rs_catalog import facts_catalog

CLUSTER = Path(__file__).resolve().parent / "fixtures" / "terraform" / "rs_training_cluster"
GROUP = "aws_autoscaling_group.trainers"
EIGHT = [gpu(g, 30, 35, 15000) for g in range(8)]
# light enough for L4s on compute (12 % of an A100 is 31 % of an L4) and on bandwidth (12 % of
# 1555 GB/s is 62 % of an L4's 300), with the host measured (300 GiB, 40 % of 96 vCPU): only
# the interconnect stands between this and g6.48xlarge
LIGHT = [gpu(g, 10, 12, 15000) for g in range(8)]
HOST = {"HostMemUsedMaxMiB": 300 * 1024, "CpuUtilMax": 40.0}


def test_multi_node_training_group_keeps_nvswitch_and_efa() -> None:
    result = load_terraform_dir([CLUSTER])
    assert result.errors == []
    attach(result, load_utilization([str(CLUSTER / "history.json")], 14))
    found = {(f.policy_id, f.resource["id"]): f
             for f in evaluate_resources(result.resources, policy_ids=("RS-001",),
                                         catalog=facts_catalog())}
    f = found[("RS-001", GROUP)]
    # the wrong move is gone: no g6.48xlarge, no saving
    assert f.savings is None
    assert f.evidence.get("recommended") is None
    assert all(c["instance_type"] != "g6.48xlarge" for c in f.evidence["candidates"])
    # the right outcome: nothing cheaper keeps NVSwitch and EFA for 8 busy GPUs per node
    assert f.status.value == "PASS" and "no cheaper type fits" in f.message
    demand = f.evidence["demand"]
    assert any("EFA network interface (aws_launch_template.p4d)" in s
               for s in demand["multi_node_work"])
    assert demand["gpus_used"] == 8


@pytest.mark.parametrize("sign", [
    {"Tags": None, "tags": {"workload": "distributed-training"}},
    {"LaunchTemplateData": {"NetworkInterfaces": [{"DeviceIndex": 0, "InterfaceType": "efa"}]}},
    {"LaunchTemplateData": {"NetworkInterfaces": [{"DeviceIndex": 0,
                                                   "InterfaceType": "efa-only"}]}},
    {"PlacementGroup": "pg-train"},  # as DescribeAutoScalingGroups gives it
    {"LaunchTemplateData": {"Placement": {"GroupName": "pg-train"}}},
])
def test_each_sign_of_collective_work_keeps_the_interconnect(sign: dict) -> None:
    tags = (sign.pop("tags", None) or {}) if "tags" in sign else {}
    sign.pop("Tags", None)
    resources = group("trainers", "p4d.24xlarge", 4, **sign)
    if tags:
        from dataclasses import replace
        resources[0] = replace(resources[0], tags=tags)
    found, _ = run(*resources, coverage(),
                   usage("trainers", *(member(f"m{n}", LIGHT, **HOST) for n in range(4))),
                   policies=("RS-001",))
    f = found[("RS-001", "trainers")]
    assert f.savings is None and f.status.value == "PASS"
    assert "g6.48xlarge" not in {c["instance_type"] for c in f.evidence["candidates"]}


def test_without_a_sign_the_lost_link_is_still_a_notice() -> None:
    """The negative: the same utilization on a lone p4d with no EFA, placement group or tag.
    Several GPUs busy at once is multi-GPU work: the move to PCIe L4s is found but is a high
    risk naming the NVSwitch it loses, so it is a notice, not a saving."""
    from tests.model_builders import res

    found, _ = run(res("ec2.instance", "solo", InstanceType="p4d.24xlarge"), coverage(),
                   usage("solo", member("solo", LIGHT, **HOST)), policies=("RS-001",))
    f = found[("RS-001", "solo")]
    assert f.status.value == "UNKNOWN" and f.savings is None
    assert "recommended" not in f.evidence
    move = f.evidence["possible_move"]
    assert move["text"] == "1 x p4d.24xlarge -> 1 x g6.48xlarge"


def test_hostile_tags_and_interfaces_are_bounded() -> None:
    """Thousands of tags and network interfaces: the signs are read from the first ones only
    (MAX_TAGS, 64 interfaces), quickly, and a sign among them still counts."""
    import time
    from dataclasses import replace

    tags = {f"k{i}": "x" * 1_000 for i in range(5_000)}
    tags = {"job": "nccl-allreduce", **tags}
    nis = [{"DeviceIndex": i, "InterfaceType": "interface"} for i in range(100_000)]
    resources = group("trainers", "p4d.24xlarge", 4,
                      LaunchTemplateData={"NetworkInterfaces": nis})
    resources[0] = replace(resources[0], tags=tags)
    start = time.perf_counter()
    found, _ = run(*resources, coverage(),
                   usage("trainers", *(member(f"m{n}", LIGHT, **HOST) for n in range(4))),
                   policies=("RS-001",))
    assert time.perf_counter() - start < 5
    f = found[("RS-001", "trainers")]
    assert f.evidence["demand"]["collective_work"] == ["tag or label job=nccl-allreduce"]
    assert f.savings is None
