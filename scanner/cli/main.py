"""The `gpuaudit` command. Thin: parse options, call the library, pick the exit code.

Commands that need heavy imports (boto3 for `audit`) are loaded only when invoked, so that
`gpuaudit scan` stays fast enough for a pre-commit hook.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from reports import FORMATS
from scanner import __version__
from scanner.cli.options import (
    SEVERITIES,
    build_report_options,
    output_options,
    repo_root_option,
    report_options,
)
from scanner.cli.policies import (
    load_or_exit,
    policies_paths,
    policies_test,
    policy_dir_option,
    user_policy_lines,
)
from scanner.model import UsageError
from scanner.run.pipeline import EXIT_ERROR, EXIT_FINDINGS, finish

LAZY_COMMANDS = {
    "audit": ("scanner.cli.audit", "audit"),
    "iam-policy": ("scanner.cli.audit", "iam_policy"),
    "spend": ("scanner.aws.cli_spend", "spend"),  # GPU spend from Cost Explorer
    "catalog": ("scanner.cli.catalog", "catalog"),
    "compliance": ("scanner.cli.compliance", "compliance"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS:
            module, attr = LAZY_COMMANDS[name]
            try:
                command: click.Command = getattr(importlib.import_module(module), attr)
                return command
            except (ImportError, AttributeError):
                return None
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpuaudit")
def cli() -> None:
    """Policy-as-code compliance and cost audit for AWS GPU infrastructure."""


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint=option)
        out[key] = value
    return out


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--cfn-param", multiple=True, metavar="NAME=VALUE",
              help="CloudFormation parameter value (repeatable).")
@click.option("--region", help="The value of the CloudFormation pseudo-parameter AWS::Region "
              "(and of AWS::Partition and AWS::URLSuffix, derived from it), and the region "
              "CloudFormation resources are priced in. Terraform's region comes from its aws "
              "provider.")
@click.option("--account-id", help="Account id for CloudFormation pseudo-parameters.")
@click.option("--source-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where the .tf files of a plan JSON are (for file:line locations).")
@click.option("--var-file", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Terraform variables file (repeatable).")
@click.option("--var", "tf_vars", multiple=True, metavar="NAME=VALUE",
              help="Terraform variable (repeatable).")
@click.option("--utilization", multiple=True, metavar="FILE|KEY=FILE",
              help="GPU utilization history (a history JSON file, or KEY=FILE for one DCGM "
                   "scrape or nvidia-smi log); enables the right-sizing policies RS-*.")
@click.option("--prometheus-url", metavar="URL",
              help="Read DCGM exporter GPU utilization from this Prometheus server (bearer "
                   "token: $GPUAUDIT_PROMETHEUS_TOKEN); enables the right-sizing policies RS-*.")
@click.option("--with-checkov", is_flag=True,
              help="Run checkov's own checks on the same paths and add its failed checks to "
                   "the report ($GPUAUDIT_CHECKOV, else checkov on PATH).")
@click.option("--diff-base", metavar="REF", default="HEAD", show_default=True,
              help="With files named one by one (pre-commit, a pull request's changed files): "
              "also report findings elsewhere in their root modules that are new since this "
              "git commit.")
@click.option("--fetch-modules", is_flag=True,
              help="Fetch remote Terraform modules that .terraform/modules lacks (git, "
                   "archives, registry modules with their version constraint) into "
                   "--cache-dir, and scan them. Without it such a call is UNKNOWN (TF-001).")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Where --fetch-modules keeps fetched modules (default: "
                   "$GPUAUDIT_CACHE_DIR/modules, else the user cache dir's gpuaudit/modules).")
@report_options
def scan(paths: tuple[Path, ...], cfn_param: tuple[str, ...], region: str | None,
         account_id: str | None, source_dir: Path | None, var_file: tuple[Path, ...],
         tf_vars: tuple[str, ...], utilization: tuple[str, ...], prometheus_url: str | None,
         with_checkov: bool, diff_base: str, fetch_modules: bool, cache_dir: Path | None,
         **kwargs: Any) -> None:
    """Scan IaC: directories, .tf, .tf.json, plan JSON, CloudFormation templates.

    Files named one by one (the pre-commit hook) are evaluated with their whole module; the
    findings reported are those of the named files and those the change caused elsewhere
    (new since --diff-base)."""
    from scanner.sources.registry import ScanOptions
    from scanner.sources.scan import scan_paths

    opts = build_report_options(kwargs)
    if with_checkov:  # started first: checkov works while gpuaudit reads the paths
        from scanner.integrations.checkov.run import CheckovJob, CheckovNotFound, find_checkov

        try:
            opts.external = CheckovJob(find_checkov(), paths)
        except CheckovNotFound as exc:
            click.echo(f"gpuaudit: error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
    scan_opts = ScanOptions(cfn_params=_pairs(cfn_param, "--cfn-param"), region=region,
                            account_id=account_id, source_dir=source_dir,
                            var_files=var_file, variables=_pairs(tf_vars, "--var"),
                            module_cache=_module_cache(fetch_modules, cache_dir))
    inputs = {"paths": [p.as_posix() for p in paths]}
    extra: list[Path] = []
    deleted: list[Path] = []
    from scanner.engine.change_scope import BaseRefError

    try:
        if paths and not all(p.exists() for p in paths):
            from scanner.engine.change_scope import deleted_since

            deleted = deleted_since(paths, diff_base)  # a pull request's deleted .tf files
        if paths and all(p.is_file() or p in deleted for p in paths):
            # files named one by one (pre-commit): their modules are read, and what the change
            # is answerable for is reported (scanner.engine.change_scope)
            from scanner.engine.change_scope import prepare

            prepared = prepare(list(paths), var_files=var_file,
                               variables=dict(scan_opts.variables), base_ref=diff_base,
                               config_path=opts.config_path,
                               policy_ids=opts.policy_ids or None, skip_ids=opts.skip_ids)
            opts.narrow = prepared.narrow
            extra = prepared.extra_inputs
    except BaseRefError as exc:  # never "no base": every finding would be new with the change
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    result = scan_paths([*(p for p in paths if p not in deleted), *extra], scan_opts)
    from scanner.run.rightsizing_inputs import with_utilization

    with_utilization(result, opts, utilization, prometheus_url)
    for error in result.errors:
        if error.kind == "config":  # a bad option value (--cfn-param, --var): said, even with -q
            click.echo(f"gpuaudit: error: {error.path}: {error.reason}", err=True)
    opts.say_errors = True  # errors said on stderr too (the table on stdout lists them as well)
    sys.exit(_finish(result, inputs, opts))


def _module_cache(fetch: bool, cache_dir: Path | None) -> Path | None:
    if cache_dir is not None and not fetch:
        raise click.UsageError("--cache-dir is for --fetch-modules")
    if not fetch:
        return None
    from scanner.sources.terraform.fetch import default_cache_dir

    return cache_dir if cache_dir is not None else default_cache_dir()


def _finish(result: Any, inputs: dict[str, Any], opts: Any) -> int:
    try:
        return finish(result, inputs=inputs, opts=opts)
    except UsageError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        return EXIT_ERROR


@cli.command("checkov-dir")
def checkov_dir() -> None:
    """Print the directory to pass to `checkov --external-checks-dir`: gpuaudit's policies as
    checkov checks (CKV_GPUAUDIT_*), with the parameters of the gpuaudit config in the cwd or
    $GPUAUDIT_CONFIG."""
    from scanner.integrations.checkov import checks

    click.echo(str(Path(checks.__file__).resolve().parent))


@cli.group()
def policies() -> None:
    """The policy catalogue."""


@policies.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@policy_dir_option()
def policies_list(fmt: str, policy_dirs: tuple[Path, ...]) -> None:
    """List every policy with severity, default state and sources."""
    from policies import all_policies

    load_or_exit(policy_dirs)
    catalogue = all_policies()
    if fmt == "json":
        click.echo(json.dumps([p.describe() for p in catalogue.values()], indent=2))
        return
    width = max([9, *(len(pid) for pid in catalogue)])
    click.echo(f"{'ID':<{width}} {'SEVERITY':<8} {'DEFAULT':<7} {'SOURCES':<7} TITLE")
    for p in catalogue.values():
        state = "on" if p.enabled_by_default else "off"
        click.echo(f"{p.id:<{width}} {p.severity.value:<8} {state:<7} {p.sources:<7} {p.title}")
    click.echo("\nSOURCES: H = Terraform HCL, P = plan JSON, C = CloudFormation, L = live AWS")


@policies.command("show")
@click.argument("policy_id")
@policy_dir_option()
def policies_show(policy_id: str, policy_dirs: tuple[Path, ...]) -> None:
    """Show one policy: description, parameters and defaults, remediation."""
    from policies import all_policies

    load_or_exit(policy_dirs)
    catalogue = all_policies()
    pol = catalogue.get(policy_id.upper())
    if pol is None:
        click.echo(f"gpuaudit: error: unknown policy {policy_id!r} "
                   f"(known: {', '.join(catalogue)})", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(f"{pol.id}  {pol.title}")
    click.echo(f"severity: {pol.severity.value}   enabled by default: "
               f"{'yes' if pol.enabled_by_default else 'no'}   sources: {pol.sources}")
    click.echo(f"applies to: {', '.join(pol.kinds)}\n")
    for line in user_policy_lines(pol):
        click.echo(line)
    click.echo(pol.description + "\n")
    if pol.params:
        click.echo("parameters (set under policies.<ID> in .gpuaudit.yaml):")
        for key, value in pol.params.items():
            click.echo(f"  {key}: {json.dumps(value)}")
        click.echo("")
    click.echo("remediation: " + pol.remediation.text)
    if pol.remediation.terraform:
        click.echo("\nTerraform:\n" + pol.remediation.terraform)
    if pol.remediation.cloudformation:
        click.echo("\nCloudFormation:\n" + pol.remediation.cloudformation)


policies.add_command(policies_test)
policies.add_command(policies_paths)


@cli.group()
def report() -> None:
    """Work with JSON reports."""


@report.command("render")
@click.argument("json_report", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--format", "formats", multiple=True, default=("table",),
              type=click.Choice(FORMATS))
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the report (one format) to this file (default: stdout).")
@click.option("--output-dir", type=click.Path(path_type=Path, file_okay=False),
              help="Write report.<ext> for every format into this directory.")
@repo_root_option()
def report_render(json_report: Path, formats: tuple[str, ...], output: Path | None,
                  output_dir: Path | None, repo_root: Path | None) -> None:
    """Re-render a JSON report in other formats (to stdout unless --output/--output-dir).

    Relative file paths in the report are taken as relative to the working directory, as
    when the scan ran there."""
    from scanner.findings.merge import ReportReadError, read_report
    from scanner.run.pipeline import ReportOptions, write_reports

    if output is not None and len(formats) > 1:
        raise click.UsageError("--output takes one --format; use --output-dir for several")
    try:
        doc = read_report(json_report)
    except ReportReadError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    try:
        # no table echoed beside a report written to a file; the report itself goes to stdout
        # when no file is named
        quiet = output is not None or output_dir is not None
        write_reports(doc, ReportOptions(formats=formats, output=output, output_dir=output_dir,
                                         quiet=quiet, repo_root=repo_root))
    except UsageError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


@report.command("merge")
@click.argument("json_reports", nargs=-1, required=True,
                type=click.Path(path_type=Path, dir_okay=False))
@output_options
def report_merge(json_reports: tuple[Path, ...], **kwargs: Any) -> None:
    """Merge JSON reports (the shards of `audit --shard K/N`, or several scans) into one.

    Findings are listed once each; the summary is recomputed. A report that cannot be read is
    an error in the merged report (exit 2); the others are still merged."""
    from scanner.findings.merge import Part, ReportReadError, merge_reports, read_report
    from scanner.run.pipeline import report_exit_code, write_reports

    opts = build_report_options(kwargs)
    parts: list[Part] = []
    unreadable: list[tuple[str, str]] = []
    for path in json_reports:
        try:
            parts.append(Part(str(path), read_report(path)))
        except ReportReadError as exc:
            click.echo(f"gpuaudit: error: {exc}", err=True)
            unreadable.append((str(path), exc.reason))
    doc = merge_reports(parts, unreadable=unreadable, deterministic=opts.deterministic,
                        warn=lambda m: click.echo(f"gpuaudit: warning: {m}", err=True))
    try:
        write_reports(doc, opts)
    except UsageError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(report_exit_code(doc, opts.fail_on or "high", opts.fail_on_unknown))


@report.command("diff")
@click.argument("old", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("new", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]),
              default="table", show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the diff to this file (default: stdout).")
@click.option("--fail-on", type=click.Choice(SEVERITIES, case_sensitive=False), default="high",
              show_default=True, help="Exit 1 when a new FAIL is at or above this severity.")
def report_diff(old: Path, new: Path, fmt: str, output: Path | None, fail_on: str) -> None:
    """What changed between two JSON reports: new, fixed, newly suppressed and unchanged
    failing findings, matched by fingerprint (e.g. last night's audit against tonight's)."""
    from reports.diff import diff_reports, render_diff_markdown, render_diff_table
    from scanner.findings.merge import ReportReadError, read_report
    from scanner.run.pipeline import fails_at, write_file

    try:
        docs = [read_report(old), read_report(new)]
    except ReportReadError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    diff = diff_reports(docs[0], docs[1], old_name=str(old), new_name=str(new))
    if fmt == "json":
        text = json.dumps(diff, indent=2, sort_keys=True, allow_nan=False) + "\n"
    elif fmt == "markdown":
        text = render_diff_markdown(diff)
    else:
        text = render_diff_table(diff)
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            write_file(output, text)
        except UsageError as exc:
            click.echo(f"gpuaudit: error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
    if fails_at((f["severity"] for f in diff["new_findings"]), fail_on):
        sys.exit(EXIT_FINDINGS)


def _register_report_compliance() -> None:
    from scanner.cli.compliance import report_compliance, report_send_securityhub

    report.add_command(report_compliance)
    report.add_command(report_send_securityhub)


_register_report_compliance()


@cli.command()
@click.option("--output-dir", type=click.Path(path_type=Path, file_okay=False),
              default=Path("gpuaudit-report"), show_default=True)
def demo(output_dir: Path) -> None:
    """A whole audit of a sandbox AWS account (moto, in this process; no AWS account needed)
    and of the bundled IaC examples: writes report.html, report.json and report.sarif."""
    from scanner.cli.demo import DemoUnavailable, run_demo

    try:
        code = run_demo(output_dir, echo=click.echo)
    except DemoUnavailable as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except UsageError as exc:  # a report that cannot be written: the message names it
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(code)


def main() -> None:
    # A one-shot process that builds a large, mostly acyclic object graph (a 50,000-resource plan
    # is millions of dicts): the cyclic collector only costs time here (-30% on that bench).
    gc.disable()
    try:
        # not standalone: click would turn Ctrl-C into "Aborted!" and exit 1, which means FAIL
        code = cli.main(standalone_mode=False)
    except SystemExit as exc:
        hard_exit(exc.code)
    except (KeyboardInterrupt, click.exceptions.Abort):
        print("gpuaudit: interrupted", file=sys.stderr)
        hard_exit(130)
    except click.ClickException as exc:  # a usage error, as standalone click shows it
        exc.show()
        hard_exit(exc.exit_code)
    except BaseException as exc:  # the last resort: never a traceback, never exit 1
        with contextlib.suppress(Exception):
            print(f"gpuaudit: internal error: {_one_line(exc)}; please report", file=sys.stderr)
        hard_exit(EXIT_ERROR)
    hard_exit(code if isinstance(code, int) else 0)


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text[:300] + ("…" if len(text) > 300 else "")


def hard_exit(code: object) -> None:
    """Exit without tearing the heap down object by object (0.2 s after a live audit, more after
    a large plan): the reports are written and closed by now; flush the standard streams and go.
    mypy ends the same way. A non-integer code other than None exits 2, never 1 (1 means FAIL)."""
    if isinstance(code, str):  # sys.exit("message"): Python would exit 1, which means FAIL here
        print(code, file=sys.stderr)
        code = EXIT_ERROR
    status = code if isinstance(code, int) else 0 if code is None else EXIT_ERROR
    checkov = sys.modules.get("scanner.integrations.checkov.run")
    if checkov is not None:  # --with-checkov ending before checkov did: stop it and its workers
        checkov.stop_all()
    for stream in (sys.stdout, sys.stderr):
        # a closed pipe (`| head`) or stream: nothing left to keep
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    main()
