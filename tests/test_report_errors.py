"""Bad report files given to `report render|merge|diff` and `--baseline`: one clear line naming
the file and what is wrong, exit 2, never a Python internal (a traceback, a KeyError's repr,
`schema_version None`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reports import render
from scanner.cli.main import cli
from tests.report_samples import sample

BAD = {
    "binary.json": b"\x89PNG\r\n\x1a\n",
    "deep.json": b"[" * 100_000,
    "list.json": b"[1, 2]",
    "noversion.json": b'{"findings": []}',
    "oldversion.json": b'{"schema_version": "1"}',
    "broken.json": b'{"schema_version": 1,',
    "nofindings.json": json.dumps({**sample("empty"), "findings": None}).encode(),
}
EXPECTED = {
    "binary.json": "not UTF-8 text",
    "deep.json": "nested too deeply",
    "list.json": "the top level is not an object",
    "noversion.json": "it has no schema_version",
    "oldversion.json": 'schema_version "1" is not supported',
    "broken.json": "not a JSON report",
    "nofindings.json": "$.findings",
}
INTERNALS = ("Traceback", "KeyError", "None", "Error(", "<class", "object at 0x")


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name, data in BAD.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good.json").write_text(render("json", sample("iac")), encoding="utf-8")
    (tmp_path / "main.tf").write_text('resource "aws_ebs_volume" "v" {\n  size = 1\n}\n')
    return tmp_path


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("command", ["render", "merge", "diff-old", "diff-new", "baseline"])
def test_one_clear_line(files: Path, name: str, command: str) -> None:
    args = {
        "render": ["report", "render", name],
        "merge": ["report", "merge", name, "good.json", "-q"],
        "diff-old": ["report", "diff", name, "good.json"],
        "diff-new": ["report", "diff", "good.json", name],
        "baseline": ["scan", "main.tf", "--baseline", name, "-q"],
    }[command]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    lines = [line for line in res.stderr.splitlines() if line.startswith("gpuaudit: error:")]
    assert lines, res.stderr
    assert name in lines[0] and EXPECTED[name] in lines[0], lines[0]
    for internal in INTERNALS:
        assert internal not in res.stderr, res.stderr


def test_the_old_message_said_none(files: Path) -> None:
    """Before: "noversion.json: schema_version None; this gpuaudit reads 1"."""
    res = CliRunner().invoke(cli, ["report", "render", "noversion.json"])
    assert "schema_version None" not in res.stderr and "no schema_version" in res.stderr
