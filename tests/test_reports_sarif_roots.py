"""The repository root comes from the scanned path (its git work tree, else the path itself),
never from the working directory; every format names a file relative to it; SARIF drops no
result for its path, files UNKNOWN and ERROR results as notes without a security severity, and
fingerprints results so that moving unrelated lines changes nothing."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from tests.sarif_rules import github_upload_problems
from tests.test_report_sarif import UNDECIDED, UNENCRYPTED, sarif_schema_errors


def _scan(cwd: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    res = CliRunner().invoke(cli, ["scan", *args, "--deterministic"])
    return res.exit_code, res.stdout, res.stderr


def _log(text: str) -> dict:
    log = json.loads(text)
    assert sarif_schema_errors(log) == []  # the vendored SARIF 2.1.0 schema
    assert github_upload_problems(log, text) == []
    return log


def _estate(where: Path, git: bool) -> Path:
    for env in ("prod", "staging"):
        (where / "envs" / env).mkdir(parents=True)
        (where / "envs" / env / "main.tf").write_text(UNENCRYPTED, encoding="utf-8")
    if git:
        (where / ".git").mkdir()
    return where


@pytest.mark.parametrize("own_git", [False, True])
def test_a_directory_outside_the_working_directorys_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, own_git: bool
) -> None:
    """The scan runs in one repository and names a directory of another place (or of no
    repository): the root is the scanned path's, every result is there, and every format names
    the files alike."""
    here = tmp_path / "tooling"
    (here / ".git").mkdir(parents=True)
    infra = _estate(tmp_path / "elsewhere" / "infra", git=own_git)
    target = str(infra) if own_git else "../elsewhere/infra"
    code, out, err = _scan(here, monkeypatch, target, "--format", "sarif")
    log = _log(out)
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                  for r in log["runs"][0]["results"])
    assert uris == ["envs/prod/main.tf", "envs/staging/main.tf"], err
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert not [n for n in notes if n["descriptor"]["id"] == "sarif/outside-root"]
    assert code == 1
    # the same names in JSON, Markdown, CSV, HTML and the table
    out_dir = here / "out"
    _scan(here, monkeypatch, target, "--format", "json", "--format", "markdown", "--format",
          "csv", "--format", "html", "--format", "table", "--output-dir", str(out_dir), "-q")
    doc = json.loads((out_dir / "report.json").read_text())
    files = sorted(f["location"]["file"] for f in doc["findings"])
    assert files == uris
    assert {f["resource"]["root"] for f in doc["findings"]} == {"envs/prod", "envs/staging"}
    rows = list(csv.DictReader(io.StringIO((out_dir / "report.csv").read_text())))
    assert sorted(r["file"] for r in rows) == uris
    for name in ("report.md", "report.html", "report.txt"):
        text = (out_dir / name).read_text()
        assert all(u in text for u in uris), name
        shown = re.sub(r'href="[^"]*"', "", text).replace(target, "")  # links go to the file
        assert "elsewhere" not in shown, name  # no path named from another root
    # the report rendered again from here places them the same way
    res = CliRunner().invoke(cli, ["report", "render", str(out_dir / "report.json"),
                                   "--format", "sarif"])
    again = _log(res.stdout)
    assert sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                  for r in again["runs"][0]["results"]) == uris


def test_one_file_of_no_repository_is_placed_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ci" / ".git").mkdir(parents=True)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "disk.tf").write_text(UNENCRYPTED, encoding="utf-8")
    _, out, _ = _scan(tmp_path / "ci", monkeypatch, "../x/disk.tf", "--format", "sarif")
    (result,) = _log(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "disk.tf"


BROKEN = 'resource "aws_ebs_volume" "other" {\n'


def test_unknown_and_error_results_are_notes_without_security_severity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "r"
    (repo / "undecided").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "undecided" / "main.tf").write_text(UNDECIDED, encoding="utf-8")
    (repo / "unread").mkdir()
    (repo / "unread" / "main.tf").write_text(UNENCRYPTED, encoding="utf-8")
    (repo / "unread" / "broken.tf").write_text(BROKEN, encoding="utf-8")
    (repo / "fails").mkdir()
    (repo / "fails" / "main.tf").write_text(UNENCRYPTED, encoding="utf-8")
    _, out, _ = _scan(repo, monkeypatch, ".", "--format", "sarif")
    run = _log(out)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    by_status = {r["properties"]["status"]: r for r in run["results"]}
    assert set(by_status) == {"UNKNOWN", "ERROR", "FAIL"}
    for status in ("UNKNOWN", "ERROR"):
        result = by_status[status]
        assert result["level"] == "note"
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"] == "EBS-001/undecided"
        assert "security-severity" not in rule["properties"]
        assert "security-severity" not in result["properties"]
        assert rule["defaultConfiguration"]["level"] == "note"
        assert result["message"]["text"].startswith(status)
    fail = by_status["FAIL"]
    assert fail["level"] == "error" and fail["ruleId"] == "EBS-001"
    assert rules[fail["ruleIndex"]]["properties"]["security-severity"] == "8.0"
    assert run["invocations"][0]["executionSuccessful"] is False  # broken.tf


def test_fingerprints_stay_when_unrelated_lines_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / ".git").mkdir()
    main = repo / "main.tf"
    main.write_text(UNENCRYPTED + UNDECIDED, encoding="utf-8")

    def results() -> dict[str, tuple[int, dict[str, str]]]:
        _, out, _ = _scan(repo, monkeypatch, ".", "--format", "sarif")
        return {r["locations"][0]["logicalLocations"][0]["name"]:
                (r["locations"][0]["physicalLocation"]["region"]["startLine"],
                 r["partialFingerprints"]) for r in _log(out)["runs"][0]["results"]}

    before = results()
    main.write_text('# gpu volumes\n\nlocals {\n  team = "ml"\n  owner = "ml-platform"\n}\n\n'
                    + UNDECIDED
                    + UNENCRYPTED, encoding="utf-8")
    after = results()
    assert set(before) == set(after) == {"aws_ebs_volume.scratch", "aws_ebs_volume.data"}
    for name in before:
        assert after[name][0] != before[name][0]  # the lines moved
        assert after[name][1] == before[name][1]  # the fingerprints did not
        assert set(after[name][1]) >= {"primaryLocationLineHash", "gpuaudit/v1"}
    hashes = [fp["primaryLocationLineHash"] for _, fp in after.values()]
    assert len(set(hashes)) == len(hashes)  # one per result
