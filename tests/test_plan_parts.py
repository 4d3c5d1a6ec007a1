"""A large plan's resources read part by part (shared out among forked processes) give what one
pass in order gives: the same resources, errors, notices, gaps and secrets, for every plan
fixture (beside its .tf files and alone, on one line and pretty-printed); a bad skip comment
said once across parts; a worker that dies, a part that raises or a file changed under the
reader change nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.inputs import workers
from scanner.model import SourceResult
from scanner.sources.terraform.plan import parts, reader, stream
from scanner.sources.terraform.plan.stream import NotStreamable, stream_plan

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
PROBE = Path(__file__).parent / "plan_parts_probe.py"


def _plans() -> list[Path]:
    out = []
    for path in sorted(FIXTURES.rglob("*.json")):
        head = path.read_bytes()[:65536]
        if b'"planned_values"' in head and b'"format_version"' in head:
            out.append(path)
    return out


PLANS = _plans()


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Parts of a few resources, shared out from the first one: every fixture is read in
    parts. Gives the number of parts each read in parts had."""
    monkeypatch.setattr(stream, "SEGMENT", 2)
    monkeypatch.setattr(stream, "PART", 3)
    monkeypatch.setattr(parts, "MIN_SHARED", 1)
    seen: list[int] = []
    real = parts.translate_in_parts

    def counted(planned: Any, *args: Any) -> Any:
        seen.append(planned.parts)
        return real(planned, *args)

    monkeypatch.setattr(parts, "translate_in_parts", counted)
    return seen


def _read(plan: Path, n: str, monkeypatch: pytest.MonkeyPatch) -> SourceResult:
    monkeypatch.setenv(workers.WORKERS_ENV, n)
    return reader.load_plan(plan, stream=True)


def _same(a: SourceResult, b: SourceResult) -> None:
    assert repr(a.resources) == repr(b.resources)
    assert a.errors == b.errors
    assert a.notices == b.notices
    assert a.gaps == b.gaps
    assert a.sensitive == b.sensitive


def test_there_are_plans_to_compare() -> None:
    assert len(PLANS) >= 10


@pytest.mark.parametrize("indent", ["beside", None, 2])
@pytest.mark.parametrize("plan", PLANS, ids=[str(p.relative_to(FIXTURES)) for p in PLANS])
def test_parts_give_what_one_pass_gives(plan: Path, indent: int | str | None, tmp_path: Path,
                                        small_parts: list[int],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if indent != "beside":  # alone: findings point at the plan's lines (or line 1)
        doc = json.loads(plan.read_text(encoding="utf-8"))
        sep = None if indent else (",", ":")
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps(doc, indent=indent, separators=sep) + "\n",
                        encoding="utf-8")
    one = _read(plan, "1", monkeypatch)
    assert not small_parts
    two = _read(plan, "2", monkeypatch)
    _same(two, one)
    count = stream_plan(plan, force=True)[1].index.count
    if count > stream.PART:  # several parts (a plan with Kubernetes manifests: one pass)
        manifests = any(r.kind.startswith("karpenter") or r.kind.startswith("kubernetes")
                        for r in one.resources)
        assert manifests or (small_parts and small_parts[0] >= 2)


def test_a_bad_skip_is_said_once_across_parts(tmp_path: Path, small_parts: list[int],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Both module instances' launch templates are one block, in two parts: one notice."""
    tree = tmp_path / "gpu_modules"
    shutil.copytree(FIXTURES / "terraform" / "gpu_modules", tree)
    tf = tree / "modules" / "gpu" / "main.tf"
    text = tf.read_text(encoding="utf-8")
    block = 'resource "aws_launch_template" "this" {'
    assert block in text
    tf.write_text(text.replace(block, "# gpuaudit:skip=VPC-004\n" + block), encoding="utf-8")
    plan = tree / "plan.json"
    one = _read(plan, "1", monkeypatch)
    monkeypatch.setattr(stream, "SEGMENT", 1)
    monkeypatch.setattr(stream, "PART", 1)
    two = _read(plan, "2", monkeypatch)
    _same(two, one)
    said = [n for n in two.notices if "has no policy id or no reason" in n.message]
    assert len(said) == 1 and said[0].path == str(tf)
    assert small_parts and small_parts[0] >= 10


def test_a_part_that_raises_reads_as_one_pass_does(small_parts: list[int],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    plan = FIXTURES / "terraform" / "gpu_estate_a" / "plan.json"
    real = reader._translate_one
    calls: list[str] = []

    def fails_on_the_fifth(module: str, r: dict[str, Any], *args: Any) -> Any:
        calls.append(str(r.get("address")))
        if len(calls) % 5 == 0:
            raise TypeError("a shape not expected")
        return real(module, r, *args)

    monkeypatch.setattr(reader, "_translate_one", fails_on_the_fifth)
    one = _read(plan, "1", monkeypatch)
    calls.clear()
    two = _read(plan, "2", monkeypatch)
    assert small_parts, "not read in parts"
    _same(two, one)
    assert not one.resources and [e.reason for e in one.errors] == [
        "malformed Terraform plan: TypeError: a shape not expected"]


def test_a_file_changed_under_the_reader_is_not_read_in_parts(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.setattr(stream, "SEGMENT", 2)
    monkeypatch.setattr(stream, "PART", 3)
    plan = tmp_path / "plan.json"
    shutil.copyfile(FIXTURES / "terraform" / "gpu_estate_a" / "plan.json", plan)
    _, planned, _ = stream_plan(plan, force=True)
    assert planned.part is not None and planned.parts >= 2
    assert [m for m, _ in planned.part(1)]  # read as it was
    os.utime(plan, ns=(1, 1))
    with pytest.raises(NotStreamable):
        list(planned.part(1))


def _probe(mode: str, plan: Path, marks: Path) -> dict[str, Any]:
    marks.mkdir()
    proc = subprocess.run([sys.executable, str(PROBE), mode, str(plan), str(marks)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


@pytest.fixture(scope="module")
def large_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plan of 6,000 resources (bench/gen_plan.py): large enough to be read in parts."""
    plan = tmp_path_factory.mktemp("plan") / "plan-6k.json"
    subprocess.run([sys.executable, "bench/gen_plan.py", str(plan), "--resources", "6000"],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    assert plan.stat().st_size >= stream.STREAM_BYTES
    return plan


def test_forked_workers_give_what_one_process_gives(large_plan: Path, tmp_path: Path) -> None:
    out = _probe("same", large_plan, tmp_path / "marks")
    assert out["forked"], "no part was read in a forked worker"
    assert out["two"] == out["one"]
    assert out["one"]["count"] > 4000


def test_a_worker_that_dies_changes_nothing(large_plan: Path, tmp_path: Path) -> None:
    out = _probe("dies", large_plan, tmp_path / "marks")
    assert len(out["forked"]) == 1, "the worker did not start, or went on after dying"
    assert out["two"] == out["one"]
