"""The JSON report: the document itself, sorted and byte-identical for identical input.

The top level is indented; each finding is one line (sorted keys). That keeps a 50,000-resource
report fast to write (the C encoder does the findings; Python's indenting encoder is ~5x slower)
and makes reports easy to grep and diff finding by finding. Strict JSON: never NaN or Infinity
(the document is sanitized before rendering; ``allow_nan=False`` makes a slip an error, not an
invalid file).
"""

from __future__ import annotations

import io
import json
from typing import Any, TextIO


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def write(doc: dict[str, Any], out: TextIO) -> None:
    """The document to ``out``, a finding a line as it goes."""
    keys = sorted(doc)
    out.write("{\n")
    for i, key in enumerate(keys):
        value = doc[key]
        out.write(f"  {_dump(key)}: ")
        if key == "findings" and isinstance(value, list) and value:
            out.write("[\n")
            for j, finding in enumerate(value):
                out.write(("    " if j == 0 else ",\n    ") + _dump(finding))
            out.write("\n  ]")
        else:
            text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False,
                              allow_nan=False)
            out.write(text.replace("\n", "\n  "))
        out.write(",\n" if i < len(keys) - 1 else "\n")
    out.write("}\n")


def render(doc: dict[str, Any]) -> str:
    buf = io.StringIO()
    write(doc, buf)
    return buf.getvalue()
