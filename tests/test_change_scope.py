"""What a change is answerable for (scanner/engine/change_scope.py), through `gpuaudit scan` with
files named one by one, in throwaway git repositories: local modules and their callers, the
first commit, variables files, a pull request's base, and the roots a change does not reach."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli

MODULE = """variable "encrypted" {
  default = true
}

resource "aws_ebs_volume" "data" {
  availability_zone = "us-east-1a"
  size              = 100
  encrypted         = var.encrypted
}
"""
CALLER = """module "gpu" {
  source    = "../../modules/gpu"
  encrypted = local.enc
}

locals {
  enc = true
}
"""
LEGACY = 'resource "aws_ebs_volume" "legacy" {\n  availability_zone = "us-east-1a"\n  size = 1\n}\n'


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=repo, check=True, capture_output=True, text=True).stdout


def write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)


def scan(repo: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, dict]:
    monkeypatch.chdir(repo)
    res = CliRunner().invoke(cli, ["scan", *args, "--format", "json", "--deterministic"])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def failing(doc: dict) -> set[tuple[str, str, str]]:
    return {(f["resource"]["id"], f["location"]["file"], f["message"].rsplit("[", 1)[-1])
            for f in doc["findings"] if f["status"] == "FAIL"}


@pytest.fixture()
def estate(tmp_path: Path) -> Path:
    """modules/gpu, used by envs/prod and envs/staging; envs/other stands alone with an old
    violation; all committed, all passing but for that one."""
    write(tmp_path, {"modules/gpu/main.tf": MODULE, "envs/prod/main.tf": CALLER,
                     "envs/staging/main.tf": CALLER, "envs/other/main.tf": LEGACY,
                     "envs/prod/legacy.tf": LEGACY})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "estate")
    return tmp_path


def test_a_changed_caller_reports_the_module_resource_it_breaks(
    estate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (estate / "envs/prod/main.tf").write_text(CALLER.replace("enc = true", "enc = false"))
    code, doc = scan(estate, monkeypatch, "envs/prod/main.tf")
    assert code == 1
    assert failing(doc) == {("module.gpu.aws_ebs_volume.data", "modules/gpu/main.tf",
                             "new with this change, caused by envs/prod/main.tf]")}
    # prod's old legacy volume, staging and other: not this change's doing


def test_a_changed_module_is_evaluated_through_every_root_that_calls_it(
    estate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (estate / "modules/gpu/main.tf").write_text(
        MODULE.replace("= var.encrypted", "= false"))
    code, doc = scan(estate, monkeypatch, "modules/gpu/main.tf")
    assert code == 1
    found = {(f["resource"]["id"], f["location"]["file"]) for f in doc["findings"]
             if f["status"] == "FAIL"}
    # declared in the changed file: reported in the module itself and through prod and staging
    assert found == {("aws_ebs_volume.data", "modules/gpu/main.tf"),
                     ("module.gpu.aws_ebs_volume.data", "modules/gpu/main.tf")}
    assert sum(f["status"] == "FAIL" for f in doc["findings"]) == 3  # prod, staging, alone
    assert not any("legacy" in f["resource"]["id"] for f in doc["findings"])


def test_the_first_commit_has_no_base_so_everything_in_its_roots_is_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {"gpu/main.tf": MODULE.replace("default = true", "default = false"),
                     "gpu/legacy.tf": LEGACY})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    _, doc = scan(tmp_path, monkeypatch, "gpu/main.tf")
    assert {r for r, _, _ in failing(doc)} == {"aws_ebs_volume.data", "aws_ebs_volume.legacy"}


def test_variables_files(estate: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (estate / "envs/prod/prod.tfvars").write_text("unused = 1\n")
    code, doc = scan(estate, monkeypatch, "envs/prod/prod.tfvars")
    assert code == 0 and doc["findings"] == []  # terraform does not load it by itself: said
    assert "--var-file envs/prod/prod.tfvars" in doc["notices"][0]["message"]
    (estate / "envs/staging/staging.auto.tfvars").write_text("x = 1\n")
    code, doc = scan(estate, monkeypatch, "envs/staging/staging.auto.tfvars")
    assert code == 0 and doc["notices"] == []  # loaded, evaluated, nothing new
    (estate / "modules/gpu/terraform.tfvars").write_text("encrypted = false\n")
    code, doc = scan(estate, monkeypatch, "modules/gpu/terraform.tfvars")
    # the module read as a root loads it (its callers pass their own value, so are unchanged)
    assert failing(doc) == {("aws_ebs_volume.data", "modules/gpu/main.tf",
                             "new with this change, caused by modules/gpu/terraform.tfvars]")}


def test_a_pull_request_compares_with_its_base(
    estate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = git(estate, "rev-parse", "HEAD").strip()
    (estate / "envs/staging/main.tf").write_text(CALLER.replace("enc = true", "enc = false"))
    git(estate, "commit", "-qam", "staging without encryption")
    (estate / "envs/staging/notes.tf").write_text("# notes\n")
    git(estate, "add", ".")
    git(estate, "commit", "-qm", "notes")
    # against HEAD the second commit changed nothing that matters; against the base it did
    _, doc = scan(estate, monkeypatch, "envs/staging/notes.tf")
    assert failing(doc) == set()
    _, doc = scan(estate, monkeypatch, "envs/staging/notes.tf", "--diff-base", base)
    assert failing(doc) == {("module.gpu.aws_ebs_volume.data", "modules/gpu/main.tf",
                             "new with this change, caused by envs/staging/notes.tf]")}


def test_a_pull_request_that_deletes_a_file_reports_what_the_deletion_breaks(
    estate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git diff --diff-filter=D` names files that are gone: the scan of a pull request
    evaluates their directory as of now and as of the base, like a changed file's."""
    (estate / "envs/staging/defaults.tf").write_text(
        'resource "aws_ebs_encryption_by_default" "on" {\n  enabled = true\n}\n')
    (estate / "envs/staging/scratch.tf").write_text(LEGACY.replace("legacy", "scratch"))
    git(estate, "add", ".")
    git(estate, "commit", "-qm", "staging encrypts by default")
    base = git(estate, "rev-parse", "HEAD").strip()
    git(estate, "rm", "-q", "envs/staging/defaults.tf")
    git(estate, "commit", "-qm", "drop the default")
    code, doc = scan(estate, monkeypatch, "envs/staging/defaults.tf", "--diff-base", base)
    assert code == 1 and doc["errors"] == []
    assert failing(doc) == {("aws_ebs_volume.scratch", "envs/staging/scratch.tf",
                             "new with this change, caused by envs/staging/defaults.tf]")}
    # a path that never was in the repository is still an input error
    monkeypatch.chdir(estate)
    res = CliRunner().invoke(cli, ["scan", "envs/staging/typo.tf", "--diff-base", base,
                                   "--format", "json"])
    assert res.exit_code == 2 and "typo.tf" in json.loads(res.stdout)["errors"][0]["path"]


def test_a_pull_request_that_deletes_a_directory_or_a_template(
    estate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (estate / "stack.yaml").write_text("Resources:\n  V:\n    Type: AWS::EC2::Volume\n"
                                       "    Properties: {AvailabilityZone: a, Size: 1}\n")
    git(estate, "add", ".")
    git(estate, "commit", "-qm", "a template")
    base = git(estate, "rev-parse", "HEAD").strip()
    git(estate, "rm", "-rq", "envs/other", "stack.yaml")
    git(estate, "commit", "-qm", "drop a root module and a template")
    code, doc = scan(estate, monkeypatch, "envs/other/main.tf", "stack.yaml", "--diff-base", base)
    assert (code, doc["errors"], failing(doc)) == (0, [], set())  # nothing left to judge
    # a module that its callers still use: the callers cannot be read any more
    git(estate, "rm", "-rq", "modules/gpu")
    git(estate, "commit", "-qm", "drop the module")
    monkeypatch.chdir(estate)
    res = CliRunner().invoke(cli, ["scan", "modules/gpu/main.tf", "--diff-base", base,
                                   "--format", "json"])
    errors = json.loads(res.stdout)["errors"]
    assert res.exit_code == 2 and {e["path"] for e in errors} == {
        "envs/prod/main.tf", "envs/staging/main.tf"}, errors


@pytest.mark.parametrize("ref", ["origin/mian", "0123456789abcdef0123456789abcdef01234567",
                                 "--output=x", "HEAD~5"])
@pytest.mark.parametrize("named", ["envs/prod/main.tf", "envs/prod/gone.tf"])
def test_a_diff_base_that_names_no_commit_is_an_error_naming_it(
    estate: Path, monkeypatch: pytest.MonkeyPatch, ref: str, named: str
) -> None:
    """Never "no base": that would make every finding of the roots new with this change."""
    (estate / "envs/prod/main.tf").write_text(CALLER.replace("enc = true", "enc = false"))
    monkeypatch.chdir(estate)
    res = CliRunner().invoke(cli, ["scan", named, "--diff-base", ref, "--format", "json"])
    assert res.exit_code == 2, res.output
    assert res.stdout == ""  # no report of findings that would all be "new"
    assert f"--diff-base {ref}:" in res.stderr
    assert "new with this change" not in res.output
    # the same scan against a ref that exists reports only what the change did
    res = CliRunner().invoke(cli, ["scan", "envs/prod/main.tf", "--diff-base", "HEAD",
                                   "--format", "json"])
    assert res.exit_code == 1 and len(json.loads(res.stdout)["findings"]) == 1


def test_an_explicit_diff_base_outside_a_repository_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {"gpu/main.tf": LEGACY})
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["scan", "gpu/main.tf", "--diff-base", "main",
                                   "--format", "json"])
    assert res.exit_code == 2 and "--diff-base main:" in res.stderr
    assert "not in a git repository" in res.stderr and res.stdout == ""
    # the default base outside a repository: every finding of the root, said as "may depend"
    code, doc = scan(tmp_path, monkeypatch, "gpu/main.tf")
    assert code == 1 and doc["findings"][0]["resource"]["id"] == "aws_ebs_volume.legacy"


def test_files_read_whole_need_no_narrowing(tmp_path: Path) -> None:
    """A plan or template named alone is reported whole: the engine is given no narrowing, so
    it only counts its PASS results instead of building each one (a 50,000-resource plan has
    54,000); a Terraform file named is narrowed to what the change is answerable for."""
    from scanner.engine.change_scope import prepare

    plan = tmp_path / "plan.json"
    plan.write_text("{}", encoding="utf-8")
    template = tmp_path / "stack.yaml"
    template.write_text("Resources: {}\n", encoding="utf-8")
    assert prepare([plan, template]).narrow is None
    tf = tmp_path / "main.tf"
    tf.write_text("", encoding="utf-8")
    assert prepare([plan, tf]).narrow is not None
