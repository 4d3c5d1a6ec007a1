"""gpuaudit as its users get it: the wheel built from this tree (once for the module), resolved
by pip without extras, and installed with the demo extra into a virtualenv outside the
checkout, where `gpuaudit demo` runs under hostile AWS settings of the machine."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_demo import HOSTILE_ENV, check_demo_report, check_sarif

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"


@dataclass
class Built:
    wheel: Path
    log: str  # pip wheel -v: the build backend's output
    env: dict[str, str]  # this process's environment without Python, pip or AWS settings


def _source_copy(dest: Path) -> Path:
    """The files a distribution is built from, outside the checkout (no build/ or egg-info
    lands in the checkout, and nothing of the checkout can be imported by accident)."""
    src = dest / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pkg in ("scanner", "policies", "reports"):
        shutil.copytree(ROOT / pkg, src / pkg, ignore=ignore)
    return src


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The wheel, built as pip builds it for a user (an isolated build environment)."""
    work = tmp_path_factory.mktemp("wheel")
    src = _source_copy(work)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "PYTHON", "VIRTUAL_ENV", "PIP_"))}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--disable-pip-version-check",
         "-w", str(work / "wheels"), str(src)],
        capture_output=True, text=True, timeout=900, env=env, cwd=work)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    shutil.rmtree(src)  # what is installed from the wheel must not need its source
    (wheel,) = (work / "wheels").glob("gpuaudit-*.whl")
    return Built(wheel, build.stdout + build.stderr, env)


def test_the_wheel_builds_without_a_deprecation_warning(built: Built) -> None:
    assert "setuptools" in built.log.lower()  # the backend's output is in the log
    assert "deprecat" not in built.log.lower(), built.log[-3000:]  # the TOML-table `license`


def test_the_default_install_pulls_no_checkov_and_does_not_hold_boto3(
    built: Built, tmp_path: Path
) -> None:
    """pip resolves the wheel (no extras) as a user would install it: checkov and its pins
    are not in it, boto3 resolves to a release newer than checkov 3.3's pin (1.35.49)."""
    report = tmp_path / "report.json"
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
                          "--ignore-installed", "--report", str(report), str(built.wheel)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    installs = {i["metadata"]["name"].lower(): i["metadata"]
                for i in json.loads(report.read_text())["install"]}
    assert "gpuaudit" in installs
    assert "checkov" not in installs and "bc-python-hcl2" not in installs
    boto3 = tuple(int(p) for p in installs["boto3"]["version"].split(".")[:3])
    assert boto3 > (1, 35, 49)
    requires = installs["gpuaudit"].get("requires_dist", [])
    plain = [r for r in requires if "extra ==" not in r]
    assert not [r for r in plain if r.lower().startswith("checkov")]
    assert [r for r in requires if r.startswith("boto3")] == ["boto3>=1.34"]
    assert any(r.startswith("checkov") and 'extra == "checkov"' in r for r in requires)


def _requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        (meta,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        lines = z.read(meta).decode().splitlines()
    return sorted(line for line in lines if line.startswith("Requires-Dist:"))


def _pip_into(python: Path, env: dict[str, str], *args: str) -> None:
    # --no-compile: byte-compiling all of botocore and moto at install costs 3 s of CPU; the
    # demo compiles the modules it imports
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
         "--disable-pip-version-check", "--no-compile", *args],
        capture_output=True, text=True, timeout=900, env=env)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]


def demo_environment(built: Built) -> Path:
    """A virtualenv made by `pip install '<wheel>[demo]'`, kept under .cache/ for its set of
    requirements (the wheel's Requires-Dist lines, this Python): the first run of the suite,
    and every run in a clean clone, installs it all; later runs install only gpuaudit again,
    from this wheel (`--force-reinstall --no-deps`), into the same dependencies, which are
    then already byte-compiled (6-7 s of CPU less a run). A virtualenv cannot be moved, so
    it is made in place and marked complete last."""
    key = hashlib.sha256("\n".join([sys.version, *_requirements(built.wheel)]).encode())
    venv = CACHE / f"demo-env-{key.hexdigest()[:16]}"
    python = venv / "bin" / "python"
    complete = venv / "gpuaudit-demo-env-complete"
    if complete.is_file():
        _pip_into(python, built.env, "--force-reinstall", "--no-deps", str(built.wheel))
        return venv
    shutil.rmtree(venv, ignore_errors=True)  # an earlier run stopped half-way
    CACHE.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    _pip_into(python, built.env, f"{built.wheel}[demo]")
    complete.write_text(f"{built.wheel.name}[demo]\n")
    return venv


def test_demo_from_a_fresh_non_editable_install_outside_the_checkout(
    built: Built, tmp_path: Path
) -> None:
    """`pip install '<wheel>[demo]'` into a virtualenv, then `gpuaudit demo` from elsewhere:
    the examples ship as package data and moto comes with the extra. pip's cache is shared
    with the developer's (and CI's) other installs, so only the first run downloads."""
    venv = demo_environment(built)
    python = venv / "bin" / "python"
    env = dict(built.env)
    with tempfile.TemporaryDirectory() as elsewhere:
        where = subprocess.run([str(python), "-c", "import scanner; print(scanner.__file__)"],
                               capture_output=True, text=True, check=True, cwd=elsewhere,
                               env=env)
    assert str(venv) in where.stdout  # the installed copy, not the checkout
    work = tmp_path / "elsewhere"
    work.mkdir()
    # a project config in the working directory that is not the demo's, and the machine's
    # AWS settings that would break or leak a real audit
    (work / ".gpuaudit.yaml").write_text("policies: {EBS-001: {enabled: false}}\n")
    env.update(HOSTILE_ENV, AWS_CONFIG_FILE=str(tmp_path / "missing-config"))
    out = work / "my reports"  # a space: the printed command must still be copyable
    started = time.monotonic()
    demo = subprocess.run([str(venv / "bin" / "gpuaudit"), "demo", "--output-dir", out.name],
                          capture_output=True, text=True, cwd=work, env=env, timeout=600)
    took = time.monotonic() - started
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    print(f"gpuaudit demo from a fresh install: {took:.1f} s")  # the budget is 60 s: make bench
    doc = check_demo_report(out)  # EBS-001 ran: the working directory's config is not the demo's
    examples = [p for p in doc["inputs"]["paths"]]
    assert examples and all(p.startswith(str(venv)) for p in examples)
    check_sarif(out)
    lines = demo.stdout.splitlines()
    assert any(line.startswith("Results: ") and " FAIL" in line for line in lines)
    assert any(line.startswith("Estimated saving: $") for line in lines)
    reports = next(line for line in lines if line.startswith("Reports: "))
    for fmt in ("html", "json", "sarif"):
        assert f"report.{fmt}" in reports and (out / f"report.{fmt}").is_file()
    table = next(line for line in lines if line.startswith("The table: "))
    command = shlex.split(table.removeprefix("The table: "))[:4]
    assert command[:3] == ["gpuaudit", "report", "render"]
    assert (work / command[3]).resolve() == (out / "report.json").resolve()
