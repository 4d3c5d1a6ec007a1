"""Options shared by `scan` and `audit`, and the ReportOptions they build."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from scanner.runner import ReportOptions

FORMATS = ("table", "json", "html", "sarif", "junit", "markdown", "csv")
SEVERITIES = ("critical", "high", "medium", "low", "info", "none")


def _output_options() -> list[Callable[..., Any]]:
    return [
        click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS),
                     help="Report format (repeatable). Default: table."),
        click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
                     help="Write the report (one format) to this file."),
        click.option("--output-dir", type=click.Path(path_type=Path, file_okay=False),
                     help="Write report.<ext> for every format into this directory."),
        click.option("--fail-on", type=click.Choice(SEVERITIES, case_sensitive=False),
                     help="Exit 1 on a FAIL at or above this severity (default: high)."),
        click.option("--fail-on-unknown", is_flag=True,
                     help="Strict gate: an UNKNOWN at or above --fail-on fails too (exit 1); "
                     "an ERROR always exits 2."),
        repo_root_option(),
    ]


def repo_root_option() -> Callable[..., Any]:
    return click.option(
        "--repo-root", type=click.Path(path_type=Path, file_okay=False),
        help="Repository root: SARIF paths are relative to it and the HTML report links the "
        "files under it. Default: the git work tree of the scanned paths, else the working "
        "directory.")


def _apply(fn: Callable[..., Any], decorators: list[Callable[..., Any]]) -> Callable[..., Any]:
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return fn


def output_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Where reports go and when to fail: for commands that write a report they did not
    evaluate (`report merge`)."""
    return _apply(fn, [
        *_output_options(),
        click.option("--deterministic", is_flag=True,
                     help="Omit the timestamp: identical input gives byte-identical JSON."),
        click.option("--quiet", "-q", is_flag=True, help="No table output."),
    ])


def report_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    decorators = [
        *_output_options(),
        click.option("--config", "config_path", type=click.Path(path_type=Path,
                                                                 dir_okay=False),
                     help=".gpuaudit.yaml or pyproject.toml (default: found in the cwd)."),
        click.option("--policy", "policy_ids", multiple=True, metavar="ID",
                     help="Run only these policies (repeatable; enables off-by-default ones)."),
        click.option("--skip-policy", "skip_ids", multiple=True, metavar="ID",
                     help="Do not run this policy (repeatable)."),
        click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False),
                     help="A previous JSON report: only new failing findings fail."),
        click.option("--deterministic", is_flag=True,
                     help="Omit the timestamp: identical input gives byte-identical JSON."),
        click.option("--catalog", "catalog_path",
                     type=click.Path(path_type=Path, dir_okay=False),
                     help="Prices from this catalogue (written by `gpuaudit catalog refresh`) "
                          "instead of the shipped one."),
        click.option("--include-passed", is_flag=True,
                     help="List PASS results as findings too (default: counted in the summary)."),
        click.option("--quiet", "-q", is_flag=True, help="No table or progress output."),
    ]
    return _apply(fn, decorators)


def build_report_options(kwargs: dict[str, Any]) -> ReportOptions:
    formats = tuple(kwargs.get("formats", ()) or ())
    if kwargs.get("output") is not None and len(formats) > 1:  # checked before any scanning
        raise click.UsageError("--output takes one --format; use --output-dir for several")
    policy_ids = tuple(p.strip().upper() for p in kwargs.pop("policy_ids", ()) or ())
    skip_ids = tuple(p.strip().upper() for p in kwargs.pop("skip_ids", ()) or ())
    return ReportOptions(
        formats=tuple(kwargs.pop("formats", ()) or ("table",)),
        output=kwargs.pop("output", None),
        output_dir=kwargs.pop("output_dir", None),
        fail_on=(kwargs.pop("fail_on", None) or None),
        config_path=kwargs.pop("config_path", None),
        policy_ids=policy_ids,
        skip_ids=skip_ids,
        baseline=kwargs.pop("baseline", None),
        deterministic=bool(kwargs.pop("deterministic", False)),
        quiet=bool(kwargs.pop("quiet", False)),
        include_passed=bool(kwargs.pop("include_passed", False)),
        fail_on_unknown=bool(kwargs.pop("fail_on_unknown", False)),
        repo_root=kwargs.pop("repo_root", None),
        catalog_path=kwargs.pop("catalog_path", None),
    )
