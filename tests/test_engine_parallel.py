"""The policies shared out among forked processes give the evaluation one process gives: the
same findings in the same order, the same notices, the same PASS counts; and a worker that dies
changes nothing (its policies are evaluated in the main process)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

import scanner.engine.evaluate as engine
from scanner.inputs import workers
from scanner.sources.registry import ScanOptions
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).parent / "fixtures"
INPUTS = [FIXTURES / "terraform" / "gpu_estate_a", FIXTURES / "terraform" / "gpu_estate_b",
          FIXTURES / "terraform" / "gpu_modules", FIXTURES / "cfn", FIXTURES / "eksctl",
          FIXTURES / "karpenter"]


def _evaluate(monkeypatch: pytest.MonkeyPatch, n: str) -> engine.Evaluation:
    monkeypatch.setenv(workers.WORKERS_ENV, n)
    result = scan_paths([p for p in INPUTS if p.exists()], ScanOptions())
    assert result.resources
    return engine.run(result.resources, gaps=result.gaps, include_passed=False)


def _shape(ev: engine.Evaluation) -> tuple[object, ...]:
    return ([f.as_dict() for f in ev.findings], [n.as_dict() for n in ev.notices],
            sorted(ev.passed.items()))


def test_two_processes_give_what_one_gives(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    one = _evaluate(monkeypatch, "1")
    evaluate_policy = engine._evaluate_policy
    parent = os.getpid()

    def marking(pol: object, env: object) -> object:
        if os.getpid() != parent:  # a forked worker: says so through the file system
            (tmp_path / f"{os.getpid()}-{getattr(pol, 'id', '')}").touch()
        return evaluate_policy(pol, env)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "_evaluate_policy", marking)
    two = _evaluate(monkeypatch, "2")
    assert _shape(two) == _shape(one)
    assert list(tmp_path.iterdir()), "no policy was evaluated in a forked worker"
    assert {f.status.value for f in one.findings} >= {"FAIL", "UNKNOWN"}
    assert sum(one.passed.values()) > 0


def test_a_worker_that_dies_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    one = _evaluate(monkeypatch, "1")
    parent = os.getpid()
    evaluate_policy = engine._evaluate_policy

    def dying(pol: object, env: object) -> object:
        if os.getpid() != parent:
            os._exit(3)  # the worker dies in its first policy
        return evaluate_policy(pol, env)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "_evaluate_policy", dying)
    assert _shape(_evaluate(monkeypatch, "2")) == _shape(one)


def test_blocks_are_shared_out_and_come_back_by_number() -> None:
    parent = os.getpid()
    done, tails = workers.shared_out(lambda i: (i * i, os.getpid() != parent), 40, 2,
                                     tail=lambda: "worker")
    assert [v for v, _ in (done[i] for i in range(40))] == [i * i for i in range(40)]
    assert tails in ([], ["worker"])  # a worker that took no block still reports


def test_no_fork_while_another_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not workers.can_fork()
        parent = os.getpid()
        done, tails = workers.shared_out(lambda i: os.getpid() == parent, 8, 2)
        assert all(done[i] for i in range(8)) and tails == []
    finally:
        stop.set()
        thread.join()


def test_worker_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(workers.WORKERS_ENV, raising=False)
    assert workers.worker_count(10, 64) == 1  # too little work to fork for
    monkeypatch.setenv(workers.WORKERS_ENV, "3")
    assert workers.worker_count(10, 64) == 3  # asked for
    assert workers.worker_count(2, 64) == 2  # never more processes than pieces of work
    monkeypatch.setenv(workers.WORKERS_ENV, "0")
    assert workers.worker_count(100, 1) == 1
