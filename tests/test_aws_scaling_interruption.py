# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""ASG-003 and SPOT-003 on live resources: scaling policies, CloudWatch alarms, lifecycle hooks
and EventBridge rules read from moto by the collectors, evaluated by the engine."""

from __future__ import annotations

import json
from typing import Any

from scanner.aws.collect import collect
from scanner.aws.registry import DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import evaluate
from scanner.model import Finding, SourceResult
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    REGION,
    Fault,
    aws,
    aws_env,
    client,
    declared_only,
    session_maker,
)

SCOPE = f"{ACCOUNT}/{REGION}"
TERMINATING = "autoscaling:EC2_INSTANCE_TERMINATING"


def results(result: SourceResult, *policies: str) -> dict[tuple[str, str], Finding]:
    findings = evaluate(result.resources, policy_ids=policies, gaps=result.gaps)
    return {(f.policy_id, f.resource["id"]): f for f in findings}


def status(found: dict[tuple[str, str], Finding]) -> dict[tuple[str, str], str]:
    return {k: f.status.value for k, f in found.items()}


def estate() -> dict[str, Any]:
    """GPU and CPU groups: on-demand ones with scaling policies, spot ones with and without
    interruption handling on the group. (moto keeps scaling policies by name alone: each has
    its own name here.)"""
    ec2, asg = client("ec2"), client("autoscaling")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    for name, itype in (("gpu", "g5.2xlarge"), ("cpu", "m6i.large")):
        ec2.create_launch_template(LaunchTemplateName=name,
                                   LaunchTemplateData={"ImageId": AMI, "InstanceType": itype})

    def group(name: str, template: str, spot: bool = False, **extra: Any) -> None:
        if spot:
            extra["MixedInstancesPolicy"] = {
                "LaunchTemplate": {
                    "LaunchTemplateSpecification": {"LaunchTemplateName": template,
                                                    "Version": "$Default"},
                    "Overrides": [{"InstanceType": "g5.2xlarge"},
                                  {"InstanceType": "g6.2xlarge"}]},
                "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 30,
                                          "SpotAllocationStrategy": "price-capacity-optimized"}}
        else:
            extra["LaunchTemplate"] = {"LaunchTemplateName": template, "Version": "$Default"}
        asg.create_auto_scaling_group(AutoScalingGroupName=name, MinSize=0, MaxSize=4,
                                      DesiredCapacity=0, VPCZoneIdentifier=subnet, **extra)

    group("cpu-tracked", "gpu")
    asg.put_scaling_policy(AutoScalingGroupName="cpu-tracked", PolicyName="cpu-target",
                           PolicyType="TargetTrackingScaling", TargetTrackingConfiguration={
                               "PredefinedMetricSpecification": {
                                   "PredefinedMetricType": "ASGAverageCPUUtilization"},
                               "TargetValue": 60.0})
    group("gpu-tracked", "gpu")
    asg.put_scaling_policy(AutoScalingGroupName="gpu-tracked", PolicyName="gpu",
                           PolicyType="TargetTrackingScaling", TargetTrackingConfiguration={
                               "CustomizedMetricSpecification": {
                                   "MetricName": "nvidia_smi_utilization_gpu",
                                   "Namespace": "CWAgent", "Statistic": "Average",
                                   "Dimensions": [{"Name": "AutoScalingGroupName",
                                                   "Value": "gpu-tracked"}]},
                               "TargetValue": 70.0})
    group("cpu-alarmed", "gpu")
    asg.put_scaling_policy(AutoScalingGroupName="cpu-alarmed", PolicyName="out",
                                  PolicyType="StepScaling", AdjustmentType="ChangeInCapacity",
                                  StepAdjustments=[{"MetricIntervalLowerBound": 0.0,
                                                    "ScalingAdjustment": 1}])
    step = policy_arn("cpu-alarmed")
    client("cloudwatch").put_metric_alarm(
        AlarmName="cpu-alarmed-high", MetricName="CPUUtilization", Namespace="AWS/EC2",
        Statistic="Average", Period=60, EvaluationPeriods=2, Threshold=80.0,
        ComparisonOperator="GreaterThanThreshold", AlarmActions=[step],
        Dimensions=[{"Name": "AutoScalingGroupName", "Value": "cpu-alarmed"}])
    group("queue-alarmed", "gpu")
    asg.put_scaling_policy(AutoScalingGroupName="queue-alarmed", PolicyName="queue-out",
                                   PolicyType="StepScaling", AdjustmentType="ChangeInCapacity",
                                   StepAdjustments=[{"MetricIntervalLowerBound": 0.0,
                                                     "ScalingAdjustment": 2}])
    queue = policy_arn("queue-alarmed")
    client("cloudwatch").put_metric_alarm(
        AlarmName="jobs-backlog", MetricName="ApproximateNumberOfMessagesVisible",
        Namespace="AWS/SQS", Statistic="Maximum", Period=60, EvaluationPeriods=1,
        Threshold=10.0, ComparisonOperator="GreaterThanThreshold", AlarmActions=[queue],
        Dimensions=[{"Name": "QueueName", "Value": "jobs"}])
    group("web", "cpu")  # not GPU: no result, whatever it scales on
    asg.put_scaling_policy(AutoScalingGroupName="web", PolicyName="cpu",
                           PolicyType="TargetTrackingScaling", TargetTrackingConfiguration={
                               "PredefinedMetricSpecification": {
                                   "PredefinedMetricType": "ASGAverageCPUUtilization"},
                               "TargetValue": 50.0})
    group("spot-bare", "gpu", spot=True)
    group("spot-rebalance", "gpu", spot=True, CapacityRebalance=True)
    group("spot-hooked", "gpu", spot=True)
    asg.put_lifecycle_hook(AutoScalingGroupName="spot-hooked", LifecycleHookName="drain",
                           LifecycleTransition=TERMINATING, HeartbeatTimeout=120,
                           DefaultResult="CONTINUE")
    group("spot-launch-hook", "gpu", spot=True)
    asg.put_lifecycle_hook(AutoScalingGroupName="spot-launch-hook", LifecycleHookName="boot",
                           LifecycleTransition="autoscaling:EC2_INSTANCE_LAUNCHING")
    return {"subnet": subnet}


def policy_arn(group: str) -> str:
    policies = client("autoscaling").describe_policies(AutoScalingGroupName=group)
    return str(policies["ScalingPolicies"][0]["PolicyARN"])


NO_HANDLER = {
    ("SPOT-003", "spot-bare"): "FAIL",
    ("SPOT-003", "spot-rebalance"): "PASS",
    ("SPOT-003", "spot-hooked"): "PASS",
    ("SPOT-003", "spot-launch-hook"): "FAIL",  # a launch hook is no termination hook
}


def test_asg_003_and_spot_003_on_a_live_account(aws: None) -> None:
    estate()
    result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS)
    assert result.errors == []
    found = results(result, "ASG-003", "SPOT-003")
    assert status(found) == {
        ("ASG-003", "cpu-tracked"): "FAIL",
        ("ASG-003", "gpu-tracked"): "PASS",
        ("ASG-003", "cpu-alarmed"): "FAIL",  # its step policy's alarm watches CPUUtilization
        ("ASG-003", "queue-alarmed"): "PASS",
        **NO_HANDLER,
    }
    alarmed = found[("ASG-003", "cpu-alarmed")]
    assert alarmed.evidence["scalers"][0]["metrics"] == ["CPUUtilization"]
    assert "cpu-alarmed-high" in alarmed.message
    bare = found[("SPOT-003", "spot-bare")]
    assert bare.evidence["event_rules"] == [] and bare.evidence["capacity_rebalance"] is False
    assert bare.evidence["termination_hooks"] == []
    assert found[("SPOT-003", "spot-hooked")].evidence["termination_hooks"] == ["drain"]
    hooks = [r for r in result.resources if r.kind == "autoscaling.lifecycle_hook"]
    assert sorted(h.id for h in hooks) == ["spot-hooked/drain", "spot-launch-hook/boot"]


def test_an_event_rule_with_a_target_covers_the_account_and_region(aws: None) -> None:
    estate()
    events = client("events")
    pattern = {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning",
                                                       "EC2 Instance Rebalance Recommendation"]}
    events.put_rule(Name="spot-interruption", EventPattern=json.dumps(pattern))
    events.put_targets(Rule="spot-interruption", Targets=[
        {"Id": "nth", "Arn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:node-termination"}])
    # a rule without a target and a scheduled rule do not count; neither would a rule in
    # another region
    events.put_rule(Name="unrouted", EventPattern=json.dumps(pattern))
    events.put_rule(Name="nightly", ScheduleExpression="rate(1 day)")
    client("events", region="us-west-2").put_rule(Name="west", EventPattern=json.dumps(pattern))
    result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS)
    assert result.errors == []
    found = results(result, "SPOT-003")
    assert set(status(found).values()) == {"PASS"} and set(status(found)) == set(NO_HANDLER)
    bare = found[("SPOT-003", "spot-bare")]
    assert bare.evidence["event_rules"] == ["spot-interruption"]
    rule = next(r for r in result.resources if r.kind == "events.rule"
                and r.id == "spot-interruption")
    assert rule.attrs["Targets"] == [{"Id": "nth", "Arn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:"
                                      "node-termination"}]
    nightly = next(r for r in result.resources if r.id == "nightly")
    assert "Targets" not in nightly.attrs  # its targets were not read: it cannot match EC2


def test_denied_event_rules_are_an_error_on_spot_003_only(aws: None) -> None:
    estate()
    denied = Fault(400, json.dumps({"__type": "AccessDeniedException",
                                    "message": "injected by the test"}),
                   "application/x-amz-json-1.1")
    result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS,
                     session_maker=session_maker({"before-send.eventbridge.ListRules": denied}))
    found = results(result, "ASG-003", "SPOT-003")
    spot = {k: f for k, f in found.items() if k[0] == "SPOT-003"}
    assert spot and all(f.status.value == "ERROR" and "events:ListRules" in f.message
                        for f in spot.values())
    assert status(found)[("ASG-003", "cpu-tracked")] == "FAIL"  # unaffected


def test_denied_groups_leave_the_lifecycle_hooks_unread(aws: None) -> None:
    estate()
    denied = Fault(403, "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>"
                        "<Message>no</Message></Error><RequestId>t</RequestId></ErrorResponse>")
    result = collect(TargetSpec(regions=(REGION,)), kinds={"autoscaling.lifecycle_hook"},
                     session_maker=session_maker(
                         {"before-send.auto-scaling.DescribeAutoScalingGroups": denied}))
    assert any("autoscaling.lifecycle_hook" in g.kinds for g in result.gaps)
    assert not [r for r in result.resources if r.kind == "autoscaling.lifecycle_hook"]
