"""The speed-ups of the HCL scan change nothing in the report: the same generated corpus (the
benchmark's own stacks, some reached through a symbolic link) scanned by one process and by
two gives the same bytes, and so does a second scan in the same process (what the run
remembers about the file system is forgotten between runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_hcl_corpus.py"), str(corpus),
                    "--stacks", "24"], check=True, capture_output=True)
    (corpus / "linked").symlink_to(corpus / "stack-00003", target_is_directory=True)
    return corpus


def _scan(corpus: Path, out: Path, workers: str) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPUAUDIT_WORKERS": workers}
    proc = subprocess.run(
        [sys.executable, "-m", "scanner", "scan", str(corpus), "--format", "json",
         "--output", str(out), "--quiet", "--fail-on", "none", "--deterministic"],
        cwd=corpus.parent, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out.read_bytes()


def test_one_worker_and_two_write_the_same_report(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    one = _scan(corpus, tmp_path / "one.json", "1")
    two = _scan(corpus, tmp_path / "two.json", "2")
    assert one == two
    assert b'"ASG-' in one and b"stack-00003" in one  # findings, not an empty report
    assert b"Traceback" not in one


def test_a_second_scan_in_one_process_is_the_same(tmp_path: Path) -> None:
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    corpus = _corpus(tmp_path)
    first = load_terraform_dir([corpus])
    second = load_terraform_dir([corpus])
    assert [(r.id, r.scope, r.attrs) for r in first.resources] == [
        (r.id, r.scope, r.attrs) for r in second.resources]
    assert first.errors == second.errors
    assert len(first.resources) >= 24 * 8
