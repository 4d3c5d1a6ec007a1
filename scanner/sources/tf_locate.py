"""Find `resource "TYPE" "NAME" { ... }` blocks in a directory's .tf files, cheaply.

Used by the plan source to point findings at the .tf source a plan was made from. A text scan,
not an HCL parser: it finds block headers at the start of a line and the matching closing brace,
skipping strings, heredocs and comments. It also reads inline suppressions
(``# gpuaudit:skip=ID[,ID]:reason`` inside the block or in the comment lines right above it)
and the names of ``dynamic "NAME"`` blocks inside the resource. Stdlib only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from scanner.model import Skip

_HEADER = re.compile(r'^[ \t]*resource[ \t]+"([^"\n]+)"[ \t]+"([^"\n]+)"[ \t]*\{', re.M)
_DYNAMIC = re.compile(r'\bdynamic[ \t]+"([^"\n]+)"[ \t]*\{')
_SETS = re.compile(
    r"^[ \t]*([A-Za-z_][\w-]*)[ \t]*(?:\{|=[ \t]*((?:var|local|module|data|aws_[\w-]+)"
    r"(?:\.[A-Za-z_][\w-]*|\[[^\]\n]*\])+[ \t]*(?=$|#|//))?)", re.M)
_SKIP = re.compile(r"gpuaudit:skip=([A-Za-z0-9_,\- ]+?)(?::(.*))?$")
_HEREDOC = re.compile(r"<<-?[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\n")


@dataclass(frozen=True)
class Block:
    file: Path
    start_line: int
    end_line: int
    skips: tuple[Skip, ...]
    bad_skips: tuple[tuple[int, str], ...]  # (line, text) of skips without a reason
    dynamic: dict[str, dict[str, str | None]]  # dynamic block -> {name it sets: plain ref}


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


def _comment_text(line: str) -> str | None:
    stripped = line.strip()
    for marker in ("#", "//", "/*", "*"):
        if stripped.startswith(marker):
            return stripped[len(marker):].strip().removesuffix("*/").strip()
    idx = line.find("#")
    if idx >= 0:
        return line[idx + 1:].strip()
    idx = line.find("//")
    return line[idx + 2:].strip() if idx >= 0 else None


def _skips(lines: list[str], start: int, end: int, file: Path
           ) -> tuple[tuple[Skip, ...], tuple[tuple[int, str], ...]]:
    """Skips in lines[start-1 .. end-1] (1-based block span) and the comment lines above."""
    first = start - 1
    while first - 1 >= 0 and lines[first - 1].lstrip().startswith(("#", "//", "/*", "*")):
        first -= 1
    skips: list[Skip] = []
    bad: list[tuple[int, str]] = []
    for idx in range(first, min(end, len(lines))):
        line = lines[idx]
        if "gpuaudit:skip" not in line:
            continue
        comment = _comment_text(line)
        m = _SKIP.search(comment or "")
        if m is None:
            bad.append((idx + 1, line.strip()))
            continue
        reason = (m.group(2) or "").strip()
        ids = [p.strip().upper() for p in m.group(1).split(",") if p.strip()]
        if not reason or not ids:
            bad.append((idx + 1, line.strip()))
            continue
        for pid in ids:
            skips.append(Skip(pid, reason, f"comment at {file}:{idx + 1}"))
    return tuple(skips), tuple(bad)


def _dynamic_blocks(text: str, start: int, end: int) -> dict[str, dict[str, str | None]]:
    """For each `dynamic "NAME"` block: the names it sets at any depth, each with its value
    when that value is one plain reference (`var.x`, `aws_kms_key.k.arn`, `module.m.out`)."""
    out: dict[str, dict[str, str | None]] = {}
    for m in _DYNAMIC.finditer(text, start, end):
        body = text[m.end() - 1:_block_end(text, m.end() - 1)]
        names = out.setdefault(m.group(1), {})
        for s in _SETS.finditer(body):
            name, ref = s.group(1), s.group(2)
            if name in names and names[name] != ref:
                ref = None  # set twice, differently
            names[name] = ref
    return out


def scan_file(path: Path) -> dict[tuple[str, str], Block]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
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
            path, line_no, end_line, skips, bad, _dynamic_blocks(text, brace, end)))
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
    manifest = root / ".terraform" / "modules" / "modules.json"
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out: dict[str, Path] = {}
    for entry in data.get("Modules", []) if isinstance(data, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("Key"), str) \
                and isinstance(entry.get("Dir"), str) and entry["Key"]:
            out[entry["Key"]] = root / entry["Dir"]
    return out
