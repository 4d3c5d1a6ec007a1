"""The policies shared out among forked processes give the evaluation one process gives: the
same findings in the same order, the same notices, the same PASS counts; and a worker that dies
changes nothing (its policies are evaluated in the main process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from scanner.inputs import workers

ROOT = Path(__file__).resolve().parents[1]
# evaluated in a process of its own: a pytest-xdist worker runs an I/O thread, and the engine
# never forks while another thread runs
PROBE = Path(__file__).parent / "engine_workers_probe.py"


def _probe(mode: str, marks: Path) -> dict[str, Any]:
    marks.mkdir()
    proc = subprocess.run([sys.executable, str(PROBE), mode, str(marks)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_two_processes_give_what_one_gives(tmp_path: Path) -> None:
    out = _probe("same", tmp_path / "marks")
    assert out["two"] == out["one"]
    assert out["forked"], "no policy was evaluated in a forked worker"
    assert set(out["statuses"]) >= {"FAIL", "UNKNOWN"}
    assert sum(n for _, n in out["one"]["passed"]) > 0


def test_a_worker_that_dies_changes_nothing(tmp_path: Path) -> None:
    out = _probe("dies", tmp_path / "marks")
    assert len(out["forked"]) == 1, "the worker did not start, or went on after dying"
    assert out["two"] == out["one"]
    assert out["one"]["findings"]


def test_blocks_are_shared_out_and_come_back_by_number() -> None:
    parent = os.getpid()
    done, tails = workers.shared_out(lambda i: (i * i, os.getpid() != parent), 40, 2,
                                     tail=lambda: "worker")
    assert [v for v, _ in (done[i] for i in range(40))] == [i * i for i in range(40)]
    assert tails in ([], ["worker"])  # a worker that took no block still reports


UNPICKLABLE = """
import os, sys, tempfile, time
from scanner.inputs import workers
parent = os.getpid()
took = os.path.join(tempfile.mkdtemp(), "took")
def do(i):
    if os.getpid() != parent:
        open(took, "w").close()
        return lambda: i  # a result that does not pickle: the worker ends there
    deadline = time.monotonic() + 30
    while not os.path.exists(took) and time.monotonic() < deadline:
        time.sleep(0.01)  # this process waits until the worker has taken a block
    return i
done, tails = workers.shared_out(do, 30, 2, tail=lambda: "worker")
print(os.path.exists(took), done == {i: i for i in range(30)}, tails)
"""


def test_a_result_that_does_not_pickle_is_done_here() -> None:
    """Run in a process of its own (no xdist thread): the worker's unpicklable result ends it,
    and that block is done in the main process, with every other."""
    proc = subprocess.run([sys.executable, "-c", UNPICKLABLE], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "[]"]  # it took one; ended before its tail


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
