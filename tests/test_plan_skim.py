"""The first walk of a large plan by msgspec (scanner.sources.terraform.plan.skim) takes
terraform's layout, finds where planned_values ends even where a member's name is repeated
inside it, and gives the file to the walk by window wherever it could answer otherwise: the
plan reads the same in every case."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from scanner.model import SourceResult
from scanner.sources.terraform.plan import skim, stream
from scanner.sources.terraform.plan.reader import load_plan

ROOT = Path(__file__).resolve().parents[1]


def _plan(tmp_path: Path, resources: int = 300) -> dict:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gen_plan
    finally:
        sys.path.remove(str(ROOT / "bench"))
    doc: dict = gen_plan.build(resources)
    return doc


def _write(tmp_path: Path, doc: dict, indent: int | None = None) -> Path:
    path = tmp_path / "plan.json"
    sep = None if indent else (",", ":")
    path.write_text(json.dumps(doc, indent=indent, separators=sep) + "\n", encoding="utf-8")
    return path


def _skimmed(path: Path) -> skim.Skimmed | None:
    with stream.open_plan(path) as f:
        got: skim.Skimmed | None = stream._skimmed(f, 0, os.path.getsize(path))
        return got


def _same(a: SourceResult, b: SourceResult) -> None:
    assert repr(a.resources) == repr(b.resources)
    assert (a.errors, a.notices, a.gaps, a.sensitive) == (b.errors, b.notices, b.gaps,
                                                           b.sensitive)


@pytest.mark.parametrize("indent", [None, 2])
def test_terraforms_layout_is_skimmed_and_reads_as_the_whole_read(indent: int | None,
                                                                   tmp_path: Path) -> None:
    path = _write(tmp_path, _plan(tmp_path), indent)
    got = _skimmed(path)
    assert got is not None
    assert got.index.count == 300 and sum(n for *_, n in got.runs) == 300
    assert "configuration" in got.doc and "planned_values" not in got.doc
    assert "resource_changes" not in got.doc  # not needed: not read
    _same(load_plan(path, stream=True), load_plan(path, stream=False))


def _with_member_names_inside(doc: dict, times: int) -> dict:
    """Resources whose values hold a key named like the member after planned_values."""
    resources = doc["planned_values"]["root_module"]["resources"]
    for r in resources[:times]:
        r["values"]["tags"] = {**(r["values"].get("tags") or {}), "resource_changes": "x"}
    return doc


def test_a_member_name_inside_planned_values_is_not_its_end(tmp_path: Path) -> None:
    doc = _with_member_names_inside(_plan(tmp_path), 2)
    path = _write(tmp_path, doc)
    assert path.read_text().count(',"resource_changes":') >= 3  # two inside planned_values
    got = _skimmed(path)
    assert got is not None and got.index.count == 300
    _same(load_plan(path, stream=True), load_plan(path, stream=False))


def test_past_the_candidates_budget_the_window_reads_it(tmp_path: Path) -> None:
    doc = _with_member_names_inside(_plan(tmp_path), skim.MAX_CANDIDATES + 1)
    path = _write(tmp_path, doc)
    assert _skimmed(path) is None  # each candidate is a decode: at most MAX_CANDIDATES
    _same(load_plan(path, stream=True), load_plan(path, stream=False))


@pytest.mark.parametrize("change", ["no_member_after", "resource_not_object", "surrogate",
                                    "nan_in_planned"])
def test_what_msgspec_refuses_or_could_read_otherwise_goes_to_the_window(
        change: str, tmp_path: Path) -> None:
    doc = _plan(tmp_path)
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    if change == "no_member_after":  # planned_values last but for configuration
        del doc["resource_changes"]
        doc.pop("prior_state", None)
        text = json.dumps(doc, separators=(",", ":")) + "\n"
    elif change == "resource_not_object":
        text = text.replace('"resources":[', '"resources":[7,', 1)
    elif change == "surrogate":
        text = text.replace('"values":{', '"values":{"odd":"\\ud800",', 1)
    elif change == "nan_in_planned":
        text = text.replace('"values":{', '"values":{"n":NaN,', 1)
    path = tmp_path / "plan.json"
    path.write_text(text, encoding="utf-8")
    assert _skimmed(path) is None
    _same(load_plan(path, stream=True), load_plan(path, stream=False))
