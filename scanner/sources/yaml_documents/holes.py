"""Parts of a YAML text that were not known when it was written or rendered.

Two kinds, both read as :class:`~scanner.model.Unknown`, never as the literal text:

* holes: a text rendered by another source with some parts not known (a Terraform heredoc
  whose ``${module.eks.cluster_name}`` is known only after apply). The renderer writes a token
  for each unknown part (:class:`HoledText`); after parsing, every string holding a token
  becomes the Unknown it stands for, and a mapping with such a key becomes Unknown as a whole.
  Tokens carry a random nonce, so that no input text can forge one.
* placeholders: text a tool fills in before the file is used: ``${NAME}`` (Terraform's
  ``templatefile``, ``envsubst``), a whole value ``$NAME``, and Helm / Go template actions
  ``{{ ... }}``. A string holding one is Unknown; ``$${`` (``templatefile``'s escape) is not a
  placeholder.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scanner.model import Unknown

_PLACEHOLDER = re.compile(r"(?<!\$)\$\{[^}\n]*\}|\{\{.*?\}\}|^\$[A-Za-z_][A-Za-z0-9_]*$", re.S)


@dataclass
class HoledText:
    """A rendered text with tokens where parts were not known: ``holes`` maps each token to
    the Unknown it stands for."""

    text: str
    holes: dict[str, Unknown] = field(default_factory=dict)
    nonce: str = field(default_factory=lambda: secrets.token_hex(6))

    def token(self, why: Unknown) -> str:
        """A new token for an unknown part (letters and digits only: a plain YAML scalar
        wherever it lands, in a key, a value, a quoted string or a flow list)."""
        tok = f"GPUAUDITHOLE{self.nonce}N{len(self.holes)}X"
        self.holes[tok] = why
        return tok

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(f"GPUAUDITHOLE{self.nonce}N\\d+X")


def fill(value: Any, unknown_in: Callable[[str], Unknown | None]) -> Any:
    """``value`` with every string that ``unknown_in`` finds unknown replaced by that Unknown,
    and every mapping with such a key replaced by it (iterative; shared lists are copied)."""
    return _fill(value, unknown_in, 0)


def _fill(value: Any, unknown_in: Callable[[str], Unknown | None], depth: int) -> Any:
    if isinstance(value, str):
        why = unknown_in(value)
        return value if why is None else why
    if depth > 200:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            why = unknown_in(k) if isinstance(k, str) else None
            if why is not None:
                return Unknown(f"a key is not known: {why.reason}")
            out[k] = _fill(v, unknown_in, depth + 1)
        return out
    if isinstance(value, list):
        return [_fill(v, unknown_in, depth + 1) for v in value]
    return value


def holes_finder(text: HoledText) -> Callable[[str], Unknown | None]:
    pattern = text.pattern

    def find(s: str) -> Unknown | None:
        if "GPUAUDITHOLE" not in s:
            return None
        m = pattern.search(s)
        return text.holes.get(m.group(0)) if m else None

    return find


def placeholder(s: str) -> Unknown | None:
    """The Unknown a placeholder in ``s`` makes of it, or None."""
    if "$" not in s and "{{" not in s:
        return None
    m = _PLACEHOLDER.search(s)
    if m is None:
        return None
    shown = m.group(0) if len(m.group(0)) <= 60 else m.group(0)[:57] + "..."
    if shown.startswith("{{"):
        return Unknown(f"a template action {shown} (a Helm / Go template, filled in when it "
                       "is rendered)")
    return Unknown(f"a placeholder {shown} (filled in when the file is rendered: "
                   "templatefile, envsubst)")


# A template's own syntax: a Helm / Go template or Jinja action ``{{ ... }}``, a Jinja statement
# ``{% ... %}`` (a CloudFormation dynamic reference ``{{resolve:...}}`` is a value, not one)
_ACTION = re.compile(r"\{\{(?!resolve:)[^\n]*?\}\}|\{%[^\n]*?%\}")


def template_action(text: str) -> tuple[int, str] | None:
    """The first template action of a text (``{{ ... }}``, ``{% ... %}``) outside a YAML
    comment line: its line (1-based) and its text (cut to 60 characters); None when the text
    has none."""
    if "{{" not in text and "{%" not in text:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        if ("{{" in line or "{%" in line) and not line.lstrip().startswith("#"):
            m = _ACTION.search(line)
            if m is not None:
                shown = m.group(0) if len(m.group(0)) <= 60 else m.group(0)[:57] + "..."
                return number, shown
    return None


def without_placeholders(value: Any) -> Any:
    return fill(value, placeholder)


def without_holes(value: Any, text: HoledText) -> Any:
    """Holes first (their reasons are the precise ones), then placeholders."""
    find = holes_finder(text)

    def either(s: str) -> Unknown | None:
        found = find(s)  # an Unknown is falsy: compare with None
        return found if found is not None else placeholder(s)

    return fill(value, either)
