"""`gpuaudit spend`: actual GPU spend by instance type (and by account with --org) from Cost
Explorer, with totals by family. Read-only, one declared call (ce:GetCostAndUsage)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import click

EXIT_ERROR = 2


def _date(value: str | None, option: str) -> str | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError as exc:
        raise click.UsageError(f"{option} {value!r} is not a date (YYYY-MM-DD)") from exc


@click.command()
@click.option("--profile", metavar="NAME", help="AWS profile. Default: the standard boto3 "
              "credential chain.")
@click.option("--role-arn", metavar="ARN", help="Assume this role first.")
@click.option("--external-id", metavar="ID", help="External id for --role-arn.")
@click.option("--org", is_flag=True, help="Spend of every account of the Organization, by "
              "account (LINKED_ACCOUNT): run it in the management account.")
@click.option("--endpoint-url", metavar="URL", help="One endpoint for every service (moto "
              "server, LocalStack).")
@click.option("--start", metavar="YYYY-MM-DD", help="First day (default: the first day of "
              "last month).")
@click.option("--end", metavar="YYYY-MM-DD", help="Day after the last (exclusive; default: "
              "the first day of this month).")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table",
              show_default=True)
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to this file instead of stdout.")
def spend(profile: str | None, role_arn: str | None, external_id: str | None, org: bool,
          endpoint_url: str | None, start: str | None, end: str | None, fmt: str,
          output: Path | None) -> None:
    """Actual GPU spend by instance type over a period (Cost Explorer)."""
    from scanner.aws.clients import ClientFactory
    from scanner.aws.spend import (
        CE_REGION,
        SpendError,
        last_full_month,
        read_target_spend,
        table,
    )
    from scanner.aws.targets import TargetSpec, TargetSpecError, check_endpoint_url, resolve
    from scanner.catalog import default_catalog

    first, last = last_full_month()
    start, end = _date(start, "--start") or first, _date(end, "--end") or last
    if start >= end:
        raise click.UsageError(f"--start {start} is not before --end {end}")
    try:
        if endpoint_url is not None:
            check_endpoint_url(endpoint_url)
        spec = TargetSpec(profiles=(profile,) if profile else (), regions=(CE_REGION,),
                          role_arn=role_arn, external_id=external_id)
    except TargetSpecError as exc:
        raise click.UsageError(str(exc)) from exc
    factory = ClientFactory(endpoint_url=endpoint_url)
    targets = resolve(spec, factory)
    target = targets[0] if targets else None
    if target is None:
        _die("could not reach the account: no credentials")
        return
    try:
        found = read_target_spend(target, factory, start, end, default_catalog(), by_account=org)
    except SpendError as exc:
        reached = target.principal is not None
        _die(f"GPU spend not read: {exc}" if reached else str(exc))
        return
    text = table(found) if fmt == "table" else json.dumps(
        {"spend": found.as_dict(), "account": target.account}, indent=2, sort_keys=True) + "\n"
    if output is not None:
        output.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)


def _die(message: str) -> None:
    click.echo(f"gpuaudit: error: {message}", err=True)
    sys.exit(EXIT_ERROR)
