"""Reading a large plan file in a window of its text, never the whole of it.

The whole-document read (:mod:`.document`) holds the file's bytes, its text and every decoded
planned resource at once: 3x the file at its peak. Here the file is read through a window of
about :data:`CHUNK` characters:

1. the top-level members before ``planned_values`` (``format_version``, ``variables`` …) are
   decoded; ``planned_values`` is walked module by module, each planned resource decoded on its
   own and only its address, type, name and module kept (every reference is resolved against
   all the plan's addresses, so all of them are known before any resource is resolved);
2. the members after the first one not needed (``resource_changes`` and what follows it, more
   than half of a large plan) are skipped without being read, as the whole-document read does:
   ``configuration`` and the small members after it are decoded from the file's end;
3. ``planned_values`` is walked again and each resource is handed on (resolved, translated and
   dropped by the reader) as it is decoded; or, when the reader shares the work out among
   processes, the resources are read part by part: the first walk notes where each run of
   resources of one module begins and ends in the file (:class:`Segment`), and a part is read
   from its byte range alone (:func:`_read_part`).

Only terraform's own layout is taken (the members in its order, each module's ``resources``
before its ``child_modules``, no duplicated key among those read). Anything else, including
text that is not valid JSON, raises :class:`NotStreamable` and the file is read as one document,
which gives the same result as before (and the same error, naming the line, for bad JSON).
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from scanner.inputs.safe_read import encoding_of, not_regular
from scanner.sources.terraform.plan.config import MAX_MODULE_DEPTH
from scanner.sources.terraform.plan.document import (
    _ADDRESS,
    _SKIPPABLE,
    _WS,
    MAX_PLAN_BYTES,
    _constant,
    _members,
)
from scanner.sources.terraform.plan.planned import Planned, PlannedIndex, PlannedResources

if TYPE_CHECKING:
    from scanner.sources.terraform.plan.skim import Skimmed

# Files at least this large are streamed by default (smaller ones are read whole: as fast, and
# their memory does not matter).
STREAM_BYTES = 8 << 20
CHUNK = 1 << 20  # bytes read at a time
TAIL = 1 << 20  # bytes of the file's end read first when looking for `configuration`
MAX_TAIL_CANDIDATES = 8  # `"configuration"` keys tried from the end (as the whole read does)


class NotStreamable(Exception):
    """Not terraform's layout, or not valid JSON: read the file as one document instead."""


class _Window:
    """A window of the file's text, read as it is consumed."""

    def __init__(self, f: IO[bytes], start: int) -> None:
        self.f = f
        f.seek(start)
        self.base = start  # file offset of buf[0]
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.json = json.JSONDecoder(parse_constant=_constant)
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._mark = (0, start)  # a position of buf and its file offset, known

    def more(self, want: int = CHUNK) -> None:
        """Read at least ``want`` more bytes (or up to the end)."""
        if self.eof:
            return
        if self.pos:
            self.base = self.offset()
            self.buf = self.buf[self.pos:]
            self.pos = 0
            self._mark = (0, self.base)
        parts = [self.buf]
        got = 0
        while got < want:
            data = self.f.read(max(CHUNK, want - got))
            try:
                parts.append(self.decoder.decode(data, final=not data))
            except UnicodeDecodeError:
                raise NotStreamable("not UTF-8") from None
            if not data:
                self.eof = True
                break
            got += len(data)
        self.buf = "".join(parts)

    def offset(self) -> int:
        """The file offset of the next character (the text since the last offset asked is
        encoded to count its bytes: asking often costs one encoding of the file in all)."""
        at, off = self._mark
        if at > self.pos:
            at, off = 0, self.base
        off += len(self.buf[at:self.pos].encode("utf-8"))
        self._mark = (self.pos, off)
        return off

    def peek(self) -> str:
        """The next character that is not white space."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                raise NotStreamable("ends early")
            self.more()

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise NotStreamable(f"expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value, decoded."""
        self.peek()
        while True:
            try:
                value, end = self.json.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError:
                if self.eof:
                    raise NotStreamable("invalid JSON") from None
                self.more(2 * (len(self.buf) - self.pos))  # geometric: each retry doubles
                continue
            except (ValueError, RecursionError):  # an integer of more than 4,300 digits
                raise NotStreamable("invalid JSON") from None
            if end >= len(self.buf) and not self.eof:  # a number may go on
                self.more()
                continue
            self.pos = end
            return value

    def members(self) -> Iterator[str]:
        """The keys of the object that starts here; the caller consumes each value."""
        self.take("{")
        first = True
        while True:
            if self.peek() == "}":
                self.pos += 1
                return
            if not first:
                self.take(",")
            first = False
            if self.peek() != '"':
                raise NotStreamable("expected a key")
            key = self.value()
            self.take(":")
            yield key

    def items(self) -> Iterator[int]:
        """The indexes of the array that starts here; the caller consumes each item."""
        self.take("[")
        i = 0
        while True:
            if self.peek() == "]":
                self.pos += 1
                return
            if i:
                self.take(",")
            yield i
            i += 1


Event = tuple[str, str, Any]  # (kind, module JSON path, value); kinds:
# "resource" (the decoded resource), "address" (the module's), "segment" (the file offset where
# a run of resources begins: the first of each module, then every SEGMENT-th), "end" (the file
# offset just after a module's resources array)
SEGMENT = 500  # resources of one run at most


def _module(win: _Window, path: str, depth: int) -> Iterator[Event]:
    """The events of one planned_values module object and its child modules, in order."""
    if depth > MAX_MODULE_DEPTH:
        raise NotStreamable("modules nested too deeply")
    seen: set[str] = set()
    for key in win.members():
        if key in seen:
            raise NotStreamable(f"{path}.{key} twice")
        seen.add(key)
        if key == "resources":
            if "child_modules" in seen or win.peek() != "[":
                raise NotStreamable(f"{path}.resources")
            n = 0
            for _ in win.items():
                if win.peek() != "{":
                    raise NotStreamable(f"{path}.resources")
                if n % SEGMENT == 0:
                    yield "segment", path, win.offset()
                n += 1
                yield "resource", path, win.value()
            if n:
                yield "end", path, win.offset()
        elif key == "child_modules":
            if win.peek() != "[":
                raise NotStreamable(f"{path}.child_modules")
            for i in win.items():
                if win.peek() != "{":
                    raise NotStreamable(f"{path}.child_modules")
                yield from _module(win, f"{path}.child_modules[{i}]", depth + 1)
        else:
            value = win.value()
            if key == "address":
                yield "address", path, value


def _planned_values(win: _Window) -> Iterator[Event]:
    roots = 0
    for key in win.members():
        if key == "root_module":
            roots += 1
            if roots > 1 or win.peek() != "{":
                raise NotStreamable("planned_values.root_module")
            yield from _module(win, "planned_values.root_module", 0)
        else:
            win.value()
    if roots != 1:
        raise NotStreamable("planned_values has no root_module")


def _head(win: _Window, planned: Callable[[Iterator[Event]], None]) -> tuple[dict[str, Any],
                                                                             int | None]:
    """The top-level members up to the first skippable one (``planned`` is given the events of
    planned_values), and the file offset of that member's key (None: there is none)."""
    head: dict[str, Any] = {}
    walked = False
    for key in win.members():
        if key in _SKIPPABLE:
            if not walked:
                raise NotStreamable("planned_values after a member not needed")
            return head, win.offset()  # just after the key: what is before it is read
        if key == "planned_values":
            if walked:
                raise NotStreamable("planned_values twice")
            walked = True
            planned(_planned_values(win))
        else:
            head[key] = win.value()
    while True:
        win.pos = _WS.match(win.buf, win.pos).end()  # type: ignore[union-attr]
        if win.pos < len(win.buf):
            raise NotStreamable("text after the plan")
        if win.eof:
            break
        win.more()
    if not walked:
        raise NotStreamable("no planned_values")
    return head, None


def _tail(f: IO[bytes], start: int, size: int) -> dict[str, Any]:
    """``configuration`` and the members after it: found from the file's end (the last
    ``"configuration"`` key after ``start`` that is a member of the top-level object, up to the
    closing brace and the end), reading more of the end until it is found."""
    want = TAIL
    while True:
        at = max(start, size - want)
        f.seek(at)
        data = f.read(size - at)
        skip = 0
        while at + skip > start and skip < len(data) and data[skip] & 0xC0 == 0x80:
            skip += 1  # not in the middle of a character
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError:
            raise NotStreamable("not UTF-8") from None
        del data
        found = _configuration(text, whole=at == start)
        if found is not None:
            return found
        if at == start:
            raise NotStreamable("no configuration at the end")
        want *= 4


def _configuration(text: str, whole: bool) -> dict[str, Any] | None:
    dec = json.JSONDecoder(parse_constant=_constant)
    end = len(text)
    for _ in range(MAX_TAIL_CANDIDATES):
        k = text.rfind('"configuration"', 0, end)
        if k < 0:
            return None
        end = k
        b = k - 1
        while b >= 0 and text[b] in " \t\r\n":
            b -= 1
        if b < 0:
            if whole:
                raise NotStreamable("configuration right after a member not needed")
            return None  # what is before it is not read yet
        if text[b] != ",":
            continue
        tail: dict[str, Any] = {}
        try:
            j, stop = _members(text, k, dec, tail, frozenset())
        except (ValueError, RecursionError):
            continue
        if stop is None and text[j:].strip() == "" and "configuration" in tail:
            return tail
    raise NotStreamable("no configuration among the last keys")


class _Pass1:
    """The first walk: what the reader must know of every planned resource before resolving
    any (:class:`~.planned.PlannedIndex`), and each module object's address."""

    def __init__(self) -> None:
        self.index = PlannedIndex()
        self.modules: dict[str, str] = {}  # module JSON path -> module instance address
        self.segments: list[Segment] = []

    def __call__(self, events: Iterator[Event]) -> None:
        kept: list[tuple[str, dict[str, Any]]] = []
        segments = self.segments
        for kind, path, value in events:
            if kind == "resource":
                segments[-1].count += 1
                kept.append((path, {k: value.get(k) for k in ("address", "type", "name")
                                    if k in value} | {"mode": value.get("mode", "managed")}))
            elif kind == "address":
                self.modules[path] = value if isinstance(value, str) else ""
            elif kind == "segment":
                if segments and segments[-1].end < 0:
                    segments[-1].end = value
                segments.append(Segment(path, value))
            elif kind == "end":
                segments[-1].end = value
        for path, r in kept:
            self.index.add(self.module_of(path), r)

    def module_of(self, path: str) -> str:
        return "" if path == "planned_values.root_module" else self.modules.get(path, "")


@dataclass
class Segment:
    """A run of planned resources of one module, one after the other in the file: the bytes
    ``[start, end)`` hold ``count`` of them (and what follows the last one, up to ``end``)."""

    path: str  # the module's JSON path
    start: int
    end: int = -1
    count: int = 0
    module: str = ""  # the module instance address, when known (:mod:`.skim`; else from path)


PART = 1000  # resources of one part (of runs one after the other) read at once


def _parts(segments: list[Segment]) -> list[list[Segment]]:
    """The runs in parts of at least PART resources (the last may be smaller), in order."""
    parts: list[list[Segment]] = []
    size = PART
    for seg in segments:
        if size >= PART:
            parts.append([])
            size = 0
        parts[-1].append(seg)
        size += seg.count
    return parts


def _skimmed(f: IO[bytes], start: int, size: int) -> Skimmed | None:
    """The plan's members and planned resources as :mod:`.skim` finds them (planned_values by
    msgspec, the other members by this module's window as :func:`_head` and :func:`_tail` read
    them); None when the walk by window must read the file."""
    from scanner.sources.terraform.plan.skim import planned_values

    try:
        win = _Window(f, start)
        head: dict[str, Any] = {}
        found = None
        for key in win.members():
            if key in _SKIPPABLE:
                return None  # planned_values after a member not needed (or none)
            if key == "planned_values":
                win.peek()
                found = planned_values(f, win.offset(), SEGMENT)
                break
            head[key] = win.value()
        if found is None:
            return None
        skimmed, end = found
        after = _Window(f, end)  # the member after planned_values: one not needed
        after.take(",")
        if after.peek() != '"' or after.value() not in _SKIPPABLE:
            return None
        after.take(":")
        head.update(_tail(f, after.offset(), size))
    except NotStreamable:
        return None
    skimmed.doc = head
    return skimmed


def _read_part(path: Path, stamp: tuple[int, int], pass1: _Pass1 | None,
               part: list[Segment]) -> Iterator[Planned]:
    """The planned resources of one part, decoded from its byte range of the file (the same
    file as the first walk's: same size and modification time, else NotStreamable)."""
    with open_plan(path) as f:
        st = os.fstat(f.fileno())
        if (st.st_size, st.st_mtime_ns) != stamp:
            raise NotStreamable("the file changed while it was read")
        f.seek(part[0].start)
        data = f.read(part[-1].end - part[0].start)
    if len(data) != part[-1].end - part[0].start:
        raise NotStreamable("the file changed while it was read")
    dec = json.JSONDecoder(parse_constant=_constant)
    for seg in part:
        try:
            text = data[seg.start - part[0].start:seg.end - part[0].start].decode("utf-8")
        except UnicodeDecodeError:
            raise NotStreamable("not UTF-8") from None
        module = seg.module if pass1 is None else pass1.module_of(seg.path)
        at = 0
        for i in range(seg.count):
            at = _WS.match(text, at).end()  # type: ignore[union-attr]
            if i:
                if text[at:at + 1] != ",":
                    raise NotStreamable("the file changed while it was read")
                at = _WS.match(text, at + 1).end()  # type: ignore[union-attr]
            try:
                value, at = dec.raw_decode(text, at)
            except (ValueError, RecursionError):
                raise NotStreamable("the file changed while it was read") from None
            if not isinstance(value, dict):
                raise NotStreamable("the file changed while it was read")
            yield module, value


def _walk_again(path: Path, start: int, pass1: _Pass1) -> Iterator[Planned]:
    """The planned resources, decoded one by one, in the order of the first walk."""
    seen = 0
    with open_plan(path) as f:
        win = _Window(f, start)
        for key in win.members():
            if key != "planned_values":
                win.value()
                continue
            for kind, jpath, value in _planned_values(win):
                if kind == "resource":
                    seen += 1
                    yield pass1.module_of(jpath), value
            break
    if seen != pass1.index.count:
        raise NotStreamable("the file changed while it was read")


def open_plan(path: Path) -> IO[bytes]:
    why = not_regular(path)
    if why is not None:
        raise NotStreamable(why)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        return os.fdopen(fd, "rb", buffering=CHUNK)
    except OSError as exc:
        raise NotStreamable(str(exc)) from None


def plan_lines(path: Path) -> dict[str, int] | None:
    """First line of each address in the plan file; None when the JSON is on one line (as
    :func:`.document._plan_lines` on the whole text), read a chunk at a time."""
    if _one_line(path):
        return None
    lines: dict[str, int] = {}
    line = 1
    carry = b""
    with open_plan(path) as f:
        while True:
            data = f.read(CHUNK)
            chunk = carry + data
            cut = chunk.rfind(b"\n") + 1 if data else len(chunk)
            if cut == 0 and data:  # a long line: read on (the whole read holds it all too)
                carry = chunk
                continue
            carry, chunk = chunk[cut:], chunk[:cut]
            pos = 0
            for m in _ADDRESS_BYTES.finditer(chunk):
                raw = m.group(1).decode("utf-8", "replace")
                try:
                    addr = json.loads(f'"{raw}"') if "\\" in raw else raw
                except ValueError:
                    continue
                if addr not in lines:
                    line += chunk.count(b"\n", pos, m.start())
                    pos = m.start()
                    lines[addr] = line
            line += chunk.count(b"\n", pos)
            if not data:
                return lines


def _one_line(path: Path) -> bool:
    """No line break but (maybe) one at the end: terraform's own output."""
    newlines = 0
    last = b""
    with open_plan(path) as f:
        while data := f.read(CHUNK):
            newlines += data.count(b"\n")
            last = data[-1:]
    return newlines - (last == b"\n") <= 0


_ADDRESS_BYTES = re.compile(_ADDRESS.pattern.encode())


def stream_plan(path: Path, *, force: bool = False) -> tuple[dict[str, Any], PlannedResources,
                                                            Callable[[], dict[str, int] | None]]:
    """The plan's members but planned_values (and those not needed), its planned resources to
    go through once, and its address lines. Raises NotStreamable."""
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError) as exc:
        raise NotStreamable(str(exc)) from None
    if size > MAX_PLAN_BYTES or (not force and size < STREAM_BYTES):
        raise NotStreamable("size")
    with open_plan(path) as f:
        st = os.fstat(f.fileno())
        stamp = (st.st_size, st.st_mtime_ns)
        head = f.read(8192)
        codec, start = encoding_of(head)
        if codec != "utf-8" or b"\x00" in head or head.startswith(b"PK\x03\x04"):
            raise NotStreamable("not UTF-8 JSON")
        skimmed = _skimmed(f, start, size)
        if skimmed is None:
            win = _Window(f, start)
            pass1 = _Pass1()
            doc, stop = _head(win, pass1)
            if stop is not None:
                doc.update(_tail(f, stop, size))
    if skimmed is not None:
        doc = skimmed.doc
    version = doc.get("format_version")
    if not isinstance(version, str) or not version.startswith("1."):
        raise NotStreamable("format_version")
    if skimmed is not None:
        runs = _parts([Segment(module, first, end, count, module=module)
                       for module, first, end, count in skimmed.runs])
        index = skimmed.index
        del skimmed
        return doc, PlannedResources(
            index, lambda: (p for i in range(len(runs))
                            for p in _read_part(path, stamp, None, runs[i])),
            parts=len(runs), part=lambda i: _read_part(path, stamp, None, runs[i]),
        ), lambda: plan_lines(path)
    parts = _parts(pass1.segments)
    planned = PlannedResources(pass1.index, lambda: _walk_again(path, start, pass1),
                               parts=len(parts),
                               part=lambda i: _read_part(path, stamp, pass1, parts[i]))
    return doc, planned, lambda: plan_lines(path)
