"""`gpuaudit catalog refresh`: rebuild the price catalogue from the AWS Price List API."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from scanner.run.pipeline import EXIT_ERROR


@click.group()
def catalog() -> None:
    """The GPU instance catalogue (specs and regional on-demand prices)."""


@catalog.command("refresh")
@click.option("--region", "regions", multiple=True, required=True, metavar="R",
              help="Region whose prices to read (repeatable).")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Catalogue file to write; an existing one is updated (its other regions "
                   "kept). Default: print to stdout. Use it with --catalog FILE.")
@click.option("--profile", help="AWS profile (pricing:GetProducts).")
@click.option("--endpoint-url", help="Price List API endpoint (default: AWS's, in us-east-1).")
def refresh_command(regions: tuple[str, ...], output: Path | None, profile: str | None,
                    endpoint_url: str | None) -> None:
    """Read on-demand Linux prices of every catalogue type in these regions."""
    import boto3

    from scanner.aws.clients import ClientFactory
    from scanner.aws.faults import describe
    from scanner.aws.price_list import PRICING_REGION, RefreshError, refresh
    from scanner.catalog import CatalogError, default_catalog, load_catalog

    try:
        base = load_catalog(output) if output is not None and output.exists() \
            else default_catalog()
    except CatalogError as exc:
        _die(str(exc))
    session = boto3.Session(profile_name=profile) if profile else boto3.Session()
    client = ClientFactory(endpoint_url=endpoint_url).client(
        session, "pricing", ["GetProducts"], region=PRICING_REGION)
    try:
        updated = refresh(base, regions, pages_of(client))
    except RefreshError as exc:
        _die(str(exc))
    except Exception as exc:  # denied, throttled, unreachable: said plainly, nothing written
        _die(f"pricing:GetProducts failed: {describe(exc)}")
    text = json.dumps(updated.to_doc(), indent=1, sort_keys=True) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}: prices for {', '.join(updated.regions)} "
                   f"(as of {updated.as_of})", err=True)


def pages_of(client: Any) -> Any:
    def pages(params: dict[str, Any]) -> Any:
        return client.get_paginator("get_products").paginate(**params)

    return pages


def _die(message: str) -> None:
    click.echo(f"gpuaudit: error: {message}", err=True)
    sys.exit(EXIT_ERROR)
