"""What a scaling policy scales on: the metrics of its target tracking or predictive
configuration, or of the CloudWatch alarms that trigger it (step and simple scaling), each
classed as CPU, GPU, queue depth or another load metric (ASG-003).

Source-agnostic: reads ``autoscaling.scaling_policy`` and ``cloudwatch.metric_alarm``
resources and joins them through the resource index (an alarm's ``AlarmActions`` name the
policies it triggers: a ``Ref`` in IaC, the policy ARN live).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scanner.model import Resource, Unknown
from scanner.model.graph import ResourceIndex, doubt

POLICY = "autoscaling.scaling_policy"
ALARM = "cloudwatch.metric_alarm"
# The classes of a metric; any class but CPU is a load signal that GPU work moves.
CPU, GPU, QUEUE, OTHER = "cpu", "gpu", "queue", "other"
# Predefined metrics (target tracking and predictive scaling) on CPU.
CPU_PREDEFINED = frozenset({"ASGAverageCPUUtilization", "ASGCPUUtilization",
                            "ASGTotalCPUUtilization"})
_GPU = re.compile(r"gpu|dcgm_|nvidia|neuron|accelerator", re.IGNORECASE)
_QUEUE = re.compile(r"ApproximateNumberOf|queue|backlog|pending|messages", re.IGNORECASE)
_CPU = re.compile(r"cpu", re.IGNORECASE)


def metric_class(name: str, namespace: str = "") -> str:
    """``DCGM_FI_DEV_GPU_UTIL`` -> gpu, ``ApproximateNumberOfMessagesVisible`` -> queue,
    ``CPUUtilization`` / ``ASGAverageCPUUtilization`` -> cpu, anything else -> other."""
    text = f"{namespace} {name}"
    if _GPU.search(text):
        return GPU
    if _QUEUE.search(name) or namespace == "AWS/SQS":
        return QUEUE
    if name in CPU_PREDEFINED or _CPU.search(name):
        return CPU
    return OTHER


@dataclass(frozen=True)
class Scaler:
    """One way a group scales: a scaling policy (or a misplaced configuration on the group),
    the metrics it reads (``metrics``: [(name, class)]), or why they are not known."""

    resource: Resource | None  # the scaling policy; None: the group's own configuration
    label: str
    kind: str  # "target tracking", "step scaling (alarm ...)", ...
    metrics: tuple[tuple[str, str], ...] = ()
    unknown: Unknown | None = None
    path: str = ""
    note: str = ""

    @property
    def classes(self) -> frozenset[str]:
        return frozenset(c for _n, c in self.metrics)

    @property
    def cpu_only(self) -> bool:
        return self.unknown is None and self.classes == {CPU}

    def row(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scaler": self.label, "type": self.kind,
                               "metrics": [n for n, _c in self.metrics],
                               "metric_classes": sorted(self.classes)}
        if self.unknown is not None:
            out["unknown"] = self.unknown.reason
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class _Joins:
    by_target: dict[int, list[Resource]] = field(default_factory=lambda: defaultdict(list))
    floating: list[Resource] = field(default_factory=list)  # the group is not known
    alarms_of: dict[int, list[Resource]] = field(default_factory=lambda: defaultdict(list))
    vague_alarms: list[Resource] = field(default_factory=list)  # actions not known


def _joins(index: ResourceIndex) -> _Joins:
    def build() -> _Joins:
        j = _Joins()
        for p in index.of_kind(POLICY):
            name = p.get("AutoScalingGroupName")
            hits = index.resolve_all(name, p.scope)
            hits = [h for h in hits if h.kind != POLICY]
            if hits:
                for h in hits:
                    j.by_target[id(h)].append(p)
            elif isinstance(name, Unknown) or name is None:
                j.floating.append(p)
        for a in index.of_kind(ALARM):
            actions = a.get("AlarmActions")
            if isinstance(actions, Unknown):
                j.vague_alarms.append(a)
                continue
            for action in actions if isinstance(actions, list) else ():
                if isinstance(action, Unknown):
                    j.vague_alarms.append(a)
                    continue
                for p in index.resolve_all(action, a.scope, POLICY):
                    j.alarms_of[id(p)].append(a)
        # live: a policy names its alarms too
        by_name = {(a.scope, a.name or a.id): a for a in index.of_kind(ALARM)}
        for p in index.of_kind(POLICY):
            for item in p.get("Alarms") or []:
                name = item.get("AlarmName") if isinstance(item, dict) else None
                hit = by_name.get((p.scope, name)) if isinstance(name, str) else None
                if hit is not None and hit not in j.alarms_of[id(p)]:
                    j.alarms_of[id(p)].append(hit)
        return j

    return index.memo("scaling_metrics:joins", build)


def policies_of(targets: Iterable[Resource], index: ResourceIndex) -> list[Resource]:
    """The scaling policies attached to any of these groups (or node groups)."""
    joins = _joins(index)
    out: list[Resource] = []
    for t in targets:
        for p in joins.by_target.get(id(t), []):
            if p not in out:
                out.append(p)
    return out


def floating_policies(scope: str, index: ResourceIndex) -> list[Resource]:
    """Scaling policies in ``scope`` whose group is not known (it may be any group there)."""
    return [p for p in _joins(index).floating if p.scope == scope]


def scaler(policy: Resource, index: ResourceIndex) -> Scaler | None:
    """What one scaling policy scales on; None when it does not scale (disabled, or predictive
    scaling in ForecastOnly mode, the default)."""
    if policy.get("Enabled") is False:
        return None
    label = policy.id
    why = doubt(policy)
    ptype = policy.get("PolicyType")
    if isinstance(ptype, Unknown):
        return Scaler(policy, label, "not known", unknown=Unknown(
            f"the policy type of {label} is not known ({ptype.reason})"))
    tracking = policy.get("TargetTrackingConfiguration")
    predictive = policy.get("PredictiveScalingConfiguration")
    if ptype == "TargetTrackingScaling" or (ptype is None and tracking is not None):
        found = target_tracking(tracking, policy, label, "TargetTrackingConfiguration")
    elif ptype == "PredictiveScaling":
        mode = predictive.get("Mode") if isinstance(predictive, dict) else None
        if mode == "ForecastOnly":  # the default: it forecasts, it does not scale
            return None
        if isinstance(mode, Unknown):
            return Scaler(policy, label, "predictive scaling", unknown=Unknown(
                f"whether {label} scales or only forecasts is not known ({mode.reason})"))
        if mode is None:
            return None if isinstance(predictive, dict) else Scaler(
                policy, label, "predictive scaling", unknown=Unknown(
                    f"the predictive scaling configuration of {label} is not known"))
        found = _predictive(predictive, policy, label)
    else:
        found = _alarmed(policy, index, label, str(ptype or "SimpleScaling"))
    if why is not None and found.unknown is None:
        return Scaler(policy, label, found.kind, found.metrics, why, found.path)
    return found


def target_tracking(config: Any, owner: Resource | None, label: str, path: str,
                    note: str = "") -> Scaler:
    kind = "target tracking"
    if isinstance(config, Unknown):
        return Scaler(owner, label, kind, unknown=Unknown(
            f"the target tracking configuration of {label} is not known ({config.reason})"),
            path=path, note=note)
    if not isinstance(config, dict):
        return Scaler(owner, label, kind, unknown=Unknown(
            f"{label} has no target tracking configuration"), path=path, note=note)
    pre = config.get("PredefinedMetricSpecification")
    if pre is not None:
        mtype = pre.get("PredefinedMetricType") if isinstance(pre, dict) else pre
        if isinstance(mtype, str):
            return Scaler(owner, label, kind, ((mtype, CPU if mtype in CPU_PREDEFINED
                                                else OTHER),),
                          path=f"{path}.PredefinedMetricSpecification", note=note)
        return Scaler(owner, label, kind, unknown=Unknown(
            f"the predefined metric of {label} is not known"
            + (f" ({mtype.reason})" if isinstance(mtype, Unknown) else "")),
            path=path, note=note)
    custom = config.get("CustomizedMetricSpecification")
    metrics = _metrics_of(custom, label)
    if isinstance(metrics, Unknown):
        return Scaler(owner, label, kind, unknown=metrics, path=path, note=note)
    return Scaler(owner, label, kind, metrics,
                  path=f"{path}.CustomizedMetricSpecification", note=note)


def _predictive(config: Any, policy: Resource, label: str) -> Scaler:
    kind = "predictive scaling"
    path = "PredictiveScalingConfiguration.MetricSpecifications"
    specs = config.get("MetricSpecifications") if isinstance(config, dict) else config
    if isinstance(specs, Unknown) or not isinstance(specs, list):
        return Scaler(policy, label, kind, unknown=Unknown(
            f"the metric specifications of {label} are not known"), path=path)
    found: list[tuple[str, str]] = []
    for spec in specs:
        if not isinstance(spec, dict):
            return Scaler(policy, label, kind, unknown=Unknown(
                f"a metric specification of {label} is not known"), path=path)
        for key in ("PredefinedMetricPairSpecification", "PredefinedScalingMetricSpecification"):
            block = spec.get(key)
            mtype = block.get("PredefinedMetricType") if isinstance(block, dict) else block
            if isinstance(mtype, Unknown):
                return Scaler(policy, label, kind, unknown=Unknown(
                    f"the predefined metric of {label} is not known"), path=path)
            if isinstance(mtype, str):
                found.append((mtype, CPU if mtype in CPU_PREDEFINED else OTHER))
                break
        else:
            custom = spec.get("CustomizedScalingMetricSpecification")
            queries = custom.get("MetricDataQueries") if isinstance(custom, dict) else custom
            metrics = _metrics_of({"Metrics": queries}, label)
            if isinstance(metrics, Unknown):
                return Scaler(policy, label, kind, unknown=metrics, path=path)
            found.extend(metrics)
    return Scaler(policy, label, kind, tuple(found), path=path)


def _alarmed(policy: Resource, index: ResourceIndex, label: str, ptype: str) -> Scaler:
    joins = _joins(index)
    kind = "step scaling" if ptype == "StepScaling" else "simple scaling"
    alarms = joins.alarms_of.get(id(policy), [])
    if not alarms:
        vague = [a for a in joins.vague_alarms if a.declared == policy.declared]
        reason = (f"no alarm in the scan triggers {label}"
                  + (f" (the actions of alarm {vague[0].id} are not known)" if vague else
                     ": the alarm that triggers it, and the metric it watches, are not known"))
        return Scaler(policy, label, kind, unknown=Unknown(reason))
    found: list[tuple[str, str]] = []
    names = []
    for alarm in alarms:
        names.append(alarm.name or alarm.id)
        why = doubt(alarm)
        if why is not None:
            return Scaler(policy, label, f"{kind} (alarm {alarm.id})", unknown=why)
        metrics = _metrics_of(alarm.attrs, f"alarm {alarm.id}")
        if isinstance(metrics, Unknown):
            return Scaler(policy, label, f"{kind} (alarm {alarm.id})", unknown=metrics)
        found.extend(metrics)
    return Scaler(policy, label, f"{kind} (alarm {', '.join(names)})", tuple(found))


def _metrics_of(spec: Any, label: str) -> tuple[tuple[str, str], ...] | Unknown:
    """The metrics of a CloudWatch metric specification: MetricName/Namespace, or metric math
    (``Metrics``: each query's metric, or the metric names its expression spells)."""
    if isinstance(spec, Unknown):
        return Unknown(f"the metric of {label} is not known ({spec.reason})")
    if not isinstance(spec, dict):
        return Unknown(f"{label} names no metric")
    name, namespace = spec.get("MetricName"), spec.get("Namespace")
    if isinstance(name, Unknown) or isinstance(namespace, Unknown):
        return Unknown(f"the metric of {label} is not known")
    if isinstance(name, str) and name:
        return ((name, metric_class(name, namespace if isinstance(namespace, str) else "")),)
    queries = spec.get("Metrics")
    if isinstance(queries, Unknown):
        return Unknown(f"the metric queries of {label} are not known ({queries.reason})")
    found: list[tuple[str, str]] = []
    for q in queries if isinstance(queries, list) else ():
        if not isinstance(q, dict):
            return Unknown(f"a metric query of {label} is not known")
        metric = q.get("MetricStat")
        metric = metric.get("Metric") if isinstance(metric, dict) else metric
        if isinstance(metric, Unknown):
            return Unknown(f"a metric of {label} is not known ({metric.reason})")
        if isinstance(metric, dict):
            m_name, m_ns = metric.get("MetricName"), metric.get("Namespace")
            if not isinstance(m_name, str):
                return Unknown(f"a metric of {label} is not known")
            found.append((m_name, metric_class(m_name, m_ns if isinstance(m_ns, str) else "")))
            continue
        expression = q.get("Expression")
        if isinstance(expression, Unknown):
            return Unknown(f"a metric expression of {label} is not known")
        if isinstance(expression, str):
            named = re.findall(r"MetricName\s*=\s*\\?[\"']?([A-Za-z0-9_.:/-]+)", expression)
            found.extend((n, metric_class(n)) for n in named)
    if not found:
        return Unknown(f"{label} names no metric gpuaudit can read")
    return tuple(found)
