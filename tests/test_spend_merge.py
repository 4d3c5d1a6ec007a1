# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""`report merge` of shard reports carries the spend of `audit --with-spend`: the shards of an
Organization audit (a moto server with an Organization, its member reached through an
assumed role, each account's Cost Explorer answers set through moto's API) add up to the
unsharded audit's spend, each account once; a shard that could not read its spend, or ran
without --with-spend, or of another period, makes the merged spend an error, never a sum that
looks whole."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from reports import render
from scanner.cli.main import cli
from scanner.findings.merge import Part, merge_reports
from scanner.findings.schema import validate_report
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    MotoServer,
    aws_env,
    client,
    moto_server,
    moto_server_module,
)
from tests.test_spend import answer, group

REGION, WEST = "us-east-1", "us-west-2"


def costs(server: MotoServer, account: str, *results: dict[str, Any]) -> None:
    """The GetCostAndUsage answers of ``account``'s Cost Explorer (moto keeps one per account)."""
    req = urllib.request.Request(
        f"{server.url}/moto-api/static/ce/cost-and-usage-results",
        data=json.dumps({"results": list(results), "account_id": account}).encode(),
        method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 201


COPIES = 12  # moto answers each new request with the next of its queue: one per request


def organization(server: MotoServer, member_amount: str = "20.50") -> str:
    """The management account (moto's default) and one member, each with GPU spend in both
    regions audited; returns the member's id. Moto answers every request alike: a shard that
    asks for one region is answered both, and keeps its own."""
    org = client("organizations", endpoint_url=server.url)
    org.create_organization(FeatureSet="ALL")
    member = str(org.create_account(Email="ml@example.com", AccountName="ml")
                 ["CreateAccountStatus"]["AccountId"])
    costs(server, ACCOUNT, *[answer([group(["p4d.24xlarge", REGION], "23652.00"),
                                     group(["g5.xlarge", WEST], "734.40")])] * COPIES)
    costs(server, member, *[answer([group(["g5.xlarge", REGION], member_amount),
                                    group(["g5.2xlarge", WEST], "100.10")])] * COPIES)
    return member


def audit(server: MotoServer, out: Path, *extra: str) -> dict[str, Any]:
    res = CliRunner().invoke(cli, [
        "audit", "--endpoint-url", server.url, "--org", "--role-name", "audit", "--regions",
        f"{REGION},{WEST}", "--format", "json", "-o", str(out), "-q", "--fail-on", "none",
        "--deterministic", *extra])
    assert res.exit_code == 0, res.output
    return dict(json.loads(out.read_text()))


def merge(out: Path, *inputs: Path) -> tuple[Result, dict[str, Any]]:
    res = CliRunner().invoke(cli, ["report", "merge", *map(str, inputs), "--format", "json",
                                   "-o", str(out), "--deterministic", "-q", "--fail-on",
                                   "none"])
    doc = dict(json.loads(out.read_text()))
    assert validate_report(doc) == []
    return res, doc


def shards(server: MotoServer, tmp_path: Path, n: int, *extra: str) -> list[Path]:
    paths = [tmp_path / f"shard{k}of{n}.json" for k in range(1, n + 1)]
    for k, path in enumerate(paths, start=1):
        audit(server, path, "--shard", f"{k}/{n}", "--with-spend", *extra)
    return paths


def test_the_shards_of_an_organization_add_up_to_the_whole_each_account_once(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    member = organization(moto_server)
    whole = audit(moto_server, tmp_path / "whole.json", "--with-spend")["spend"]
    # 4 pairs (2 accounts x 2 regions) in 3 shards: the management account's pairs split
    parts = shards(moto_server, tmp_path, 3)
    each = [json.loads(p.read_text())["spend"] for p in parts]
    # each shard reads its own pairs: an account split over shards is read in parts that add
    assert round(sum(s["total_usd"] for s in each), 2) == whole["total_usd"]
    assert sum(len(s["read"]) for s in each) == 4  # ACCOUNT in 2 shards, the member in 2
    res, doc = merge(tmp_path / "merged.json", *parts)
    assert res.exit_code == 0, res.output
    spend = doc["spend"]
    assert spend == whole  # the sum of the shards is the unsharded audit's spend
    assert spend["total_usd"] == 24507.00  # 23,652.00 + 734.40 + 20.50 + 100.10
    assert spend["by_family"] == {"g5": 855.0, "p4d": 23652.0}
    assert {(r["account"], r["region"], r["usd"]) for r in spend["rows"]} == {
        (ACCOUNT, REGION, 23652.0), (ACCOUNT, WEST, 734.4), (member, REGION, 20.5),
        (member, WEST, 100.1)}
    assert spend["read"] == sorted([{"account": ACCOUNT, "regions": [REGION, WEST]},
                                    {"account": member, "regions": [REGION, WEST]}],
                                   key=lambda r: r["account"])
    assert "error" not in spend and "not_read" not in spend and "notes" not in spend
    assert spend["saving_share"] == 0.0  # no saving in an empty estate: 0 % of the spend
    # a shard given twice (or run again) is counted once, not added again
    _, again = merge(tmp_path / "again.json", *parts, parts[0])
    assert again["spend"]["total_usd"] == 24507.00 and again["spend"]["rows"] == spend["rows"]
    # the same reports merged in another order: the same spend
    _, back = merge(tmp_path / "back.json", *reversed(parts))
    assert back["spend"] == spend
    markdown = render("markdown", doc)
    assert "Actual GPU spend (" in markdown and "$24,507.00" in markdown


def test_a_shard_that_could_not_read_its_spend_is_said_and_the_rest_is_not_the_total(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # the member's us-east-1 amount is malformed; 2 shards of 4 pairs: the member's two
    # regions are read by different shards, and only us-east-1's read fails
    member = organization(moto_server, member_amount="n/a")
    parts = shards(moto_server, tmp_path, 2)
    _, doc = merge(tmp_path / "merged.json", *parts)
    spend = doc["spend"]
    assert "total_usd" not in spend and spend["saving_share"] is None
    assert spend["read_usd"] == 24486.50  # 23,652.00 + 734.40 + 100.10: said as a part
    [gap] = spend["not_read"]
    assert gap["account"] == member and gap["regions"] == [REGION]
    assert "amount 'n/a' is not a number" in gap["reason"]
    assert Path(gap["reason"].split(": ")[0]).name in ("shard1of2.json", "shard2of2.json")
    assert member in spend["error"] and "1 of 2 account(s) could not be read" in spend["error"]
    [line] = [x for x in render("markdown", doc).splitlines() if "Actual GPU spend" in x]
    assert "not read" in line and "which is not the total" in line
    assert "$24,486.50" in line and "$0.00" not in line


def test_a_shard_without_spend_leaves_its_accounts_not_read(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    organization(moto_server)
    first = shards(moto_server, tmp_path, 2)[0]
    bare = tmp_path / "bare.json"
    audit(moto_server, bare, "--shard", "2/2")  # without --with-spend
    _, doc = merge(tmp_path / "merged.json", first, bare)
    spend = doc["spend"]
    assert "total_usd" not in spend and spend["saving_share"] is None
    bare_pairs = {(c["account"], c["region"]) for c in json.loads(bare.read_text())["coverage"]
                  if c["region"] != "*"}
    assert {(n["account"], r) for n in spend["not_read"] for r in n["regions"]} == bare_pairs
    assert all(n["reason"] == f"{bare} was audited without --with-spend"
               for n in spend["not_read"])
    assert {(r["account"], reg) for r in spend["read"] for reg in r["regions"]}.isdisjoint(
        bare_pairs)
    # merging only reports without spend: no spend in the merged report
    _, none = merge(tmp_path / "none.json", bare)
    assert "spend" not in none


def test_spends_of_different_periods_are_not_added(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    organization(moto_server)
    one, two = shards(moto_server, tmp_path, 2)
    older = json.loads(two.read_text())
    older["spend"]["period"] = {"start": "2026-10-01", "end": "2026-11-01"}  # a month earlier
    two.write_text(json.dumps(older))
    _, doc = merge(tmp_path / "merged.json", one, two)
    spend = doc["spend"]
    assert "different periods" in spend["error"] and "2026-10-01 to 2026-11-01" in spend["error"]
    assert "total_usd" not in spend and "read_usd" not in spend and spend["saving_share"] is None
    assert "not read" in render("markdown", doc)


def test_a_pair_read_twice_with_different_amounts_is_counted_once_and_said(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    organization(moto_server)
    [whole_path] = shards(moto_server, tmp_path, 1)
    whole = json.loads(whole_path.read_text())
    later = json.loads(whole_path.read_text())
    later["spend"]["rows"][0]["usd"] += 10  # read again later: Cost Explorer's figure moved
    doc = merge_reports([Part("early.json", whole), Part("late.json", later)],
                        deterministic=True)
    spend = doc["spend"]
    assert spend["total_usd"] == whole["spend"]["total_usd"]  # once, the first kept
    [note] = spend["notes"]
    assert "early.json and late.json read different spends" in note
    assert validate_report(doc) == []


def test_the_merged_spend_is_redacted(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    organization(moto_server)
    [path] = shards(moto_server, tmp_path, 1)
    doc = json.loads(path.read_text())
    key = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example access key id
    doc["spend"]["not_read"] = [{"account": ACCOUNT, "regions": ["eu-central-1"],
                                 "reason": f"denied for {key}"}]
    merged = merge_reports([Part("a.json", doc)], deterministic=True)
    assert key not in json.dumps(merged)
    assert merged["spend"]["not_read"][0]["account"] == ACCOUNT


def test_accounts_past_the_budget_are_not_read_and_said(
        moto_server: MotoServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import scanner.aws.spend

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(scanner.aws.spend, "MAX_ACCOUNTS", 1)
    organization(moto_server)
    spend = audit(moto_server, tmp_path / "r.json", "--with-spend")["spend"]
    assert len(spend["read"]) == 1 and "total_usd" not in spend
    [gap] = spend["not_read"]
    assert gap["reason"].startswith("more than 1 accounts: not read")
    assert spend["saving_share"] is None
