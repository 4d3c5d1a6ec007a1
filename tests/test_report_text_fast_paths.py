"""The table's text helpers take a short cut for printable ASCII (nearly all text): the cut must
give what the general path gives, character for character."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from reports import table
from reports.common import _HIDDEN, reveal

# printable ASCII and spaces (the short cut), with controls, tabs, wide, combining and
# bidi characters mixed in (the general path)
TEXT = st.text(alphabet=st.sampled_from(
    list("ab z09-/:.[]  ") + ["\t", "\n", "\x1b", "\u202e", "\u200b", "界", "\u0301", "é"]),
    max_size=40)


def _reveal_general(text: object, keep_newlines: bool) -> str:
    s = "" if text is None else str(text)
    s = _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", s)
    return s if keep_newlines else " ".join(s.split())


def _prefix_general(text: str, room: int) -> str:
    used = 0
    for i, ch in enumerate(text):
        used += table.char_width(ch)
        if used > room:
            return text[: max(i, 1)]
    return text


@settings(max_examples=400, deadline=None)
@given(TEXT, st.booleans())
def test_reveal_is_the_general_path(text: str, keep_newlines: bool) -> None:
    assert reveal(text, keep_newlines=keep_newlines) == _reveal_general(text, keep_newlines)


@settings(max_examples=400, deadline=None)
@given(TEXT, st.integers(min_value=-2, max_value=45))
def test_prefix_is_the_general_path(text: str, room: int) -> None:
    assert table._prefix(text, room) == _prefix_general(text, room)


def test_hidden_characters_are_still_shown() -> None:
    assert reveal("a\u202eb  c", keep_newlines=False) == "a<U+202E>b c"
    assert re.fullmatch(r"x\.\.\.", table.ellipsize("x" * 10, 4))
