"""From what the sources read to reports on disk and an exit code (shared by scan and audit)."""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.findings.spend import with_saving_share
from scanner.model import Finding, InputError, Severity, SourceResult, Status, UsageError

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
    warn_on: str | None = None  # the table lists failing findings at or above it; None: config
    only_files: tuple[str, ...] | None = None  # report only findings declared in these files
    color: bool | None = None  # None: on a terminal, unless NO_COLOR is set
    fail_on_unknown: bool = False  # UNKNOWN at or above fail_on fails too (exit 1)
    repo_root: Path | None = None  # SARIF paths are relative to it (default: found from git)
    # what to report of each finding (scanner.engine.change_scope: what a change is answerable for)
    narrow: Callable[[Any, Finding], Finding | None] | None = None
    extra_errors: list[InputError] = field(default_factory=list)
    catalog_path: Path | None = None  # a catalogue written by `gpuaudit catalog refresh`
    # Another tool's run whose findings join the policies' (scan --with-checkov): an object with
    # join(findings, config=, baseline=, deterministic=) -> .findings .errors .notices .summary
    external: Any = None
    compliance: tuple[str, ...] = ()  # framework ids: per-control sections in the reports
    say_errors: bool = False  # say the input errors on stderr (scan, audit)
    # audit --with-spend: the actual GPU spend of the audited accounts (scanner.aws.spend)
    spend: dict[str, Any] | None = None


class ReportWriteError(UsageError):
    """A report file could not be written (the message names it); exit 2."""


def load_baseline(path: Path) -> set[str]:
    from scanner.findings.merge import ReportReadError, read_report

    try:
        doc = read_report(path)
    except ReportReadError as exc:
        raise UsageError(f"{exc.path}: not usable as a baseline: {exc.reason}") from exc
    return {f["id"] for f in doc["findings"] if f.get("status") in ("FAIL", "SUPPRESSED")}


def fails_at(severities: Iterable[str | Severity], fail_on: str) -> bool:
    """Whether any of these FAIL severities is at or above ``fail_on`` ("none": never)."""
    if fail_on == "none":
        return False
    threshold = Severity.parse(fail_on).rank
    return any((s if isinstance(s, Severity) else Severity.parse(s)).rank >= threshold
               for s in severities)


def exit_code(findings: list[Finding], errors: list[Any], fail_on: str,
              fail_on_unknown: bool = False) -> int:
    """2 when something could not be read (an input error, an ERROR result); 1 on a FAIL at or
    above ``fail_on`` (with ``fail_on_unknown``, an UNKNOWN there too); else 0."""
    if errors or any(f.status is Status.ERROR for f in findings):
        return EXIT_ERROR
    failing = (Status.FAIL, Status.UNKNOWN) if fail_on_unknown else (Status.FAIL,)
    if fails_at((f.severity for f in findings if f.status in failing), fail_on):
        return EXIT_FINDINGS
    return EXIT_OK


def report_exit_code(doc: dict[str, Any], fail_on: str, fail_on_unknown: bool = False) -> int:
    """``exit_code`` for a report document (a merged one): 2 on errors, 1 on failing findings."""
    if doc["errors"] or doc["summary"]["by_status"].get("ERROR"):
        return EXIT_ERROR
    failing = ("FAIL", "UNKNOWN") if fail_on_unknown else ("FAIL",)
    if fails_at((f["severity"] for f in doc["findings"] if f["status"] in failing), fail_on):
        return EXIT_FINDINGS
    return EXIT_OK


def finish(result: SourceResult, *, inputs: dict[str, Any], opts: ReportOptions) -> int:
    """Evaluate the policies, write the reports, return the exit code. The result's resources
    are let go once evaluated (``result.resources`` is empty afterwards)."""
    from scanner.catalog import CatalogError, default_catalog, load_catalog
    from scanner.engine.config import ConfigError, load_config
    from scanner.engine.evaluate import run

    try:
        config = load_config(opts.config_path)
        baseline = load_baseline(opts.baseline) if opts.baseline else set()
        catalog = load_catalog(opts.catalog_path) if opts.catalog_path else default_catalog()
        evaluation = run(result.resources, config=config, policy_ids=opts.policy_ids or None,
                         skip_ids=opts.skip_ids, gaps=result.gaps, baseline=baseline,
                         include_passed=opts.include_passed, only_files=opts.only_files,
                         catalog=catalog, narrow=opts.narrow)
    except (ConfigError, UsageError, KeyError, CatalogError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"gpuaudit: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    counted, unpriced = _counted(result), _unpriced_regions(result, catalog.regions)
    # the report needs nothing more of the resources: let them go before it is built (a large
    # plan's resources are as big as its report; their memory is used again for it)
    result.resources.clear()
    from scanner.findings.report import build_report

    errors = [*result.errors, *opts.extra_errors]
    notices = [*result.notices, *evaluation.notices]
    summary: dict[str, Any] = {}
    if opts.external is not None:
        from scanner.engine.evaluate import report_order

        joined = opts.external.join(evaluation.findings, config=config, baseline=baseline,
                                    deterministic=opts.deterministic)
        evaluation.findings = sorted(joined.findings, key=lambda f: report_order(
            f.location, f.policy_id, f.resource, f.id))
        errors += joined.errors
        notices += joined.notices
        summary = joined.summary
    from scanner.inputs.repo_root import repo_root

    files = sorted({str(f.location["file"]) for f in evaluation.findings
                    if f.location and f.location.get("file")})
    root = (repo_root(inputs["paths"], explicit=opts.repo_root, files=files)
            if inputs.get("paths") else None)
    doc = build_report(evaluation.findings, errors=errors, notices=notices, inputs=inputs,
                       catalog=catalog, resources=counted,
                       coverage=result.coverage, deterministic=opts.deterministic,
                       unpriced_regions=unpriced,
                       passed=evaluation.passed, sensitive=result.sensitive, root=root,
                       census=evaluation.census)
    doc["summary"].update(summary)
    if opts.spend is not None:
        from scanner.findings.redact import redact_document

        # after the document's redaction: its reasons (AWS's messages) are redacted the same way
        doc["spend"] = redact_document({"spend": with_saving_share(opts.spend, doc["summary"])},
                                       result.sensitive)["spend"]
    if opts.compliance:
        from reports.compliance_report import evaluate

        doc["compliance"] = [evaluate(doc, fid) for fid in opts.compliance]
    fail_on = opts.fail_on or config.fail_on or "high"
    opts.warn_on = opts.warn_on or config.warn_on  # the option overrides the config
    if opts.say_errors:
        say_errors(doc.get("errors") or [], listed_where(opts))
    write_reports(doc, opts)
    return exit_code(evaluation.findings, errors, fail_on, opts.fail_on_unknown)


STDERR_ERRORS = 20  # input errors said on stderr one by one; the rest counted (see the report)


def listed_where(opts: ReportOptions) -> str:
    """Where the run's report lists every input error (the table printed on stdout lists them
    as the table written to a file does), for the stderr line that counts the rest."""
    if opts.output is not None or opts.output_dir is not None:
        return "the report lists them all"
    formats = opts.formats or ("table",)
    if any(f != "table" for f in formats):
        return "the report on stdout lists them all"
    if opts.quiet:
        return "run without --quiet, or with --output, to list them all"
    return "the table's Errors section lists them all"


def say_errors(errors: list[dict[str, Any]],
               where_listed: str = "the report lists them all") -> None:
    """The input errors of a run on stderr, where errors go (stdout may be piped): at most
    STDERR_ERRORS lines, then how many more and where they are all listed (the table on
    stdout and every report list them too). A bad option value (kind ``config``) is said by the
    command as it reads its options."""
    errors = [e for e in errors if e.get("kind") != "config"]
    for e in errors[:STDERR_ERRORS]:
        where = f"{e.get('path')}:{e['line']}" if e.get("line") else str(e.get("path"))
        print(f"gpuaudit: error: {where}: {e.get('reason')}",
              file=sys.stderr)
    if len(errors) > STDERR_ERRORS:
        print(f"gpuaudit: error: ... and {len(errors) - STDERR_ERRORS} more input errors "
              f"({where_listed})", file=sys.stderr)


def _counted(result: SourceResult) -> int:
    """Resources read, not counting the utilization records kept beside them."""
    return sum(1 for r in result.resources if not r.kind.startswith("telemetry."))


def _unpriced_regions(result: SourceResult, priced: tuple[str, ...] = ("us-east-1",)) -> list[str]:
    """Regions of the resources (observed, or where IaC deploys them) that the catalogue has no
    prices of."""
    from scanner.pricing.prices import region_of

    regions = {region_of(r) for r in result.resources}
    return sorted(r for r in regions if r and r not in priced)


def color_wanted(stream: Any = None) -> bool:
    """ANSI colours: only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def links_wanted(stream: Any = None) -> bool:
    """OSC 8 hyperlinks in the table: only on a terminal that is not ``TERM=dumb`` (piped
    output stays plain text, the policy page a ``docs: URL`` line)."""
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def table_width(stream: Any = None) -> int | None:
    """The terminal's width when ``stream`` is one; else $COLUMNS when set; else None (the
    table's default)."""
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    if isatty and isatty():
        return shutil.get_terminal_size((100, 24)).columns
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def render_context(doc: dict[str, Any], opts: ReportOptions, fmt: str, to_stdout: bool) -> Any:
    from reports import RenderContext

    if fmt == "table":
        if not to_stdout:
            return RenderContext()
        color = color_wanted() if opts.color is None else opts.color
        # the same table as the one written to a file: its Errors section too (they were said
        # on stderr as well, where a piped stdout still shows them)
        return RenderContext(color=color, width=table_width(), errors=True,
                             warn_on=opts.warn_on, links=links_wanted(),
                             passed=opts.include_passed)
    if fmt not in ("sarif", "html"):
        return RenderContext()
    from scanner.inputs.repo_root import repo_root

    inputs = doc.get("inputs") or {}
    paths = inputs.get("paths") or []
    cwd = Path.cwd()
    report_dir = None
    if fmt == "html" and not to_stdout:
        target = opts.output if opts.output is not None else opts.output_dir
        report_dir = (target.parent if opts.output is not None else target) if target else None
        report_dir = cwd / report_dir if report_dir is not None else None
    if isinstance(inputs.get("root"), str):  # its paths are relative to the repository root
        base = Path(os.path.realpath(cwd / inputs["root"]))
        root = Path(os.path.realpath(cwd / opts.repo_root)) if opts.repo_root else base
        return RenderContext(root=root, base=base, report_dir=report_dir)
    # an older report (or a merge of reports of several roots): paths as the scan was given
    # them, relative to the directory it ran in (taken to be this one)
    return RenderContext(root=repo_root(paths, explicit=opts.repo_root, cwd=cwd), base=cwd,
                         report_dir=report_dir)


def write_reports(doc: dict[str, Any], opts: ReportOptions) -> None:
    """Each format written into its file (or stdout) as it is rendered (reports.render_to):
    nothing holds a whole report in memory. With files named, the table is printed too
    (unless --quiet), whether or not one of the files is the table."""
    from reports import default_filename, render_to

    formats = opts.formats or ("table",)
    if opts.output is not None and len(formats) > 1:
        raise UsageError("--output takes one --format; use --output-dir for several")
    unwritten: list[str] = []
    for fmt in formats:
        to_stdout = opts.output is None and opts.output_dir is None
        if to_stdout and opts.quiet and fmt == "table":
            continue
        ctx = render_context(doc, opts, fmt, to_stdout)
        try:
            if opts.output is not None:
                write_stream(opts.output, functools.partial(render_to, fmt, doc, context=ctx))
            elif opts.output_dir is not None:
                write_stream(opts.output_dir / default_filename(fmt),
                             functools.partial(render_to, fmt, doc, context=ctx))
            else:
                render_to(fmt, doc, sys.stdout, context=ctx)  # every format ends its last line
        except ReportWriteError as exc:
            unwritten.append(str(exc))  # the other formats are still written
    if (opts.output or opts.output_dir) and not opts.quiet:
        render_to("table", doc, sys.stdout, context=render_context(doc, opts, "table", True))
    if unwritten:
        raise ReportWriteError("; ".join(unwritten))


def write_file(path: Path, text: str) -> None:
    """Write a report; ReportWriteError (naming the path and why) when that is not possible."""
    write_stream(path, lambda out: out.write(text))


def write_stream(path: Path, fill: Callable[[Any], Any]) -> None:
    """Open ``path`` and let ``fill`` write the report into it; ReportWriteError (naming the
    path and why) when that is not possible."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as out:
            fill(out)
    except OSError as exc:
        raise ReportWriteError(f"cannot write {path}: {_why(path, exc)}") from exc


def _why(path: Path, exc: OSError) -> str:
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a directory"
    if path.is_dir():
        return "it is a directory"
    return exc.strerror or str(exc)

