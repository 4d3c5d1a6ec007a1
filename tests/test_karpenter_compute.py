"""What a NodePool's requirements and an EC2NodeClass's subnet selector mean, on their own."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.compute import node_requirements as nr
from scanner.compute.subnet_selection import select
from scanner.model import Resource, Unknown
from scanner.model.graph import ResourceIndex
from tests.model_builders import res


def reqs(*items: tuple[str, str, list[Any]]) -> nr.Requirements:
    return nr.parse([{"Key": k, "Operator": op, "Values": v} for k, op, v in items])


CT, IT = nr.CAPACITY_TYPE, nr.INSTANCE_TYPE


@pytest.mark.parametrize(("items", "expected"), [
    ((), {"on-demand"}),  # Karpenter's default
    (((CT, "In", ["spot"]),), {"spot"}),
    (((CT, "NotIn", ["spot"]),), {"on-demand", "reserved"}),
    (((CT, "Exists", []),), {"spot", "on-demand", "reserved"}),
    (((CT, "In", ["spot", "on-demand"]), (CT, "NotIn", ["on-demand"])), {"spot"}),
])
def test_capacity_types(items: tuple[Any, ...], expected: set[str]) -> None:
    assert nr.capacity_types(reqs(*items)) == frozenset(expected)


def test_an_unknown_capacity_type_is_unknown() -> None:
    parsed = nr.parse([{"Key": CT, "Operator": "In", "Values": Unknown("var.types")}])
    assert isinstance(nr.capacity_types(parsed), Unknown)


@pytest.mark.parametrize(("items", "gpu"), [
    (((IT, "In", ["p5.48xlarge"]),), True),
    ((("karpenter.k8s.aws/instance-family", "In", ["g5", "g6e"]),), True),
    ((("karpenter.k8s.aws/instance-category", "In", ["p", "g"]),), True),
    ((("karpenter.k8s.aws/instance-gpu-count", "Gt", ["0"]),), True),
    ((("karpenter.k8s.aws/instance-gpu-name", "In", ["h100"]),), True),
    ((("karpenter.k8s.aws/instance-accelerator-name", "In", ["inferentia"]),), True),
    ((("karpenter.k8s.aws/instance-category", "In", ["c", "m", "r"]),), False),
    ((("karpenter.k8s.aws/instance-category", "NotIn",
       ["p", "g", "gr", "dl", "inf", "trn"]),), False),
    ((("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", []),
      ("karpenter.k8s.aws/instance-accelerator-count", "DoesNotExist", [])), False),
    ((), Unknown),  # every type admitted: GPU only for GPU pods
    ((("karpenter.k8s.aws/instance-category", "In", ["c", "g"]),), Unknown),
    ((("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", []),), Unknown),  # Neuron left
])
def test_the_gpu_fact(items: tuple[Any, ...], gpu: Any) -> None:
    fact = nr.gpu_fact(reqs(*items)).gpu
    assert (isinstance(fact, Unknown) if gpu is Unknown else fact is gpu), fact


@pytest.mark.parametrize(("items", "gpu"), [
    ((("eks.amazonaws.com/instance-family", "In", ["g6e"]),), True),
    ((("eks.amazonaws.com/instance-gpu-count", "Gt", ["0"]),), True),
    ((("eks.amazonaws.com/instance-gpu-name", "In", ["l40s"]),), True),
    ((("eks.amazonaws.com/instance-category", "In", ["c", "m", "r"]),), False),
])
def test_eks_auto_mode_keys_are_karpenter_s(items: tuple[Any, ...], gpu: bool) -> None:
    """EKS Auto Mode's NodePools (karpenter.sh/v1) spell the instance labels
    eks.amazonaws.com/instance-*: they decide the GPU fact as karpenter.k8s.aws/instance-* do
    (not "every type admitted", which made a CPU pool maybe GPU compute)."""
    assert nr.gpu_fact(reqs(*items)).gpu is gpu
    assert nr.type_bounds(reqs(*items)) == nr.type_bounds(reqs(*(
        (k.replace("eks.amazonaws.com/", "karpenter.k8s.aws/"), op, v) for k, op, v in items)))


@pytest.mark.parametrize(("items", "fewest", "most"), [
    (((IT, "In", ["p5.48xlarge"]),), 1, 1),
    (((IT, "In", ["g5.xlarge", "g6.xlarge"]),), 2, 2),
    # a named type the other requirements exclude is not counted
    (((IT, "In", ["g5.xlarge", "m5.large"]),
      ("karpenter.k8s.aws/instance-gpu-count", "Gt", ["0"])), 1, 1),
    ((("karpenter.k8s.aws/instance-family", "In", ["p5e"]),), 1, None),
    ((("karpenter.k8s.aws/instance-family", "In", ["g5"]),
      ("karpenter.k8s.aws/instance-size", "In", ["2xlarge"])), 1, 1),
    ((("karpenter.k8s.aws/instance-family", "In", ["g5"]),
      ("karpenter.k8s.aws/instance-size", "In", ["xlarge", "2xlarge"])), 2, 2),
    # a label that cannot be told for any type: nothing is certain
    ((("karpenter.k8s.aws/instance-family", "In", ["g5"]),
      ("karpenter.k8s.aws/instance-network-bandwidth", "Gt", ["1024"])), 0, None),
    # memory (MiB) is known from the catalogue to a few per cent: far from the threshold it
    # decides, an exact value does not
    ((("karpenter.k8s.aws/instance-family", "In", ["g5"]),
      ("karpenter.k8s.aws/instance-size", "In", ["xlarge", "48xlarge"]),
      ("karpenter.k8s.aws/instance-memory", "Gt", ["32768"])), 1, 2),
    ((("karpenter.k8s.aws/instance-family", "In", ["g5"]),
      ("karpenter.k8s.aws/instance-size", "In", ["xlarge"]),
      ("karpenter.k8s.aws/instance-memory", "In", ["16384"])), 0, 1),
])
def test_how_many_types_a_pool_can_draw_from(items: tuple[Any, ...], fewest: int,
                                             most: int | None) -> None:
    bounds = nr.type_bounds(reqs(*items))
    assert (bounds.fewest, bounds.most) == (fewest, most)


def test_cpu_families_are_counted_from_the_ec2_type_list() -> None:
    bounds = nr.type_bounds(reqs(("karpenter.k8s.aws/instance-family", "In", ["c6i", "m6g"]),
                                 ("kubernetes.io/arch", "In", ["arm64"]),
                                 ("karpenter.k8s.aws/instance-hypervisor", "In", ["nitro"])))
    assert bounds.fewest >= 2 and all(t.startswith("m6g.") for t in bounds.examples)


def subnet(rid: str, scope: str = "root", **tags: str) -> Resource:
    s = res("ec2.subnet", rid, scope=scope)
    s.tags = dict(tags)
    return s


def test_tags_are_anded_terms_ored_with_wildcards() -> None:
    a = subnet("a", **{"karpenter.sh/discovery": "ml", "Name": "ml-private-a"})
    b = subnet("b", **{"karpenter.sh/discovery": "ml", "Name": "ml-public-b"})
    c = subnet("c", **{"Name": "other"})
    index = ResourceIndex([a, b, c])
    got = select([{"Tags": {"karpenter.sh/discovery": "ml", "Name": "*private*"}}], "root",
                 index)
    assert got == (a,)
    got = select([{"Tags": {"Name": "other"}}, {"Tags": {"karpenter.sh/discovery": ""}}],
                 "root", index)
    assert {s.id for s in got} == {"a", "b", "c"}


def test_a_term_that_selects_nothing_leaves_the_placement_unknown() -> None:
    a = subnet("a", team="ml")
    got = select([{"Tags": {"team": "ml"}}, {"Tags": {"team": "data"}}], "root",
                 ResourceIndex([a]))
    assert got[0] is a and isinstance(got[1], Unknown) and "team=data" in got[1].reason


def test_subnets_are_found_in_the_one_other_scope_that_declares_them() -> None:
    a = subnet("a", scope="infra/", team="ml")
    assert select([{"Tags": {"team": "ml"}}], "manifests/pool.yaml", ResourceIndex([a])) == (a,)
    b = subnet("b", scope="other/", team="ml")
    (why,) = select([{"Tags": {"team": "ml"}}], "manifests/pool.yaml", ResourceIndex([a, b]))
    assert isinstance(why, Unknown) and "2 places" in why.reason


def test_ids_and_unknown_tags() -> None:
    a = subnet("a")
    assert select([{"Id": "a"}], "root", ResourceIndex([a])) == (a,)
    assert select([{"Id": "subnet-123"}], "root", ResourceIndex([a])) == ("subnet-123",)
    (why,) = select([{"Tags": {"k": Unknown("module.vpc.name")}}], "root", ResourceIndex([a]))
    assert isinstance(why, Unknown) and "module.vpc.name" in why.reason
