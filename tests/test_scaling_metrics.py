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
