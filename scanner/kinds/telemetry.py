"""GPU utilization history (scanner.telemetry): records of aggregated statistics, not AWS
resources. Produced by the CloudWatch collector (live) and by ``scan --utilization`` (files);
read by RS-*."""

from __future__ import annotations

from scanner.kinds.schema import Kind
from scanner.kinds.types import Json, List, Map, Num, Obj, Str

GPU = Obj({"Index": Str(), "Name": Str(), "Hours": Num(), "UtilP50": Num(), "UtilP95": Num(),
           "UtilMax": Num(), "MemUsedMaxMiB": Num(), "MemTotalMiB": Num()})

KINDS = (
    Kind(
        name="telemetry.gpu_utilization",
        doc="the GPU utilization of one instance or group over the lookback window; id "
            "telemetry:TARGET",
        attributes={
            "Target": Str(doc="the instance id, group name or IaC address it measures"),
            "Source": Str(doc="cloudwatch, history, nvidia-smi or dcgm"),
            "Start": Str(), "End": Str(), "LookbackDays": Num(),
            "Hours": Num(doc="hours of data, the best-covered member"),
            "Members": List(Obj({"Id": Str(), "Hours": Num(), "Gpus": List(GPU)})),
            "Trend": Map(Json(), doc="6-hour aggregates for the sparkline, never the series"),
        },
        live="ListMetrics, GetMetricData (CWAgent)",
    ),
    Kind(
        name="telemetry.coverage",
        doc="a scope where utilization was looked for (RS-* give results only there)",
        attributes={"Source": Str(), "Files": List(Str()), "Unreadable": Map(Str())},
        live="ListMetrics",
    ),
)
