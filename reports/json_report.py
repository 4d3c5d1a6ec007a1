"""The JSON report: the document itself, sorted and byte-identical for identical input."""

from __future__ import annotations

import json
from typing import Any


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
