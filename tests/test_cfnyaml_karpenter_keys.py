"""Requirements on keys that do not bear on the instance type (the OS, the zone, the NodePool's
name, a label of the team's own) never block the judgement of a NodePool's types; the keys that
do (family, size, memory ...) decide it (tests/fixtures/cfnyaml_karpenter_keys/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.compute import node_requirements as nr
from scanner.engine.evaluate import evaluate
from scanner.model import Status, Unknown
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cfnyaml_karpenter_keys"


def _results(path: Path) -> dict[tuple[str, str], Any]:
    source = scan_paths([path])
    assert source.errors == []
    return {(f.policy_id, f.resource["id"]): f for f in evaluate(source.resources)}


def test_os_arch_zone_and_team_labels_do_not_leave_the_gpu_pool_unknown() -> None:
    results = _results(FIXTURES)
    pool = results[("ASG-002", "NodePool/gpu-inference")]
    assert pool.status is Status.PASS, pool.message  # g5 and g6 in three sizes, spot
    assert results[("ASG-002", "NodePool/gpu-single-type")].status is Status.FAIL
    for (pid, rid), f in results.items():
        assert "whether it is GPU compute is not known" not in f.message, (pid, rid)
        if rid.startswith("NodePool/"):
            assert f.status is not Status.ERROR


@pytest.mark.parametrize("key", [
    "topology.kubernetes.io/zone", "karpenter.sh/nodepool", "topology.k8s.aws/zone-id",
    "karpenter.k8s.aws/instance-tenancy", "karpenter.k8s.aws/ec2nodeclass", "team",
    "workload-type"])
def test_keys_that_do_not_bear_on_the_type(key: str) -> None:
    assert not nr.bears_on_type(key)
    base = [("karpenter.k8s.aws/instance-family", "In", ["g5"]),
            ("karpenter.k8s.aws/instance-size", "In", ["xlarge", "2xlarge"])]
    known = nr.parse([{"Key": k, "Operator": op, "Values": v} for k, op, v in
                      [*base, (key, "In", ["linux"])]])
    unknown = nr.parse([{"Key": k, "Operator": op, "Values": v} for k, op, v in base]
                       + [{"Key": key, "Operator": "In", "Values": Unknown("a placeholder")}])
    for reqs in (known, unknown):
        assert nr.gpu_fact(reqs).gpu is True
        bounds = nr.type_bounds(reqs)
        assert (bounds.fewest, bounds.most) == (2, 2)


@pytest.mark.parametrize("key", [
    "node.kubernetes.io/instance-type", "kubernetes.io/arch", "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-size", "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-memory", "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-count", "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-memory", "eks.amazonaws.com/instance-family"])
def test_keys_that_bear_on_the_type(key: str) -> None:
    assert nr.bears_on_type(key)
    # one of them not known: how many types the pool draws from is not known either
    reqs = nr.parse([{"Key": "karpenter.k8s.aws/instance-family", "Operator": "In",
                      "Values": ["g5"]},
                     {"Key": key, "Operator": "In", "Values": Unknown("a placeholder")}])
    assert nr.type_bounds(reqs).fewest == 0


@pytest.mark.parametrize(("op", "values"), [("In", ["linux"]), ("NotIn", ["windows"]),
                                            ("Exists", [])])
def test_linux_admits_every_type(op: str, values: list[str]) -> None:
    reqs = nr.parse([{"Key": "karpenter.k8s.aws/instance-family", "Operator": "In",
                      "Values": ["g5"]},
                     {"Key": "karpenter.k8s.aws/instance-size", "Operator": "In",
                      "Values": ["xlarge", "2xlarge"]},
                     {"Key": "kubernetes.io/os", "Operator": op, "Values": values}])
    assert (nr.type_bounds(reqs).fewest, nr.gpu_fact(reqs).gpu) == (2, True)


def test_an_os_other_than_linux_cannot_be_told() -> None:
    reqs = nr.parse([{"Key": "node.kubernetes.io/instance-type", "Operator": "In",
                      "Values": ["g5.xlarge"]},
                     {"Key": "kubernetes.io/os", "Operator": "In", "Values": ["windows"]}])
    assert nr.type_bounds(reqs).fewest == 0


def test_gpu_memory_decides_far_from_the_threshold() -> None:
    def bounds(op: str, mib: str) -> tuple[int, int | None]:
        b = nr.type_bounds(nr.parse([
            {"Key": "node.kubernetes.io/instance-type", "Operator": "In",
             "Values": ["g5.xlarge", "p4d.24xlarge"]},
            {"Key": "karpenter.k8s.aws/instance-gpu-memory", "Operator": op, "Values": [mib]}]))
        return b.fewest, b.most

    assert bounds("Gt", "30000") == (1, 1)  # the A100 (40 GiB), not the A10G
    assert bounds("Lt", "100000") == (2, 2)
    assert bounds("Gt", "40960") == (0, 1)  # the A100's own size: cannot tell


def test_an_eks_auto_mode_node_class_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "automode.yaml"
    path.write_text("""\
apiVersion: eks.amazonaws.com/v1
kind: NodeClass
metadata:
  name: gpu
spec:
  role: node-role
  subnetSelectorTerms:
    - tags: {kubernetes.io/role/internal-elb: "1"}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef: {group: eks.amazonaws.com, kind: NodeClass, name: gpu}
      requirements:
        - key: eks.amazonaws.com/instance-category
          operator: In
          values: ["g"]
        - key: kubernetes.io/os
          operator: In
          values: ["linux"]
""")
    source = scan_paths([path])
    (notice,) = [n for n in source.notices if "not of a kind" in n.message]
    assert notice.line == 1 and "NodeClass" in notice.message
    (vpc,) = [f for f in evaluate(source.resources) if f.policy_id == "VPC-004"]
    assert vpc.status is Status.UNKNOWN and "EKS Auto Mode NodeClass gpu" in vpc.message
