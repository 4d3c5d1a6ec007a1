"""Fuzzing the HCL source: whatever the bytes, loading never raises, never hangs, and never
hits an internal error ("could not be scanned"); bad input is an InputError."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scanner.model import SourceResult
from scanner.sources.terraform.hcl.reader import load_terraform_dir

VALID = b"""variable "n" {
  type    = number
  default = 2
}
locals {
  tags = merge({ a = "1" }, { b = "${var.n}" })
}
resource "aws_vpc" "v" {
  cidr_block = "10.0.0.0/16"
  tags       = local.tags
}
resource "aws_subnet" "s" {
  count      = var.n
  vpc_id     = aws_vpc.v.id
  cidr_block = cidrsubnet(aws_vpc.v.cidr_block, 8, count.index)
}
resource "aws_launch_template" "lt" {
  dynamic "block_device_mappings" {
    for_each = { a = 1, b = 2 }
    content {
      device_name = "/dev/sd${block_device_mappings.key}"
      ebs {
        volume_size = block_device_mappings.value * 100
        encrypted   = block_device_mappings.key == "a"
      }
    }
  }
}
resource "aws_autoscaling_group" "g" {
  vpc_zone_identifier = [for s in aws_subnet.s : s.id]
  min_size            = try(local.nope, 1)
  max_size            = var.n > 1 ? 4 : 2
}
"""

TOKENS = [
    "resource",
    '"aws_instance"',
    '"x"',
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "=",
    ":",
    ",",
    ".",
    "var",
    "local",
    "count",
    "each",
    "index",
    "value",
    "for",
    "in",
    "if",
    "=>",
    "...",
    "?",
    "&&",
    "||",
    "!",
    "-",
    "+",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    ">",
    "1",
    "2.5",
    "true",
    "null",
    '"s"',
    '"${var.x}"',
    '"%{ if true }a%{ endif }"',
    "<<EOT\nx\nEOT\n",
    "\n",
    " ",
    "# c\n",
    "merge",
    "concat",
    "length",
    "try",
    "cidrsubnet",
    "aws_vpc.v.id",
    "[*]",
    ".*",
    "dynamic",
    "content",
    "module",
    "source",
    '"./m"',
    "tags",
    "ebs",
]

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _load(files: dict[str, bytes]) -> SourceResult:
    with tempfile.TemporaryDirectory() as d:
        for name, data in files.items():
            p = Path(d) / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        result = load_terraform_dir([Path(d)])
    for e in result.errors:
        assert "could not be scanned" not in e.reason, e  # an internal error, not bad input
    return result


@SETTINGS
@given(st.binary(max_size=2000))
def test_random_bytes(data: bytes) -> None:
    _load({"main.tf": data, "ok.tf": b'resource "aws_vpc" "ok" {}\n'})


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=80))
def test_token_soup(tokens: list[str]) -> None:
    result = _load({"main.tf": " ".join(tokens).encode(), "ok.tf": b'resource "aws_vpc" "ok" {}\n'})
    assert "aws_vpc.ok" in {r.id for r in result.resources}


@SETTINGS
@given(st.integers(0, len(VALID) - 1), st.integers(0, 40), st.binary(max_size=20))
def test_mutated_valid_file(pos: int, cut: int, insert: bytes) -> None:
    data = VALID[:pos] + insert + VALID[pos + cut :]
    _load({"main.tf": data})


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS[11:]), min_size=1, max_size=25))
def test_random_expressions_in_a_resource(tokens: list[str]) -> None:
    expr = " ".join(tokens).replace("\n", " ")
    _load(
        {
            "main.tf": (
                f'variable "x" {{ default = [1] }}\n'
                f'resource "aws_vpc" "v" {{\n  cidr_block = {expr}\n}}\n'
            ).encode(),
        }
    )


@SETTINGS
@given(st.text(max_size=300))
def test_random_tfvars_and_json(text: str) -> None:
    _load(
        {
            "main.tf": b'variable "x" {}\nresource "aws_vpc" "v" { tags = { x = var.x } }\n',
            "terraform.tfvars": text.encode("utf-8", "surrogatepass"),
            "extra.tf.json": text.encode("utf-8", "surrogatepass"),
        }
    )
