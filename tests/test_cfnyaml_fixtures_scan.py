"""Every fixture directory of CloudFormation and the YAML formats, scanned as a user scans it:
``gpuaudit scan DIR`` never reports an internal error (nor a policy that failed on a resource),
and no document is dropped: each document of a file of these formats gives a resource, an
input error or a notice on its lines (a CloudFormation template that declares no resource of
a kind gpuaudit reads aside)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.sources.cloudformation import yaml_nodes
from scanner.sources.cloudformation.embedded import property_of
from scanner.sources.cloudformation.reader import KINDS, is_template, looks_like_cloudformation
from scanner.sources.eksctl.sniff import looks_like_eksctl
from scanner.sources.karpenter.sniff import looks_like_karpenter
from scanner.sources.parallelcluster.sniff import looks_like_parallelcluster
from scanner.sources.scan import DATA_SUFFIXES, SKIP_DIRS, scan_paths
from scanner.sources.yaml_documents.reader import YamlError, load_documents

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DIRS = sorted([FIXTURES / "cfn", FIXTURES / "eksctl", FIXTURES / "karpenter",
               FIXTURES / "parallelcluster", FIXTURES / "corpora" / "aws-cloudformation-templates",
               *[p for p in FIXTURES.iterdir() if p.is_dir() and p.name.startswith("cfnyaml_")]])


def _files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        out += [Path(dirpath) / n for n in names if n.lower().endswith(DATA_SUFFIXES)]
    return sorted(out)


@pytest.mark.parametrize("root", DIRS, ids=[str(d.relative_to(FIXTURES)) for d in DIRS])
def test_gpuaudit_scan_reports_no_internal_error(tmp_path: Path, root: Path) -> None:
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "scanner", "scan", str(root), "--format",
                           "json", "--output", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    texts = [e["reason"] for e in doc["errors"]] + [n["message"] for n in doc["notices"]] + \
        [f["message"] for f in doc["findings"]]
    bad = [t for t in texts if "internal error" in t or "failed on this resource" in t]
    assert bad == []


def _documents(path: Path, head: str) -> list[tuple[int, int]] | None:
    """The line spans of the documents of a file of these formats (None: not one of them)."""
    if looks_like_cloudformation(head):
        try:
            data = yaml_nodes.load_bytes(path.read_bytes()).data
        except yaml_nodes.TemplateError:
            data = None
        if is_template(data):
            bodies = data.get("Resources")
            typed = [(b.get("Type"), b.get("Properties")) for b in bodies.values()
                     if isinstance(b, dict)] if isinstance(bodies, dict) else []
            read = any(isinstance(t, str) and (t in KINDS or property_of(t, p) is not None)
                       for t, p in typed)
            return [(1, 1 << 30)] if read else []
    if not (looks_like_karpenter(head) or looks_like_eksctl(head)
            or looks_like_parallelcluster(head)):
        return None
    try:
        loaded = load_documents(path.read_bytes())
    except YamlError:
        return [(1, 1)]  # an input error of the whole file
    return [(d.start_line, d.end_line) for d in loaded.documents
            if d.value is not None or d.error is not None]


@pytest.mark.parametrize("root", DIRS, ids=[str(d.relative_to(FIXTURES)) for d in DIRS])
def test_no_document_is_dropped(root: Path) -> None:
    source = scan_paths([root])
    lines: dict[str, list[int | None]] = {}
    for r in source.resources:
        if r.provenance.file:
            lines.setdefault(os.path.realpath(r.provenance.file), []).append(
                r.provenance.start_line)
    for item in [*source.errors, *source.notices]:
        lines.setdefault(os.path.realpath(item.path), []).append(getattr(item, "line", None))
    dropped = []
    for path in _files(root):
        head = path.read_bytes()[:65536].decode("utf-8", "replace")
        spans = _documents(path, head)
        if not spans:
            continue
        seen = lines.get(os.path.realpath(path), [])
        for start, end in spans:
            if not any(line is None or start <= line <= end for line in seen):
                dropped.append(f"{path.relative_to(ROOT)}:{start}-{end}")
    assert dropped == []
