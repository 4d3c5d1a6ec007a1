"""Report renderers. Each reads only the report document (the JSON report, schema_version 1).

Renderer modules are imported lazily, so the terminal table never pays for jinja2.
"""

from __future__ import annotations

import importlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

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
    file links are relative to it; none when it goes to stdout). ``errors``: the table lists
    the input errors (on by default; the table printed by scan and audit lists them too)."""

    color: bool = False
    width: int | None = None
    root: Path | None = None
    base: Path | None = None
    report_dir: Path | None = None
    errors: bool = True  # the table lists the input errors (False: left out)
    warn_on: str | None = None  # the table lists failing findings at or above it (None: all)
    links: bool = False  # the table's policy ids are OSC 8 hyperlinks (a terminal)
    passed: bool = False  # the table lists PASS results too (--include-passed)


def render_to(
    fmt: str,
    doc: dict[str, Any],
    out: TextIO,
    *,
    color: bool = False,
    context: RenderContext | None = None,
) -> None:
    """Write the report document rendered as ``fmt`` to ``out`` as it goes: no format builds
    its whole output (or a tree of it) first, so memory stays flat in the number of findings.
    ``color`` adds ANSI colours to the table only."""
    _check(fmt)
    ctx = context or RenderContext(color=color)
    module = importlib.import_module(_MODULES[fmt])
    if fmt == "table":
        module.write(doc, out, color=color or ctx.color, width=ctx.width, errors=ctx.errors,
                     warn_on=ctx.warn_on, links=ctx.links, passed=ctx.passed)
    elif fmt == "sarif":
        module.write(doc, out, root=ctx.root, base=ctx.base)
    elif fmt == "html":
        module.write(doc, out, root=ctx.root, base=ctx.base, report_dir=ctx.report_dir)
    else:
        module.write(doc, out)


def render(
    fmt: str,
    doc: dict[str, Any],
    *,
    color: bool = False,
    context: RenderContext | None = None,
) -> str:
    """The report document rendered as ``fmt`` (a string: :func:`render_to` into memory)."""
    buf = io.StringIO()
    render_to(fmt, doc, buf, color=color, context=context)
    return buf.getvalue()


def default_filename(fmt: str) -> str:
    _check(fmt)
    return _FILENAMES[fmt]
