"""The peak memory of a block of code, for the fuzz tests' memory bounds.

On Linux: the growth of the process's resident-set high-water mark (``VmHWM``, reset through
``/proc/self/clear_refs``) over its resident set at the start, after ``malloc_trim`` has given
back the memory the C allocator holds free, so that the block's allocations are not hidden in
memory freed earlier. The objects alive at the start are frozen (``gc.freeze``) for the block:
garbage among them cannot be collected during the block and lend it its memory (a full
``gc.collect()`` instead costs ~0.3 s in a worker that ran the moto tests). It costs nothing
while the code runs and sees every
allocation, Python's and C libraries' alike (tree-sitter's parse trees, libyaml's events), that
is touched. ``tracemalloc`` sees only Python's allocators and slowed the hostile HCL cases
5-6 times (0.5 s -> 3 s each); on the worst cases of tests/test_hcl_fuzz.py the two agree
within a few MiB (34-94 MiB resident against 36-90 MiB traced).

Elsewhere (no ``/proc/self/clear_refs``): ``tracemalloc``'s peak.
"""

from __future__ import annotations

import ctypes
import gc
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_STATUS = "/proc/self/status"
_CLEAR_REFS = "/proc/self/clear_refs"


def _status_bytes(field: str) -> int:
    with open(_STATUS, encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # kB
    raise OSError(f"no {field} in {_STATUS}")


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's, in the interpreter
    except OSError:
        return None


_MALLOC_TRIM = _malloc_trim()


def _trim() -> None:
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _reset_high_water_mark() -> bool:
    try:
        with open(_CLEAR_REFS, "w", encoding="ascii") as f:
            f.write("5")  # Linux >= 4.0: VmHWM := VmRSS
        _status_bytes("VmHWM")
    except OSError:
        return False
    return True


@contextmanager
def peak_memory() -> Iterator[Callable[[], int]]:
    """``with peak_memory() as peak: ...`` then ``peak()``: the most bytes the block held at
    once beyond what the process held when it began."""
    if not _reset_high_water_mark():
        tracemalloc.start()
        traced: list[int] = []
        try:
            yield lambda: traced[0] if traced else tracemalloc.get_traced_memory()[1]
            traced.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        return
    gc.freeze()
    try:
        _trim()
        _reset_high_water_mark()
        base = _status_bytes("VmRSS")
        resident: list[int] = []
        yield lambda: resident[0] if resident else _status_bytes("VmHWM") - base
        resident.append(_status_bytes("VmHWM") - base)
    finally:
        gc.unfreeze()
