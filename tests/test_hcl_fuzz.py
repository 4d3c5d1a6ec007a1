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


# -- hostile evaluation: amplifiers chained, bounded by the budgets ---------------------------

import json  # noqa: E402
import signal  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from scanner.sources.terraform.hcl.values import MAX_STRING  # noqa: E402
from tests.memory_peak import peak_memory  # noqa: E402

# Each step makes the next local from the previous one ({p}); chained, most of them double
# (or worse) what they are given: strings, collections, numbers, work.
AMPLIFIERS = [
    'join("", [{p}, {p}])',
    '"${{{p}}}${{{p}}}"',
    'format("%s%s%s", {p}, {p}, {p})',
    'replace({p}, "a", {p})',
    'replace({p}, "/(a|aa)+$/", "$0$0")',
    '[for i in range(1000) : {p}]',
    "concat({p}, {p})",
    "flatten([{p}, {p}])",
    "setproduct({p}, {p})",
    "jsonencode([{p}, {p}])",
    "yamlencode({{ a = {p}, b = {p} }})",
    'regexall("(a*)*b", {p})',
    'regex("(a+)+$", {p})',
    "{p} * {p} * {p}",
    "pow({p}, 400)",
    "{p} / 0",
    "tonumber({p})",
    'split("", {p})',
    "upper({p})",
    'indent(1000, "\\n${{{p}}}\\n${{{p}}}")',
    "base64encode({p})",
    "csvdecode({p})",
    "jsondecode({p})",
    "length({p})",
    "try({p}, {p})",
    "can({p})",
    "{{ for i, v in {p} : i => v }}",
    'lookup({{ a = {p} }}, "a")',
    'templatefile("t.tpl", {{ x = {p} }})',
    'file("big.txt")',
]
SEEDS = ['"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"', "[1, 2, 3]", "1e308",
         '"1e400"', "range(1000)", '{ a = "x", b = [1, 2] }', '"[1,[2,[3]]]"', "null"]
# a generous bound, from the budgets: a few strings at the cap alive at once (4 bytes per
# character at worst). Measured peaks of the worst cases: 30-85 MiB (tracemalloc), 34-94 MiB
# (resident, tests/memory_peak.py).
MEMORY_BOUND = 8 * 4 * MAX_STRING
CPU_SECONDS = 120  # per case; a hang fails the test instead of blocking it


class _Overtime(Exception):
    pass


@contextmanager
def _bounded() -> Iterator[None]:
    def stop(signum: int, frame: object) -> None:
        raise _Overtime(f"more than {CPU_SECONDS} s of CPU time")

    old = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, CPU_SECONDS)
    try:
        with peak_memory() as peak:
            yield
        assert peak() < MEMORY_BOUND, f"peak {peak():,} bytes"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _hostile_files(seed: str, steps: list[int], fan: list[int]) -> dict[str, bytes]:
    lines = [f"  l0 = {seed}"]
    for i, k in enumerate(steps):
        lines.append(f"  l{i + 1} = " + AMPLIFIERS[k].format(p=f"local.l{i}"))
    last = f"local.l{len(steps)}"
    files = {
        "main.tf": (
            "locals {\n" + "\n".join(lines) + "\n}\n"
            f'resource "aws_ebs_volume" "hostile" {{\n  size = {last}\n'
            f'  tags = {{ a = {last}, b = "${{{last}}}" }}\n}}\n'
            f'resource "aws_ebs_volume" "counted" {{\n  count = length({last})\n}}\n'
            'module "fan" {\n  source = "./f0"\n' + (f"  count = {fan[0]}\n" if fan else "")
            + "}\n"
        ).encode(),
        "ok.tf": b'resource "aws_vpc" "ok" {\n  cidr_block = "10.0.0.0/16"\n}\n',
        "t.tpl": b"%{ for i in range(1000) }${x}${x}%{ endfor }",
        "big.txt": b"a" * (1024 * 1024),
        "other/main.tf": b'resource "aws_vpc" "neighbour" {}\n',
    }
    for level, count in enumerate(fan[1:] + [0]):
        body = (f'module "m" {{\n  source = "../f{level + 1}"\n  count = {count}\n}}\n'
                if count else 'resource "aws_ebs_volume" "leaf" { size = 1 }\n')
        files[f"f{level}/main.tf"] = body.encode()
    if not fan:
        files["f0/main.tf"] = b'resource "aws_ebs_volume" "leaf" { size = 1 }\n'
    return files


HOSTILE = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@HOSTILE
@given(
    st.sampled_from(SEEDS),
    st.lists(st.integers(0, len(AMPLIFIERS) - 1), min_size=1, max_size=28),
    st.lists(st.sampled_from([1, 10, 1000, 10000]), max_size=8),
)
def test_hostile_evaluation_is_bounded(seed: str, steps: list[int], fan: list[int]) -> None:
    """Bounded CPU time and memory per case, no traceback (no internal error), and the
    neighbouring file and root module are still reported."""
    with _bounded():
        result = _load(_hostile_files(seed, steps, fan))
    ids = {r.id for r in result.resources}
    assert {"aws_vpc.ok", "aws_vpc.neighbour"} <= ids
    ok = next(r for r in result.resources if r.id == "aws_vpc.ok")
    assert ok.attrs["CidrBlock"] == "10.0.0.0/16"
    for e in result.errors:
        assert e.path and (e.line is None or e.line >= 1), e


def test_hostile_directory_through_the_cli(tmp_path: Path) -> None:
    """The worst of the amplifiers at once, through `gpuaudit scan`: exit 2 (input errors),
    strict JSON, no traceback, the neighbours reported."""
    steps = [0] * 20 + [5, 6, 8, 9, 14, 17, 11, 12]
    for name, data in _hostile_files(AMPLIFIERS and SEEDS[0], steps, [10000, 10000, 10]).items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    from scanner.cli.main import cli

    res = CliRunner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "-o",
                                   str(tmp_path / "out.json"), "--include-passed", "-q"])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output

    def strict(name: str) -> None:
        raise AssertionError(f"{name} in the report")

    doc = json.loads((tmp_path / "out.json").read_text(), parse_constant=strict)
    ids = {f["resource"]["id"] for f in doc["findings"]}
    assert "aws_vpc.ok" in ids or "aws_vpc.neighbour" in ids or doc["summary"]["resources"] >= 2
    assert any("string too long" in e["reason"] for e in doc["errors"])
