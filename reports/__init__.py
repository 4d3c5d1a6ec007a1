"""Report renderers. Each reads only the report document (the JSON report, schema_version 1).

Renderer modules are imported lazily, so the terminal table never pays for jinja2.
"""

from __future__ import annotations

import importlib
from typing import Any

FORMATS = ("table", "json", "html", "sarif", "junit", "markdown", "csv")

_MODULES = {
    "table": "reports.table",
    "json": "reports.json_report",
    "html": "reports.html",
    "sarif": "reports.sarif",
    "junit": "reports.junit",
    "markdown": "reports.markdown",
    "csv": "reports.csv_report",
}
_FILENAMES = {
    "table": "report.txt",
    "json": "report.json",
    "html": "report.html",
    "sarif": "report.sarif",
    "junit": "report.junit.xml",
    "markdown": "report.md",
    "csv": "report.csv",
}


def _check(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")


def render(fmt: str, doc: dict[str, Any], *, color: bool = False) -> str:
    """The report document rendered as ``fmt``; ``color`` adds ANSI colours to the table only."""
    _check(fmt)
    module = importlib.import_module(_MODULES[fmt])
    if fmt == "table":
        return str(module.render(doc, color=color))
    return str(module.render(doc))


def default_filename(fmt: str) -> str:
    _check(fmt)
    return _FILENAMES[fmt]
