"""Dates and values of the config file (scanner/engine/config.py): an impossible ``expires`` in a mute
list entry, a date and time, a number too long to convert, in YAML and in pyproject.toml, are
config errors naming the file and the key (exit 2 through the CLI), never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.engine.config import ConfigError, load_config

VOLUME = ('resource "aws_ebs_volume" "scratch" {\n  availability_zone = "us-east-1a"\n'
          '  size = 10\n}\n')
MUTE = """mutes:
  - policy: EBS-002
    resource: aws_ebs_volume.other
    reason: scratch
  - policy: EBS-001
    resource: aws_ebs_volume.scratch
    reason: scratch disk, no data
    expires: {expires}
"""


@pytest.mark.parametrize(("expires", "why"), [
    ("2027-02-30", "day is out of range"),
    ("2026-13-01", "month must be in 1..12"),
    ("2027-02-29", "day is out of range"),  # not a leap year
    ("2027-01-31 10:00:00", "is not a date YYYY-MM-DD"),
    ("2027-01-31T10:00:00Z", "is not a date YYYY-MM-DD"),
    ("'31/01/2027'", "is not a date YYYY-MM-DD"),
    ("20270131", "expected a date YYYY-MM-DD, got int"),
    ("[2027-01-31]", "expected a date YYYY-MM-DD, got list"),
])
def test_an_impossible_expiry_is_a_config_error_naming_file_and_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expires: str, why: str
) -> None:
    cfg = tmp_path / ".gpuaudit.yaml"
    cfg.write_text(MUTE.format(expires=expires))
    with pytest.raises(ConfigError) as exc:
        load_config(cfg)
    assert str(exc.value).startswith(f"{cfg}: key 'mutes.1.expires': "), exc.value
    assert why in str(exc.value)
    (tmp_path / "main.tf").write_text(VOLUME)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["scan", "main.tf", "--config", str(cfg), "--format", "json"])
    assert res.exit_code == 2
    assert "internal error" not in res.stderr and res.stdout == ""
    assert "key 'mutes.1.expires'" in res.stderr and str(cfg) in res.stderr


@pytest.mark.parametrize("expires", ["2027-02-28", "'2027-02-28'", "2028-02-29", "null"])
def test_a_real_expiry_date_still_mutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, expires: str
) -> None:
    cfg = tmp_path / ".gpuaudit.yaml"
    cfg.write_text(MUTE.format(expires=expires))
    config = load_config(cfg)
    assert config.mutes[1]["expires"] == (None if expires == "null" else expires.strip("'"))
    (tmp_path / "main.tf").write_text(VOLUME)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["scan", "main.tf", "--config", str(cfg), "--format", "json",
                                   "--fail-on", "none", "--include-passed"])
    assert res.exit_code == 0, res.output
    assert '"status": "SUPPRESSED"' in res.stdout  # the mute is in force (2027 is ahead)


def test_a_date_in_a_key_or_a_policy_name_is_text(tmp_path: Path) -> None:
    """YAML reads 2027-02-30 as a timestamp anywhere: no value is constructed as a date."""
    cfg = tmp_path / ".gpuaudit.yaml"
    cfg.write_text("mutes:\n  - policy: 2027-02-30\n    resource: x\n    reason: r\n")
    assert load_config(cfg).mutes[0]["policy"] == "2027-02-30"
    cfg.write_text("policies:\n  2027-02-30: {}\n")
    with pytest.raises(ConfigError, match="key 'policies': '2027-02-30' does not match"):
        load_config(cfg)


@pytest.mark.parametrize("where", ["yaml", "toml"])
def test_an_integer_too_long_to_convert_is_a_config_error(tmp_path: Path, where: str) -> None:
    digits = "1" * 5000
    if where == "yaml":
        cfg = tmp_path / ".gpuaudit.yaml"
        cfg.write_text(f"fail_on: high\npolicies:\n  SPOT-001:\n    max_price_ratio: {digits}\n")
        match = r"line 4: not valid YAML: integer value not usable"
    else:
        cfg = tmp_path / "pyproject.toml"
        cfg.write_text(f"[tool.gpuaudit]\nfail_on = {digits}\n")
        match = "not valid TOML: more digits than can be converted"
    with pytest.raises(ConfigError, match=match) as exc:
        load_config(cfg)
    assert str(exc.value).startswith(str(cfg)) and digits not in str(exc.value)


@pytest.mark.parametrize(("value", "message"), [
    ("2027-02-28", None),
    ("2027-01-31T10:00:00", "is a date and time"),
    ('"2027-02-30"', "day is out of range"),
    ("2027-02-30", "not valid TOML"),  # tomllib refuses the impossible date itself
])
def test_pyproject_expiry_dates(tmp_path: Path, value: str, message: str | None) -> None:
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.gpuaudit]\n[[tool.gpuaudit.mutes]]\npolicy = "EBS-001"\n'
                   f'resource = "x"\nreason = "r"\nexpires = {value}\n')
    if message is None:
        assert load_config(cfg).mutes[0]["expires"] == "2027-02-28"
        return
    with pytest.raises(ConfigError, match=message) as exc:
        load_config(cfg)
    assert str(exc.value).startswith(str(cfg))
