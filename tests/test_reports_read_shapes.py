"""Every report read back (`report render`, `report merge`, `report diff`, `--baseline`) is
validated against the shipped findings JSON Schema first: a key missing or of another shape
is an error naming the file and the JSON path (exit 2), never a TypeError; unknown keys are
refused at the top level and in the records, tolerated (and never read) in the objects that
describe the run (scanner/findings/schema.py ``input_keys``), the same way by every command."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from tests.report_samples import sample


def _set(*path: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        cur = doc
        for key in path[:-1]:
            cur = cur[key]
        cur[path[-1]] = value
    return change


def _drop(*path: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        cur = doc
        for key in path[:-1]:
            cur = cur[key]
        del cur[path[-1]]
    return change


REFUSED = {  # the change, and the start of the error after "not a valid gpuaudit report: "
    "inputs missing": (_drop("inputs"), "$: missing key inputs"),
    "inputs a list": (_set("inputs", value=["envs"]), "$.inputs: [\"envs\"] is not object"),
    "inputs.paths a string": (_set("inputs", "paths", value="envs"), "$.inputs.paths:"),
    "inputs.paths of numbers": (_set("inputs", "paths", value=[1]), "$.inputs.paths[0]:"),
    "inputs empty": (_set("inputs", value={}), "$.inputs:"),
    "top-level extra key": (_set("extra", value=1), "$: unexpected key extra"),
    "findings missing": (_drop("findings"), "$: missing key findings"),
    "summary a number": (_set("summary", value=5), "$.summary: 5 is not object"),
    "finding extra key": (_set("findings", 0, "extra", value=None),
                          "$.findings[0]: unexpected key extra"),
    "resource tags of numbers": (_set("findings", 0, "resource", "tags", value={"a": 1}),
                                 "$.findings[0].resource.tags.a:"),
    "errors an object": (_set("errors", value={}), "$.errors: {} is not array"),
}
TOLERATED = {
    "inputs extra number": _set("inputs", "extra", value=5),
    "inputs extra null": _set("inputs", "extra", value=None),
    "inputs extra object": _set("inputs", "extra", value={"a": [1]}),
    "catalog extra": _set("catalog", "pricing", value={"spot": True}),
    "summary extra": _set("summary", "extra", value=[1, 2]),
    "tool extra": _set("tool", "build", value=7),
}


def _commands(good: Path, bad: Path) -> list[list[str]]:
    return [["report", "render", str(bad), "--format", "json"],
            ["report", "render", str(bad), "--format", "html"],
            ["report", "render", str(bad), "--format", "sarif"],
            ["report", "merge", str(good), str(bad), "--format", "json", "--fail-on", "none"],
            ["report", "diff", str(good), str(bad), "--fail-on", "critical"],
            ["report", "diff", str(bad), str(good), "--fail-on", "critical"]]


def _files(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> tuple[Path, Path]:
    doc = sample("iac")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(doc))
    changed = copy.deepcopy(doc)
    change(changed)
    bad.write_text(json.dumps(changed))
    return good, bad


@pytest.mark.parametrize("name", REFUSED)
def test_a_report_of_another_shape_is_refused_naming_file_and_path(
    tmp_path: Path, name: str
) -> None:
    change, expected = REFUSED[name]
    good, bad = _files(tmp_path, change)
    for args in _commands(good, bad):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code == 2, (args, res.output, res.exception)
        assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
        assert f"gpuaudit: error: {bad}: not a valid gpuaudit report: {expected}" \
            in res.stderr, (args, res.stderr)
        if args[1] != "merge":  # merge still merges the others, with the error in its report
            assert res.stdout == ""


@pytest.mark.parametrize("name", TOLERATED)
def test_unknown_keys_where_the_run_is_described_are_tolerated_by_every_command(
    tmp_path: Path, name: str
) -> None:
    good, bad = _files(tmp_path, TOLERATED[name])
    for args in _commands(good, bad):
        res = CliRunner().invoke(cli, args)
        assert res.exception is None or isinstance(res.exception, SystemExit), \
            (args, res.exception)
        assert "not a valid" not in res.stderr and "internal error" not in res.stderr
        reference = CliRunner().invoke(cli, [str(good) if a == str(bad) else a for a in args])
        assert res.exit_code == reference.exit_code, (args, res.output)  # as the report read
    res = CliRunner().invoke(cli, ["report", "diff", str(good), str(bad)])
    assert "different inputs" not in res.stdout  # an unknown key is not read, not compared
    res = CliRunner().invoke(cli, ["report", "merge", str(good), str(bad), "--format", "json",
                                   "--fail-on", "none"])
    assert "extra" not in json.loads(res.stdout)["inputs"]  # nor carried into the merge
