"""Scaling policies, CloudWatch alarms, lifecycle hooks and EventBridge rules and targets
(ASG-003, SPOT-003)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.translate.coerce import (
    Attrs,
    _blocks,
    _bool,
    _is_map,
    _one,
    _pairs,
    _put,
    _s,
    _sub,
)

_HOOK = (
    ("name", "LifecycleHookName"),
    ("lifecycle_hook_name", "LifecycleHookName"),
    ("lifecycle_transition", "LifecycleTransition"),
    ("default_result", "DefaultResult"),
    ("heartbeat_timeout", "HeartbeatTimeout"),
    ("notification_target_arn", "NotificationTargetARN"),
    ("role_arn", "RoleARN"),
)


def _lifecycle_hooks(value: Any) -> Any:
    """``initial_lifecycle_hook`` blocks of an ``aws_autoscaling_group``."""
    blocks = _blocks(value)
    if blocks is None or isinstance(blocks, Unknown):
        return blocks
    return [b if isinstance(b, Unknown) else _pairs({}, b, _HOOK) for b in blocks] or None


def _lifecycle_hook(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("autoscaling_group_name", "AutoScalingGroupName"), *_HOOK[1:]))
    name = _s(v.get("name"))
    _put(a, "LifecycleHookName", name)
    return "autoscaling.lifecycle_hook", a, name, ()


def _dimensions(value: Any) -> Any:
    """A ``dimensions`` map (alarms, metric_stat) or ``metric_dimension`` / ``dimensions``
    blocks ({name, value}) -> CloudWatch's [{Name, Value}]."""
    if value is None or isinstance(value, Unknown | Ref):
        return value if not isinstance(value, Ref) else Unknown(f"dimensions from {value}")
    if _is_map(value):
        return [{"Name": k, "Value": d} for k, d in value.items()] or None
    blocks = _blocks(value)
    if not isinstance(blocks, list):
        return blocks
    return [b if isinstance(b, Unknown) else _pairs({}, b, (("name", "Name"), ("value", "Value")))
            for b in blocks] or None


def _metric_queries(value: Any, key: str = "metric_stat") -> Any:
    """``metrics`` / ``metric_query`` / ``metric_data_queries`` blocks -> CloudWatch's metric
    data queries ({Id, Expression, MetricStat: {Metric: {MetricName, Namespace, Dimensions},
    Stat}}). An alarm's ``metric_query`` holds its ``metric`` block directly."""
    blocks = _blocks(value)
    if blocks is None or isinstance(blocks, Unknown):
        return blocks
    out: list[Any] = []
    for b in blocks:
        if isinstance(b, Unknown):
            out.append(b)
            continue
        q = _pairs({}, b, (("id", "Id"), ("expression", "Expression"), ("label", "Label"),
                           ("return_data", "ReturnData")))
        stat = _one(b.get(key)) if key else b
        if isinstance(stat, Unknown):
            q["MetricStat"] = stat
        elif stat is not None:
            metric = _one(stat.get("metric")) if key else _one(b.get("metric"))
            ms: Attrs = _pairs({}, stat if key else (metric or {}),
                               (("stat", "Stat"), ("unit", "Unit")))
            if isinstance(metric, Unknown):
                ms["Metric"] = metric
            elif metric is not None:
                m = _pairs({}, metric, (("metric_name", "MetricName"),
                                        ("namespace", "Namespace")))
                _put(m, "Dimensions", _dimensions(metric.get("dimensions")))
                ms["Metric"] = m
            if ms:
                q["MetricStat"] = ms
        out.append(q)
    return out or None


def _target_tracking(value: Any) -> Any:
    block = _one(value)
    if block is None or isinstance(block, Unknown):
        return block
    out = _pairs({}, block, (("target_value", "TargetValue"),
                             ("disable_scale_in", "DisableScaleIn")))
    _put(out, "PredefinedMetricSpecification", _sub(
        block.get("predefined_metric_specification"),
        (("predefined_metric_type", "PredefinedMetricType"), ("resource_label", "ResourceLabel"))))
    custom = _one(block.get("customized_metric_specification"))
    if isinstance(custom, Unknown):
        out["CustomizedMetricSpecification"] = custom
    elif custom is not None:
        c = _pairs({}, custom, (("metric_name", "MetricName"), ("namespace", "Namespace"),
                                ("statistic", "Statistic"), ("unit", "Unit")))
        _put(c, "Dimensions", _dimensions(custom.get("metric_dimension")))
        _put(c, "Metrics", _metric_queries(custom.get("metrics")))
        out["CustomizedMetricSpecification"] = c
    return out or None


def _predictive_scaling(value: Any) -> Any:
    block = _one(value)
    if block is None or isinstance(block, Unknown):
        return block
    out = _pairs({}, block, (("mode", "Mode"),))
    specs = _blocks(block.get("metric_specification"))
    if isinstance(specs, Unknown):
        out["MetricSpecifications"] = specs
    elif specs:
        rows: list[Any] = []
        for b in specs:
            if isinstance(b, Unknown):
                rows.append(b)
                continue
            row = _pairs({}, b, (("target_value", "TargetValue"),))
            for tf_key, key in (("predefined_metric_pair_specification",
                                 "PredefinedMetricPairSpecification"),
                                ("predefined_scaling_metric_specification",
                                 "PredefinedScalingMetricSpecification")):
                _put(row, key, _sub(b.get(tf_key),
                                    (("predefined_metric_type", "PredefinedMetricType"),)))
            custom = _one(b.get("customized_scaling_metric_specification"))
            if isinstance(custom, Unknown):
                row["CustomizedScalingMetricSpecification"] = custom
            elif custom is not None:
                row["CustomizedScalingMetricSpecification"] = {
                    "MetricDataQueries": _metric_queries(custom.get("metric_data_queries"))}
            rows.append(row)
        out["MetricSpecifications"] = rows
    return out or None


def _autoscaling_policy(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("autoscaling_group_name", "AutoScalingGroupName"),
        ("policy_type", "PolicyType"),
        ("adjustment_type", "AdjustmentType"),
        ("scaling_adjustment", "ScalingAdjustment"),
        ("enabled", "Enabled"),
    ))
    steps = _blocks(v.get("step_adjustment"))
    if steps:
        a["StepAdjustments"] = steps
    _put(a, "TargetTrackingConfiguration",
         _target_tracking(v.get("target_tracking_configuration")))
    _put(a, "PredictiveScalingConfiguration",
         _predictive_scaling(v.get("predictive_scaling_configuration")))
    name = _s(v.get("name"))
    _put(a, "PolicyName", name)
    return "autoscaling.scaling_policy", a, name, ()


def _metric_alarm(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("alarm_name", "AlarmName"),
        ("metric_name", "MetricName"),
        ("namespace", "Namespace"),
        ("statistic", "Statistic"),
        ("alarm_actions", "AlarmActions"),
        ("ok_actions", "OKActions"),
        ("actions_enabled", "ActionsEnabled"),
    ))
    _put(a, "Dimensions", _dimensions(v.get("dimensions")))
    _put(a, "Metrics", _metric_queries(v.get("metric_query"), key=""))
    name = _s(v.get("alarm_name"))
    return "cloudwatch.metric_alarm", a, name, ()


def _event_rule(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (
        ("name", "Name"),
        ("event_pattern", "EventPattern"),
        ("schedule_expression", "ScheduleExpression"),
        ("state", "State"),
        ("event_bus_name", "EventBusName"),
    ))
    enabled = _bool(v.get("is_enabled"))  # deprecated; `state` wins where both are set
    if "State" not in a and enabled is not None:
        a["State"] = enabled if isinstance(enabled, Unknown | Ref) else (
            "ENABLED" if enabled else "DISABLED")
    name = _s(v.get("name"))
    return "events.rule", a, name, ()


def _event_target(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    a = _pairs({}, v, (("rule", "Rule"), ("arn", "Arn"), ("target_id", "Id"),
                       ("event_bus_name", "EventBusName")))
    return "events.target", a, None, ()
