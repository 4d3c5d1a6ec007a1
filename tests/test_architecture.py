"""The rooms and doors of the design, checked on the import graph of the package.

- no import cycle between modules (function-level imports included);
- ``policies/`` never imports a source, the live collectors or boto3 (a policy must not know
  where a resource came from);
- ``reports/`` never imports boto3 or the live collectors (nothing in reports calls AWS);
- each source format is a package with a docstring saying what enters and what leaves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scanner", "policies", "reports")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module (of ours or third party, by top name) that ``name`` imports anywhere."""
    out: set[str] = set()
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".")
                keep = len(parts) - node.level + (1 if is_pkg else 0)
                base = ".".join(parts[:keep] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                full = f"{base}.{alias.name}"
                out.add(full if full in known else base)
    return out


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles(graph: dict[str, set[str]]) -> None:
    assert _cycles(graph) == []


def test_the_cycle_check_can_fail() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _touches(imports: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(i for i in imports if any(i == p or i.startswith(p + ".") for p in prefixes))


def test_policies_do_not_know_sources(graph: dict[str, set[str]]) -> None:
    banned = ("scanner.sources", "scanner.aws", "boto3", "botocore", "scanner.sources.scan")
    bad = {m: _touches(i, banned) for m, i in graph.items() if m.startswith("policies")}
    assert {m: b for m, b in bad.items() if b} == {}


def test_reports_do_not_call_aws(graph: dict[str, set[str]]) -> None:
    banned = ("scanner.aws", "boto3", "botocore", "scanner.sources")
    bad = {m: _touches(i, banned) for m, i in graph.items() if m.startswith("reports")}
    assert {m: b for m, b in bad.items() if b} == {}


def test_each_source_package_says_what_enters_and_leaves() -> None:
    sources = ROOT / "scanner" / "sources"
    packages = [p for p in sources.rglob("__init__.py")]
    assert len(packages) >= 5
    for init in packages:
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert doc, f"{init.relative_to(ROOT)} has no docstring"
    for leaf in ("terraform/hcl", "terraform/plan", "cloudformation"):
        doc = ast.get_docstring(ast.parse((sources / leaf / "__init__.py").read_text())) or ""
        assert "Enters" in doc and "Leaves" in doc, leaf
    flat = sorted(p.name for p in sources.glob("*.py") if p.name != "__init__.py")
    assert flat == [], f"format modules belong in a package of their own: {flat}"
