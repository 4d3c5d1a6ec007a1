"""GPU (and Neuron) utilization history, per instance and per accelerator, from:

- CloudWatch (``cloudwatch``): the agent's NVIDIA metrics in ``CWAgent`` and EKS Container
  Insights GPU/Neuron metrics in ``ContainerInsights`` (discovery with ListMetrics, batched
  GetMetricData, local aggregation; the live collector in ``scanner.aws.collectors`` drives it),
  or a Metric Stream's export (``metric_stream``);
- DCGM exporter expositions (``dcgm``: MIG, time-slicing, profiling fields), from files or a
  Prometheus server (``prometheus``); nvidia-smi CSV (``files``) and dmon logs (``dmon``);
  neuron-monitor captures (``neuron``);
- a history file (JSON, ``history.schema.json``) keyed by instance id, Auto Scaling group name or
  Terraform/CloudFormation address, for ``gpuaudit scan --utilization FILE`` (``history``).

Enters: API answers or files. Leaves: resources of kind ``telemetry.gpu_utilization`` (one per
instance, group or address: aggregated statistics per member and GPU, hours of data, a short
trend of 6-hour aggregates, never the raw series) and one ``telemetry.coverage`` per scope where
utilization was looked for (RS-* give results only there).

This package is imported only by ``audit`` (with an RS policy enabled) and ``scan --utilization``
(or ``--prometheus-url``);
the kind names below are all that policies need from it.
"""

TELEMETRY = "telemetry.gpu_utilization"
COVERAGE = "telemetry.coverage"
