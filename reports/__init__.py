"""Report renderers. Each reads only the report document (the JSON report, schema_version 1).

Renderer modules are imported lazily, so the terminal table never pays for jinja2.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The one list of report formats: every --format choice is this tuple.
FORMATS = ("table", "json", "html", "sarif", "junit", "markdown", "csv", "asff", "ocsf")

_MODULES = {
    "table": "reports.table",
    "json": "reports.json_report",
    "html": "reports.html",
    "sarif": "reports.sarif",
    "junit": "reports.junit",
    "markdown": "reports.markdown",
    "csv": "reports.csv_report",
    "asff": "reports.asff",
    "ocsf": "reports.ocsf",
}
_FILENAMES = {
    "table": "report.txt",
    "json": "report.json",
    "html": "report.html",
    "sarif": "report.sarif",
    "junit": "report.junit.xml",
    "markdown": "report.md",
    "csv": "report.csv",
    "asff": "report.asff.json",
    "ocsf": "report.ocsf.json",
}


def _check(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")


@dataclass(frozen=True)
class RenderContext:
    """Where a report is shown or written, for the renderers that need it.

    ``color`` and ``width``: the table's ANSI colours and width in columns (a terminal's).
    ``root``: the repository root; SARIF paths are relative to it, and the HTML report links
    the files under it. ``base``: the directory the document's relative paths are relative to
    (default: the working directory). ``report_dir``: where the HTML report is written (its
    file links are relative to it; none when it goes to stdout)."""

    color: bool = False
    width: int | None = None
    root: Path | None = None
    base: Path | None = None
    report_dir: Path | None = None


def render(
    fmt: str,
    doc: dict[str, Any],
    *,
    color: bool = False,
    context: RenderContext | None = None,
) -> str:
    """The report document rendered as ``fmt``; ``color`` adds ANSI colours to the table only."""
    _check(fmt)
    ctx = context or RenderContext(color=color)
    module = importlib.import_module(_MODULES[fmt])
    if fmt == "table":
        return str(module.render(doc, color=color or ctx.color, width=ctx.width))
    if fmt == "sarif":
        return str(module.render(doc, root=ctx.root, base=ctx.base))
    if fmt == "html":
        return str(module.render(doc, root=ctx.root, base=ctx.base, report_dir=ctx.report_dir))
    return str(module.render(doc))


def default_filename(fmt: str) -> str:
    _check(fmt)
    return _FILENAMES[fmt]
