# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""COST-001: reserved / Savings Plans coverage of the GPU families against base / peak x 0.8.
Live against moto (Auto Scaling groups, their GroupDesiredCapacity in CloudWatch); Cost
Explorer's two coverage calls, which moto lacks, answered by botocore's Stubber."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import botocore.session
import pytest
from botocore.stub import Stubber

from scanner.aws.collect import collect
from scanner.aws.iam_policy import policy_document
from scanner.aws.registry import DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import run
from scanner.kinds.commitments import CAPACITY, COVERAGE
from scanner.model import Finding, SourceResult
from tests.aws_helpers import AMI, REGION, aws, aws_env, client  # noqa: F401 - fixtures

END = dt.datetime(2026, 1, 15, tzinfo=dt.UTC)
KINDS = DEFAULT_KINDS | {COVERAGE, CAPACITY}


@pytest.fixture(autouse=True)
def _end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUAUDIT_TELEMETRY_END", END.isoformat().replace("+00:00", "Z"))


def gpu_group(name: str, itype: str = "g5.xlarge") -> None:
    lt = client("ec2").create_launch_template(
        LaunchTemplateName=f"lt-{name}",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": itype})["LaunchTemplate"]
    client("autoscaling").create_auto_scaling_group(
        AutoScalingGroupName=name, MinSize=0, MaxSize=20, DesiredCapacity=2,
        LaunchTemplate={"LaunchTemplateId": lt["LaunchTemplateId"]},
        AvailabilityZones=[f"{REGION}a"])


def desired(name: str, values: list[float]) -> None:
    """One datapoint an hour, the last one an hour before the end of the window."""
    cw = client("cloudwatch")
    for i, v in enumerate(values):
        at = END - dt.timedelta(hours=len(values) - i, minutes=-30)
        cw.put_metric_data(Namespace="AWS/AutoScaling", MetricData=[{
            "MetricName": "GroupDesiredCapacity", "Value": v, "Timestamp": at,
            "Dimensions": [{"Name": "AutoScalingGroupName", "Value": name}]}])


def reservation(itype: str, reserved: float, total: float) -> dict[str, Any]:
    return {"CoveragesByTime": [{
        "TimePeriod": {"Start": "2026-01-01", "End": "2026-01-15"},
        "Groups": [{"Attributes": {"instanceType": itype}, "Coverage": {"CoverageHours": {
            "OnDemandHours": str(total - reserved), "ReservedHours": str(reserved),
            "TotalRunningHours": str(total), "CoverageHoursPercentage": "0"}}}]}]}


def plans(family: str, covered: float, total: float) -> dict[str, Any]:
    return {"SavingsPlansCoverages": [{
        "Attributes": {"INSTANCE_FAMILY": family},
        "Coverage": {"SpendCoveredBySavingsPlans": str(covered),
                     "OnDemandCost": str(total - covered), "TotalCost": str(total),
                     "CoveragePercentage": "0"},
        "TimePeriod": {"Start": "2026-01-01", "End": "2026-01-15"}}]}


ANSWERS: list[Callable[[Stubber], None]] = []  # the current test's (client classes are shared)


STUBS: list[Stubber] = []


class StubbedSession(botocore.session.Session):
    """A session whose Cost Explorer clients answer from a Stubber; every other client is
    moto's."""

    def create_client(self, service_name: str, *args: Any, **kwargs: Any) -> Any:
        made = super().create_client(service_name, *args, **kwargs)
        if service_name == "ce":
            stub = Stubber(made)
            ANSWERS[-1](stub)
            stub.activate()
            STUBS.append(stub)
        return made


def stubbed(answers: Callable[[Stubber], None]) -> Callable[[str | None], Any]:
    ANSWERS[:] = [answers]
    STUBS.clear()
    return lambda profile: StubbedSession(profile=profile)


def audit(answers: Callable[[Stubber], None]) -> SourceResult:
    return collect(TargetSpec(regions=(REGION,)), kinds=KINDS, session_maker=stubbed(answers))


def cost_001(result: SourceResult) -> list[Finding]:
    return run(result.resources, policy_ids=["COST-001"], gaps=result.gaps).findings


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, [(f.status.value, f.resource["id"]) for f in findings]
    return findings[0]


def answering(ri: dict[str, Any], sp: dict[str, Any]) -> Callable[[Stubber], None]:
    def add(stub: Stubber) -> None:
        stub.add_response("get_reservation_coverage", ri)
        stub.add_response("get_savings_plans_coverage", sp)
    return add


def test_live_uncovered_steady_base_fails_without_an_invented_saving(aws: None) -> None:
    gpu_group("train")
    desired("train", [4, 4, 6, 10, 8, 4])  # base 4, peak 10: 32 % recommended
    f = only(cost_001(audit(answering(reservation("g5.xlarge", 10, 100),
                                      plans("g5", 0, 500)))))
    assert f.status.value == "FAIL", f.message
    assert f.resource["id"].startswith("commitments:")
    fam = f.evidence["families"][0]
    assert (fam["family"], fam["base"], fam["peak"], fam["hours"]) == ("g5", 4, 10, 6)
    assert fam["recommended_pct"] == 32.0 and fam["current_pct"] == 10.0
    assert fam["uncovered_base"] == 2.2
    assert fam["saving"] is None and "no committed rate" in fam["saving_why_none"]
    assert fam["rates"]["committed_usd_hour"] is None
    assert fam["rates"]["on_demand_usd_hour"] and fam["rates"]["on_demand_source"]
    assert f.savings is None  # no committed rate known: no saving at all
    assert STUBS  # Cost Explorer answered from the Stubber, once per account


def test_live_covered_family_passes(aws: None) -> None:
    gpu_group("serve")
    desired("serve", [5, 5, 5, 5])  # steady: 80 % recommended
    f = only(cost_001(audit(answering(reservation("g5.2xlarge", 50, 100),
                                      plans("g5", 300, 1000)))))
    assert f.status.value == "PASS", f.message
    assert f.evidence["families"][0]["current_pct"] == 80.0


def test_live_no_capacity_history_is_unknown(aws: None) -> None:
    gpu_group("quiet")  # metrics collection never enabled: no datapoints
    f = only(cost_001(audit(answering(reservation("g5.xlarge", 0, 100), plans("g5", 0, 1)))))
    assert f.status.value == "UNKNOWN"
    assert "no GroupDesiredCapacity history" in f.message


def test_live_no_usage_in_cost_explorer_is_unknown_not_zero(aws: None) -> None:
    gpu_group("new")
    desired("new", [2, 3])
    f = only(cost_001(audit(answering({"CoveragesByTime": []},
                                      {"SavingsPlansCoverages": []}))))
    assert f.status.value == "UNKNOWN" and "records none of its usage" in f.message


def test_live_denied_cost_explorer_is_error_for_the_account(aws: None) -> None:
    gpu_group("train")
    desired("train", [4, 10])

    def denied(stub: Stubber) -> None:
        stub.add_client_error("get_reservation_coverage", "AccessDeniedException",
                              "not authorized to perform ce:GetReservationCoverage",
                              http_status_code=400)

    findings = cost_001(audit(denied))
    assert findings and {f.status.value for f in findings} == {"ERROR"}


def test_live_no_gpu_group_gives_no_verdict(aws: None) -> None:
    gpu_group("cpu", "m5.large")
    desired("cpu", [3, 3])
    assert cost_001(audit(answering(reservation("m5.large", 0, 10), plans("m5", 0, 1)))) == []


def test_iam_policy_grows_by_the_two_coverage_reads() -> None:
    reads = policy_document()["Statement"][0]["Action"]
    assert [a for a in reads if a.startswith("ce:")] == [
        "ce:GetReservationCoverage", "ce:GetSavingsPlansCoverage"]
    assert policy_document({COVERAGE})["Statement"][0]["Action"] == [
        "ce:GetReservationCoverage", "ce:GetSavingsPlansCoverage"]
    assert policy_document({CAPACITY})["Statement"][0]["Action"] == ["cloudwatch:GetMetricData"]


def gpu_node_group(name: str, itype: str = "g5.xlarge") -> str:
    """An EKS managed node group of ``itype``; returns the name of its Auto Scaling group as
    DescribeNodegroup gives it (moto names one, ``eks-<uuid>``, without creating the group in
    its Auto Scaling backend)."""
    eks = client("eks")
    subnet = client("ec2").describe_subnets()["Subnets"][0]["SubnetId"]
    role = "arn:aws:iam::123456789012:role/eks-node"
    if "ml" not in eks.list_clusters()["clusters"]:
        eks.create_cluster(name="ml", roleArn=role, resourcesVpcConfig={"subnetIds": [subnet]})
    group = eks.create_nodegroup(
        clusterName="ml", nodegroupName=name, nodeRole=role, subnets=[subnet],
        instanceTypes=[itype], scalingConfig={"minSize": 0, "maxSize": 20, "desiredSize": 2},
    )["nodegroup"]
    [asg] = group["resources"]["autoScalingGroups"]
    return str(asg["name"])


def test_live_node_group_base_and_peak_come_from_its_auto_scaling_group(aws: None) -> None:
    asg = gpu_node_group("gpu")
    desired(asg, [3, 3, 5, 9, 6, 3])  # base 3, peak 9: 26.7 % recommended
    f = only(cost_001(audit(answering(reservation("g5.xlarge", 0, 100), plans("g5", 0, 500)))))
    assert f.status.value == "FAIL", f.message
    [fam] = f.evidence["families"]
    assert (fam["family"], fam["base"], fam["peak"], fam["hours"]) == ("g5", 3, 9, 6)
    assert fam["recommended_pct"] == 26.7 and fam["current_pct"] == 0.0
    assert fam["groups"] == ["ml/gpu"]  # the node group, judged by its group's history
    assert f.savings is None  # no committed rate: no saving invented


def test_live_node_group_and_its_auto_scaling_group_count_once(aws: None) -> None:
    """As AWS has it (moto does not create it): the node group's Auto Scaling group exists
    too, tagged with its node group; its capacity is the node group's, not added again."""
    asg = gpu_node_group("gpu")
    lt = client("ec2").create_launch_template(
        LaunchTemplateName="lt-eks-gpu",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "g5.xlarge"})["LaunchTemplate"]
    client("autoscaling").create_auto_scaling_group(
        AutoScalingGroupName=asg, MinSize=0, MaxSize=20, DesiredCapacity=2,
        LaunchTemplate={"LaunchTemplateId": lt["LaunchTemplateId"]},
        AvailabilityZones=[f"{REGION}a"],
        Tags=[{"Key": "eks:nodegroup-name", "Value": "gpu", "PropagateAtLaunch": True},
              {"Key": "eks:cluster-name", "Value": "ml", "PropagateAtLaunch": True}])
    desired(asg, [3, 3, 5, 9, 6, 3])
    f = only(cost_001(audit(answering(reservation("g5.xlarge", 0, 100), plans("g5", 0, 500)))))
    [fam] = f.evidence["families"]
    assert (fam["base"], fam["peak"]) == (3, 9)  # not 6 / 18: one group's history, once
    assert fam["groups"] == ["ml/gpu"]


def test_live_node_group_without_history_is_unknown_naming_its_group(aws: None) -> None:
    asg = gpu_node_group("gpu")  # no GroupDesiredCapacity datapoints for its group
    f = only(cost_001(audit(answering(reservation("g5.xlarge", 0, 100), plans("g5", 0, 500)))))
    assert f.status.value == "UNKNOWN", f.message
    assert asg in f.message and "no GroupDesiredCapacity history" in f.message
