"""GPU utilization history, per instance and per GPU, from three sources:

- CloudWatch agent NVIDIA metrics in ``CWAgent`` (``cloudwatch``: discovery with ListMetrics,
  batched GetMetricData, local aggregation; the live collector in ``scanner.aws.collectors``
  drives it);
- DCGM exporter scrapes (Prometheus text) and nvidia-smi CSV logs (``files``);
- a history file (JSON, ``history.schema.json``) keyed by instance id, Auto Scaling group name or
  Terraform/CloudFormation address, for ``gpuaudit scan --utilization FILE`` (``history``).

Enters: API answers or files. Leaves: resources of kind ``telemetry.gpu_utilization`` (one per
instance, group or address: aggregated statistics per member and GPU, hours of data, a short
trend of 6-hour aggregates, never the raw series) and one ``telemetry.coverage`` per scope where
utilization was looked for (RS-* give results only there).

This package is imported only by ``audit`` (with an RS policy enabled) and ``scan --utilization``;
the kind names below are all that policies need from it.
"""

TELEMETRY = "telemetry.gpu_utilization"
COVERAGE = "telemetry.coverage"
