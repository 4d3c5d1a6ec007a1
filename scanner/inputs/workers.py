"""How many processes a run may use, and work shared out among forked ones.

Large runs share their work with forked worker processes: the HCL reader its root modules, the
plan reader its resources (part by part), the engine its policies. Each process takes the next
block of work from a shared counter until none is left, so a process slowed down by other load
simply takes fewer; the main process takes a share too. A worker sends each block's result down
a pipe as soon as it is done, received while the main process does its own blocks. What a
worker does not return (it died, could not start, or a result would not pickle) is done in the
main process, so a result never depends on the workers.

``GPUAUDIT_WORKERS=N`` sets the number of processes (1: everything in the main process); by
default one per CPU this process may run on, at most :data:`MAX_WORKERS`, and one only for work
too small to be worth a fork (each fork costs some 10-50 ms).
"""

from __future__ import annotations

import contextlib
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


def _take(do: Callable[[int], T], n_blocks: int, counter: Any,
          sent: Callable[[int, T], None] | None = None) -> dict[int, T]:
    """Blocks taken from the shared counter and done until none is left: their results (or,
    with ``sent``, each handed to it as it is done)."""
    out: dict[int, T] = {}
    while True:
        with counter.get_lock():
            i = counter.value
            counter.value = i + 1
        if i >= n_blocks:
            return out
        if sent is None:
            out[i] = do(i)
        else:
            sent(i, do(i))


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
    """Forked workers and this process take blocks from a shared counter; each worker sends
    each block's result down a pipe as soon as it is done (a thread here receives it while
    this process does its own blocks), then its ``tail()``."""
    import multiprocessing

    try:
        counter = multiprocessing.get_context("fork").Value("q", 0)
    except (ValueError, OSError):
        return {}, []
    children: list[tuple[int, int]] = []  # (pid, the read end of its pipe)
    for _ in range(min(workers, n_blocks) - 1):
        try:
            r, w = os.pipe()
        except OSError:
            break
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            break
        if pid == 0:  # the worker: never returns
            os.close(r)
            for _, fd in children:
                os.close(fd)
            _work(do, n_blocks, counter, tail, w)
        os.close(w)
        children.append((pid, r))
    received: list[tuple[dict[int, Any], list[Any]]] = [({}, []) for _ in children]
    threads = [threading.Thread(target=_receive, args=(fd, *got), daemon=True)
               for (_, fd), got in zip(children, received, strict=True)]
    for t in threads:
        t.start()
    try:
        done = _take(do, n_blocks, counter)
    finally:
        for t in threads:
            t.join()
        for pid, _ in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    tails: list[Any] = []
    for blocks, extra in received:
        done.update(blocks)
        tails.extend(extra)
    return done, tails


def _work(do: Callable[[int], Any], n_blocks: int, counter: Any,
          tail: Callable[[], Any] | None, fd: int) -> None:
    """A forked worker's life: blocks until none is left, each result pickled whole and
    written as one record (a result that does not pickle ends the worker; its block is done in
    the main process), then ``tail()``; exits without running anything of the parent's at
    exit."""
    import pickle

    def record(kind: str, i: int, value: Any) -> None:
        data = pickle.dumps((kind, i, value), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(len(data).to_bytes(8, "little") + data)
        while view:
            view = view[os.write(fd, view):]

    code = 1
    try:
        _take(do, n_blocks, counter, lambda i, result: record("block", i, result))
        record("tail", 0, tail() if tail is not None else None)
        code = 0
    except BaseException:  # whatever it was: the main process does the rest
        pass
    finally:
        os._exit(code)


PIPE_BYTES = 1 << 20  # a worker's pipe: results are read in few large reads


def _receive(fd: int, blocks: dict[int, Any], tails: list[Any]) -> None:
    """What one worker sends (records: 8 bytes of length, then the pickle), until it is done
    or its pipe ends (it died: the records it sent whole are kept)."""
    import fcntl
    import pickle

    with contextlib.suppress(OSError, AttributeError):  # Linux: fewer, larger reads
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    try:
        while True:
            head = _read_exactly(fd, 8)
            if head is None:
                return
            data = _read_exactly(fd, int.from_bytes(head, "little"))
            if data is None:
                return
            kind, i, value = pickle.loads(data)
            if kind == "block":
                blocks[i] = value
            else:
                tails.append(value)
                return
    except Exception:  # a record that does not unpickle: the rest is done in the main process
        return
    finally:
        os.close(fd)


def _read_exactly(fd: int, n: int) -> bytes | None:
    """``n`` bytes of the pipe; None when it ends first."""
    parts: list[bytes] = []
    while n > 0:
        chunk = os.read(fd, min(n, PIPE_BYTES))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)
