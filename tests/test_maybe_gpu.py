"""Compute whose instance types are not known (a variable without a value, a type read from a
data source, an attribute requirement that may ask for GPUs) may be GPU compute. The policies
that judge the network GPU compute runs in (VPC-001, VPC-002, VPC-003) say UNKNOWN where such
compute alone would decide, naming it and why: not silence (a nightly audit would read "no
finding" as compliant), not PASS or FAIL (it may not be GPU compute at all)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Ref, Status, Unknown
from scanner.sources.scan import scan_paths
from tests.test_maybe_resources import gpu, network, s3_endpoint, without

TYPE_NOT_KNOWN = Unknown("var.instance_type has no value")


def typed(rid: str, instance_type: Any) -> Any:
    r = gpu(rid)
    r.attrs["InstanceType"] = instance_type
    return r


def maybe_gpu(rid: str = "maybe_gpu") -> Any:
    return typed(rid, TYPE_NOT_KNOWN)


def cpu(rid: str = "cpu") -> Any:
    return typed(rid, "m5.large")


def statuses(resources: list[Any], policy: str) -> dict[str, Any]:
    return {f.resource["id"]: f for f in evaluate(resources, policy_ids=[policy])}


@pytest.mark.parametrize("endpoint, would", [(False, "would fail"), (True, "would pass")])
def test_vpc001_compute_that_may_be_gpu_is_unknown_not_silence(endpoint: bool, would: str):
    rs = [*network(endpoint=endpoint), maybe_gpu()]
    found = statuses(rs, "VPC-001")["vpc"]
    assert found.status is Status.UNKNOWN, found.message
    assert "whether maybe_gpu launches GPUs is not known" in found.message
    assert "var.instance_type has no value" in found.message and would in found.message


def test_vpc001_negatives_cpu_compute_stays_silent_and_certain_gpu_decides():
    assert statuses([*network(endpoint=False), cpu()], "VPC-001") == {}
    found = statuses([*network(endpoint=False), maybe_gpu(), gpu("sure")], "VPC-001")["vpc"]
    assert found.status is Status.FAIL and "sure" in found.message
    assert "maybe_gpu" not in found.message
    found = statuses([*network(endpoint=True), maybe_gpu(), gpu("sure")], "VPC-001")["vpc"]
    assert found.status is Status.PASS


def test_vpc002_a_subnet_of_compute_that_may_be_gpu_is_unknown():
    rs = [*network(endpoint=False), s3_endpoint(RouteTableIds=[Ref("other")]), maybe_gpu()]
    found = statuses(rs, "VPC-002")["sub"]
    assert found.status is Status.UNKNOWN and "launches GPUs is not known" in found.message
    # negative: the same network with CPU compute is not judged, with GPU compute it fails
    assert "sub" not in statuses(without(rs, "maybe_gpu") + [cpu()], "VPC-002")
    assert statuses(without(rs, "maybe_gpu") + [gpu()], "VPC-002")["sub"].status is Status.FAIL


def test_a_terraform_instance_whose_type_has_no_value(tmp_path: Path):
    """End to end from HCL: the type is a variable with no default and no tfvars."""
    (tmp_path / "main.tf").write_text("""
variable "instance_type" {}
resource "aws_vpc" "ml" { cidr_block = "10.0.0.0/16" }
resource "aws_subnet" "a" {
  vpc_id     = aws_vpc.ml.id
  cidr_block = "10.0.1.0/24"
}
resource "aws_instance" "trainer" {
  ami           = "ami-12c6146b"
  instance_type = var.instance_type
  subnet_id     = aws_subnet.a.id
}
""")
    source = scan_paths([tmp_path])
    found = {(f.policy_id, f.resource["id"]): f for f in evaluate(source.resources)}
    vpc = found[("VPC-001", "aws_vpc.ml")]
    assert vpc.status is Status.UNKNOWN
    assert "aws_instance.trainer launches GPUs is not known" in vpc.message
    assert all(f.status is not Status.PASS and f.status is not Status.FAIL
               for (pid, _), f in found.items() if pid.startswith("VPC-00") and pid != "VPC-004")
    # negative: the same with a CPU type given has no VPC-001 result at all
    (tmp_path / "terraform.tfvars").write_text('instance_type = "m5.large"\n')
    source = scan_paths([tmp_path])
    assert not [f for f in evaluate(source.resources) if f.policy_id == "VPC-001"]
