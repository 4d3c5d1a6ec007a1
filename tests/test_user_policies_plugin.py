"""A Python policy plugin, installed as a user installs one: a tiny package made in tmp_path
(as a wheel), pip-installed (no download: no index) into a virtualenv beside the
project's own environment, found through the entry-point group ``gpuaudit.policies`` and
evaluated by `gpuaudit scan` like a built-in policy."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
"""ACME's GPU policies: what a YAML condition cannot say (arithmetic across fields)."""

from policies.api import Context, Remediation, Severity, Status, Unknown, policy

LIMIT = 16


@policy(id="ACME-001", title="A GPU group can grow to at most 16 GPUs",
        severity=Severity.MEDIUM, kinds=("autoscaling.group",),
        description="MaxSize x GPUs per instance of the group's type stays within the quota.",
        remediation=Remediation("Lower MaxSize or ask for a larger quota."),
        category="cost", docs_url="https://wiki.example.com/gpu/ACME-001",
        compliance={"finops": ["rate-optimization"]})
def check(resource, ctx: Context):
    view = ctx.compute.of(resource)
    if view is None or view.types.gpu() is not True:
        return
    most = view.capacity.max.value if view.capacity else None
    counts = [ctx.catalog.spec(t).gpu_count for t in view.types.gpu_types()
              if ctx.catalog.spec(t)]
    if isinstance(most, Unknown) or not isinstance(most, int) or not counts:
        yield ctx.result(resource, Status.UNKNOWN, "MaxSize or the GPU count is not known")
        return
    gpus = most * max(counts)
    status = Status.PASS if gpus <= LIMIT else Status.FAIL
    yield ctx.result(resource, status, f"can grow to {gpus:g} GPUs (limit {LIMIT})",
                     evidence={"max_gpus": gpus})
'''

BROKEN = '''
raise RuntimeError("this plugin is broken")
'''

TERRAFORM = '''
resource "aws_launch_template" "gpu" {
  name          = "gpu"
  image_id      = "ami-1"
  instance_type = "g5.12xlarge"
}

resource "aws_autoscaling_group" "big" {
  name     = "big"
  min_size = 0
  max_size = 8
  launch_template {
    id = aws_launch_template.gpu.id
  }
}

resource "aws_autoscaling_group" "small" {
  name     = "small"
  min_size = 0
  max_size = 2
  launch_template {
    id = aws_launch_template.gpu.id
  }
}
'''


def _wheel(root: Path, name: str, module: str, code: str) -> Path:
    """The plugin as a wheel (PEP 427), written here: the build tools that would make one
    (setuptools' bdist_wheel needs the wheel package) are not part of the environment."""
    dist = name.replace("-", "_")
    info = f"{dist}-0.1.0.dist-info"
    files = {
        f"{module}/__init__.py": textwrap.dedent(code).lstrip(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                         "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[gpuaudit.policies]\n{module} = {module}\n",
    }
    record = [f"{path},sha256={_digest(text)},{len(text.encode())}"
              for path, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    root.mkdir(parents=True, exist_ok=True)
    wheel = root / f"{dist}-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _venv(where: Path) -> Path:
    """A virtualenv that sees the project's environment (its site-packages by a .pth file: a
    venv made from a venv's python would otherwise see only the base interpreter's)."""
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(where)],
                   check=True, capture_output=True, timeout=300)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "project-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _pip_install(python: Path, wheel: Path) -> None:
    proc = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index",
                           "--quiet", str(wheel)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _gpuaudit(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "scanner", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_pip_installed_plugin_is_a_policy_like_the_built_ins(tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv")
    _pip_install(python, _wheel(tmp_path / "dist", "acme-gpu-policies", "acme_gpu_policies",
                                  PLUGIN))
    iac = tmp_path / "iac"
    iac.mkdir()
    (iac / "main.tf").write_text(TERRAFORM)
    proc = _gpuaudit(python, "scan", str(iac), "--policy", "ACME-001", "--format", "json",
                     "--include-passed", "--deterministic", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr  # medium: below the default --fail-on high
    doc = json.loads(proc.stdout)
    found = {f["resource"]["id"]: (f["status"], f["message"]) for f in doc["findings"]}
    assert found == {
        "aws_autoscaling_group.big": ("FAIL", "can grow to 32 GPUs (limit 16)"),
        "aws_autoscaling_group.small": ("PASS", "can grow to 8 GPUs (limit 16)")}
    assert {f["title"] for f in doc["findings"]} == {"A GPU group can grow to at most 16 GPUs"}

    # the reports carry its metadata; the catalogue lists it with its origin
    sarif = json.loads(_gpuaudit(python, "scan", str(iac), "--policy", "ACME-001",
                                 "--format", "sarif", cwd=tmp_path).stdout)
    rule = sarif["runs"][0]["tool"]["driver"]["rules"][0]
    assert rule["id"] == "ACME-001" and rule["helpUri"] == "https://wiki.example.com/gpu/ACME-001"
    assert "cost" in rule["properties"]["tags"]
    listed = json.loads(_gpuaudit(python, "policies", "list", "--format", "json",
                                  cwd=tmp_path).stdout)
    acme = next(p for p in listed if p["id"] == "ACME-001")
    assert acme["origin"] == "acme_gpu_policies"
    assert acme["compliance"] == {"finops": ["rate-optimization"]}

    # the project's own environment does not have it: the plugin is what brings it
    plain = subprocess.run([sys.executable, "-m", "scanner", "policies", "show",
                            "ACME-001"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert plain.returncode == 2

    # a plugin that cannot be imported is exit 2 naming its entry point; nothing is scanned
    _pip_install(python, _wheel(tmp_path / "dist", "broken-policies", "broken_policies",
                                  BROKEN))
    proc = _gpuaudit(python, "scan", str(iac), "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "policy plugin broken_policies" in proc.stderr
    assert "this plugin is broken" in proc.stderr and "Traceback" not in proc.stderr
