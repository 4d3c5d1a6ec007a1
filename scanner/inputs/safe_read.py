"""Read input files safely: regular files only, within a size limit, never blocking.

A FIFO, socket or device named ``*.json`` / ``*.yaml`` (or passed to ``--baseline``,
``--config``, ``report merge``) would block a plain ``open()`` or read forever. Here the path is
checked with ``stat`` first, then opened with ``O_NONBLOCK`` and checked again with ``fstat`` on
the open descriptor, so not even a file swapped for a FIFO between the two can hang the run.

Text is decoded by its byte-order mark: UTF-8 (with or without BOM), UTF-16 and UTF-32 with a BOM
(PowerShell's ``>`` writes UTF-16), and BOM-less UTF-16 recognised by its zero bytes.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


class ReadError(Exception):
    """The file was not read; ``reason`` says why (without the path)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def not_regular(path: Path | str) -> str | None:
    """Why ``path`` is not a readable regular file (by ``stat``; follows symlinks), or None."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return exc.strerror or str(exc)
    except ValueError as exc:  # an embedded NUL in the name
        return str(exc)
    kind = _kind(mode)
    return None if kind is None else f"{kind}, not a regular file"


def _open(path: Path | str) -> int:
    why = not_regular(path)
    if why is not None:
        raise ReadError(why)
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    except OSError as exc:
        raise ReadError(exc.strerror or str(exc)) from None
    kind = _kind(os.fstat(fd).st_mode)
    if kind is not None:  # swapped between stat and open
        os.close(fd)
        raise ReadError(f"{kind}, not a regular file")
    return fd


def read_regular(path: Path | str, *, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; ReadError otherwise."""
    fd = _open(path)
    try:
        if os.fstat(fd).st_size > limit:
            raise ReadError(f"larger than the {_size(limit)} limit")
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except OSError as exc:
                raise ReadError(exc.strerror or str(exc)) from None
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while being read
                raise ReadError(f"larger than the {_size(limit)} limit")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_head(path: Path | str, size: int) -> bytes:
    """The first ``size`` bytes of a regular file; ReadError otherwise."""
    fd = _open(path)
    try:
        try:
            return os.read(fd, size)
        except OSError as exc:
            raise ReadError(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def _size(limit: int) -> str:
    if limit % (1 << 30) == 0:
        return f"{limit >> 30} GiB"
    if limit % (1 << 20) == 0:
        return f"{limit >> 20} MiB"
    return f"{limit} byte"


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def encoding_of(data: bytes) -> tuple[str, int]:
    """(codec, BOM length) for these bytes: by BOM, else UTF-16 by its zero bytes, else UTF-8."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return codec, len(bom)
    head = data[:512]
    if len(head) >= 4 and b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) * 4 >= len(odd) * 3 and even.count(0) == 0:
            return "utf-16-le", 0
        if even.count(0) * 4 >= len(even) * 3 and odd.count(0) == 0:
            return "utf-16-be", 0
    return "utf-8", 0


def decode_text(data: bytes) -> str:
    """The text of ``data`` (see :func:`encoding_of`). Raises UnicodeDecodeError."""
    codec, skip = encoding_of(data)
    return data[skip:].decode(codec) if skip or codec != "utf-8" else data.decode("utf-8")


def decode_head(data: bytes) -> str:
    """Like :func:`decode_text` for a file's first bytes (a cut character is replaced)."""
    codec, skip = encoding_of(data)
    return data[skip:].decode(codec, errors="replace")
