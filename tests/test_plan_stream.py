"""The streaming plan reader gives what the whole-document read gives: the same resources,
errors, notices, gaps and secrets for every plan fixture (beside its .tf files and alone, on one
line and pretty-printed), the same report bytes, and the same clear error for bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.model import SourceResult
from scanner.sources.terraform.plan.reader import READ_ENV, load_plan
from scanner.sources.terraform.plan.stream import NotStreamable, plan_lines, stream_plan

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
PLAN_A = FIXTURES / "terraform" / "gpu_estate_a" / "plan.json"


def _plans() -> list[Path]:
    out = []
    for path in sorted(FIXTURES.rglob("*.json")):
        head = path.read_bytes()[:65536]
        if b'"planned_values"' in head and b'"format_version"' in head:
            out.append(path)
    return out


PLANS = _plans()


def _same(a: SourceResult, b: SourceResult) -> None:
    assert repr(a.resources) == repr(b.resources)
    assert a.errors == b.errors
    assert a.notices == b.notices
    assert a.gaps == b.gaps
    assert a.sensitive == b.sensitive


def test_there_are_plans_to_compare() -> None:
    assert len(PLANS) >= 10


@pytest.mark.parametrize("plan", PLANS, ids=[str(p.relative_to(FIXTURES)) for p in PLANS])
def test_streamed_equals_whole_beside_its_sources(plan: Path) -> None:
    stream_plan(plan, force=True)  # terraform's layout: taken by the streaming reader
    whole = load_plan(plan, stream=False)
    _same(load_plan(plan, stream=True), whole)
    assert whole.resources or whole.errors or whole.notices


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("plan", PLANS, ids=[str(p.relative_to(FIXTURES)) for p in PLANS])
def test_streamed_equals_whole_alone(plan: Path, indent: int | None, tmp_path: Path) -> None:
    """Without .tf files, findings point at the plan's lines (pretty-printed) or line 1."""
    doc = json.loads(plan.read_text(encoding="utf-8"))
    path = tmp_path / "plan.json"
    sep = None if indent else (",", ":")
    path.write_text(json.dumps(doc, indent=indent, separators=sep) + "\n", encoding="utf-8")
    whole = load_plan(path, stream=False)
    streamed = load_plan(path, stream=True)
    _same(streamed, whole)
    lines = {r.provenance.start_line for r in streamed.resources}
    assert (lines == {1}) if indent is None else (len(lines) > 1 or len(streamed.resources) < 2)


def test_plan_lines_match_the_whole_text(tmp_path: Path) -> None:
    from scanner.sources.terraform.plan.document import _plan_lines

    text = json.dumps(json.loads(PLAN_A.read_text()), indent=2)
    path = tmp_path / "plan.json"
    path.write_text(text, encoding="utf-8")
    assert plan_lines(path) == _plan_lines(text) and len(plan_lines(path) or {}) > 30
    path.write_text(json.dumps(json.loads(text)) + "\n", encoding="utf-8")
    assert plan_lines(path) is None


def _bad(text: str) -> list[tuple[str, Any]]:
    return [(name, fn(text)) for name, fn in [
        ("truncated", lambda t: t[: len(t) // 2]),
        ("truncated_end", lambda t: t.rstrip()[:-1]),
        ("garbage_in_planned", lambda t: t.replace('"values":{', '"values":{,', 1)),
        ("huge_integer", lambda t: t.replace('"size":', '"size":' + "9" * 5000 + ',"x":', 1)),
        ("nan", lambda t: t.replace('"size":', '"size":NaN,"x":', 1)),
        ("deep", lambda t: t.replace('"values":{', '"values":{"deep":' + "[" * 100_000
                                     + "]" * 100_000 + ",", 1)),
        ("duplicate_planned", lambda t: t.replace('"resource_changes":',
                                                  '"planned_values":{"root_module":{}},'
                                                  '"resource_changes":', 1)),
        ("duplicate_resources", lambda t: t.replace('"resources":[', '"resources":[],'
                                                    '"resources":[', 1)),
        ("extra", lambda t: t + "{}"),
        ("no_configuration", lambda t: t[:t.rfind(',"configuration"')] + "}"),
    ]]


@pytest.mark.parametrize("name, text", _bad(PLAN_A.read_text(encoding="utf-8").strip()),
                         ids=[n for n, _ in _bad(PLAN_A.read_text(encoding="utf-8").strip())])
def test_bad_or_unusual_input_reads_as_the_whole_read_does(name: str, text: str,
                                                           tmp_path: Path) -> None:
    """The streaming reader does not take it; the file is read whole, with the same result
    (a clear error naming the file and line for bad JSON), never a traceback."""
    path = tmp_path / "plan.json"
    path.write_text(text, encoding="utf-8")
    # NaN: Python's json takes it, streamed or not; a module's resources named twice: the walk
    # by msgspec takes the last, as the whole read does
    if name not in ("nan", "duplicate_resources"):
        with pytest.raises(NotStreamable):
            _doc, planned, _ = stream_plan(path, force=True)
            list(planned.again())
    whole = load_plan(path, stream=False)
    _same(load_plan(path, stream=True), whole)
    if name in ("truncated", "truncated_end", "garbage_in_planned", "extra", "huge_integer",
                "deep"):
        assert whole.resources == [] and len(whole.errors) == 1
        assert whole.errors[0].path == str(path) and "invalid JSON" in whole.errors[0].reason
    if name == "nan":
        assert whole.errors == [] and whole.resources


def test_a_utf16_or_binary_plan_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(PLAN_A.read_text(encoding="utf-8").encode("utf-16"))
    with pytest.raises(NotStreamable):
        stream_plan(path, force=True)
    _same(load_plan(path, stream=True), load_plan(path, stream=False))
    assert len(load_plan(path, stream=True).resources) == len(load_plan(PLAN_A).resources) > 0


def _report(plan: Path, out: Path, how: str) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(ROOT), READ_ENV: how}
    subprocess.run([sys.executable, "-m", "scanner", "scan", str(plan), "--format", "json",
                    "--output", str(out), "--quiet", "--fail-on", "none"], cwd=ROOT, env=env,
                   check=True, timeout=300)
    doc = json.loads(out.read_bytes())
    doc.get("run", doc).pop("generated_at", None)
    return json.dumps(doc, sort_keys=False).encode()


def test_report_is_byte_identical_streamed_or_whole(tmp_path: Path) -> None:
    """A generated plan of 3,000 resources (bench/gen_plan.py) scanned both ways: the reports
    differ only in their time stamp."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gen_plan
    finally:
        sys.path.remove(str(ROOT / "bench"))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(gen_plan.build(3000), separators=(",", ":")) + "\n")
    assert _report(plan, tmp_path / "stream.json", "stream") == \
        _report(plan, tmp_path / "whole.json", "whole")
    raw = [(tmp_path / n).read_bytes() for n in ("stream.json", "whole.json")]
    stamp = [line for line in raw[0].split(b"\n") if b'"generated_at"' in line]
    assert len(stamp) == 1
    assert [b for b in raw[0].split(b"\n") if b not in stamp] == \
        [b for b in raw[1].split(b"\n") if b'"generated_at"' not in b]
    assert b'"findings"' in raw[0]
