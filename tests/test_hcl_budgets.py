"""Hostile HCL is bounded (issue 11, section 3): every amplification a small file can ask for
(strings, collections, instances, work, regular expressions, numbers) stops at a budget with an
input error naming the file and line, and the rest of the directory is still reported."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.model import SourceResult, Unknown
from scanner.sources.terraform.hcl import values
from scanner.sources.terraform.hcl.expressions import evaluate
from scanner.sources.terraform.hcl.parse import parse_expression
from scanner.sources.terraform.hcl.reader import instance_values, load_terraform_dir
from scanner.sources.terraform.hcl.values import (
    INSTANCE_BUDGET,
    MAX_STRING,
    BudgetExceeded,
    EvalError,
    literal_scope,
    reset_budget,
)

ROOT = Path(__file__).resolve().parent.parent


def ev(text: str) -> Any:
    reset_budget()
    return evaluate(parse_expression(text), literal_scope())


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def scan(root: Path) -> SourceResult:
    result = load_terraform_dir([root])
    for e in result.errors:
        assert "could not be scanned" not in e.reason, e  # an internal error, not bad input
    return result


# -- regular expressions: RE2, as terraform ----------------------------------------------------


def test_backtracking_patterns_do_not_hang() -> None:
    """In a child process with a generous timeout: Python's re takes forever on these."""
    code = (
        "from scanner.sources.terraform.hcl.expressions import evaluate\n"
        "from scanner.sources.terraform.hcl.parse import parse_expression\n"
        "from scanner.sources.terraform.hcl.values import literal_scope\n"
        "s = '\"' + 'a' * 5000 + '!\"'\n"
        "for e in ['regexall(\"(a+)+$\", %s)', 'replace(%s, \"/(a|aa)+$/\", \"x\")',\n"
        "          'can(regex(\"(a*)*b\", %s))']:\n"
        "    print(evaluate(parse_expression(e % s), literal_scope()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, check=True)
    assert out.stdout.split("\n")[:3] == ["[]", "a" * 5000 + "!", "False"]
    assert out.stderr == ""  # RE2's C++ logger is off: a bad pattern is our error, not noise


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('regexall("a*", "baaac")', ["", "aaa", ""]),  # Go: no empty match next to a match
        ('replace("baaac", "/a*/", "-")', "-b-c-"),
        ('replace("ab", "/(?P<x>a)(b)/", "$2$${x}$$1$x1")', "ba$1"),  # Go's Expand
        ('regex("a\\\\z", "ba")', "a"),  # RE2's end of text
        ('regex("(?i)A(?U)b+", "abbb")', "ab"),
        ('regex("(?P<k>\\\\w+)=(?P<v>\\\\w*)", "x=")', {"k": "x", "v": ""}),
        ('regex("(a)(b)?", "a")', ["a", None]),
        ('regexall("\\\\d", "١2")', ["2"]),  # \d is ASCII in Go
    ],
)
def test_regex_follows_go(text: str, value: Any) -> None:
    assert ev(text) == value


@pytest.mark.parametrize(
    "text",
    ['regex("(a)\\\\1", "aa")', 'regex("(?=a)", "a")', 'regex("(a)(?P<n>b)", "ab")'],
)
def test_regex_syntax_go_refuses_is_an_error(text: str) -> None:
    with pytest.raises(EvalError):
        ev(text)


# -- strings -------------------------------------------------------------------------------------


def test_join_is_capped_before_the_string_is_built() -> None:
    with pytest.raises(BudgetExceeded):
        ev(f'join("", [for i in range({MAX_STRING // 10 + 1}) : "abcdefghij"])')
    assert ev('format("%s%s", "x", "y")') == "xy"


def test_every_string_producer_respects_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap = 1024 * 1024  # the 16 MiB limit, made smaller: the same code paths, faster
    monkeypatch.setattr(values, "MAX_STRING", cap)
    big = f'join("", [for i in range({cap // 1024}) : "{"x" * 1024}"])'  # exactly the cap
    producers = {
        "join2": 'join("", [local.big, "x"])',
        "format": 'format("%s%s", local.big, "x")',
        "formatlist": 'formatlist("%s", [local.big, "x"])',
        "replace": 'replace(local.big, "x", "yy")',
        "regex_replace": 'replace(local.big, "/x/", "yy")',
        "template": '"${local.big}x"',
        "template_for": '"%{for i in [1, 2]}${local.big}%{endfor}"',
        "indent": 'indent(1, "\\n${substr(local.big, 0, 10)}")',  # fine
        "jsonencode": "jsonencode([local.big])",
        "yamlencode": "yamlencode([local.big, local.big])",
        "base64": "base64encode(local.big)",
        "urlencode": 'urlencode(replace(local.big, "x", "/"))',
        "upper": 'upper(replace(local.big, "x", "ß"))',  # ß → SS doubles it
    }
    attrs = "\n".join(f"    {k} = {v}" for k, v in producers.items())
    write(
        tmp_path,
        {
            "main.tf": f'locals {{\n  big = {big}\n}}\nresource "aws_vpc" "v" {{\n'
            f"  tags = {{\n{attrs}\n  }}\n}}\n"
            + "".join(
                f'resource "aws_vpc" "{k}" {{\n  tags = {{ x = {v} }}\n}}\n'
                for k, v in producers.items()
            ),
            "other.tf": 'resource "aws_vpc" "neighbour" {\n  cidr_block = "10.0.0.0/16"\n}\n',
        },
    )
    result = scan(tmp_path)
    by_id = {r.id: r for r in result.resources}
    assert by_id["aws_vpc.neighbour"].attrs["CidrBlock"] == "10.0.0.0/16"
    lines = {e.line: e.reason for e in result.errors}
    for i, k in enumerate(producers):
        line = 9 + len(producers) + 3 * i  # each resource "k" is three lines
        if k == "indent":
            assert line not in lines
            continue
        assert "string too long" in lines[line] or (
            k == "regex_replace" and "too many matches" in lines[line]
        ), (k, lines)
        assert isinstance(by_id[f"aws_vpc.{k}"].tags, dict)
    assert all(e.path == str(tmp_path / "main.tf") for e in result.errors)


def test_string_budget_across_the_root(tmp_path: Path) -> None:
    """Each string under the cap, but 100 of them built: the total is bounded too."""
    many = "\n".join(
        f'  s{i} = join("", [for j in range({MAX_STRING // 1024 - 1}) : "{"x" * 1023}{i % 10}"])'
        for i in range(20)
    )
    write(
        tmp_path,
        {
            "main.tf": f"locals {{\n{many}\n}}\n"
            + "".join(f'resource "aws_vpc" "v{i}" {{\n  tags = {{ n = "n${{length(local.s{i})}}" }}'
                      "\n}\n" for i in range(20)),
            "sub/main.tf": 'resource "aws_vpc" "neighbour" {}\n',
        },
    )
    result = scan(tmp_path)
    assert any("characters of strings built" in e.reason for e in result.errors)
    tags = {r.id: r.tags for r in result.resources}
    assert len(tags) == 21 and "aws_vpc.neighbour" in tags
    assert tags["aws_vpc.v0"] == {"n": f"n{MAX_STRING - 1024}"}
    assert tags["aws_vpc.v19"] == {}  # past the budget: Unknown


def test_try_does_not_hide_a_budget(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": 'resource "aws_vpc" "v" {\n  cidr_block = try(join("", [for i in '
            f'range(100000) : "{"x" * (MAX_STRING // 100000 + 1)}"]), "10.0.0.0/16")\n}}\n'
        },
    )
    result = scan(tmp_path)
    assert [(e.line, "string too long" in e.reason) for e in result.errors] == [(2, True)]
    assert isinstance(result.resources[0].attrs["CidrBlock"], Unknown)


# -- instances -----------------------------------------------------------------------------------


def test_module_fan_out_is_bounded(tmp_path: Path) -> None:
    files = {
        "main.tf": 'module "a" {\n  source = "./m1"\n  count  = 10000\n}\n'
        'resource "aws_vpc" "kept" {}\n',
        "m1/main.tf": 'module "b" {\n  source = "../m2"\n  count  = 10000\n}\n',
        "m2/main.tf": 'resource "aws_ebs_volume" "v" {\n  size = 1\n}\n',
        "other/main.tf": 'resource "aws_vpc" "neighbour" {}\n',
    }
    for level in range(8):  # 8 levels of module fan-out, 10 calls each: 10**8 instances
        calls = "".join(
            f'module "c{i}" {{\n  source = "../f{level + 1}"\n}}\n' for i in range(10)
        )
        files[f"f{level}/main.tf"] = calls
    files["f8/main.tf"] = 'resource "aws_ebs_volume" "leaf" {}\n'
    files["fan/main.tf"] = 'module "top" {\n  source = "../f0"\n}\n'
    write(tmp_path, files)
    result = scan(tmp_path)
    ids = {r.id for r in result.resources}
    assert {"aws_vpc.kept", "aws_vpc.neighbour"} <= ids
    assert len(ids) <= 2 * INSTANCE_BUDGET
    errors = {(Path(e.path).parent.name, e.line): e.reason for e in result.errors}
    assert "instances would exceed the limit" in errors[("m1", 3)]
    assert any(p.startswith("f") and "instances would exceed" in r for (p, _), r in errors.items())
    blocks = 4 + 10 * 8
    assert len(result.errors) <= blocks  # one error per block, not one per instance


@pytest.mark.parametrize(
    ("expr", "reason"),
    [
        ("1e308", "out of range"),
        ("pow(10, 400)", "OverflowError"),
        ("1/0", "division by zero"),
        ("1.5", "whole number"),
        ("-1", "out of range"),
        ("1e400", "too large"),
    ],
)
def test_absurd_counts_are_errors_naming_the_line(tmp_path: Path, expr: str, reason: str) -> None:
    write(tmp_path, {"main.tf": f'resource "aws_vpc" "v" {{\n  count = {expr}\n}}\n'
                                'resource "aws_vpc" "w" {}\n'})
    result = scan(tmp_path)
    assert [e.line for e in result.errors] == [2]
    assert reason in result.errors[0].reason
    assert "aws_vpc.w" in {r.id for r in result.resources}


# -- numbers ---------------------------------------------------------------------------------


def test_numbers_leaving_the_evaluator_are_finite_and_plausible(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
locals {
  huge = 100000000000000000000000000000000000000000000000000000000000000000000000000000000
}
resource "aws_ebs_volume" "v" {
  size       = 1e308
  iops       = pow(10, 400)
  throughput = 1e400
  tags = { g = "x${1e300}" }
}
resource "aws_ebs_volume" "a" { size = local.huge * local.huge * local.huge * local.huge }
resource "aws_ebs_volume" "b" { size = tonumber("1e400") }
resource "aws_ebs_volume" "c" { size = jsondecode("[NaN]") }
resource "aws_ebs_volume" "d" { size = jsondecode("1e999") }
resource "aws_ebs_volume" "e" { size = 1e308 * 10 }
resource "aws_ebs_volume" "f" { size = 0 / 0 }
resource "aws_ebs_volume" "h" { size = [local.huge] }
resource "aws_ebs_volume" "ok" {
  size = 1e3
}
""",
            "x.tf.json": '{"resource": {"aws_ebs_volume": {"j": {"size": 1e999}}}}',
        },
    )
    out, result = instance_values([tmp_path])
    v = out["aws_ebs_volume.v"][1]
    for key in ("size", "iops", "throughput"):
        assert isinstance(v[key], Unknown), key
    for name in "abcdef":
        assert isinstance(out[f"aws_ebs_volume.{name}"][1]["size"], Unknown), name
    assert isinstance(out["aws_ebs_volume.h"][1]["size"][0], Unknown)
    assert v["tags"]["g"] == "x1e+300"
    assert out["aws_ebs_volume.ok"][1]["size"] == 1000
    assert any(e.path.endswith("x.tf.json") and "number too large" in e.reason
               for e in result.errors)

    def finite(x: Any) -> None:
        if isinstance(x, float):
            assert math.isfinite(x)
        elif isinstance(x, dict):
            for y in x.values():
                finite(y)
        elif isinstance(x, list):
            for y in x:
                finite(y)

    finite([vals for _, vals in out.values()])
    json.dumps([vals for _, vals in out.values()], default=str, allow_nan=False)


def test_csvdecode_is_an_evaluation_error_or_a_bounded_value() -> None:
    """Python's csv refused a field over 128 KiB with its own exception (an internal error that
    lost the root module); a malformed CSV is terraform's error; a CSV of many short cells is
    bounded by its cells, not its rows."""
    scope = values.literal_scope()
    long_field = "a" * 200_000
    assert evaluate(parse_expression(f'csvdecode("h\\n{long_field}")'), scope) == [
        {"h": long_field}]
    with pytest.raises(values.EvalError, match="csvdecode"):
        evaluate(parse_expression('csvdecode("a,\\"b\\n1")'), scope)
    with pytest.raises(values.BudgetExceeded, match="collection too large"):
        evaluate(parse_expression('csvdecode(join(",", range(100001)))'), scope)
