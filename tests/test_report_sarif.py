"""SARIF from real scans as GitHub code scanning receives them: paths relative to the repository
root wherever gpuaudit runs from, every result located, the strict gate, and the policy pages
the rules link to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reports import policy_docs
from reports.policy_meta import DOCS_URL
from scanner.cli.main import cli
from tests.sarif_rules import github_upload_problems
from tests.test_reports import sarif_schema_errors

ROOT = Path(__file__).resolve().parents[1]
UNENCRYPTED = """
resource "aws_ebs_volume" "scratch" {
  availability_zone = "us-east-1a"
  size              = 100
  encrypted         = false
}
"""
UNDECIDED = """
variable "enc" {}

resource "aws_ebs_volume" "data" {
  availability_zone = "us-east-1a"
  size              = 100
  encrypted         = var.enc
}
"""


def _repo(tmp_path: Path) -> Path:
    """A git work tree (a .git directory is all the root finder needs) with prod and staging."""
    repo = tmp_path / "gpuaudit-infra"
    for env in ("prod", "staging"):
        (repo / "envs" / env).mkdir(parents=True)
        (repo / "envs" / env / "main.tf").write_text(UNENCRYPTED, encoding="utf-8")
    (repo / ".git").mkdir()
    return repo


def _scan(cwd: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    res = CliRunner().invoke(cli, ["scan", *args])
    return res.exit_code, res.stdout, res.stderr


def _log(text: str) -> dict:
    log = json.loads(text)
    assert sarif_schema_errors(log) == []
    assert github_upload_problems(log, text) == []
    return log


def _uris(log: dict) -> list[str]:
    return sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                  for r in log["runs"][0]["results"])


@pytest.mark.parametrize("where", ["inside", "sibling", "absolute", "subdir"])
def test_paths_are_relative_to_the_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    repo = _repo(tmp_path)
    cwd, target = {
        "inside": (repo, "envs"),
        "sibling": (tmp_path, "gpuaudit-infra/envs"),  # was ../gpuaudit-infra/... before
        "absolute": (tmp_path, str(repo / "envs")),  # was file:///... before
        "subdir": (repo / "envs" / "prod", "."),
    }[where]
    if where == "sibling":
        cwd = tmp_path / "ci"
        cwd.mkdir()
        target = "../gpuaudit-infra/envs"
    code, out, err = _scan(cwd, monkeypatch, target, "--format", "sarif", "--deterministic")
    log = _log(out)
    expected = (["envs/prod/main.tf"] if where == "subdir"
                else ["envs/prod/main.tf", "envs/staging/main.tf"])
    assert _uris(log) == expected, err
    assert "file:" not in out and "../" not in out
    assert code == 1  # EBS-001 high


def test_repo_root_option_and_files_outside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    code, out, _ = _scan(tmp_path, monkeypatch, str(repo / "envs"), "--format", "sarif",
                         "--repo-root", str(repo / "envs"))
    assert _uris(_log(out)) == ["prod/main.tf", "staging/main.tf"]
    # a root the files are not under: no result points outside it, and none is dropped: each
    # is placed by its path in its own repository, and a notification says so
    other = tmp_path / "other"
    other.mkdir()
    code, out, _ = _scan(tmp_path, monkeypatch, str(repo / "envs"), "--format", "sarif",
                         "--repo-root", str(other))
    log = _log(out)
    assert _uris(log) == ["envs/prod/main.tf", "envs/staging/main.tf"]
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    outside = [n for n in notes if n["descriptor"]["id"] == "sarif/outside-root"]
    assert outside and "2 result(s)" in outside[0]["message"]["text"]
    assert "--repo-root" in outside[0]["message"]["text"]
    assert code == 1  # the gate still judges every finding


def test_report_render_places_paths_like_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    ci = tmp_path / "ci"
    ci.mkdir()
    _scan(ci, monkeypatch, "../gpuaudit-infra/envs", "--format", "json", "-o", "r.json",
          "--quiet")
    res = CliRunner().invoke(cli, ["report", "render", "r.json", "--format", "sarif"])
    assert res.exit_code == 0, res.output
    assert _uris(_log(res.stdout)) == ["envs/prod/main.tf", "envs/staging/main.tf"]
    assert (repo / ".git").is_dir()


def test_unknown_is_a_note_and_fails_only_the_strict_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "main.tf").write_text(UNDECIDED, encoding="utf-8")
    code, out, _ = _scan(repo, monkeypatch, ".", "--format", "sarif")
    results = _log(out)["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("EBS-001/undecided", "note")]
    assert "var.enc" in results[0]["message"]["text"]
    assert code == 0  # UNKNOWN never fails by default
    code, _, _ = _scan(repo, monkeypatch, ".", "--format", "json", "--fail-on-unknown")
    assert code == 1  # EBS-001 is high, at the default --fail-on high
    code, _, _ = _scan(repo, monkeypatch, ".", "--format", "json", "--fail-on-unknown",
                       "--fail-on", "critical")
    assert code == 0  # below the bar
    code, _, _ = _scan(repo, monkeypatch, ".", "--format", "json", "--fail-on", "low")
    assert code == 0  # without the flag an UNKNOWN never fails


def test_fail_on_unknown_in_report_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "main.tf").write_text(UNDECIDED, encoding="utf-8")
    _scan(repo, monkeypatch, ".", "--format", "json", "-o", "a.json", "--quiet")
    runner = CliRunner()
    assert runner.invoke(cli, ["report", "merge", "a.json", "-q"]).exit_code == 0
    strict = runner.invoke(cli, ["report", "merge", "a.json", "-q", "--fail-on-unknown"])
    assert strict.exit_code == 1


def test_policy_pages_are_current() -> None:
    """docs/policies/ is what the metadata generates (python -m reports.policy_docs)."""
    directory = ROOT / "docs" / "policies"
    assert policy_docs.stale(directory) == []
    pages = policy_docs.pages()
    from policies import all_policies

    for pid, pol in all_policies().items():
        page = pages[f"{pid}.md"]
        assert pol.description in page and pol.remediation.text in page
        for key in pol.params:
            assert f"`{key}`" in page


def test_policy_page_check_can_fail(tmp_path: Path) -> None:
    policy_docs.write(tmp_path)
    assert policy_docs.stale(tmp_path) == []
    page = tmp_path / "EBS-001.md"
    page.write_text(page.read_text() + "edited\n")
    (tmp_path / "OLD-001.md").write_text("gone\n")
    (tmp_path / "SPOT-001.md").unlink()
    assert policy_docs.stale(tmp_path) == ["EBS-001.md", "SPOT-001.md", "OLD-001.md"]


def test_every_rule_links_its_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    _, out, _ = _scan(repo, monkeypatch, ".", "--format", "sarif", "--include-passed")
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert rules
    for rule in rules:
        assert rule["helpUri"] == f"{DOCS_URL}/{rule['id']}.md"
        assert (ROOT / "docs" / "policies" / f"{rule['id']}.md").is_file()


def test_one_module_under_two_roots_is_two_logical_locations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finding identity holds the root module; the logical location names it too, and the
    findings are ordered by it (not by their fingerprints' hash)."""
    repo = tmp_path / "infra"
    (repo / "modules" / "disk").mkdir(parents=True)
    (repo / "modules" / "disk" / "main.tf").write_text(UNENCRYPTED, encoding="utf-8")
    for env in ("prod", "dev", "staging"):
        (repo / "envs" / env).mkdir(parents=True)
        (repo / "envs" / env / "main.tf").write_text(
            'module "disk" {\n  source = "../../modules/disk"\n}\n', encoding="utf-8")
    (repo / ".git").mkdir()
    code, out, err = _scan(repo, monkeypatch, "envs", "--format", "sarif", "--deterministic")
    results = _log(out)["runs"][0]["results"]
    names = [r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in results]
    assert names == ["envs/dev:module.disk.aws_ebs_volume.scratch",
                     "envs/prod:module.disk.aws_ebs_volume.scratch",
                     "envs/staging:module.disk.aws_ebs_volume.scratch"], err
    assert _uris(_log(out)) == ["modules/disk/main.tf"] * 3
    assert code == 1


def test_report_order_sorts_by_root_before_the_fingerprint() -> None:
    from scanner.engine.evaluate import report_order

    loc = {"file": "modules/disk/main.tf", "start_line": 1}

    def key(root: str, fid: str) -> tuple:
        return report_order(loc, "EBS-001", {"id": "module.disk.aws_ebs_volume.d",
                                             "root": root}, fid)

    assert sorted([key("envs/prod", "0000"), key("envs/dev", "ffff")]) == [
        key("envs/dev", "ffff"), key("envs/prod", "0000")]
    # live findings have no root: ordered as before
    assert report_order(None, "EBS-001", {"id": "vol-1"}, "a") < \
        report_order(None, "EBS-001", {"id": "vol-2"}, "a")


def test_fingerprints_do_not_depend_on_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub matches alerts across runs on partialFingerprints, baselines and `report diff`
    on the finding id: the same repository scanned from its root, a subdirectory, a sibling
    directory or by absolute path gives the same ids."""
    repo = _repo(tmp_path)
    (tmp_path / "ci").mkdir()
    seen = []
    for cwd, target in ((repo, "envs"), (repo / "envs", "."),
                        (tmp_path / "ci", "../gpuaudit-infra/envs"),
                        (tmp_path, str(repo / "envs"))):
        _, out, _ = _scan(cwd, monkeypatch, target, "--format", "sarif", "--deterministic")
        seen.append(sorted((r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                            json.dumps(r["partialFingerprints"], sort_keys=True))
                           for r in _log(out)["runs"][0]["results"]))
    assert len(seen[0]) == 2 and all(s == seen[0] for s in seen), seen
