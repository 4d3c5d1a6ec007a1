"""Read the ``.tf`` / ``.tf.json`` files of one directory into a :class:`ModuleConfig`.

Unreadable files (too big, binary, not UTF-8, a syntax error, a symlink loop) become
:class:`~scanner.model.InputError` entries naming the file and line; the module is still built
from its other files. ``override.tf`` / ``*_override.tf`` files are merged into the blocks they
override, as terraform does.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from typing import Any

from scanner.inputs.real_path import real_path
from scanner.model import InputError
from scanner.sources.terraform.hcl.parse import (
    Attribute,
    Block,
    Body,
    Comment,
    Expr,
    Lit,
    ParseError,
    parse_hcl,
)

MAX_FILE_BYTES = 5 * 1024 * 1024
META_ARGUMENTS = frozenset({"count", "for_each", "provider", "depends_on"})
MODULE_META = frozenset({"source", "version", "count", "for_each", "providers", "depends_on"})


@dataclass
class ResourceConfig:
    mode: str  # "managed" | "data"
    type: str
    name: str
    body: Body
    file: str
    start_line: int
    end_line: int
    skip_comments: list[Comment] = field(default_factory=list)
    key: str = ""  # "[data.]type.name", set from the above

    def __post_init__(self) -> None:
        prefix = "data." if self.mode == "data" else ""
        self.key = f"{prefix}{self.type}.{self.name}"


@dataclass
class ModuleCallConfig:
    name: str
    source: str | None  # None: not a literal string
    body: Body
    file: str
    line: int


@dataclass
class VariableConfig:
    name: str
    body: Body
    file: str
    line: int
    parsed_type: Any = None  # the parsed type constraint, cached by .modules


@dataclass
class ModuleConfig:
    dir: str
    files: list[str] = field(default_factory=list)
    variables: dict[str, VariableConfig] = field(default_factory=dict)
    locals: dict[str, tuple[Attribute, str]] = field(default_factory=dict)
    resources: dict[str, ResourceConfig] = field(default_factory=dict)  # key: [data.]type.name
    module_calls: dict[str, ModuleCallConfig] = field(default_factory=dict)
    outputs: dict[str, tuple[Attribute, str]] = field(default_factory=dict)
    sensitive_outputs: set[str] = field(default_factory=set)
    # provider configurations by "name" or "name.alias" (the region data.aws_region reports,
    # and the region resources are priced in)
    providers: dict[str, Body] = field(default_factory=dict)
    errors: list[InputError] = field(default_factory=list)

    @property
    def aws_providers(self) -> list[Body]:
        """The ``provider "aws"`` blocks, the default one and the aliased ones."""
        return [body for key, body in self.providers.items()
                if key == "aws" or key.startswith("aws.")]


def read_bytes(path: str) -> bytes:
    """The bytes of a regular file, at most MAX_FILE_BYTES; ParseError otherwise. Opened
    non-blocking and checked with fstat, so a FIFO or device named ``x.tf`` cannot hang us."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ParseError("not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise ParseError(f"file too large ({st.st_size} bytes; limit {MAX_FILE_BYTES})")
        chunks = []
        left = MAX_FILE_BYTES + 1
        got = 0
        while left > 0:
            # sized by fstat (small files need no 1 MiB buffer), then in 1 MiB steps
            want = min(left, st.st_size + 1 if not got else 1 << 20)
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
            got += len(chunk)
            if len(chunk) < want and got >= st.st_size:
                break  # the whole file, and a short read: its end (saves a read per file)
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_FILE_BYTES:
        raise ParseError(f"file too large (limit {MAX_FILE_BYTES} bytes)")
    return data


def decode_source(data: bytes) -> str:
    """UTF-8 text of a source file; binary or undecodable content is a ParseError with a line."""
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise ParseError("binary file (contains NUL bytes)", line)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ParseError("not valid UTF-8", line) from None
    return text.removeprefix("\ufeff")


def read_text(path: str) -> str:
    """Read a source file as text; raise ParseError with a reason (and line) when it cannot."""
    return decode_source(read_bytes(path))


def join_path(directory: str, name: str) -> str:
    return os.path.join(directory, name) if directory not in ("", ".") else name


def is_override(name: str) -> bool:
    stem = name.removesuffix(".json").removesuffix(".tf")
    return stem == "override" or stem.endswith("_override")


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def unquoted(reason: str) -> str:
    """An error reason without the text it quotes (for files outside the scanned tree)."""
    return _QUOTED.sub("'…'", reason)


class ParseCache:
    """Per-run caches: directory listings (file names) and parse results by file content
    (stamped-out stacks share identical variables.tf / versions.tf files).

    It also keeps the scanned trees (real paths): a file or directory inside a tree whose
    real path is outside every tree (a symbolic link out of it) is not read; a module
    directory reached from code by a path that leaves the tree (``source = "../../x"``) is
    read, as terraform reads it, and becomes a tree of its own; errors in files outside the
    scanned trees never quote their text."""

    def __init__(self) -> None:
        self.listings: dict[str, list[str]] = {}
        self.parsed: dict[str, tuple[Body, list[Comment], frozenset[int]]] = {}
        self.exprs: dict[bytes, Expr] = {}
        self.raw: dict[str, bytes] = {}
        self.scanned: list[str] = []  # real paths of the trees given to the scan
        self.trees: list[str] = []  # those, and module directories reached from outside them
        self._lexical: list[str] = []  # the scanned trees as written (absolute, normalized)

    def add_tree(self, path: str) -> None:
        """A directory given to the scan (a file given stands for its directory)."""
        real = real_path(path)
        if real not in self.scanned:
            self.scanned.append(real)
            self.trees.append(real)
            self._lexical.append(os.path.normpath(os.path.abspath(path)))

    def inside(self, path: str, trees: list[str] | None = None) -> bool:
        """Whether the real path of path lies in a tree (always, when no tree was given)."""
        trees = self.trees if trees is None else trees
        if not trees:
            return True
        real = real_path(path)
        return any(real == t or real.startswith(t.rstrip(os.sep) + os.sep) for t in trees)

    def admit_dir(self, directory: str) -> bool:
        """Whether a module directory may be read: inside a tree by its real path, or reached
        by a path that leaves every scanned tree (then it is a tree too). False: a symbolic
        link from inside a tree to a directory outside."""
        if self.inside(directory):
            return True
        lexical = os.path.normpath(os.path.abspath(directory))
        if any(lexical == t or lexical.startswith(t.rstrip(os.sep) + os.sep)
               for t in self._lexical):
            return False
        if module_files(self.files(directory)):
            # a module: its files (templates, file()) are read as terraform reads them. A
            # "module" without Terraform files (source = "../../../home/runner/.aws") is no
            # tree: file() of what lies there stays outside
            self.trees.append(os.path.realpath(directory))
        return True

    def confined(self, path: str) -> None:
        """Raise ParseError when path is a symbolic link out of the trees."""
        if not self.inside(path):
            raise ParseError(
                "a symbolic link to a file outside the scanned tree: not followed, not read"
            )

    def files(self, directory: str) -> list[str]:
        names = self.listings.get(directory)
        if names is None:
            names = []
            try:
                with os.scandir(directory or ".") as it:
                    for e in it:
                        try:
                            if e.is_file():
                                names.append(e.name)
                        except OSError:
                            names.append(e.name)  # reported when read
            except OSError:
                pass
            self.listings[directory] = names
        return names

    def read(self, path: str) -> bytes:
        """File bytes, read once per run (discovery peeks at them before they are parsed)."""
        data = self.raw.get(path)
        if data is None:
            self.confined(path)
            data = read_bytes(path)
            self.raw[path] = data
        return data

    def parse(self, path: str) -> tuple[Body, list[Comment], frozenset[int]]:
        data = self.raw.pop(path, None)
        if data is None:
            self.confined(path)
            data = read_bytes(path)
        try:
            text = decode_source(data)
            hit = self.parsed.get(text)
            if hit is None:
                hit = parse_text(text, path.endswith(".json"), self.exprs)
                self.parsed[text] = hit
        except ParseError as exc:
            if self.inside(path, self.scanned):
                raise
            raise ParseError(unquoted(exc.reason), exc.line) from None
        return hit


def parse_text(
    text: str, is_json: bool, exprs: dict[bytes, Expr] | None = None
) -> tuple[Body, list[Comment], frozenset[int]]:
    if is_json:
        from scanner.sources.terraform.hcl.json_syntax import parse_tf_json

        return parse_tf_json(text), [], frozenset()
    parsed = parse_hcl(text.encode("utf-8"), cache=exprs)
    return parsed.body, parsed.skip_comments, parsed.comment_only_lines


def module_files(names: list[str]) -> list[str]:
    out = [
        n for n in names if (n.endswith(".tf") or n.endswith(".tf.json")) and not n.startswith(".")
    ]
    # terraform: ordinary files in lexical order, then override files
    return sorted(out, key=lambda n: (is_override(n), n))


def load_module(directory: str, cache: ParseCache | None = None) -> ModuleConfig:
    cache = cache or ParseCache()
    cfg = ModuleConfig(dir=directory)
    for name in module_files(cache.files(directory)):
        path = join_path(directory, name)
        cfg.files.append(path)
        try:
            body, comments, comment_lines = cache.parse(path)
        except ParseError as exc:
            cfg.errors.append(InputError(path, exc.reason, exc.line))
            continue
        except RecursionError:
            cfg.errors.append(InputError(path, "nested too deeply"))
            continue
        _add_file(cfg, path, body, comments, comment_lines, is_override(name))
    return cfg


def _skips_for(
    block: Block, comments: list[Comment], comment_lines: frozenset[int]
) -> list[Comment]:
    if not comments:
        return []
    first = block.start_line
    while first - 1 in comment_lines:
        first -= 1
    return [c for c in comments if first <= c.line <= block.end_line]


def _dup(cfg: ModuleConfig, path: str, line: int, what: str) -> None:
    cfg.errors.append(InputError(path, f"duplicate {what}", line))


def _add_file(
    cfg: ModuleConfig,
    path: str,
    body: Body,
    comments: list[Comment],
    comment_lines: frozenset[int],
    override: bool,
) -> None:
    for attr in body.attrs.values():
        cfg.errors.append(
            InputError(path, f'unexpected top-level argument "{attr.name}"', attr.line)
        )
    for block in body.blocks:
        if _add_block(cfg, path, block, comments, comment_lines, override):
            for dup in block.body.duplicates:
                cfg.errors.append(InputError(path, f'duplicate argument "{dup.name}"', dup.line))


def _add_block(
    cfg: ModuleConfig,
    path: str,
    block: Block,
    comments: list[Comment],
    comment_lines: frozenset[int],
    override: bool,
) -> bool:
    """Add one top-level block to ``cfg``. False when it was merged into the block it overrides,
    was a duplicate, or was left out (a provider's alias not a literal, an output without a
    value): its arguments are then not checked for duplicates."""
    t, labels = block.type, block.labels
    if t in ("resource", "data") and len(labels) == 2:
        return _add_resource(cfg, path, block, _skips_for(block, comments, comment_lines),
                             override)
    if t == "module" and len(labels) == 1:
        return _add_module_call(cfg, path, block, override)
    if t == "variable" and len(labels) == 1:
        return _add_variable(cfg, path, block, override)
    if t == "locals":
        _add_locals(cfg, path, block, override)
    elif t == "provider" and len(labels) == 1:
        return _add_provider(cfg, path, block, override)
    elif t == "output" and len(labels) == 1:
        return _add_output(cfg, path, block, override)
    return True


def _add_resource(
    cfg: ModuleConfig, path: str, block: Block, skips: list[Comment], override: bool
) -> bool:
    t, (rtype, name) = block.type, block.labels
    rc = ResourceConfig(
        "managed" if t == "resource" else "data",
        rtype,
        name,
        block.body,
        path,
        block.start_line,
        block.end_line,
        skips,
    )
    if rc.key in cfg.resources:
        if override:
            old = cfg.resources[rc.key]
            old.body = _merged(old.body, block.body)
        else:
            _dup(cfg, path, block.start_line, f"{t} {rtype}.{name}")
        return False
    cfg.resources[rc.key] = rc
    return True


def _add_module_call(cfg: ModuleConfig, path: str, block: Block, override: bool) -> bool:
    name = block.labels[0]
    src_attr = block.body.attrs.get("source")
    source = None
    if (src_attr is not None and isinstance(src_attr.expr, Lit)
            and isinstance(src_attr.expr.value, str)):
        source = src_attr.expr.value
    if name in cfg.module_calls:
        if override:
            old_call = cfg.module_calls[name]
            old_call.body = _merged(old_call.body, block.body)
            if source is not None:
                old_call.source = source
        else:
            _dup(cfg, path, block.start_line, f"module {name}")
        return False
    cfg.module_calls[name] = ModuleCallConfig(name, source, block.body, path, block.start_line)
    return True


def _add_variable(cfg: ModuleConfig, path: str, block: Block, override: bool) -> bool:
    name = block.labels[0]
    if name in cfg.variables:
        if override:
            old_var = cfg.variables[name]
            old_var.body = _merged(old_var.body, block.body)
        else:
            _dup(cfg, path, block.start_line, f"variable {name}")
        return False
    cfg.variables[name] = VariableConfig(name, block.body, path, block.start_line)
    return True


def _add_locals(cfg: ModuleConfig, path: str, block: Block, override: bool) -> None:
    for name, attr in block.body.attrs.items():
        if name in cfg.locals and not override:
            _dup(cfg, path, attr.line, f"local value {name}")
            continue
        cfg.locals[name] = (attr, path)


def _add_provider(cfg: ModuleConfig, path: str, block: Block, override: bool) -> bool:
    """A provider configuration, keyed ``name`` or ``name.alias``; an override merges."""
    alias = block.body.attrs.get("alias")
    if alias is not None:
        if not (isinstance(alias.expr, Lit) and isinstance(alias.expr.value, str)):
            return False  # terraform wants a literal alias
        key = f"{block.labels[0]}.{alias.expr.value}"
    else:
        key = block.labels[0]
    if key in cfg.providers and not override:
        _dup(cfg, path, block.start_line, f"provider configuration {key}")
        return False
    cfg.providers[key] = (_merged(cfg.providers[key], block.body)
                          if key in cfg.providers else block.body)
    return True


def _add_output(cfg: ModuleConfig, path: str, block: Block, override: bool) -> bool:
    name = block.labels[0]
    value = block.body.attrs.get("value")
    if value is None:
        return False
    if name in cfg.outputs and not override:
        _dup(cfg, path, block.start_line, f"output {name}")
        return False
    cfg.outputs[name] = (value, path)
    if is_sensitive(block.body):
        cfg.sensitive_outputs.add(name)
    return True


def is_sensitive(body: Body) -> bool:
    """``sensitive = true`` in a variable or output block (a literal, as terraform wants)."""
    from scanner.sources.terraform.hcl.parse import Lit

    attr = body.attrs.get("sensitive")
    return attr is not None and isinstance(attr.expr, Lit) and attr.expr.value in (True, "true")


def _merged(base: Body, over: Body) -> Body:
    """terraform override semantics: arguments replace, nested blocks of a type replace all
    blocks of that type."""

    def kind(b: Block) -> str:
        return b.labels[0] if b.type == "dynamic" and b.labels else b.type

    attrs = dict(base.attrs)
    attrs.update(over.attrs)
    over_kinds = {kind(b) for b in over.blocks}
    blocks = [b for b in base.blocks if kind(b) not in over_kinds] + list(over.blocks)
    return Body(attrs, blocks, list(base.duplicates))
