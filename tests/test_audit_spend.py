# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""`audit --with-spend`: the report carries the last full month's actual GPU spend (Cost
Explorer, answers set through moto's API) beside the estimated saving, as a share of it; a
spend that could not be read is said, never 0; without the option nothing is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.findings.schema import load_schema
from scanner.findings.spend import with_saving_share
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    MotoServer,
    aws_env,
    moto_server,
    moto_server_module,
)
from tests.test_spend import answer, group, set_results


def audit(server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          *extra: str) -> tuple[Any, dict[str, Any]]:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.json"
    res = CliRunner().invoke(cli, ["audit", "--endpoint-url", server.url, "--regions",
                                   "us-east-1", "--format", "json", "-o", str(out), "--quiet",
                                   "--fail-on", "none", *extra])
    return res, json.loads(out.read_text()) if out.exists() else {}


def test_the_report_carries_the_spend_and_the_saving_as_a_share(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # grouped by region: a region the audit did not cover (Cost Explorer answering outside
    # the request's filter) is not this audit's spend
    set_results(moto_server, answer([group(["p4d.24xlarge", "us-east-1"], "23652.00"),
                                     group(["m5.large", "us-east-1"], "70.08"),
                                     group(["g5.xlarge", "eu-west-1"], "734.40")]))
    res, doc = audit(moto_server, tmp_path, monkeypatch, "--with-spend")
    assert res.exit_code == 0, res.output
    spend = doc["spend"]
    assert spend["total_usd"] == 23652.0 and spend["by_family"] == {"p4d": 23652.0}
    assert spend["rows"] == [{"account": ACCOUNT, "region": "us-east-1",
                              "instance_type": "p4d.24xlarge", "usd": 23652.0}]
    assert spend["read"] == [{"account": ACCOUNT, "regions": ["us-east-1"]}]
    assert "not_read" not in spend
    assert spend["source"] == "Cost Explorer GetCostAndUsage" and "error" not in spend
    assert spend["saving_share"] == 0.0  # an empty estate saves nothing: 0 % of the spend
    import jsonschema

    jsonschema.validate(doc, load_schema())
    table = CliRunner().invoke(cli, ["report", "render", str(tmp_path / "report.json")]).output
    assert "Actual GPU spend (" in table and "$23,652.00" in table
    from reports import render

    page = render("html", doc)  # the audit's own report: coverage line, then the spend
    assert 'id="coverage"' in page and page.index('id="coverage"') < page.index('id="spend"')
    assert "Cost Explorer): $23,652.00; the estimated monthly saving is 0.0% of it" in page


def test_a_spend_that_cannot_be_read_is_said_never_zero(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    set_results(moto_server, answer([group(["p4d.24xlarge", "us-east-1"], "not-a-number")]))
    res, doc = audit(moto_server, tmp_path, monkeypatch, "--with-spend")
    assert res.exit_code == 0, res.output  # the audit itself is whole
    assert "error" in doc["spend"] and "total_usd" not in doc["spend"]
    assert doc["spend"]["not_read"] == [{
        "account": ACCOUNT, "regions": ["us-east-1"],
        "reason": "p4d.24xlarge: amount 'not-a-number' is not a number"}]
    assert doc["spend"]["saving_share"] is None
    table = CliRunner().invoke(cli, ["report", "render", str(tmp_path / "report.json")]).output
    assert "Actual GPU spend (" in table and "not read" in table


def test_without_the_option_no_spend_is_read(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res, doc = audit(moto_server, tmp_path, monkeypatch)
    assert res.exit_code == 0, res.output
    assert "spend" not in doc
    from reports import render

    assert 'id="spend"' not in render("html", doc)


def test_the_share_is_of_the_spend_and_none_without_one() -> None:
    summary = {"savings_usd_month": 1250.0}
    assert with_saving_share({"total_usd": 25000.0}, summary)["saving_share"] == 0.05
    assert with_saving_share({"total_usd": 0.0}, summary)["saving_share"] is None
    assert with_saving_share({"error": "denied"}, summary)["saving_share"] is None


def test_each_account_is_read_alone_and_by_its_audited_regions() -> None:
    """A management account's Cost Explorer sees its whole Organization: the audit's request is
    kept to the one linked account it reads, and to the regions audited (by region, so the
    pairs of two shards never overlap)."""
    from scanner.aws.spend import request

    req = request("2026-11-01", "2026-12-01", ["g5", "p4d"], False, account=ACCOUNT,
                  regions=["us-west-2", "us-east-1"])
    assert {"Dimensions": {"Key": "LINKED_ACCOUNT", "Values": [ACCOUNT]}} in req["Filter"]["And"]
    assert {"Dimensions": {"Key": "REGION", "Values": ["us-east-1", "us-west-2"]}} \
        in req["Filter"]["And"]
    assert [g["Key"] for g in req["GroupBy"]] == ["INSTANCE_TYPE", "REGION"]
    whole = request("2026-11-01", "2026-12-01", ["g5"], True)  # `gpuaudit spend --org`
    assert [g["Key"] for g in whole["GroupBy"]] == ["INSTANCE_TYPE", "LINKED_ACCOUNT"]
    assert all(f["Dimensions"]["Key"] != "LINKED_ACCOUNT" for f in whole["Filter"]["And"])
    with pytest.raises(ValueError):
        request("2026-11-01", "2026-12-01", ["g5"], True, regions=["us-east-1"])
