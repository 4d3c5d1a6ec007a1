"""The YAML reader works out what an alias expands to before building it (so an alias bomb is
refused at once, not after a million values were built). That rehearsal must change nothing
else: on documents of anchors, aliases (recursive ones too), merge keys, duplicate keys and
nesting, under small budgets so that every kind of error happens, reading with it gives the
same documents, values, errors, lines and budget use as building alone."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.sources.yaml_documents import reader
from scanner.sources.yaml_documents.reader import load_documents


@st.composite
def anchored_documents(draw: Any) -> str:
    docs = []
    for _ in range(draw(st.integers(1, 3))):
        lines: list[str] = []
        count = draw(st.integers(1, 7))
        for i in range(count):

            def ref(allow_self: bool = True, i: int = i) -> str:
                top = i if allow_self and draw(st.booleans()) and draw(st.booleans()) else i - 1
                return f"*a{draw(st.integers(0, top))}" if top >= 0 else "x"

            def item(depth: int = 0) -> str:
                kind = draw(st.sampled_from(["scalar", "alias", "alias", "list", "map"]))
                if kind == "scalar":
                    return draw(st.sampled_from(["x", "1", "null", "'s'"]))
                if kind == "alias":
                    return ref()
                if depth > 2:
                    return "y"
                if kind == "list":
                    return "[" + ", ".join(item(depth + 1)
                                           for _ in range(draw(st.integers(0, 4)))) + "]"
                return mapping(depth + 1)

            def mapping(depth: int) -> str:
                entries = []
                for _ in range(draw(st.integers(0, 4))):
                    key = draw(st.sampled_from(["k", "j", "<<", "[q]"]))
                    if key == "<<":
                        value = draw(st.sampled_from(["one", "many", "scalar"]))
                        entries.append("<<: " + {"one": ref(False),
                                                 "many": f"[{ref(False)}, {ref(False)}]",
                                                 "scalar": "3"}[value])
                    else:
                        entries.append(f"{key}: {item(depth)}")
                return "{" + ", ".join(entries) + "}"

            body = draw(st.sampled_from(["list", "map", "scalar"]))
            value = {"list": lambda: "[" + ", ".join(item() for _ in range(
                draw(st.integers(0, 5)))) + "]", "map": lambda: mapping(0),
                "scalar": lambda: "v"}[body]()
            lines.append(f"n{i}: &a{i} {value}")
        docs.append("\n".join(lines) + "\n")
    return "---\n".join(docs)


def _observed(text: str) -> Any:
    loaded = load_documents(text)
    return ([(d.value, d.start_line, d.end_line, d.error and (d.error.reason, d.error.line))
             for d in loaded.documents],
            loaded.error and (loaded.error.reason, loaded.error.line))


@settings(max_examples=400, deadline=None)
@given(text=anchored_documents(), budget=st.integers(5, 400), depth=st.integers(2, 8))
def test_rehearsal_changes_nothing_but_the_time(text: str, budget: int, depth: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reader, "MAX_VALUES", budget)
        mp.setattr(reader, "MAX_DEPTH", depth)
        try:
            rehearsed = _observed(text)
        except RecursionError:  # pragma: no cover - a failure, said plainly
            pytest.fail("the rehearsal recursed without bound")
        mp.setattr(reader._Builder, "rehearse", lambda self, node: None)
        built = _observed(text)
    assert repr(rehearsed) == repr(built), text


def test_a_bomb_is_refused_without_building_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The error and line building it gives (the millionth value is one of a0's items, on
    line 1), found from sizes alone: not one value is built."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    built = []
    build = reader._Builder.build
    monkeypatch.setattr(reader._Builder, "build",
                        lambda self, node, depth=1: built.append(node) or build(self, node, depth))
    loaded = load_documents("\n".join(lines) + "\n")
    assert loaded.error is not None
    assert loaded.error.reason == ("the file expands to more than 1,000,000 values (YAML aliases "
                                   "repeat it): not read further")
    assert loaded.error.line == 1
    assert [d.error for d in loaded.documents] == [loaded.error]
    assert built == []
