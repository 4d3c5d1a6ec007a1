"""The attribute-only splat ``.*`` indexed afterwards, as Terraform 0.11-era modules write it.

``aws_subnet.public.*.id[count.index]`` is ``(aws_subnet.public[*].id)[count.index]``: hclsyntax
carries only attribute steps (and the legacy ``.0``) into a ``.*`` splat, so the index picks one
subnet id from the list. Read as ``[*].id[count.index]`` (indexing each id) it named no subnet
and every GPU instance of such a VPC lost its subnet. The fixture (tests/fixtures/tf_legacy_splat,
plan.json made by real terraform with tools/make_plan_fixtures.sh ../tf_legacy_splat) has the
forms in the root module and in a child module reached through its outputs.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.terraform.hcl.parse import Lit, Traversal, parse_expression
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.sources.terraform.plan.reader import load_plan

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "tf_legacy_splat"
POLICIES = ["VPC-001", "VPC-002", "VPC-004"]
F, P = Status.FAIL, Status.PASS

EXPECTED = {
    ("VPC-001", "aws_vpc.main"): P,
    ("VPC-001", "module.network.aws_vpc.this"): P,
    ("VPC-002", "aws_subnet.private[0]"): P,  # covered by the endpoint: not a FAIL
    ("VPC-002", "aws_subnet.private[1]"): P,
    ("VPC-002", "aws_subnet.public[0]"): F,  # the notebook's: aws_subnet.public.*.id[0]
    ("VPC-002", "module.network.aws_subnet.private[0]"): P,
    ("VPC-002", "module.network.aws_subnet.private[1]"): P,
    ("VPC-002", "module.network.aws_subnet.public[0]"): F,
    ("VPC-004", "aws_instance.notebook"): F,  # public subnet: never PASS
    ("VPC-004", "aws_instance.jupyter"): F,  # module.network.public_subnets[0]
    ("VPC-004", "aws_instance.worker[0]"): P,
    ("VPC-004", "aws_instance.worker[1]"): P,
    ("VPC-004", "aws_instance.trainer[0]"): P,  # element(module.network.private_subnets, i)
    ("VPC-004", "aws_instance.trainer[1]"): P,
}


def _statuses(resources: list) -> dict[tuple[str, str], Status]:
    return {(f.policy_id, f.resource["id"]): f.status
            for f in evaluate(resources, policy_ids=POLICIES)}


@pytest.mark.parametrize("text, ops", [
    ("aws_subnet.public.*.id[count.index]",
     (("a", "public"), ("s", False, (("a", "id"),)), ("i", Traversal("count", (("a", "index"),))))),
    ("a.*.id[0]", (("s", False, (("a", "id"),)), ("i", Lit(0)))),
    ("a.*[0]", (("s", False, ()), ("i", Lit(0)))),
    ("a.*.b[0].c", (("s", False, (("a", "b"),)), ("i", Lit(0)), ("a", "c"))),
])
def test_an_index_after_an_attribute_splat_indexes_the_list(text: str, ops: tuple) -> None:
    expr = parse_expression(text)
    assert isinstance(expr, Traversal)
    assert repr(expr.ops) == repr(ops)


def test_the_full_splat_and_the_legacy_dot_index_stay_inside() -> None:
    full = parse_expression("a[*].b[0]")
    assert isinstance(full, Traversal)
    assert repr(full.ops) == repr((("s", True, (("a", "b"), ("i", Lit(0)))),))
    legacy = parse_expression("a.*.b.0")
    assert isinstance(legacy, Traversal)
    assert repr(legacy.ops) == repr((("s", False, (("a", "b"), ("i", Lit(0)))),))


def test_hcl_links_each_instance_to_the_subnet_it_picks() -> None:
    source = load_terraform_dir([FIXTURE])
    assert not source.errors
    got = _statuses(source.resources)
    assert got == EXPECTED
    instances = {r.id: r for r in source.resources if r.kind == "ec2.instance"}
    assert instances["aws_instance.worker[1]"].get("SubnetId") is not None
    assert "aws_subnet.private[1]" in str(instances["aws_instance.worker[1]"].get("SubnetId"))


def test_plan_reads_the_picked_index_from_the_source() -> None:
    source = load_plan(FIXTURE / "plan.json", source_dir=FIXTURE)
    assert not source.errors
    got = _statuses(source.resources)
    assert got == EXPECTED
    # the public subnet the notebook does not use hosts no GPU: no VPC-002 on it
    assert ("VPC-002", "aws_subnet.public[1]") not in got


def test_plan_alone_names_every_instance_never_a_pass_on_a_public_one(tmp_path: Path) -> None:
    shutil.copy(FIXTURE / "plan.json", tmp_path / "plan.json")
    source = load_plan(tmp_path / "plan.json")
    got = _statuses(source.resources)
    assert got[("VPC-004", "aws_instance.notebook")] == F
    assert got[("VPC-004", "aws_instance.jupyter")] == F
    assert got[("VPC-002", "aws_subnet.private[0]")] == P
    assert got[("VPC-001", "aws_vpc.main")] == P


def test_the_json_syntax_reads_the_same_splat(tmp_path: Path) -> None:
    """``.tf.json`` (written by generators such as CDKTF) carries the same expressions."""
    (tmp_path / "main.tf.json").write_text("""{"resource": {
  "aws_vpc": {"main": {"cidr_block": "10.0.0.0/16"}},
  "aws_internet_gateway": {"gw": {"vpc_id": "${aws_vpc.main.id}"}},
  "aws_subnet": {"public": {"count": 2, "vpc_id": "${aws_vpc.main.id}",
    "cidr_block": "${cidrsubnet(aws_vpc.main.cidr_block, 8, count.index)}",
    "map_public_ip_on_launch": true}},
  "aws_route_table": {"public": {"vpc_id": "${aws_vpc.main.id}",
    "route": [{"cidr_block": "0.0.0.0/0", "gateway_id": "${aws_internet_gateway.gw.id}"}]}},
  "aws_route_table_association": {"public": {"count": 2,
    "subnet_id": "${element(aws_subnet.public.*.id, count.index)}",
    "route_table_id": "${aws_route_table.public.id}"}},
  "aws_instance": {"gpu": {"count": 2, "ami": "ami-0123456789abcdef0",
    "instance_type": "g5.xlarge", "subnet_id": "${aws_subnet.public.*.id[count.index]}",
    "root_block_device": {"encrypted": true}}}}}""")
    got = _statuses(load_terraform_dir([tmp_path]).resources)
    assert got == {("VPC-004", "aws_instance.gpu[0]"): F, ("VPC-004", "aws_instance.gpu[1]"): F,
                   ("VPC-001", "aws_vpc.main"): F}  # no S3 gateway endpoint at all
