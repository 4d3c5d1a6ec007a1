"""The pricing layer: price(type, region, market) and its basis, the one Savings builder, the
month constant in one place, and `catalog refresh` against a recorded Price List API answer
(botocore's Stubber: moto has no Price List backend)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from scanner.aws.clients import ClientFactory, ReadOnlyViolation
from scanner.aws.price_list import PRICING_REGION, RefreshError, on_demand_price, refresh, request
from scanner.catalog import CatalogError, catalog_from_doc, default_catalog, load_catalog
from scanner.model.money import HOURS_PER_MONTH, Component, build_savings, rate_text
from scanner.pricing.prices import price

ROOT = Path(__file__).resolve().parents[1]
RECORDED = json.loads((ROOT / "tests/fixtures/pricing/get_products_eu-west-1.json").read_text())


def test_one_month_constant_and_no_730_literal_in_policies_or_templates() -> None:
    assert HOURS_PER_MONTH == 730
    offenders = []
    for path in [*ROOT.glob("policies/*.py"), *ROOT.glob("reports/templates/*")]:
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if re.search(r"(?<![\d.])730(?![\d.])", line):
                offenders.append(f"{path.name}:{n}")
    assert offenders == []


def test_on_demand_in_the_region_else_us_east_1_said_so() -> None:
    cat = default_catalog()
    here = price("g5.xlarge", "us-east-1", catalog=cat)
    assert (here.usd_hour, here.estimated) == (1.006, False)
    away = price("g5.xlarge", "ap-southeast-4", catalog=cat)  # a region the catalogue lacks
    assert away.usd_hour == 1.006 and away.estimated
    assert "no ap-southeast-4 price" in away.basis
    assert "catalog refresh --region ap-southeast-4" in away.basis
    assert price("p5e.48xlarge", "us-east-1", catalog=cat).usd_hour is None  # none published
    assert "no catalogue price" in price("x9.huge", "us-east-1", catalog=cat).basis


def test_spot_live_else_estimate_and_a_price_below_1_percent_is_missing() -> None:
    cat = default_catalog()
    live = price("g5.xlarge", "us-east-1", "spot", catalog=cat, spot_prices={"g5.xlarge": "0.4"})
    assert (live.usd_hour, live.estimated) == (0.4, False)
    assert "DescribeSpotPriceHistory" in live.basis
    guess = price("g5.xlarge", "us-east-1", "spot", catalog=cat)
    assert guess.usd_hour == pytest.approx(0.35 * 1.006) and guess.estimated
    assert "estimated at 0.35 x" in guess.basis
    moto = price("g5.xlarge", "us-east-1", "spot", catalog=cat,
                 spot_prices={"g5.xlarge": "0.005"})
    assert moto.usd_hour == pytest.approx(0.35 * 1.006)
    assert "below 1% of on-demand" in moto.basis


def test_savings_builder_writes_a_basis_a_person_can_recompute() -> None:
    s = build_savings([Component(12.24, 0.526, 2, note="g4dn.xlarge in place of p3.8xlarge"),
                       Component(4.284, 0.1841, 1, note="spot")], kind="rightsize",
                      note="the cheapest override counted")
    assert s.basis == ("((12.24 - 0.526) $/h x 730 h x 2 instances [g4dn.xlarge in place of "
                       "p3.8xlarge]) + ((4.284 - 0.1841) $/h x 730 h x 1 instance [spot]) = "
                       "20,095.37 $/month; the cheapest override counted")
    # recompute from the text
    terms = re.findall(r"\(([\d.]+) - ([\d.]+)\) \$/h x 730 h x (\d+)", s.basis)
    assert sum((float(a) - float(b)) * 730 * int(n) for a, b, n in terms) == \
        pytest.approx(s.usd_month)
    per = build_savings([Component(1.0, 0.7, None)], kind="overspend_cap")
    assert per.basis == "(1 - 0.7) $/h x 730 h per instance"
    assert per.money_class == "exposure" and s.money_class == "saving"
    assert rate_text(0.07565) == "0.07565" and rate_text(12.0) == "12"


def test_catalogue_file_errors_name_the_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "cat.json"
    bad.write_text("{")
    with pytest.raises(CatalogError, match=r"cat\.json: not valid JSON"):
        load_catalog(bad)
    with pytest.raises(CatalogError, match=r"instances\.g5\.xlarge"):
        catalog_from_doc({"source": "x", "as_of": "2026-01-01",
                          "instances": {"g5.xlarge": {"prices": {"us-east-1": "cheap"}}}}, "c")


# -- catalog refresh ---------------------------------------------------------------------------


def _stubbed(types: list[str]) -> tuple[Any, Stubber]:
    client = ClientFactory().client(boto3.Session(region_name=PRICING_REGION, aws_access_key_id="x",
                                                  aws_secret_access_key="x"),
                                    "pricing", ["GetProducts"], region=PRICING_REGION)
    stub = Stubber(client)
    for t in types:
        params = request(t, "eu-west-1")
        first = dict(RECORDED[t])
        stub.add_response("get_products", first, params)
        if "NextToken" in first:
            stub.add_response("get_products", RECORDED[f"{t}#2"],
                              {**params, "NextToken": first["NextToken"]})
    return client, stub


def test_refresh_reads_the_recorded_price_list_answers() -> None:
    types = ["g4dn.xlarge", "g5.2xlarge", "p3.8xlarge", "p5.48xlarge"]
    client, stub = _stubbed(types)
    from scanner.cli.catalog import pages_of

    with stub:
        updated = refresh(default_catalog(), ["eu-west-1"], pages_of(client), types=types)
        stub.assert_no_pending_responses()
    assert updated.regional_price("p3.8xlarge", "eu-west-1") == 13.22  # BYOL product left out
    assert updated.regional_price("g4dn.xlarge", "eu-west-1") == 0.587
    assert updated.regional_price("g5.2xlarge", "eu-west-1") == 1.362  # second page
    assert updated.regional_price("p5.48xlarge", "eu-west-1") is None  # not offered there
    assert updated.regional_price("p3.8xlarge", "us-east-1") == 12.24  # other regions kept
    assert "eu-west-1" in updated.regions and updated.as_of == "2026-11-20"
    # the refreshed catalogue prices eu-west-1 at its own prices, and round-trips
    again = catalog_from_doc(json.loads(json.dumps(updated.to_doc())), "x")
    p = price("p3.8xlarge", "eu-west-1", catalog=again)
    assert (p.usd_hour, p.estimated) == (13.22, False)
    # each refreshed price carries its publication date; the others keep theirs
    assert again.price_date("p3.8xlarge", "eu-west-1") == "2026-11-20"
    assert "(price of 2026-11-20)" in p.basis
    assert again.price_date("p3.8xlarge", "us-east-1") == "2026-07-20"
    assert again.price_date("p5.48xlarge", "eu-west-1") is None


def test_refresh_filters_are_the_documented_ones() -> None:
    fields = {f["Field"]: f["Value"] for f in request("g5.xlarge", "eu-west-1")["Filters"]}
    assert fields == {"instanceType": "g5.xlarge", "regionCode": "eu-west-1",
                      "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
                      "capacitystatus": "Used"}
    assert all(f["Type"] == "TERM_MATCH" for f in request("g5.xlarge", "x")["Filters"])


def test_a_malformed_price_list_item_is_an_error_not_a_price() -> None:
    with pytest.raises(RefreshError, match=r"g5\.xlarge"):
        on_demand_price(["not json"], "g5.xlarge")


def test_the_pricing_client_is_read_only() -> None:
    client = ClientFactory().client(boto3.Session(region_name=PRICING_REGION,
                                                  aws_access_key_id="x",
                                                  aws_secret_access_key="x"),
                                    "pricing", ["GetProducts"], region=PRICING_REGION)
    with pytest.raises(ReadOnlyViolation):
        client.describe_services()


def test_refresh_command_reports_a_failure_plainly(tmp_path: Path) -> None:
    out = tmp_path / "cat.json"
    proc = subprocess.run(
        [sys.executable, "-m", "scanner", "catalog", "refresh", "--region", "eu-west-1",
         "--output", str(out), "--endpoint-url", "http://127.0.0.1:9"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
             "AWS_MAX_ATTEMPTS": "1", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert "pricing:GetProducts failed" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()
