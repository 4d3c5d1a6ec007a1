# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""`gpuaudit spend` against a moto server whose GetCostAndUsage answers are set through moto's
API (/moto-api/static/ce/cost-and-usage-results)."""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scanner.aws.spend import last_full_month
from scanner.cli.main import cli
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    MotoServer,
    aws_env,
    declared_only,
    moto_server,
    moto_server_module,
)


def group(keys: list[str], usd: str) -> dict[str, Any]:
    return {"Keys": keys, "Metrics": {"UnblendedCost": {"Amount": usd, "Unit": "USD"}}}


def answer(groups: list[dict[str, Any]], token: str | None = None,
           estimated: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"ResultsByTime": [{
        "TimePeriod": {"Start": "2026-11-01", "End": "2026-12-01"}, "Total": {},
        "Groups": groups, "Estimated": estimated}], "DimensionValueAttributes": []}
    if token:
        out["NextPageToken"] = token
    return out


def set_results(server: MotoServer, *results: dict[str, Any]) -> None:
    req = urllib.request.Request(
        f"{server.url}/moto-api/static/ce/cost-and-usage-results",
        data=json.dumps({"results": list(results)}).encode(), method="POST",
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 201


def spend(server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          *args: str) -> Any:
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(cli, ["spend", "--endpoint-url", server.url, "--start",
                                    "2026-11-01", "--end", "2026-12-01", *args])


def test_spend_by_instance_type_with_family_totals(moto_server: MotoServer, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # two pages; Cost Explorer answering a non-GPU group anyway: it is dropped here
    set_results(moto_server,
                answer([group(["p4d.24xlarge"], "23652.00"), group(["g5.xlarge"], "734.40"),
                        group(["m5.large"], "70.08")], token="page2"),
                answer([group(["g5.2xlarge"], "100.10"), group(["inf2.xlarge"], "5.25")]))
    res = spend(moto_server, tmp_path, monkeypatch, "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)["spend"]
    assert doc["period"] == {"start": "2026-11-01", "end": "2026-12-01"}
    assert [(r["instance_type"], r["usd"]) for r in doc["rows"]] == [
        ("g5.2xlarge", 100.1), ("g5.xlarge", 734.4), ("inf2.xlarge", 5.25),
        ("p4d.24xlarge", 23652.0)]
    assert doc["by_family"] == {"g5": 834.5, "inf2": 5.25, "p4d": 23652.0}
    assert doc["total_usd"] == 24491.75  # m5.large's 70.08 is not GPU spend
    assert all(r["account"] == ACCOUNT for r in doc["rows"])
    table = spend(moto_server, tmp_path, monkeypatch).output
    assert "p4d.24xlarge" in table and "24,491.75" in table and "m5.large" not in table


def test_spend_by_account_with_org(moto_server: MotoServer, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    set_results(moto_server, answer([group(["g5.xlarge", "111111111111"], "10"),
                                     group(["g5.xlarge", "222222222222"], "20.5")]))
    res = spend(moto_server, tmp_path, monkeypatch, "--org", "--format", "json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)["spend"]["rows"]
    assert [(r["account"], r["usd"]) for r in rows] == [("111111111111", 10.0),
                                                        ("222222222222", 20.5)]


def test_no_data_for_the_period_is_said_never_zero(moto_server: MotoServer, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    res = spend(moto_server, tmp_path, monkeypatch)  # moto's default: no ResultsByTime
    assert res.exit_code == 0, res.output
    assert "no data for the period" in res.output and "0.00" not in res.output
    doc = json.loads(spend(moto_server, tmp_path, monkeypatch, "--format", "json").output)
    assert doc["spend"]["no_data"] is True


def test_a_malformed_amount_is_an_error_not_a_spend(moto_server: MotoServer, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    set_results(moto_server, answer([group(["g5.xlarge"], "lots")]))
    res = spend(moto_server, tmp_path, monkeypatch)
    assert res.exit_code == 2
    assert "GPU spend not read: g5.xlarge: amount 'lots' is not a number" in res.output


def test_an_unreachable_cost_explorer_exits_2(aws_env: None, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.aws_helpers import free_port

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    res = CliRunner().invoke(cli, ["spend", "--endpoint-url",
                                   f"http://127.0.0.1:{free_port()}"])
    assert res.exit_code == 2 and "gpuaudit: error:" in res.output


def test_usage_errors() -> None:
    res = CliRunner().invoke(cli, ["spend", "--start", "2026-12-01", "--end", "2026-11-01"])
    assert res.exit_code == 2 and "is not before" in res.output
    res = CliRunner().invoke(cli, ["spend", "--start", "yesterday"])
    assert res.exit_code == 2 and "is not a date" in res.output


def test_default_period_is_the_last_full_calendar_month() -> None:
    assert last_full_month(dt.date(2026, 1, 15)) == ("2025-12-01", "2026-01-01")
    assert last_full_month(dt.date(2026, 3, 1)) == ("2026-02-01", "2026-03-01")
