"""A GPU group that scales on CPU only (ASG-003)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from policies.base import Context, Remediation, policy
from policies.scaling_metrics import (
    ALARM,
    POLICY,
    Scaler,
    floating_policies,
    policies_of,
    scaler,
    target_tracking,
)
from scanner.compute.ownership import groups_of
from scanner.model import Resource, Result, Severity, Status, Unknown

GROUP = "autoscaling.group"
NODEGROUP = "eks.nodegroup"
# The group's own TargetTrackingConfiguration: not a property CloudFormation accepts on a
# group (the reader says so in a notice); judged as the group's scaler all the same.
MISPLACED = ("TargetTrackingConfiguration is not a property of an Auto Scaling group "
             "(CloudFormation rejects it on AWS::AutoScaling::AutoScalingGroup; it belongs on "
             "an AWS::AutoScaling::ScalingPolicy): judged as the group's scaler all the same")


@policy(
    id="ASG-003",
    title="A GPU group scales on CPU only",
    severity=Severity.MEDIUM,
    category="cost",
    kinds=(GROUP, NODEGROUP),
    needs=("ec2.launch_template", "autoscaling.launch_configuration", POLICY, ALARM),
    description="GPU work saturates the GPU long before the CPU: a GPU Auto Scaling group "
                "(or the group of an EKS managed node group) whose every scaling policy "
                "watches CPU (target tracking on ASGAverageCPUUtilization, step or simple "
                "scaling triggered by an alarm on CPUUtilization, predictive scaling on CPU) "
                "never scales out under GPU load, or never in. Any policy on another metric "
                "passes: a GPU metric (DCGM_FI_DEV_GPU_UTIL, nvidia_smi_utilization_gpu, "
                "Container Insights node_gpu_utilization), queue depth (SQS "
                "ApproximateNumberOfMessagesVisible) or any other customized or predefined "
                "load metric. A group with no scaling policy gives no result (it is not "
                "scaled on CPU; a fixed size or an external scaler such as Karpenter or the "
                "cluster autoscaler is not judged here). A policy whose metric cannot be "
                "known (a variable, an alarm that is not in the scan) gives UNKNOWN; so does "
                "a group that a CPU policy naming a group not known (a name known only after "
                "apply) may belong to. A disabled policy does not count.",
    remediation=Remediation(
        text="Scale the group on a GPU metric (the CloudWatch agent's "
             "nvidia_smi_utilization_gpu or DCGM_FI_DEV_GPU_UTIL, published per group) or on "
             "the depth of the work queue, with target tracking on a customized metric; keep "
             "a CPU policy only beside it.",
        terraform='resource "aws_autoscaling_policy" "gpu" {\n'
                  '  name                   = "gpu-utilization"\n'
                  "  autoscaling_group_name = aws_autoscaling_group.gpu.name\n"
                  '  policy_type            = "TargetTrackingScaling"\n'
                  "  target_tracking_configuration {\n"
                  "    customized_metric_specification {\n"
                  '      metric_name = "nvidia_smi_utilization_gpu"\n'
                  '      namespace   = "CWAgent"\n'
                  '      statistic   = "Average"\n'
                  "      metric_dimension {\n"
                  '        name  = "AutoScalingGroupName"\n'
                  "        value = aws_autoscaling_group.gpu.name\n"
                  "      }\n    }\n    target_value = 70\n  }\n}",
        cloudformation="GpuScaling:\n  Type: AWS::AutoScaling::ScalingPolicy\n"
                       "  Properties:\n    AutoScalingGroupName: !Ref GpuGroup\n"
                       "    PolicyType: TargetTrackingScaling\n"
                       "    TargetTrackingConfiguration:\n"
                       "      CustomizedMetricSpecification:\n"
                       "        MetricName: nvidia_smi_utilization_gpu\n"
                       "        Namespace: CWAgent\n        Statistic: Average\n"
                       "        Dimensions:\n          - Name: AutoScalingGroupName\n"
                       "            Value: !Ref GpuGroup\n      TargetValue: 70"),
)
def asg_003(group: Resource, ctx: Context) -> Iterator[Result]:
    view = ctx.compute.of(group)
    if view is None or view.managed_by is not None or not view.active:
        return  # an EKS node group's group: judged at the node group
    gpu = view.types.gpu()
    if gpu is False:
        return
    index = ctx.index
    targets = [group, *(groups_of(group, index) if group.kind == NODEGROUP else [])]
    scalers: list[Scaler] = []
    own = group.get("TargetTrackingConfiguration") if group.kind == GROUP else None
    if own is not None:
        ctx.notice(group, MISPLACED)
        scalers.append(target_tracking(own, None, f"{group.id} (its own "
                                       "TargetTrackingConfiguration)",
                                       "TargetTrackingConfiguration", note=MISPLACED))
    for p in policies_of(targets, index):
        found = scaler(p, index)
        if found is not None:
            scalers.append(found)
    if not scalers:
        # not scaled by a scaling policy: nothing scales it on CPU, unless a policy whose group
        # is not known (a name known only after apply) is on CPU: it may be this group's
        floating = [p for p in floating_policies(group.scope, index)
                    if (f := scaler(p, index)) is not None and (f.cpu_only or f.unknown)]
        if floating:
            yield ctx.result(group, Status.UNKNOWN, f"scaling policy {floating[0].id} scales "
                             "on CPU (or on a metric that is not known) and names a group that "
                             "is not known: it may be this one's",
                             evidence={"scalers": [], "floating_policy": floating[0].id})
        return
    evidence: dict[str, Any] = {"scalers": [s.row() for s in scalers]}
    if own is not None:
        evidence["misplaced_property"] = MISPLACED
    others = [s for s in scalers if s.unknown is None and s.classes - {"cpu"}]
    if others:
        s = others[0]
        names = ", ".join(n for n, c in s.metrics if c != "cpu")
        yield ctx.result(group, Status.PASS, f"scales on {names} ({s.kind}, {s.label})",
                         path=_own(s), evidence=evidence)
        return
    unknown = [s for s in scalers if s.unknown is not None]
    if unknown:
        yield ctx.result(group, Status.UNKNOWN, unknown[0].unknown.reason,  # type: ignore[union-attr]
                         evidence=evidence)
        return
    cpu = scalers[0]
    message = (f"scales on CPU only: {cpu.kind} on {cpu.metrics[0][0]} ({cpu.label})"
               + (f" and {len(scalers) - 1} more CPU polic"
                  f"{'y' if len(scalers) == 2 else 'ies'}" if len(scalers) > 1 else "")
               + "; no policy on a GPU or queue metric")
    floating = [p for p in floating_policies(group.scope, index)
                if (f := scaler(p, index)) is not None and not f.cpu_only]
    if floating:
        yield ctx.result(group, Status.UNKNOWN, f"{message}, and scaling policy "
                         f"{floating[0].id} names a group that is not known (it may be this "
                         "one)", path=_own(cpu), evidence=evidence)
        return
    if isinstance(gpu, Unknown):
        yield ctx.result(group, Status.UNKNOWN, f"{message}, and whether it is GPU compute is "
                         f"not known ({gpu.reason})", path=_own(cpu), evidence=evidence)
        return
    yield ctx.result(group, Status.FAIL, message, path=_own(cpu), evidence=evidence)


def _own(s: Scaler) -> str:
    """The attribute path on the group itself (only its own misplaced configuration)."""
    return s.path if s.resource is None else ""
