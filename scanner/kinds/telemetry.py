"""GPU utilization history (scanner.telemetry): records of aggregated statistics, not AWS
resources. Produced by the CloudWatch collector (live) and by ``scan --utilization`` (files);
read by RS-*."""

from __future__ import annotations

from scanner.kinds.schema import Kind
from scanner.kinds.types import Json, List, Map, Num, Obj, Str

PROFILING = ("SmActive", "TensorActive", "DramActive", "GrEngineActive")

GPU = Obj({
    "Index": Str(doc="the device index (Container Insights Neuron: the NeuronCore)"),
    "Name": Str(), "Hours": Num(), "UtilP50": Num(), "UtilP95": Num(),
    "UtilP99.5": Num(doc="of the hourly maxima (RS-001's decision statistic)"),
    "UtilMax": Num(), "MemUsedMaxMiB": Num(), "MemTotalMiB": Num(),
    "UtilSource": Str(doc="DCGM: the field(s) utilization was read from"),
    "MigInstances": List(Str(), doc="DCGM: the GPU's MIG instances (GPU_I_ID or profile)"),
    "SharedBy": Num(doc="DCGM: the workloads (pods) sharing the GPU (time-slicing, MPS)"),
    "SharedCopies": Num(doc="DCGM: of those, the ones whose series copied another's (the "
                            "device's value per pod), counted once"),
    "NodeLevel": Str(doc="the bound given from a node's average (Container Insights)"),
    **{f"{field}{stat}": Num(doc="DCGM profiling field, %") for field in PROFILING
       for stat in ("P95", "Max")}})

SOURCES = ("cloudwatch, container-insights, container-insights-neuron (live); history, "
           "nvidia-smi, nvidia-smi-dmon, dcgm, neuron-monitor, cloudwatch-metric-stream "
           "(scan --utilization); prometheus (--prometheus-url)")

KINDS = (
    Kind(
        name="telemetry.gpu_utilization",
        doc="the GPU utilization of one instance or group over the lookback window; id "
            "telemetry:TARGET",
        attributes={
            "Target": Str(doc="the instance id, group name or IaC address it measures"),
            "Source": Str(doc=SOURCES),
            "Start": Str(), "End": Str(), "LookbackDays": Num(),
            "Hours": Num(doc="hours of data, the best-covered member"),
            "Members": List(Obj({"Id": Str(), "Hours": Num(), "Gpus": List(GPU)})),
            "Trend": Map(Json(), doc="6-hour aggregates for the sparkline, never the series"),
        },
        live="ListMetrics, GetMetricData (CWAgent, ContainerInsights)",
    ),
    Kind(
        name="telemetry.coverage",
        doc="a scope where utilization was looked for (RS-* give results only there)",
        attributes={"Source": Str(), "Files": List(Str()), "Unreadable": Map(Str()),
                    "Prometheus": Str(doc="audit --prometheus-url: the server read (no "
                                          "credentials)")},
        live="ListMetrics",
    ),
)
