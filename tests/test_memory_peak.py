"""tests/memory_peak.py, the fuzz tests' memory instrument, sees what a block holds at its
peak, even after the process freed more than that before the block, and for memory that C code
allocates beside Python's allocators."""

from __future__ import annotations

import ctypes
import gc

from tests.memory_peak import peak_memory

MIB = 1024 * 1024


def test_a_block_s_peak_is_seen_even_when_it_is_freed_before_the_end() -> None:
    earlier = b"x" * (200 * MIB)  # memory the process held, and freed, before the block
    del earlier
    with peak_memory() as peak:
        held = b"y" * (96 * MIB)
        del held
        small = [b"z" * 1024 for _ in range(100)]
    assert 92 * MIB <= peak() < 140 * MIB, peak() / MIB  # page-sized noise either way
    assert small


def test_memory_allocated_by_c_code_counts() -> None:
    with peak_memory() as peak:
        buffer = ctypes.create_string_buffer(64 * MIB)
        ctypes.memset(buffer, 1, 64 * MIB)
        del buffer
    assert peak() >= 60 * MIB, peak() / MIB


def test_an_idle_block_holds_next_to_nothing() -> None:
    with peak_memory() as peak:
        pass
    assert peak() < 8 * MIB, peak() / MIB


def test_garbage_from_before_the_block_lends_it_no_memory() -> None:
    """Cyclic garbage left before the block (about 110 MiB) is not collected during it, so the
    block's 90 MiB cannot hide in the memory that collecting it would free."""
    cells: list[list[object]] = [[bytearray(1024)] for _ in range(100_000)]
    for cell in cells:
        cell.append(cell)
    gc.collect()  # they move to the oldest generation, which only a full collection frees
    del cells, cell
    with peak_memory() as peak:
        gc.collect()
        held = [bytearray(1024) for _ in range(90_000)]
        del held
    assert peak() >= 80 * MIB, peak() / MIB
    gc.collect()
