"""The JSON report: the document itself, sorted and byte-identical for identical input.

The top level is indented; each finding is one line (sorted keys). That keeps a 50,000-resource
report fast to write (the C encoder does the findings; Python's indenting encoder is ~5x slower)
and makes reports easy to grep and diff finding by finding. Strict JSON: never NaN or Infinity
(the document is sanitized before rendering; ``allow_nan=False`` makes a slip an error, not an
invalid file).
"""

from __future__ import annotations

import json
from typing import Any


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def render(doc: dict[str, Any]) -> str:
    lines = []
    keys = sorted(doc)
    for i, key in enumerate(keys):
        value = doc[key]
        if key == "findings" and isinstance(value, list) and value:
            body = ",\n".join("    " + _dump(f) for f in value)
            text = "[\n" + body + "\n  ]"
        else:
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False,
                              allow_nan=False)
            text = text.replace("\n", "\n  ")
        lines.append(f"  {_dump(key)}: {text}{',' if i < len(keys) - 1 else ''}")
    return "{\n" + "\n".join(lines) + "\n}\n"
