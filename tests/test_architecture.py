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


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:`` (read by the type checker only)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _imports(name: str, path: Path, known: dict[str, Path], *, types: bool = True) -> set[str]:
    """Every module (of ours or third party, by top name) that ``name`` imports anywhere
    (``types=False``: not counting the imports only the type checker reads)."""
    out: set[str] = set()
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if types else _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
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


def test_no_import_cycles() -> None:
    """No cycle at run time (a module may name a type of a module that imports it, for the
    type checker only; the layer check below still counts such imports)."""
    known = _modules()
    runtime = {name: _imports(name, path, known, types=False) for name, path in known.items()}
    assert _cycles(runtime) == []


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
    # the list of sources is data (names and letters), no reader
    bad = {m: [b for b in _touches(i, banned) if b != "scanner.sources.registry"]
           for m, i in graph.items() if m.startswith("reports")}
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
    shared = ("__init__.py", "scan.py", "registry.py")  # the walk and the list of sources
    flat = sorted(p.name for p in sources.glob("*.py") if p.name not in shared)
    assert flat == [], f"format modules belong in a package of their own: {flat}"


# The layers, top first: a room may import only rooms of lower layers (and itself); rooms of one
# layer are independent of each other. ``scanner`` alone is the package's face (version, URL).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("scanner.__main__",),
    ("scanner.cli",),
    ("scanner.run", "scanner.integrations", "scanner.aws"),
    ("reports",),
    ("scanner.findings",),
    ("scanner.engine",),
    ("scanner.compliance", "scanner.sources"),
    ("policies",),
    ("scanner.telemetry", "scanner.pricing"),
    ("scanner.compute",),
    ("scanner.catalog", "scanner.kinds"),
    ("scanner.inputs",),
    ("scanner.model",),
    ("scanner",),
)


def _room(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "scanner" or len(parts) == 1:
        return parts[0] if parts[0] != "scanner" else "scanner"
    return ".".join(parts[:2])


def _layer_violations(graph: dict[str, set[str]],
                      layers: tuple[tuple[str, ...], ...]) -> list[str]:
    rank = {room: len(layers) - i for i, rooms in enumerate(layers) for room in rooms}
    out: list[str] = []
    for module, imports in sorted(graph.items()):
        here = _room(module)
        if here not in rank:
            out.append(f"{module}: room {here} is in no layer")
            continue
        for imported in sorted(imports):
            if imported not in graph:
                continue
            there = _room(imported)
            if there != here and rank.get(there, 0) >= rank[here]:
                out.append(f"{module} -> {imported} ({here} may not import {there})")
    return out


def test_each_room_imports_only_the_layers_below(graph: dict[str, set[str]]) -> None:
    assert _layer_violations(graph, LAYERS) == []


def test_the_layer_check_can_fail() -> None:
    graph = {"scanner.model": {"scanner.cli.main"}, "scanner.cli.main": {"scanner.model"},
             "scanner.aws.x": {"scanner.run.y"}, "scanner.run.y": set(), "scanner.new.z": set()}
    assert _layer_violations(graph, LAYERS) == [
        "scanner.aws.x -> scanner.run.y (scanner.aws may not import scanner.run)",
        "scanner.model -> scanner.cli.main (scanner.model may not import scanner.cli)",
        "scanner.new.z: room scanner.new is in no layer",
    ]


def test_scanner_root_holds_packages_only() -> None:
    root = ROOT / "scanner"
    loose = sorted(p.name for p in root.iterdir()
                   if p.name not in ("__init__.py", "__main__.py", "__pycache__")
                   and not (p.is_dir() and (p / "__init__.py").is_file()))
    assert loose == []


def test_the_command_line_imports_no_policy_source_or_aws_code_until_a_command_needs_it() -> None:
    """The pre-commit hook pays for every import at its start: the CLI module alone loads
    neither the policies, the compute views, a source reader, boto3 nor jinja2."""
    import subprocess
    import sys

    probe = ("import sys, scanner.cli.main\n"
             "heavy = ('policies', 'scanner.compute', 'scanner.sources.terraform', 'boto3', "
             "'jinja2', 'scanner.aws.collect')\n"
             "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "[]"
