"""`gpuaudit compliance` (the frameworks and what covers them) and the compliance commands of
`gpuaudit report`: `report compliance` and `report send-securityhub`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from scanner.run.pipeline import EXIT_ERROR


def _framework_or_exit(name: str):  # type: ignore[no-untyped-def]
    from scanner.compliance import UnknownFramework, framework

    try:
        return framework(name)
    except UnknownFramework as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


@click.group()
def compliance() -> None:
    """Compliance frameworks and the policies that cover their controls."""


@compliance.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
def compliance_list(fmt: str) -> None:
    """Every framework: version, and controls covered / listed."""
    from scanner.compliance import frameworks

    rows = [{"id": f.id, "name": f.name, "version": f.version, "covered": len(f.covered),
             "controls": len(f.controls)} for f in frameworks().values()]
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    click.echo(f"{'FRAMEWORK':<24} {'VERSION':<36} {'COVERED':>7}  NAME")
    for r in rows:
        click.echo(f"{r['id']:<24} {r['version']:<36} {r['covered']:>3}/{r['controls']:<3}  "
                   f"{r['name']}")


@compliance.command("show")
@click.argument("framework_id")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
def compliance_show(framework_id: str, fmt: str) -> None:
    """Each control of a framework with the policies that cover it, and why."""
    fw = _framework_or_exit(framework_id)
    if fmt == "json":
        click.echo(json.dumps({
            "id": fw.id, "name": fw.name, "version": fw.version, "url": fw.url,
            "scope": fw.scope,
            "controls": [{"id": c.id, "title": c.title, "coverage": c.coverage,
                          "policies": [{"policy": m.policy, "coverage": m.coverage,
                                        "why": m.why} for m in c.mappings]}
                         for c in fw.controls]}, indent=2))
        return
    click.echo(f"{fw.name} {fw.version} ({fw.id}): {len(fw.covered)}/{len(fw.controls)} "
               f"controls covered\n{fw.scope}\n")
    for c in fw.controls:
        policies = ", ".join(f"{m.policy} ({m.coverage})" for m in c.mappings) or "not covered"
        click.echo(f"{c.id:<10} {c.title}\n{'':<10} -> {policies}")
        for m in c.mappings:
            click.echo(f"{'':<13} {m.policy}: {m.why}")


@click.command("compliance")
@click.argument("json_report", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--framework", "framework_id", required=True, metavar="ID",
              help="A framework id (gpuaudit compliance list).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "html", "json"]),
              default="markdown", show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to this file (default: stdout).")
def report_compliance(json_report: Path, framework_id: str, fmt: str,
                      output: Path | None) -> None:
    """Per-control status of a JSON report against one framework: PASS, FAIL, UNKNOWN, ERROR
    or not covered, with the failing resources and links to the policies."""
    from reports.compliance_report import render
    from scanner.findings.merge import ReportReadError, read_report
    from scanner.run.pipeline import UsageError, write_file

    fw = _framework_or_exit(framework_id)
    try:
        doc = read_report(json_report)
    except ReportReadError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    text = render(doc, fw.id, fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        write_file(output, text)
    except UsageError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


@click.command("send-securityhub")
@click.argument("json_report", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--region", help="Security Hub region (default: the session's).")
@click.option("--endpoint-url", metavar="URL", help="Security Hub endpoint (a test server).")
def report_send_securityhub(json_report: Path, region: str | None,
                            endpoint_url: str | None) -> None:
    """Import a JSON report's findings into AWS Security Hub (ASFF, BatchImportFindings).

    The only command that writes to AWS: it needs securityhub:BatchImportFindings (`gpuaudit
    iam-policy --send`). Ids are stable per policy and resource, so sending again updates the
    same findings. PASS findings (a report written with --include-passed) are sent as PASSED
    and archived, which resolves a finding fixed since the last send."""
    from scanner.aws.securityhub import SendError, SendRefused, send
    from scanner.findings.merge import ReportReadError, read_report

    try:
        doc = read_report(json_report)
    except ReportReadError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    try:
        result = send(doc, region=region, endpoint_url=endpoint_url,
                      progress=lambda m: click.echo(f"gpuaudit: {m}", err=True))
    except (SendError, SendRefused) as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    click.echo(f"Security Hub {result.account}/{result.region}: {result.sent} finding(s) "
               f"imported, {result.failed} failed")
    for line in result.failures[:20]:
        click.echo(f"gpuaudit: error: {line}", err=True)
    if result.failed:
        sys.exit(EXIT_ERROR)
