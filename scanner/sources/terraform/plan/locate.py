"""Find `resource "TYPE" "NAME" { ... }` blocks in a directory's .tf files, cheaply.

Used by the plan source to point findings at the .tf source a plan was made from. A text scan,
not an HCL parser: it finds block headers at the start of a line and the matching closing brace,
skipping strings, heredocs and comments. It also reads inline suppressions
(``# gpuaudit:skip=ID:reason`` inside the block or in the comment lines right above it)
and the names of ``dynamic "NAME"`` blocks inside the resource. Stdlib only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.model import Skip

_HEADER = re.compile(r'^[ \t]*resource[ \t]+"([^"\n]+)"[ \t]+"([^"\n]+)"[ \t]*\{', re.M)
_DYNAMIC = re.compile(r'\bdynamic[ \t]+"([^"\n]+)"[ \t]*\{')
_MEMBER = re.compile(
    r'^[ \t]*(?:dynamic[ \t]+"(?P<dyn>[^"\n]+)"[ \t]*\{|(?P<block>[A-Za-z_][\w-]*)[ \t]*\{'
    r'|(?P<attr>[A-Za-z_][\w-]*)[ \t]*=(?!=))', re.M)
_CONTENT = re.compile(r"(?:^|\s)content[ \t]*\{")
_PLAIN_REF = re.compile(r'(?:var|local|module|data|aws_[\w-]+)(?:\.[A-Za-z_][\w-]*'
                        r'|\[(?:"[^"\n]*"|[0-9]+)\])+')
_SKIP = re.compile(r"gpuaudit:skip=([A-Za-z0-9_.\-]+)(?::(.*?))?(?=gpuaudit:skip=|\*/|$)", re.S)
_RES = r"([A-Za-z_][\w-]*\.[A-Za-z_][\w-]*)"
_SPLAT = rf"{_RES}[ \t]*(?:\.\*|\[\*\])[ \t]*\.[ \t]*[A-Za-z_][\w-]*"
# One element of a splat by a literal index, as 0.11-era code writes it: `aws_subnet.a.*.id[0]`,
# `aws_subnet.a[*].id[0]`, `element(aws_subnet.a.*.id, 0)` (also inside "${ }"). The plan's
# references keep only `aws_subnet.a`: the index is read from the source.
_PICK = re.compile(
    rf'"?(?:\$\{{)?[ \t]*(?:{_SPLAT}[ \t]*\[[ \t]*([0-9]+)[ \t]*\]'
    rf'|element[ \t]*\([ \t]*{_SPLAT}[ \t]*,[ \t]*([0-9]+)[ \t]*\))[ \t]*(?:\}})?"?')
_HEREDOC = re.compile(r"<<-?[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\n")


@dataclass(frozen=True)
class Block:
    file: Path
    start_line: int
    end_line: int
    skips: tuple[Skip, ...]
    bad_skips: tuple[tuple[int, str], ...]  # (line, text) of skips without a reason
    dynamic: dict[str, dict[str, Any]]  # dynamic block -> what its content sets (see _body)
    # top-level attribute -> (resource, index) it picks from a splat (see _picks)
    picks: dict[str, tuple[str, int]] = field(default_factory=dict)


def _block_end(text: str, pos: int) -> int:
    """Index just past the brace that closes the block whose "{" is at text[pos]."""
    depth = 0
    i, n = pos, len(text)
    while i < n:
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                elif text[i] == "\n":
                    break
                i += 1
        elif c == "#" or (c == "/" and text.startswith("//", i)):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        elif c == "/" and text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        elif c == "<" and text.startswith("<<", i):
            m = _HEREDOC.match(text, i)
            if m:
                end = re.compile(r"^[ \t]*" + re.escape(m.group(1)) + r"[ \t]*$", re.M)
                found = end.search(text, m.end())
                i = n if found is None else found.end()
                continue
        i += 1
    return n


def _comments(lines: list[str], first: int, end: int) -> Iterator[tuple[int, str]]:
    """(0-based line, comment text) for lines[first:end] (#, //, and /* */ over several lines).
    Quotes are not tracked: a marker inside a string is rare enough."""
    in_block = False
    for idx in range(first, min(end, len(lines))):
        line = lines[idx]
        if in_block:
            close = line.find("*/")
            in_block = close < 0
            yield idx, line if close < 0 else line[:close]
            continue
        starts = [(p, m) for m in ("#", "//", "/*") if (p := line.find(m)) >= 0]
        if not starts:
            continue
        pos, marker = min(starts)
        text = line[pos + len(marker):]
        if marker == "/*":
            close = text.find("*/")
            in_block = close < 0
            text = text if close < 0 else text[:close]
        yield idx, text


def _skips(lines: list[str], start: int, end: int, file: Path
           ) -> tuple[tuple[Skip, ...], tuple[tuple[int, str], ...]]:
    """Skips in the block span (1-based lines start..end) and the comment lines right above.

    Same syntax as the HCL source: ``gpuaudit:skip=ID:reason`` (several per line allowed); one
    without a reason does not suppress anything (reported as a notice)."""
    first = start - 1
    while first - 1 >= 0 and lines[first - 1].lstrip().startswith(("#", "//", "/*", "*")):
        first -= 1
    skips: list[Skip] = []
    bad: list[tuple[int, str]] = []
    for idx, comment in _comments(lines, first, end):
        if "gpuaudit:skip" not in comment:
            continue
        found = False
        for m in _SKIP.finditer(comment):
            found = True
            reason = (m.group(2) or "").strip().rstrip("*/").strip().rstrip(",;").strip()
            if reason:
                skips.append(Skip(m.group(1), reason, f"comment at {file}:{idx + 1}"))
            else:
                bad.append((idx + 1, lines[idx].strip()))
        if not found:
            bad.append((idx + 1, lines[idx].strip()))
    return tuple(skips), tuple(bad)


def _value_end(text: str, i: int, end: int) -> int:
    """End of an attribute value starting at i: the line, or past the brackets it opens."""
    depth = 0
    n = min(end, len(text))
    while i < n:
        c = text[i]
        if c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth < 0:
                return i
        elif c == '"':
            i += 1
            while i < n and text[i] not in '"\n':
                i += 2 if text[i] == "\\" else 1
        elif c == "\n" and depth <= 0:
            return i
        elif c == "<" and text.startswith("<<", i):
            m = _HEREDOC.match(text, i)
            if m:
                close = re.compile(r"^[ \t]*" + re.escape(m.group(1)) + r"[ \t]*$", re.M)
                found = close.search(text, m.end(), n)
                i = n if found is None else found.end()
                continue
        i += 1
    return n


def _body(text: str, start: int, end: int) -> dict[str, Any]:
    """What a block body text[start:end] sets: {name: plain reference or None, block: {...}};
    `dynamic "x"` blocks count as blocks named x (their `content`)."""
    out: dict[str, Any] = {}
    i = start
    while True:
        m = _MEMBER.search(text, i, end)
        if m is None:
            return out
        if m.group("dyn"):
            brace = m.end() - 1
            close = _block_end(text, brace)
            content = _CONTENT.search(text, brace + 1, close)
            inner = _body(text, content.end(), _block_end(text, content.end() - 1) - 1) \
                if content else {}
            _merge(out, m.group("dyn"), inner)
            i = close
        elif m.group("block"):
            brace = m.end() - 1
            close = _block_end(text, brace)
            _merge(out, m.group("block"), _body(text, brace + 1, close - 1))
            i = close
        else:
            value_end = _value_end(text, m.end(), end)
            value = text[m.end():value_end].strip()
            ref = value if _PLAIN_REF.fullmatch(value) else None
            name = m.group("attr")
            out[name] = ref if out.get(name, ref) == ref else None
            i = max(value_end, m.end())


def _picks(text: str, start: int, end: int) -> dict[str, tuple[str, int]]:
    """Top-level attributes of a block body text[start:end] whose value is one element of a
    splat by a literal index (see _PICK): {attribute: (resource, index)}."""
    out: dict[str, tuple[str, int]] = {}
    i = start
    while True:
        m = _MEMBER.search(text, i, end)
        if m is None:
            return out
        if m.group("dyn") or m.group("block"):
            i = _block_end(text, m.end() - 1)
            continue
        value_end = _value_end(text, m.end(), end)
        pick = _PICK.fullmatch(text[m.end():value_end].strip())
        if pick is not None:
            res, idx = (pick.group(1), pick.group(2)) if pick.group(1) else \
                (pick.group(3), pick.group(4))
            out[m.group("attr")] = (res, int(idx))
        i = max(value_end, m.end())


def _merge(out: dict[str, Any], name: str, body: dict[str, Any]) -> None:
    prev = out.get(name)
    if isinstance(prev, dict):
        for k, v in body.items():
            if k in prev and prev[k] != v:
                prev[k] = v if isinstance(v, dict) and isinstance(prev[k], dict) else None
            else:
                prev[k] = v
    else:
        out[name] = body


def _dynamic_blocks(text: str, start: int, end: int) -> dict[str, dict[str, Any]]:
    """Every `dynamic "NAME"` block inside a resource (at any depth): what its content sets."""
    out: dict[str, dict[str, Any]] = {}
    for m in _DYNAMIC.finditer(text, start, end):
        brace = m.end() - 1
        close = _block_end(text, brace)
        content = _CONTENT.search(text, brace + 1, close)
        if content:
            _merge(out, m.group(1),
                   _body(text, content.end(), _block_end(text, content.end() - 1) - 1))
    return out


def scan_file(path: Path) -> dict[tuple[str, str], Block]:
    from scanner.inputs.safe_read import ReadError, read_regular

    try:  # a regular file only: a FIFO named main.tf beside the plan would block the scan
        text = read_regular(path, limit=5 * 1024 * 1024).decode("utf-8", errors="replace")
    except (ReadError, OSError):
        return {}
    lines = text.split("\n")
    found: dict[tuple[str, str], Block] = {}
    line_no, last = 1, 0
    for m in _HEADER.finditer(text):
        line_no += text.count("\n", last, m.start())
        last = m.start()
        brace = m.end() - 1
        end = _block_end(text, brace)
        end_line = line_no + text.count("\n", m.start(), end)
        skips, bad = _skips(lines, line_no, end_line, path)
        found.setdefault((m.group(1), m.group(2)), Block(
            path, line_no, end_line, skips, bad, _dynamic_blocks(text, brace, end),
            _picks(text, brace + 1, end - 1)))
    return found


class SourceIndex:
    """Resource blocks of a Terraform root module and its local child modules, by module path.

    ``module_dirs`` maps a module path without instance keys ("" for the root,
    "module.a.module.b") to its directory. Directories are scanned lazily, once.
    """

    def __init__(self, module_dirs: dict[str, Path]) -> None:
        self.module_dirs = module_dirs
        self._cache: dict[Path, dict[tuple[str, str], Block]] = {}

    def _dir(self, d: Path) -> dict[tuple[str, str], Block]:
        blocks = self._cache.get(d)
        if blocks is None:
            blocks = {}
            try:
                files = sorted(p for p in d.iterdir() if p.suffix == ".tf" and p.is_file())
            except OSError:
                files = []
            for f in files:
                for key, block in scan_file(f).items():
                    blocks.setdefault(key, block)
            self._cache[d] = blocks
        return blocks

    def locate(self, module_path: str, tf_type: str, name: str) -> Block | None:
        d = self.module_dirs.get(module_path)
        if d is None:
            return None
        return self._dir(d).get((tf_type, name))


def has_tf_files(d: Path) -> bool:
    try:
        return any(p.suffix == ".tf" and p.is_file() for p in d.iterdir())
    except OSError:
        return False


def installed_modules(root: Path) -> dict[str, Path]:
    """`terraform init`'s record of module directories: {"a.b": dir} (keys as terraform writes
    them, dotted call names), from .terraform/modules/modules.json when present."""
    from scanner.inputs.safe_read import ReadError, read_regular

    manifest = root / ".terraform" / "modules" / "modules.json"
    try:  # a regular file only (a FIFO, or a link to /dev/zero, would hang or fill memory)
        data = json.loads(read_regular(manifest, limit=16 * 1024 * 1024).decode("utf-8"))
    except (ReadError, OSError, ValueError, RecursionError):
        return {}
    out: dict[str, Path] = {}
    for entry in data.get("Modules", []) if isinstance(data, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("Key"), str) \
                and isinstance(entry.get("Dir"), str) and entry["Key"]:
            out[entry["Key"]] = root / entry["Dir"]
    return out
