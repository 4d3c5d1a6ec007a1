"""tests/memory_peak.py, the fuzz tests' memory instrument, sees what a block holds at its
peak, even after the process freed more than that before the block, and for memory that C code
allocates beside Python's allocators."""

from __future__ import annotations

import ctypes

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
