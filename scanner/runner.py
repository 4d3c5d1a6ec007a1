"""From what the sources read to reports on disk and an exit code (shared by scan and audit)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.model import Finding, InputError, Severity, SourceResult, Status

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@dataclass
class ReportOptions:
    formats: tuple[str, ...] = ("table",)
    output: Path | None = None
    output_dir: Path | None = None
    fail_on: str | None = None  # severity name or "none"; None = config, else "high"
    config_path: Path | None = None
    policy_ids: tuple[str, ...] = ()
    skip_ids: tuple[str, ...] = ()
    baseline: Path | None = None
    deterministic: bool = False
    quiet: bool = False
    include_passed: bool = False
    only_files: tuple[str, ...] | None = None  # report only findings declared in these files
    # what to report of each finding (scanner.change_scope: what a change is answerable for)
    narrow: Callable[[Any, Finding], Finding | None] | None = None
    color: bool = False
    extra_errors: list[InputError] = field(default_factory=list)


class UsageError(Exception):
    """Bad options or config: exit 2 with this message, nothing scanned."""


class ReportWriteError(UsageError):
    """A report file could not be written (the message names it); exit 2."""


def load_baseline(path: Path) -> set[str]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return {f["id"] for f in doc["findings"] if f.get("status") in ("FAIL", "SUPPRESSED")}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path}: not a gpuaudit JSON report usable as a baseline: {exc}") \
            from exc


def fails_at(severities: Iterable[str | Severity], fail_on: str) -> bool:
    """Whether any of these FAIL severities is at or above ``fail_on`` ("none": never)."""
    if fail_on == "none":
        return False
    threshold = Severity.parse(fail_on).rank
    return any((s if isinstance(s, Severity) else Severity.parse(s)).rank >= threshold
               for s in severities)


def exit_code(findings: list[Finding], errors: list[Any], fail_on: str) -> int:
    if errors or any(f.status is Status.ERROR for f in findings):
        return EXIT_ERROR
    if fails_at((f.severity for f in findings if f.status is Status.FAIL), fail_on):
        return EXIT_FINDINGS
    return EXIT_OK


def report_exit_code(doc: dict[str, Any], fail_on: str) -> int:
    """``exit_code`` for a report document (a merged one): 2 on errors, 1 on failing findings."""
    if doc["errors"] or doc["summary"]["by_status"].get("ERROR"):
        return EXIT_ERROR
    if fails_at((f["severity"] for f in doc["findings"] if f["status"] == "FAIL"), fail_on):
        return EXIT_FINDINGS
    return EXIT_OK


def finish(result: SourceResult, *, inputs: dict[str, Any], opts: ReportOptions) -> int:
    """Evaluate the policies, write the reports, return the exit code."""
    from scanner.config import ConfigError, load_config
    from scanner.engine import run

    try:
        config = load_config(opts.config_path)
        baseline = load_baseline(opts.baseline) if opts.baseline else set()
        evaluation = run(result.resources, config=config, policy_ids=opts.policy_ids or None,
                         skip_ids=opts.skip_ids, gaps=result.gaps, baseline=baseline,
                         include_passed=opts.include_passed, only_files=opts.only_files,
                         narrow=opts.narrow)
    except (ConfigError, UsageError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"gpuaudit: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    from scanner.catalog import default_catalog
    from scanner.report import build_report

    errors = [*result.errors, *opts.extra_errors]
    doc = build_report(evaluation.findings, errors=errors,
                       notices=[*result.notices, *evaluation.notices], inputs=inputs,
                       catalog=default_catalog(), resources=len(result.resources),
                       coverage=result.coverage, deterministic=opts.deterministic,
                       unpriced_regions=_unpriced_regions(result), passed=evaluation.passed)
    fail_on = opts.fail_on or config.fail_on or "high"
    write_reports(doc, opts)
    return exit_code(evaluation.findings, errors, fail_on)


def _unpriced_regions(result: SourceResult) -> list[str]:
    """Regions of the resources that the catalogue has no prices of (all but us-east-1)."""
    return sorted({r.provenance.region for r in result.resources
                   if r.provenance.region and r.provenance.region != "us-east-1"})


def write_reports(doc: dict[str, Any], opts: ReportOptions) -> None:
    from reports import default_filename, render

    formats = opts.formats or ("table",)
    if opts.output is not None and len(formats) > 1:
        raise UsageError("--output takes one --format; use --output-dir for several")
    unwritten: list[str] = []
    for fmt in formats:
        to_stdout = opts.output is None and opts.output_dir is None
        if to_stdout and opts.quiet and fmt == "table":
            continue
        text = render(fmt, doc, color=opts.color and fmt == "table")
        try:
            if opts.output is not None:
                write_file(opts.output, text)
            elif opts.output_dir is not None:
                write_file(opts.output_dir / default_filename(fmt), text)
            else:
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
        except ReportWriteError as exc:
            unwritten.append(str(exc))  # the other formats are still written
    if (opts.output or opts.output_dir) and "table" not in formats and not opts.quiet:
        sys.stdout.write(render("table", doc))
    if unwritten:
        raise ReportWriteError("; ".join(unwritten))


def write_file(path: Path, text: str) -> None:
    """Write a report; ReportWriteError (naming the path and why) when that is not possible."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportWriteError(f"cannot write {path}: {_why(path, exc)}") from exc


def _why(path: Path, exc: OSError) -> str:
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a directory"
    if path.is_dir():
        return "it is a directory"
    return exc.strerror or str(exc)
