"""The collectors of one (account, region) run side by side, each after the ones it reads.

Each fake collector records when its round trip ran; the tests compare those spans (overlap,
order) rather than the total time, which a busy machine can stretch."""

from __future__ import annotations

import threading
import time

from scanner.aws.clients import ClientFactory
from scanner.aws.collect import run_collectors
from scanner.aws.collectors.base import Collector, RegionContext
from scanner.aws.registry import COLLECTORS
from scanner.model import SourceResult

STEP = 0.2


class Log:
    def __init__(self) -> None:
        self.spans: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def collector(
        self, name: str, after: tuple[str, ...] = (), fail: bool = False
    ) -> Collector:
        def run(ctx: RegionContext) -> None:
            assert ctx.collector is not None and ctx.collector.name == name
            start = time.monotonic()
            time.sleep(STEP)  # a round trip
            with self._lock:
                self.spans[name] = (start, time.monotonic())
            if fail:
                raise ValueError("malformed answer")

        return Collector(name=name, calls=(), run=run, after=after)

    def overlap(self, a: str, b: str) -> bool:
        (s1, e1), (s2, e2) = self.spans[a], self.spans[b]
        return s1 < e2 and s2 < e1

    def before(self, a: str, b: str) -> bool:
        return self.spans[a][1] <= self.spans[b][0]


def region(collectors: tuple[Collector, ...]) -> RegionContext:
    return RegionContext(account="123456789012", region="us-east-1",
                         session=None,  # type: ignore[arg-type]  # no call is made
                         factory=ClientFactory(), wanted=(), result=SourceResult(),
                         collectors=collectors)


def test_independent_collectors_overlap_and_dependents_wait() -> None:
    log = Log()
    collectors = (
        log.collector("ebs"),
        log.collector("instances", after=("ebs",)),
        log.collector("launch_templates"),
        log.collector("vpc"),
        log.collector("prices", after=("instances", "launch_templates")),
    )
    run_collectors(region(collectors), collectors, concurrency=4)
    assert log.overlap("ebs", "launch_templates") and log.overlap("ebs", "vpc")
    assert log.before("ebs", "instances")
    assert log.before("instances", "prices") and log.before("launch_templates", "prices")


def test_one_at_a_time_keeps_the_run_order() -> None:
    log = Log()
    collectors = tuple(log.collector(n) for n in ("ebs", "instances", "vpc"))
    run_collectors(region(collectors), collectors, concurrency=1)
    assert log.before("ebs", "instances") and log.before("instances", "vpc")


def test_a_failing_collector_is_recorded_and_does_not_block_its_dependents() -> None:
    log = Log()
    collectors = (log.collector("ebs", fail=True), log.collector("instances", after=("ebs",)))
    ctx = region(collectors)
    run_collectors(ctx, collectors, concurrency=4)
    assert log.before("ebs", "instances")
    assert [e.path for e in ctx.result.errors] == ["123456789012/us-east-1/ebs"]
    assert ctx.result.errors[0].reason == "collector failed: ValueError: malformed answer"


def test_every_dependency_is_an_earlier_collector() -> None:
    seen: set[str] = set()
    for collector in COLLECTORS:
        assert set(collector.after) <= seen, (collector.name, collector.after)
        seen.add(collector.name)
    by_name = {c.name: c for c in COLLECTORS}
    # instances only joins the volumes in memory: its request does not wait for ebs
    assert by_name["instances"].after == () and by_name["instances"].finish is not None
    assert set(by_name["spot_prices"].after) >= {"instances", "launch_templates", "autoscaling",
                                                 "spot"}


def test_joins_run_once_every_collector_is_done_and_a_failing_join_is_recorded() -> None:
    log = Log()
    seen: list[tuple[str, ...]] = []

    def join(ctx: RegionContext) -> None:
        seen.append(tuple(sorted(log.spans)))
        assert ctx.collector is not None and ctx.collector.name == "instances"

    def broken(ctx: RegionContext) -> None:
        raise KeyError("VolumeId")

    ebs, vpc = log.collector("ebs"), log.collector("vpc")
    instances = Collector(name="instances", calls=(), run=log.collector("instances").run,
                          finish=join)
    prices = Collector(name="prices", calls=(), run=log.collector("prices").run, finish=broken)
    collectors = (ebs, instances, vpc, prices)
    ctx = region(collectors)
    run_collectors(ctx, collectors, concurrency=4)
    names = sorted(log.spans)
    # all four at once: the joins do not hold a request back
    assert all(log.overlap(a, b) for a in names for b in names if a < b)
    assert seen == [("ebs", "instances", "prices", "vpc")]
    assert [(e.path, e.reason) for e in ctx.result.errors] == [
        ("123456789012/us-east-1/prices", "collector failed: KeyError: 'VolumeId'")
    ]
