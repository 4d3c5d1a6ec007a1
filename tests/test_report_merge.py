"""`gpuaudit report merge`: the merge of reports equals the report of the whole (the live shards
are checked the same way in test_cli_audit.py), bad inputs are reported, not dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from scanner.cli.main import cli
from scanner.findings.schema import validate_report

ROOT = Path(__file__).resolve().parent.parent
TF = ROOT / "scanner" / "cli" / "demo" / "examples" / "terraform"
CFN = ROOT / "scanner" / "cli" / "demo" / "examples" / "cloudformation"


def gpuaudit(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def scan(out: Path, *paths: Path, passed: bool = False) -> dict[str, Any]:
    extra = ["--include-passed"] if passed else []
    res = gpuaudit("scan", *map(str, paths), "--format", "json", "-o", str(out),
                   "--deterministic", "-q", *extra)
    assert res.exit_code in (0, 1), res.output
    return dict(json.loads(out.read_text()))


def merge(out: Path, *inputs: Path, extra: tuple[str, ...] = ()) -> tuple[Result, dict[str, Any]]:
    res = gpuaudit("report", "merge", *map(str, inputs), "--format", "json", "-o", str(out),
                   "--deterministic", "-q", *extra)
    doc = dict(json.loads(out.read_text()))
    assert validate_report(doc) == []
    return res, doc


def test_merge_of_two_scans_is_the_scan_of_both(tmp_path: Path) -> None:
    whole = scan(tmp_path / "whole.json", TF, CFN)
    # one part lists its PASS results, the other only counts them: the merge must carry both
    tf = scan(tmp_path / "tf.json", TF, passed=True)
    scan(tmp_path / "cfn.json", CFN)
    res, doc = merge(tmp_path / "merged.json", tmp_path / "tf.json", tmp_path / "cfn.json")
    assert res.exit_code == 1, res.output  # high FAILs in the examples, --fail-on high
    passes = [f for f in doc["findings"] if f["status"] == "PASS"]
    assert passes and all(f in tf["findings"] for f in passes)
    doc["findings"] = [f for f in doc["findings"] if f["status"] != "PASS"]
    assert {k: v for k, v in doc.items() if k != "inputs"} == {
        k: v for k, v in whole.items() if k != "inputs"
    }
    assert doc["inputs"] == {"paths": sorted(whole["inputs"]["paths"]),
                             "root": whole["inputs"]["root"]}  # one root: kept
    assert doc["summary"]["by_status"]["PASS"] == whole["summary"]["by_status"]["PASS"] > 0


def test_overlapping_reports_list_each_finding_once_and_say_so(tmp_path: Path) -> None:
    part = scan(tmp_path / "tf.json", TF)
    res, doc = merge(tmp_path / "merged.json", tmp_path / "tf.json", tmp_path / "tf.json")
    assert res.exit_code == 1  # overlapping is not an error
    assert doc["findings"] == part["findings"]
    [notice] = [n for n in doc["notices"] if "appear in both reports" in n["message"]]
    assert notice["path"].count("tf.json") == 2
    assert f"{len(part['findings'])} finding(s)" in notice["message"]
    # each resource and PASS once (they were counted twice before)
    assert doc["summary"] == part["summary"]
    assert part["summary"]["by_status"]["PASS"] > 0 and part["summary"]["resources"] > 0
    assert "gpuaudit: warning:" in res.stderr and "counted once" in res.stderr


def test_a_scan_and_a_scan_of_its_parent_count_once(tmp_path: Path) -> None:
    """The subdirectory's report first, its parent's second: the parent's counts stand."""
    sub = scan(tmp_path / "sub.json", TF)
    both = scan(tmp_path / "both.json", TF.parent)
    res, doc = merge(tmp_path / "merged.json", tmp_path / "sub.json", tmp_path / "both.json")
    assert doc["summary"]["resources"] == both["summary"]["resources"]
    assert doc["summary"]["by_status"] == both["summary"]["by_status"]
    assert sub["summary"]["resources"] < both["summary"]["resources"]
    assert "sub.json covers nothing that" in res.stderr


def _live(account: str, regions: list[str], passes: int) -> dict[str, Any]:
    from tests.report_samples import document

    doc = document([], inputs={"accounts": [account], "regions": regions}, resources=10,
                   coverage=[{"account": account, "region": r, "service": "ebs", "status": "ok"}
                             for r in regions])
    doc["summary"]["by_status"] = {"PASS": passes}
    doc["summary"]["by_policy"] = {"EBS-001": {"PASS": passes}}
    return doc


def test_live_shards_overlap_by_account_and_region() -> None:
    from scanner.findings.merge import Part, merge_reports

    heard: list[str] = []
    a = Part("a.json", _live("111111111111", ["us-east-1", "eu-west-1"], 4))
    again = Part("again.json", _live("111111111111", ["us-east-1"], 3))
    other = Part("b.json", _live("222222222222", ["us-east-1"], 5))
    doc = merge_reports([a, again, other], deterministic=True, warn=heard.append)
    assert doc["summary"]["by_status"] == {"PASS": 9} and doc["summary"]["resources"] == 20
    assert len(heard) == 1 and heard[0].startswith("again.json covers nothing that a.json")
    assert len(doc["coverage"]) == 3  # one row per (account, region, service)
    partial = Part("p.json", _live("111111111111", ["us-east-1", "us-west-2"], 2))
    heard.clear()
    doc = merge_reports([a, partial], deterministic=True, warn=heard.append)
    assert doc["summary"]["by_status"] == {"PASS": 6}  # cannot be split: said, not hidden
    assert "both cover aws:111111111111/us-east-1" in heard[0]
    assert any("may be counted twice" in n["message"] for n in doc["notices"])


def test_unreadable_reports_are_errors_and_the_rest_is_merged(tmp_path: Path) -> None:
    part = scan(tmp_path / "tf.json", TF)
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"schema_version": 1, "findings": []}))
    (tmp_path / "future.json").write_text(json.dumps({**part, "schema_version": 2}))
    inputs = [tmp_path / n for n in ("missing.json", "garbage.json", "tf.json", "other.json",
                                     "future.json")]
    res, doc = merge(tmp_path / "merged.json", *inputs, extra=("--fail-on", "none"))
    assert res.exit_code == 2  # errors win over --fail-on none
    reasons = {Path(e["path"]).name: e["reason"] for e in doc["errors"]}
    assert set(reasons) == {"missing.json", "garbage.json", "other.json", "future.json"}
    assert "cannot read" in reasons["missing.json"]
    assert "not a JSON report" in reasons["garbage.json"]
    assert "not a valid gpuaudit report" in reasons["other.json"]
    assert "schema_version 2" in reasons["future.json"]
    assert doc["findings"] == part["findings"]  # the readable report is all there
    for name in reasons:
        assert name in res.stderr


def test_a_different_catalogue_is_noticed(tmp_path: Path) -> None:
    scan(tmp_path / "tf.json", TF)
    other = scan(tmp_path / "cfn.json", CFN)
    other["catalog"] = {**other["catalog"], "as_of": "2025-01-01"}
    (tmp_path / "cfn.json").write_text(json.dumps(other))
    _, doc = merge(tmp_path / "merged.json", tmp_path / "tf.json", tmp_path / "cfn.json")
    [notice] = [n for n in doc["notices"] if n["path"].endswith("cfn.json")]
    assert "as of 2025-01-01" in notice["message"] and "savings mix both" in notice["message"]


def test_merge_renders_other_formats_and_exit_codes_follow_fail_on(tmp_path: Path) -> None:
    scan(tmp_path / "tf.json", TF)
    res = gpuaudit("report", "merge", str(tmp_path / "tf.json"), "--output-dir",
                   str(tmp_path / "out"), "--format", "sarif", "--format", "markdown",
                   "--fail-on", "critical", "-q")
    assert res.exit_code == 0, res.output  # the examples have no critical FAIL
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"report.sarif", "report.md"}
    res = gpuaudit("report", "merge", str(tmp_path / "tf.json"), "--fail-on", "low")
    assert res.exit_code == 1
    assert "Summary:" in res.stdout


def _flip(src: Path, dest: Path, fid: str, status: str) -> None:
    doc = json.loads(src.read_text())
    for f in doc["findings"]:
        if f["id"] == fid:
            f["status"] = status
            if status == "SUPPRESSED":
                f["suppression"] = {"by": "mute list", "reason": "scratch", "expires": None,
                                    "kind": "external"}
    dest.write_text(json.dumps(doc))


@pytest.mark.parametrize(("mine", "theirs", "kept"), [
    ("PASS", "FAIL", "FAIL"),
    ("FAIL", "PASS", "FAIL"),
    ("SUPPRESSED", "FAIL", "FAIL"),
    ("PASS", "SUPPRESSED", "SUPPRESSED"),
    ("UNKNOWN", "FAIL", "FAIL"),
    ("PASS", "UNKNOWN", "UNKNOWN"),
    ("SUPPRESSED", "UNKNOWN", "UNKNOWN"),
    ("FAIL", "ERROR", "ERROR"),
])
def test_a_conflict_keeps_the_worse_verdict_and_says_so(
    tmp_path: Path, mine: str, theirs: str, kept: str
) -> None:
    """Two runs that disagree on one resource (same fingerprint): never the first one's
    verdict by default (a PASS first was a false PASS), the worse one, said on stderr and in a
    note of the merged report."""
    scan(tmp_path / "scan.json", TF, passed=True)
    doc = json.loads((tmp_path / "scan.json").read_text())
    fid = next(f["id"] for f in doc["findings"] if f["status"] == "FAIL"
               and f["severity"] in ("high", "critical"))
    _flip(tmp_path / "scan.json", tmp_path / "a.json", fid, mine)
    _flip(tmp_path / "scan.json", tmp_path / "b.json", fid, theirs)
    for first, second in (("a", "b"), ("b", "a")):
        res, merged = merge(tmp_path / "merged.json", tmp_path / f"{first}.json",
                            tmp_path / f"{second}.json")
        (got,) = [f for f in merged["findings"] if f["id"] == fid]
        assert got["status"] == kept
        assert [f["status"] for f in merged["findings"] if f["id"] == fid] == [kept]
        notes = [n for n in merged["notices"] if "different verdicts" in n["message"]]
        assert len(notes) == 1 and f"kept {kept}" in notes[0]["message"]
        assert "ERROR > FAIL > UNKNOWN > SUPPRESSED > PASS" in notes[0]["message"]
        assert "different verdicts" in res.stderr and "warning" in res.stderr
        assert merged["summary"]["by_status"].get(kept, 0) >= 1
        assert res.exit_code == {"FAIL": 1, "ERROR": 2}.get(kept, res.exit_code)
        if kept in ("FAIL", "ERROR"):
            assert res.exit_code != 0  # the gate sees it


def test_the_same_verdict_twice_is_an_overlap_not_a_conflict(tmp_path: Path) -> None:
    scan(tmp_path / "tf.json", TF)
    res, doc = merge(tmp_path / "merged.json", tmp_path / "tf.json", tmp_path / "tf.json")
    assert not any("different verdicts" in n["message"] for n in doc["notices"])
    assert "different verdicts" not in res.stderr
