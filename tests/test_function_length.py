"""Small functions with one job: no function or method of ``scanner/``, ``policies/`` or
``reports/`` is longer than MAX_LINES, except those named in LONG_FUNCTIONS (each with why).

A function's length is ``end_lineno - lineno + 1`` of its ``def`` (its decorators are not
counted; a nested function counts in its parent and on its own). The allowlist only shrinks: an
entry whose function is gone or no longer long fails too, so that it is taken out.

``python tests/test_function_length.py`` lists every function over MAX_LINES, longest first.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scanner", "policies", "reports")
MAX_LINES = 80

# "path::qualified.name": why it is still long (one line). Take an entry out when its function
# is cut below MAX_LINES; never add one for new code. Empty: every function is within the limit.
LONG_FUNCTIONS: dict[str, str] = {}


def function_lengths(source: str, path: str = "<string>") -> Iterator[tuple[str, int]]:
    """``(qualified name, lines)`` of every function and method in ``source``: a method is
    ``Class.method``, a nested function ``outer.inner``."""
    tree = ast.parse(source, filename=path)

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                yield name, (child.end_lineno or child.lineno) - child.lineno + 1
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def long_functions(root: Path = ROOT, limit: int = MAX_LINES) -> dict[str, int]:
    """Every function of the packages over ``limit`` lines: ``{"path::name": lines}``."""
    found: dict[str, int] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            for name, lines in function_lengths(path.read_text(encoding="utf-8"), rel):
                if lines > limit:
                    found[f"{rel}::{name}"] = lines
    return found


def test_no_function_is_longer_than_the_limit_unless_allowlisted() -> None:
    unlisted = {k: n for k, n in long_functions().items() if k not in LONG_FUNCTIONS}
    assert not unlisted, (
        f"functions over {MAX_LINES} lines: cut them into helpers with one job each: "
        + ", ".join(f"{k} ({n} lines)" for k, n in sorted(unlisted.items()))
    )


def test_the_allowlist_names_only_functions_still_too_long() -> None:
    long = long_functions()
    stale = sorted(k for k in LONG_FUNCTIONS if k not in long)
    assert not stale, (
        f"no longer over {MAX_LINES} lines (or gone): take out of LONG_FUNCTIONS: {stale}"
    )


def test_every_allowlisted_function_says_why() -> None:
    assert all(reason.strip() and "\n" not in reason for reason in LONG_FUNCTIONS.values())


def test_length_is_counted_from_the_def_without_decorators() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(79))  # def line + 79 = 80 lines
    source = (
        "import functools\n\n"
        "@functools.cache\n@functools.wraps(print)\n"
        f"def at_limit():\n{body}\n\n"
        f"def over():\n{body}\n    return 1\n\n"
        "class C:\n"
        "    def method(self):\n"
        "        def inner():\n"
        + "\n".join(f"            y{i} = {i}" for i in range(85)) + "\n"
        "        return inner\n"
    )
    lengths = dict(function_lengths(source))
    assert lengths["at_limit"] == 80
    assert lengths["over"] == 81
    assert lengths["C.method.inner"] == 86
    assert lengths["C.method"] == 88
    assert "inner" not in lengths and "method" not in lengths


def test_the_scan_finds_a_long_function_in_a_package(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "reports" / "big.py").write_text(f"def big():\n{body}\n\ndef small():\n    pass\n")
    assert long_functions(tmp_path) == {"reports/big.py::big": MAX_LINES + 1}


if __name__ == "__main__":
    for key, lines in sorted(long_functions().items(), key=lambda kv: (-kv[1], kv[0])):
        sys.stdout.write(f"{lines:5d}  {key}\n")
