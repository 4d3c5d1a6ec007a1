"""What a scaling metric is (ASG-003): CPU, GPU, queue depth or another load metric."""

from __future__ import annotations

import pytest

from policies.scaling_metrics import CPU, GPU, OTHER, QUEUE, metric_class


@pytest.mark.parametrize(("name", "namespace", "expected"), [
    ("CPUUtilization", "AWS/EC2", CPU),
    ("ASGAverageCPUUtilization", "", CPU),
    ("cpu_usage_active", "CWAgent", CPU),
    ("node_cpu_utilization", "ContainerInsights", CPU),
    ("DCGM_FI_DEV_GPU_UTIL", "ContainerInsights/Prometheus", GPU),
    ("nvidia_smi_utilization_gpu", "CWAgent", GPU),
    ("node_gpu_utilization", "ContainerInsights", GPU),
    ("neuroncore_utilization", "NeuronMonitor", GPU),
    ("ApproximateNumberOfMessagesVisible", "AWS/SQS", QUEUE),
    ("BacklogPerInstance", "Custom", QUEUE),
    ("ALBRequestCountPerTarget", "", OTHER),
    ("RequestLatencyP99", "MyApp", OTHER),
])
def test_metric_classes(name: str, namespace: str, expected: str) -> None:
    assert metric_class(name, namespace) == expected


def _policy(mode: object) -> object:
    from scanner.model import Provenance, Resource, SourceKind

    pair = {"PredefinedMetricType": "ASGCPUUtilization"}
    config: dict = {"MetricSpecifications": [{"TargetValue": 40,
                                              "PredefinedMetricPairSpecification": pair}]}
    if mode is not None:
        config["Mode"] = mode
    return Resource("autoscaling.scaling_policy", "p", {
        "PolicyType": "PredictiveScaling", "PredictiveScalingConfiguration": config},
        Provenance(SourceKind.CLOUDFORMATION, "t.yaml"), "t.yaml")


def test_predictive_scaling_scales_only_in_forecast_and_scale_mode() -> None:
    from policies.scaling_metrics import scaler
    from scanner.model import Unknown
    from scanner.model.graph import ResourceIndex

    def of(mode: object) -> object:
        p = _policy(mode)
        return scaler(p, ResourceIndex([p]))  # type: ignore[arg-type]

    assert of(None) is None and of("ForecastOnly") is None  # ForecastOnly is the default
    assert of("ForecastAndScale").cpu_only  # type: ignore[union-attr]
    assert isinstance(of(Unknown("var.mode")).unknown, Unknown)  # type: ignore[union-attr]
