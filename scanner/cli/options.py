"""Options shared by `scan` and `audit`, and the ReportOptions they build."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from reports import FORMATS
from scanner.run.pipeline import EXIT_ERROR, ReportOptions

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
        click.option("--strict", "--fail-on-unknown", "fail_on_unknown", is_flag=True,
                     help="Strict gate: an UNKNOWN at or above --fail-on fails too (exit 1), "
                     "a module not read (TF-001) among them; an ERROR always exits 2."),
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
        click.option("--policy", "policy_ids", multiple=True, metavar="ID[,ID...]",
                     help="Run only these policies: ids or globs ('SPOT-*'), comma-separated "
                     "or repeated; enables off-by-default ones."),
        click.option("--skip-policy", "skip_ids", multiple=True, metavar="ID[,ID...]",
                     help="Do not run these policies: ids or globs, comma-separated or "
                     "repeated."),
        click.option("--policy-dir", "policy_dirs", multiple=True,
                     type=click.Path(path_type=Path, file_okay=False),
                     help="A directory of declarative policies (YAML, docs/user-policies.md); "
                     "repeatable. Every file is validated before anything is scanned."),
        click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False),
                     help="A previous JSON report: only new failing findings fail."),
        click.option("--deterministic", is_flag=True,
                     help="Omit the timestamp: identical input gives byte-identical JSON."),
        click.option("--catalog", "catalog_path",
                     type=click.Path(path_type=Path, dir_okay=False),
                     help="Prices from this catalogue (written by `gpuaudit catalog refresh`) "
                          "instead of the shipped one."),
        click.option("--compliance", "compliance", multiple=True, metavar="FRAMEWORK",
                     help="Add the per-control status against this framework to the reports "
                     "(repeatable; gpuaudit compliance list)."),
        click.option("--warn-on", type=click.Choice(SEVERITIES[:-1], case_sensitive=False),
                     default=None,
                     help="The terminal table lists failing findings at or above this severity "
                     "(default: all); the rest are counted. Report files keep everything; the "
                     "exit code is --fail-on's."),
        click.option("--include-passed", is_flag=True,
                     help="List PASS results as findings too (default: counted in the summary)."),
        click.option("--quiet", "-q", is_flag=True, help="No table or progress output."),
    ]
    return _apply(fn, decorators)


def expand_policy_ids(values: tuple[str, ...] | list[str], option: str) -> tuple[str, ...]:
    """Policy ids from repeated, comma-separated ids and globs (``SPOT-*``), in catalogue order;
    a usage error names an id or glob that matches no policy."""
    import fnmatch

    from policies import all_policies

    words = [w.strip().upper() for v in values for w in str(v).split(",") if w.strip()]
    if not words:
        return ()
    catalogue = list(all_policies())
    chosen: set[str] = set()
    for word in words:
        hits = [pid for pid in catalogue if fnmatch.fnmatchcase(pid, word)]
        if not hits:
            what = (f"{word!r} matches no policy" if any(c in word for c in "*?[")
                    else f"unknown policy id {word}")
            raise click.BadParameter(f"{what} (known: {', '.join(catalogue)})",
                                     param_hint=option)
        chosen.update(hits)
    return tuple(pid for pid in catalogue if pid in chosen)


def use_policy_dirs(dirs: tuple[Path, ...], config_path: Path | None) -> None:
    """The declarative policies of ``--policy-dir`` and of the config's ``policy_dirs``, all
    validated before anything is scanned: a file that is not valid is exit 2 naming it."""
    from policies.discovery import PolicyLoadError
    from policies.discovery import use_policy_dirs as use
    from scanner.engine.config import ConfigError, PolicyDirError, load_config

    try:
        use(dirs)
        try:  # its policy_dirs join them; another config error is said where it is used
            load_config(config_path)
        except PolicyDirError:
            raise
        except ConfigError:
            pass
    except (PolicyLoadError, PolicyDirError) as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


def build_report_options(kwargs: dict[str, Any]) -> ReportOptions:
    formats = tuple(kwargs.get("formats", ()) or ())
    if kwargs.get("output") is not None and len(formats) > 1:  # checked before any scanning
        raise click.UsageError("--output takes one --format; use --output-dir for several")
    if "policy_dirs" in kwargs:  # scan, audit
        use_policy_dirs(tuple(kwargs.pop("policy_dirs") or ()), kwargs.get("config_path"))
    policy_ids = expand_policy_ids(kwargs.pop("policy_ids", ()) or (), "--policy")
    compliance = _frameworks(kwargs.pop("compliance", ()) or ())
    skip_ids = expand_policy_ids(kwargs.pop("skip_ids", ()) or (), "--skip-policy")
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
        warn_on=(kwargs.pop("warn_on", None) or None),
        fail_on_unknown=bool(kwargs.pop("fail_on_unknown", False)),
        repo_root=kwargs.pop("repo_root", None),
        catalog_path=kwargs.pop("catalog_path", None),
        compliance=compliance,
    )


def _frameworks(values: tuple[str, ...]) -> tuple[str, ...]:
    """Framework ids of --compliance, checked before anything is scanned."""
    if not values:
        return ()
    from scanner.compliance import UnknownFramework, framework

    try:
        return tuple(dict.fromkeys(framework(v).id for v in values))
    except UnknownFramework as exc:
        raise click.BadParameter(str(exc), param_hint="--compliance") from exc
