"""One source for where gpuaudit is published and which version it is (``scanner.__url__``,
``scanner.__version__``): pyproject's metadata, the README's snippets, the CI recipes, the
GitHub action and the documentation links are checked against it, and the action's scan step
runs as GitHub runs it (bash -eo pipefail) on a fixture."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from scanner import __url__, __version__

ROOT = Path(__file__).resolve().parents[1]
TAG = f"v{__version__}"
# every file a user copies an install line or a link from
TEXTS = [ROOT / "README.md", ROOT / "action.yml", ROOT / ".pre-commit-hooks.yaml",
         *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.yml")),
         *sorted((ROOT / "examples").rglob("*.yaml"))]
PROJECT_ADDRESS = re.compile(r"github\.com/([\w.-]+)/gpuaudit\b")
GITHUB_OF_URL = __url__.removeprefix("https://")


def test_pyproject_takes_version_and_address_from_the_package() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "scanner.__version__"}
    assert all(url.startswith(__url__) for url in meta["project"]["urls"].values())


def test_no_placeholder_address_anywhere() -> None:
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        assert "your-org" not in text, path
        for match in PROJECT_ADDRESS.finditer(text):
            assert match.group(0) == GITHUB_OF_URL, f"{path}: {match.group(0)} is not {__url__}"


def test_every_pinned_version_is_this_release() -> None:
    pins = re.compile(r"(?:rev:\s*|gpuaudit@|GPUAUDIT_VERSION:\s*)(v\d+\.\d+\.\d+)")
    found = 0
    for path in TEXTS:
        for match in pins.finditer(path.read_text(encoding="utf-8")):
            found += 1
            assert match.group(1) == TAG, f"{path}: {match.group(0)} (this release is {TAG})"
    assert found >= 5  # README, both GitHub recipes, both GitLab recipes


def test_the_check_can_fail(tmp_path: Path) -> None:
    bad = "pip install 'gpuaudit @ git+https://github.com/someone-else/gpuaudit@v9.9.9'"
    assert PROJECT_ADDRESS.search(bad).group(0) != GITHUB_OF_URL  # type: ignore[union-attr]


def _action_step(name: str) -> str:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == name]
    return step["run"]


def test_action_inputs_and_steps_are_wired() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) >= {"paths", "format", "fail-on", "config", "upload-sarif"}
    uses = [s["uses"] for s in action["runs"]["steps"] if "uses" in s]
    assert uses == ["github/codeql-action/upload-sarif@v4"]
    for step in action["runs"]["steps"]:
        if "run" in step:
            check = subprocess.run(["bash", "-n"], input=step["run"], text=True,
                                   capture_output=True)
            assert check.returncode == 0, (step["name"], check.stderr)


def _run_scan_step(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str],
                                                                   dict[str, str]]:
    runner = tmp_path / "runner"
    (runner / "gpuaudit-venv" / "bin").mkdir(parents=True)
    # the install step's virtualenv: this checkout's gpuaudit
    wrapper = runner / "gpuaudit-venv" / "bin" / "gpuaudit"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m scanner \"$@\"\n")
    wrapper.chmod(0o755)
    output = tmp_path / "github_output"
    output.write_text("")
    full = {**os.environ, "RUNNER_TEMP": str(runner), "GITHUB_OUTPUT": str(output),
            "PYTHONPATH": str(ROOT), "GPUAUDIT_FORMATS": "sarif, json,markdown",
            "GPUAUDIT_FAIL_ON": "high", "GPUAUDIT_CONFIG": "", "GPUAUDIT_DIFF_BASE": "",
            "GPUAUDIT_OUTPUT_DIR": str(tmp_path / "out"), **env}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                           _action_step("Scan")], env=full, text=True, capture_output=True,
                          cwd=tmp_path, timeout=120)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return proc, outputs


def test_action_scan_step_reports_and_keeps_the_exit_code(tmp_path: Path) -> None:
    infra = tmp_path / "infra dir"
    infra.mkdir()
    (infra / "main.tf").write_text(
        'resource "aws_ebs_volume" "data" {\n  availability_zone = "us-east-1a"\n'
        "  size = 100\n}\n")
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "main.tf").write_text(
        'resource "aws_ebs_volume" "data" {\n  availability_zone = "us-east-1a"\n'
        "  size = 100\n  encrypted = true\n}\n")
    proc, outputs = _run_scan_step(tmp_path, {"GPUAUDIT_PATHS": f"{infra}\n\n{tmp_path / 'ok'}\n"})
    assert proc.returncode == 0, proc.stderr  # the step records the code; a later one fails
    assert outputs["exit_code"] == "1"
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == {"report.sarif", "report.json", "report.md"}
    report = (out / "report.json").read_text()
    assert '"EBS-001"' in report and "infra dir" in report


def test_action_scan_step_passes_a_clean_tree(tmp_path: Path) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "main.tf").write_text(
        'resource "aws_ebs_volume" "data" {\n  availability_zone = "us-east-1a"\n'
        "  size = 100\n  encrypted = true\n}\n")
    proc, outputs = _run_scan_step(tmp_path, {"GPUAUDIT_PATHS": str(tmp_path / "ok")})
    assert proc.returncode == 0, proc.stderr
    assert outputs["exit_code"] == "0"
