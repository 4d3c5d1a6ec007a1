"""The peak memory of a block of code, for the fuzz tests' memory bounds.

On Linux: the growth of the process's resident-set high-water mark (``VmHWM``, reset through
``/proc/self/clear_refs``) over its resident set at the start, after garbage collection and
``malloc_trim`` have given back what the process no longer uses (so the block's allocations are
not hidden in memory freed earlier). It costs nothing while the code runs and sees every
allocation, Python's and C libraries' alike (tree-sitter's parse trees, libyaml's events), that
is touched. ``tracemalloc`` sees only Python's allocators and slowed the hostile HCL cases
5-6 times (0.5 s -> 3 s each); on the worst cases of tests/test_hcl_fuzz.py the two agree
within a few MiB (34-94 MiB resident against 36-90 MiB traced).

Elsewhere (no ``/proc/self/clear_refs``): ``tracemalloc``'s peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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


def _trim() -> None:
    gc.collect()
    name = ctypes.util.find_library("c")
    if name:
        libc = ctypes.CDLL(name)
        if hasattr(libc, "malloc_trim"):
            libc.malloc_trim(0)


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
    _trim()
    if _reset_high_water_mark():
        base = _status_bytes("VmRSS")
        result: list[int] = []
        yield lambda: result[0] if result else _status_bytes("VmHWM") - base
        result.append(_status_bytes("VmHWM") - base)
        return
    tracemalloc.start()
    peak: list[int] = []
    try:
        yield lambda: peak[0] if peak else tracemalloc.get_traced_memory()[1]
        peak.append(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()
