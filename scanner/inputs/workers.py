"""How many processes a run may use, and work shared out among forked ones.

Large runs share their work with forked worker processes: the HCL reader its root modules, the
engine its policies. Each process takes the next block of work from a shared counter until none
is left, so a process slowed down by other load simply takes fewer; the main process takes a
share too. What a worker does not return (it died, or could not start) is done in the main
process, so a result never depends on the workers.

``GPUAUDIT_WORKERS=N`` sets the number of processes (1: everything in the main process); by
default one per CPU this process may run on, at most :data:`MAX_WORKERS`, and one only for work
too small to be worth a fork (each fork costs ~50 ms).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

WORKERS_ENV = "GPUAUDIT_WORKERS"
MAX_WORKERS = 8

T = TypeVar("T")


def worker_count(n_items: int, min_items: int) -> int:
    """Processes for ``n_items`` pieces of work (one when fewer than ``min_items``, unless
    :data:`WORKERS_ENV` says otherwise)."""
    env = os.environ.get(WORKERS_ENV, "")
    if env.isdigit():
        wanted = max(1, int(env))
    else:
        if n_items < min_items:
            return 1
        try:
            wanted = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            wanted = os.cpu_count() or 1
    return max(1, min(wanted, n_items, MAX_WORKERS))


def can_fork() -> bool:
    """Forking is safe here: the platform has it and no other thread runs (a thread holding a
    lock at the fork would leave the child's copy of that lock held for ever)."""
    return hasattr(os, "fork") and threading.active_count() == 1


# What forked workers inherit (never pickled): the function to run on each block of work, the
# number of blocks, the shared counter, and what each worker adds after its last block.
_FORKED: tuple[Callable[[int], Any], int, Any, Callable[[], Any] | None] | None = None


def _take(do: Callable[[int], T], n_blocks: int, counter: Any) -> dict[int, T]:
    out: dict[int, T] = {}
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if i >= n_blocks:
            return out
        out[i] = do(i)


def _worker() -> tuple[dict[int, Any], Any]:
    assert _FORKED is not None
    do, n_blocks, counter, tail = _FORKED
    done = _take(do, n_blocks, counter)
    return done, tail() if tail is not None else None


def shared_out(do: Callable[[int], T], n_blocks: int, workers: int, *,
               tail: Callable[[], Any] | None = None) -> tuple[dict[int, T], list[Any]]:
    """``do(i)`` for each block ``i`` in ``range(n_blocks)``, in ``workers`` processes (forked
    ones and this one): block ``i``'s result under ``i``, and what ``tail()`` gave in each
    worker after its last block (what a worker found beside its blocks' results). Blocks a
    worker did not return are done here, so the results are the same with any number of
    workers."""
    done: dict[int, T] = {}
    tails: list[Any] = []
    if workers > 1 and n_blocks > 1 and can_fork():
        done, tails = _forked(do, n_blocks, workers, tail)
    for i in range(n_blocks):
        if i not in done:
            done[i] = do(i)
    return done, tails


def _forked(do: Callable[[int], T], n_blocks: int, workers: int,
            tail: Callable[[], Any] | None) -> tuple[dict[int, T], list[Any]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _FORKED
    try:
        ctx = multiprocessing.get_context("fork")
        counter = ctx.Value("q", 0)
    except (ValueError, OSError):
        return {}, []
    done: dict[int, T] = {}
    tails: list[Any] = []
    forks = min(workers, n_blocks) - 1
    _FORKED = (do, n_blocks, counter, tail)
    try:
        with ProcessPoolExecutor(max_workers=forks, mp_context=ctx) as pool:
            futures = [pool.submit(_worker) for _ in range(forks)]
            done.update(_take(do, n_blocks, counter))
            for fut in futures:
                try:
                    blocks, extra = fut.result()
                except Exception:  # a worker died or its result would not pickle: done here
                    continue
                done.update(blocks)
                tails.append(extra)
    except OSError:
        pass
    finally:
        _FORKED = None
    return done, tails
