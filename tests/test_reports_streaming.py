"""Every format is written as it is rendered (reports.render_to): the output is the same, byte
for byte, as the whole-document rendering it replaced, no single write holds more than a small
piece of it, and the memory a rendering takes stays flat in the number of findings."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import reports.common as common
from reports import FORMATS, RenderContext, junit, render, render_to, sarif
from reports.html import data_block
from tests.memory_peak import peak_memory
from tests.report_samples import SAMPLES, HtmlInspector, sample

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_reports import estate  # noqa: E402

PIECE = 64 * 1024  # the most one write may carry (the page's style and script are ~20 KiB)
FLAT_MIB = 16  # the most a rendering of 20,000 findings may add to the peak resident set


class Sink:
    """A text stream that keeps nothing: how much was written, and the largest write."""

    def __init__(self) -> None:
        self.size = 0
        self.largest = 0
        self.writes = 0

    def write(self, text: str) -> int:
        self.size += len(text)
        self.largest = max(self.largest, len(text))
        self.writes += 1
        return len(text)


def _old_json(doc: dict[str, Any]) -> str:
    """The JSON report as it was made before it was streamed (one string)."""
    def dump(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)

    lines = []
    keys = sorted(doc)
    for i, key in enumerate(keys):
        value = doc[key]
        if key == "findings" and isinstance(value, list) and value:
            text = "[\n" + ",\n".join("    " + dump(f) for f in value) + "\n  ]"
        else:
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False,
                              allow_nan=False).replace("\n", "\n  ")
        lines.append(f"  {dump(key)}: {text}{',' if i < len(keys) - 1 else ''}")
    return "{\n" + "\n".join(lines) + "\n}\n"


@pytest.fixture(scope="module")
def big() -> dict[str, Any]:
    return estate(3000)


@pytest.mark.parametrize("name", [*SAMPLES, "big"])
def test_streamed_output_is_the_whole_document_rendering(
    name: str, big: dict[str, Any], tmp_path: Path
) -> None:
    doc = big if name == "big" else sample(name)
    ctx = RenderContext(root=ROOT, base=ROOT)
    assert render("json", doc) == _old_json(doc)
    text = render("sarif", doc, context=ctx)
    assert text == json.dumps(sarif.build(doc, root=ROOT, base=ROOT), indent=2,
                              ensure_ascii=False) + "\n"
    tree = junit.build(doc)
    ET.indent(tree)
    assert render("junit", doc) == ('<?xml version="1.0" encoding="UTF-8"?>\n'
                                    + ET.tostring(tree, encoding="unicode") + "\n")
    for fmt in FORMATS:  # into a file: the same bytes as into memory
        with (tmp_path / fmt).open("w", encoding="utf-8") as out:
            render_to(fmt, doc, out, context=ctx)
        assert (tmp_path / fmt).read_text(encoding="utf-8") == render(fmt, doc, context=ctx)


def test_html_data_rows_written_a_record_at_a_time_are_one_json_array(
    big: dict[str, Any]
) -> None:
    page = render("html", big)
    assert HtmlInspector(page).problems() == []
    blocks = _json_blocks(page)
    assert blocks, "the big report has groups past the static rows"
    rows = [json.loads(b) for b in blocks]
    assert sum(len(r) for r in rows) == 3000 - sum(
        min(n, 100) for n in _group_sizes(big))
    for block in blocks:  # the same text data_block() makes of all the rows at once
        assert data_block(json.loads(block)) == block


def _json_blocks(page: str) -> list[str]:
    marker = '<script type="application/json" class="rows">'
    return [part.split("</script>", 1)[0] for part in page.split(marker)[1:]]


def _group_sizes(doc: dict[str, Any]) -> list[int]:
    sizes: dict[str, int] = {}
    for f in doc["findings"]:
        sizes[f["policy_id"]] = sizes.get(f["policy_id"], 0) + 1
    return list(sizes.values())


def test_lean_sorted_is_sorted(monkeypatch: pytest.MonkeyPatch, big: dict[str, Any]) -> None:
    """Runs merged give the order (ties too) of one sort of everything."""
    findings = big["findings"]
    reference_sev = sorted(findings, key=common._severity_key)
    reference_status = sorted(findings, key=common._status_key)
    monkeypatch.setattr(common, "SORT_RUN", 7)
    assert [id(f) for f in common.by_severity(findings)] == [id(f) for f in reference_sev]
    assert [id(f) for f in common.by_status(findings)] == [id(f) for f in reference_status]
    ties = [{"k": i % 3, "n": i} for i in range(100)]
    assert common.lean_sorted(ties, key=lambda t: t["k"]) == sorted(ties, key=lambda t: t["k"])


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "markdown"])
def test_no_write_carries_a_large_piece(fmt: str, big: dict[str, Any]) -> None:
    """Written as it goes: many small writes, none near the size of the whole output (the
    markdown report is bounded, at most 100 rows a table, and written whole)."""
    sink = Sink()
    render_to(fmt, big, sink, context=RenderContext(root=ROOT, base=ROOT))
    assert sink.size > 4 * PIECE, "the output is large enough to tell"
    assert sink.largest <= PIECE, (fmt, sink.largest, sink.size)
    assert sink.writes > 1000


@pytest.fixture(scope="module")
def estate_20k() -> dict[str, Any]:
    return estate(20_000)


@pytest.mark.parametrize("fmt", FORMATS)
def test_memory_stays_flat(fmt: str, estate_20k: dict[str, Any]) -> None:
    """20,000 findings (half IaC, half live) rendered into a stream that keeps nothing: the
    rendering adds at most FLAT_MIB to the peak resident set. Before it streamed, JSON took
    71 MiB, SARIF 121 MiB, HTML 56 MiB, JUnit 45 MiB, the table and CSV 21 MiB
    (bench/bench_reports.py)."""
    sink = Sink()
    with peak_memory() as peak:
        render_to(fmt, estate_20k, sink, context=RenderContext(root=ROOT, base=ROOT))
    assert sink.size > 0
    assert peak() < FLAT_MIB * 2**20, f"{fmt}: {peak() / 2**20:.1f} MiB"
