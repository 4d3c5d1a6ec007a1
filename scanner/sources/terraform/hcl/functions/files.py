"""Path strings (``basename``, ``dirname``), files read inside the scanned tree only (the reader
is set per root module by the source: :data:`FILE_READER`), and the functions that are not
evaluated (clock, randomness, the machine, the provider): Unknown with a reason.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
from collections.abc import Callable
from typing import Any

from scanner.model import Unknown
from scanner.sources.terraform.hcl.functions.registry import (
    FUNCTIONS,
    raw_fn,
    value_fn,
)
from scanner.sources.terraform.hcl.parse import NUMBER_TOO_LARGE
from scanner.sources.terraform.hcl.values import (
    EvalError,
    as_unknown,
    check_string,
    is_opaque,
    to_str,
)

# ---------------------------------------------------------------------------------------------
# paths (string operations only; the filesystem is not read)
# ---------------------------------------------------------------------------------------------


@value_fn("basename")
def f_basename(p: Any) -> Any:
    return posixpath.basename(to_str(p).rstrip("/")) or "/"


@value_fn("dirname")
def f_dirname(p: Any) -> Any:
    return posixpath.dirname(to_str(p)) or "."


# ---------------------------------------------------------------------------------------------
# not evaluated: clock, randomness, filesystem, provider
# ---------------------------------------------------------------------------------------------


def _not_static(name: str, why: str) -> None:
    def fn(*args: Any) -> Any:
        return Unknown(f"{name}() {why}")

    FUNCTIONS[name] = fn


for _n in ("timestamp", "plantimestamp", "uuid", "bcrypt"):
    _not_static(_n, "changes on every run")
for _n in ("formatdate", "timeadd", "timecmp"):
    _not_static(_n, "is not evaluated")
for _n in ("fileset", "abspath", "pathexpand"):
    _not_static(_n, "is not evaluated (it depends on the machine)")


# ---------------------------------------------------------------------------------------------
# files: read inside the scanned tree only (the reader is set per root module by the source)
# ---------------------------------------------------------------------------------------------

FILE_READER: list[Callable[[str], Any]] = []  # [read(path) -> bytes | Unknown] while scanning


def read_file(path: Any) -> Any:
    """The bytes of a file the configuration names, or Unknown (outside the scanned tree,
    absent, no tree): never a guess."""
    if is_opaque(path):
        return as_unknown(path)
    if not FILE_READER:
        return Unknown("files are read only while scanning a directory")
    return FILE_READER[0](to_str(path))


def file_text(path: Any, fn: str = "file") -> Any:
    data = read_file(path)
    if isinstance(data, Unknown):
        return data
    check_string(len(data))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalError(f"{fn}(): the file is not valid UTF-8 (use filebase64)") from None


@raw_fn("file")
def f_file(path: Any) -> Any:
    return file_text(path)


@raw_fn("fileexists")
def f_fileexists(path: Any) -> Any:
    data = read_file(path)
    if isinstance(data, Unknown):
        return Unknown(data.reason) if "does not exist" not in data.reason else False
    return True


@raw_fn("filebase64")
def f_filebase64(path: Any) -> Any:
    data = read_file(path)
    if isinstance(data, Unknown):
        return data
    check_string((len(data) + 2) // 3 * 4)
    return base64.b64encode(data).decode()


def _file_hash(name: str, b64: bool) -> Callable[[Any], Any]:
    def fn(path: Any) -> Any:
        data = read_file(path)
        if isinstance(data, Unknown):
            return data
        d = hashlib.new(name, data)
        return base64.b64encode(d.digest()).decode() if b64 else d.hexdigest()

    return fn


for _n, _alg, _b in [
    ("filemd5", "md5", False),
    ("filesha1", "sha1", False),
    ("filesha256", "sha256", False),
    ("filesha512", "sha512", False),
    ("filebase64sha256", "sha256", True),
    ("filebase64sha512", "sha512", True),
]:
    raw_fn(_n)(_file_hash(_alg, _b))
def _number_too_large(text: Any) -> Any:
    raise EvalError(f"number literal too large: {text}…")


FUNCTIONS[NUMBER_TOO_LARGE] = _number_too_large

for _n in ("type", "ephemeralasnull", "textdecodebase64", "textencodebase64", "templatestring"):
    _not_static(_n, "is not supported")
