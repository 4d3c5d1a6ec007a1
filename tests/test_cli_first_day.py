"""What a new user meets first: a wrong profile name or a misspelt config key is one line that
says what to fix, never a page of ERRORs or a bare schema message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _gpuaudit(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    aws = tmp_path / "aws"
    aws.mkdir(exist_ok=True)
    (aws / "config").write_text("[default]\nregion = us-east-1\n[profile prod-gpu]\n"
                                "region = us-west-2\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=str(aws / "config"),
               AWS_SHARED_CREDENTIALS_FILE=str(aws / "credentials"), PYTHONPATH=str(ROOT),
               NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "scanner", *args], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)


def test_an_unknown_profile_is_one_line_naming_the_known_ones(tmp_path: Path) -> None:
    proc = _gpuaudit(tmp_path, "audit", "--profile", "prod-gpus", "--regions", "us-east-1")
    assert proc.returncode == 2
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert "'prod-gpus' not found" in line and "default, prod-gpu" in line


def test_a_misspelt_config_key_names_the_nearest_valid_one(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('resource "aws_ebs_volume" "v" {\n'
                                      '  availability_zone = "us-east-1a"\n  size = 1\n}\n')
    (tmp_path / "cfg.yaml").write_text(
        "fail_onn: high\nmutes:\n  - {policy: EBS-001, resourc: 'aws_*', reason: scratch}\n")
    proc = _gpuaudit(tmp_path, "scan", "main.tf", "--config", "cfg.yaml")
    assert proc.returncode == 2
    assert "key 'fail_onn': unknown (did you mean 'fail_on'?)" in proc.stderr
    (tmp_path / "cfg.yaml").write_text(
        "mutes:\n  - {policy: EBS-001, resourc: 'aws_*', reason: scratch}\n")
    proc = _gpuaudit(tmp_path, "scan", "main.tf", "--config", "cfg.yaml")
    assert proc.returncode == 2
    assert "key 'mutes.0.resourc': unknown (did you mean 'resource'?)" in proc.stderr
    assert "required property" not in proc.stderr  # the misspelling is why it is missing
