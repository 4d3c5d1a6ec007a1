"""Every per-GPU statistic the utilization readers emit is declared in the telemetry kind
(scanner/kinds/telemetry.py, rendered in docs/resource-model.md), read from the fixtures as the
tools write them: DCGM with profiling fields, MIG and time-slicing, neuron-monitor, and the
Container Insights node bound."""

from __future__ import annotations

from pathlib import Path

from scanner.kinds.telemetry import GPU, KINDS
from scanner.telemetry.aggregate import Window, member_stats
from scanner.telemetry.cloudwatch import NEURON_INSIGHTS, Query, aggregate
from scanner.telemetry.files import parse_dcgm
from scanner.telemetry.neuron import parse_neuron_monitor
from tests.test_telemetry_dcgm import appended
from tests.test_telemetry_neuron import capture

END = 1768435200
WINDOW = Window(END - 14 * 86400, END)


def _keys(members: dict[str, dict[str, object]]) -> set[str]:
    out: set[str] = set()
    for mid, gpus in members.items():
        for g in member_stats(mid, gpus.values(), WINDOW)["Gpus"]:  # type: ignore[arg-type]
            out |= set(g)
    return out


def test_every_gpu_statistic_the_readers_emit_is_declared() -> None:
    emitted: set[str] = set()
    for name in ("g6e-prof.prom", "p4d-mig.prom", "g5-timesliced.prom"):
        emitted |= _keys(parse_dcgm(appended(name), "d.prom"))  # type: ignore[arg-type]
    emitted |= _keys(parse_dcgm(appended("g5-virtual-gpus.prom", lambda h: 10.0 + h % 5),
                                "d.prom"))  # type: ignore[arg-type]
    emitted |= _keys(parse_neuron_monitor(capture("trn1-busy.json"), "n.jsonl",
                                          END))  # type: ignore[arg-type]
    node = Query("q0", "i-0abc", "node", NEURON_INSIGHTS.util, "Average", 3600, (), 2,
                 NEURON_INSIGHTS.namespace)
    record = aggregate([node], {"q0": ([END - 7200, END - 3600], [1.0, 2.0])}, WINDOW, 14,
                       NEURON_INSIGHTS, {"i-0abc": 4})
    emitted |= {k for g in record["i-0abc"]["Members"][0]["Gpus"] for k in g}
    assert {"UtilP99.5", "UtilSource", "MigInstances", "SharedBy", "SharedCopies", "NodeLevel",
            "SmActiveP95", "TensorActiveMax", "DramActiveP95"} <= emitted
    assert emitted - set(GPU.fields) == set()


def test_the_source_values_are_named() -> None:
    doc = next(k for k in KINDS if k.name == "telemetry.gpu_utilization").attributes[
        "Source"].doc
    for source in ("cloudwatch", "container-insights", "container-insights-neuron", "history",
                   "nvidia-smi", "nvidia-smi-dmon", "dcgm", "neuron-monitor",
                   "cloudwatch-metric-stream", "prometheus"):
        assert source in doc
    assert Path(__file__).resolve().parents[1].joinpath("docs", "resource-model.md").read_text(
        ).count("container-insights-neuron") >= 1
