"""The first walk of a large plan by msgspec: planned_values found, each planned resource's
address, type, name and mode decoded without building the rest of it, and where each run of
resources lies in the file.

The walk by window (:mod:`.stream`) decodes each planned resource whole with the stdlib's decoder
to keep four of its keys. msgspec (a C decoder) skips what is not asked for without building it
and keeps a value as its text (``msgspec.Raw``): the 50k bench plan's first walk takes 0.32 s
instead of 0.55-0.68 s. The resources themselves are then read part by part from their byte
ranges of the file by the stdlib's decoder, as before, so their values are exactly the ones the
other reads give.

The members kept are those :mod:`.stream` keeps (read by its window): those before
planned_values, then ``configuration`` and what follows it from the file's end. planned_values'
text is read up to the first place where a member not needed follows it and before which it
decodes whole (a value's text decodes only up to its own end), at most :data:`MAX_CANDIDATES`
places tried. Wherever the two walks could differ (no member not needed right after
planned_values, a resource not found where the runs say) and wherever msgspec refuses the text
(``NaN``, a lone surrogate, a shape not terraform's), :func:`skim` gives None and the walk by
window reads the file: never another answer, at worst the slower walk. planned_values' text is
held only during the walk (about a third of a plan).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import IO, Any

import msgspec

from scanner.sources.terraform.plan.config import MAX_MODULE_DEPTH
from scanner.sources.terraform.plan.document import _SKIPPABLE
from scanner.sources.terraform.plan.planned import PlannedIndex


class _Head(msgspec.Struct):
    """What the index keeps of a planned resource (the rest of it is skipped, not built)."""

    address: Any = msgspec.UNSET
    type: Any = msgspec.UNSET
    name: Any = msgspec.UNSET
    mode: Any = msgspec.UNSET


class _Module(msgspec.Struct):
    address: Any = None
    resources: list[msgspec.Raw] = []
    child_modules: list[_Module] = []


class _Values(msgspec.Struct):
    root_module: _Module


_VALUES = msgspec.json.Decoder(_Values)
_HEAD = msgspec.json.Decoder(_Head)


class NotSkimmed(Exception):
    """msgspec refused the text, or the walk by window could answer otherwise."""


@dataclass
class Skimmed:
    doc: dict[str, Any]  # the members kept, decoded by the stdlib (planned_values apart)
    index: PlannedIndex
    # runs of planned resources one after the other in the file, in plan order: (module
    # instance address, byte offset of the first, byte offset just after the last, how many)
    runs: list[tuple[str, int, int, int]] = field(default_factory=list)


MAX_CANDIDATES = 4  # ends of planned_values tried (each a decode of its text) before giving up
READ = 8 << 20  # bytes read at a time while looking for the end of planned_values
_NEXT = re.compile(rb',[ \t\r\n]*"(?:' + b"|".join(k.encode() for k in sorted(_SKIPPABLE))
                   + rb')"[ \t\r\n]*:')


def planned_values(f: IO[bytes], at: int, segment: int) -> tuple[Skimmed, int] | None:
    """planned_values, whose text begins at byte ``at``: its resources' keys in the index and
    their runs of at most ``segment`` (the doc left empty), and the byte just after it; None
    when the walk by window must read it (see the module doc)."""
    try:
        found = _values(f, at)
        if found is None:
            return None
        text, values, end = found
        out = Skimmed({}, PlannedIndex())
        _walk(values.root_module, text, at, out, segment)
        return out, end
    except (NotSkimmed, msgspec.MsgspecError, ValueError, TypeError, RecursionError):
        return None


def _values(f: IO[bytes], at: int) -> tuple[memoryview, _Values, int] | None:
    """planned_values, whose text begins at byte ``at``: its text, decoded as far as the walk
    needs it, and the byte just after it; None when its end is not found. Its end is the first
    place after which a member not needed begins and before which planned_values decodes (a
    value's text decodes whole only up to its own end)."""
    f.seek(at)
    buf = bytearray()
    searched = 0  # bytes of buf searched (a match may begin in the last 64 of them)
    done = 0  # the end of the last match tried
    tried = 0
    while True:
        data = f.read(READ)
        buf += data
        for m in _NEXT.finditer(buf, max(done, searched - 64)):
            done = m.end()
            tried += 1
            if tried > MAX_CANDIDATES:
                return None
            text = memoryview(buf)[:m.start()]
            try:
                values = _VALUES.decode(text)
            except msgspec.MsgspecError:
                del text
                continue
            return text, values, at + m.start()
        searched = len(buf)
        if not data:
            return None


_BETWEEN = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*")


def _walk(root: _Module, text: memoryview, at: int, out: Skimmed, segment: int) -> None:
    """The modules in plan order (each one's resources, then its child modules), as the walk
    by window and the whole-document read go through them: each resource's keys into the index,
    and where each run of resources lies in the file (``text`` begins at byte ``at``). A run's
    first resource is its first copy after the last run (nothing but the module's own keys lies
    between them); the next ones follow it, a comma apart."""
    data = text.obj if isinstance(text.obj, bytes | bytearray) else bytes(text)
    stack: list[tuple[_Module, int]] = [(root, 0)]
    pos = 0
    while stack:
        module, depth = stack.pop()
        if depth > MAX_MODULE_DEPTH:
            raise NotSkimmed("modules nested too deeply")
        address = module.address if depth and isinstance(module.address, str) else ""
        for k, raw in enumerate(module.resources):
            head = _HEAD.decode(raw)
            kept = {key: getattr(head, key) for key in ("address", "type", "name")
                    if getattr(head, key) is not msgspec.UNSET}
            out.index.add(address, kept | {
                "mode": "managed" if head.mode is msgspec.UNSET else head.mode})
            body = bytes(raw)
            if k == 0:
                start = data.find(body, pos)
                if start < 0 or start + len(body) > len(text):
                    raise NotSkimmed("a resource not found where it was read")
            else:
                between = _BETWEEN.match(data, pos)
                start = between.end() if between else -1
                if data[start:start + len(body)] != body:
                    raise NotSkimmed("resources not one after the other")
            if k % segment == 0:
                out.runs.append((address, at + start, -1, 0))
            pos = start + len(body)
            mod, first, _, count = out.runs[-1]
            out.runs[-1] = (mod, first, at + pos, count + 1)
        stack.extend((child, depth + 1) for child in reversed(module.child_modules))
