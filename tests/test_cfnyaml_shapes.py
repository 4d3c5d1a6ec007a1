"""Values of the wrong shape (a list where one value is expected, a mapping where a list is,
null) in every YAML format and in CloudFormation: a notice or an input error naming the file
and the key, or UNKNOWN, never an internal error or a policy that fails on the resource.

The sweep takes a real fixture of each format and, at each position of its documents, puts a
nested list, a mapping and null in place of the value written there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SEEDS = [
    ("cfn", FIXTURES / "cfn" / "all_kinds.json"),
    ("eksctl", FIXTURES / "eksctl" / "policies" / "unmanaged_fail.yaml"),
    ("eksctl-managed", FIXTURES / "eksctl" / "policies" / "managed.yaml"),
    ("karpenter", FIXTURES / "karpenter" / "policies" / "public_gpu" / "manifests" /
     "karpenter.yaml"),
    ("parallelcluster", FIXTURES / "parallelcluster" / "policies" / "fail.yaml"),
    ("parallelcluster-in-cfn", FIXTURES / "cfnyaml_pcluster_cfn" / "cdk-pcluster.template.json"),
    ("cfn-names", FIXTURES / "cfnyaml_cfn_names" / "gpu-asg.template.json"),
]
PER_SEED = 250  # positions per seed (spread evenly over the documents)
SHAPES: list[Any] = [[["p3.2xlarge"]], {"Key": ["g5.xlarge"]}, None]


def _positions(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _positions(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _positions(v, (*path, i))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replaced(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replaced(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _documents(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(text)] if path.suffix == ".json" else list(yaml.safe_load_all(text))


def _cases() -> Iterator[Any]:
    for name, seed in SEEDS:
        docs = _documents(seed)
        positions = [(d, p) for d, doc in enumerate(docs) for p in _positions(doc)]
        step = max(1, len(positions) // PER_SEED)
        for d, p in positions[::step][:PER_SEED]:
            yield pytest.param(seed, d, p, id=f"{name}:{d}:{'.'.join(map(str, p))[:80]}")


def _check(path: Path) -> None:
    source = scan_paths([path])
    for e in source.errors:
        assert "internal error" not in e.reason, e
    for f in evaluate(source.resources):
        assert not (f.status is Status.ERROR and "failed on this resource" in f.message), \
            (f.policy_id, f.resource["id"], f.message)


@pytest.mark.parametrize(("seed", "doc", "position"), list(_cases()))
def test_a_value_of_the_wrong_shape_is_never_an_internal_error(
        tmp_path: Path, seed: Path, doc: int, position: tuple[Any, ...]) -> None:
    docs = _documents(seed)
    for n, new in enumerate(SHAPES):
        changed = [(_replaced(v, position, new) if i == doc else v) for i, v in enumerate(docs)]
        out = tmp_path / f"{n}{seed.suffix}"
        if seed.suffix == ".json":
            out.write_text(json.dumps(changed[0]), encoding="utf-8")
        else:
            out.write_text(yaml.safe_dump_all(changed, sort_keys=False), encoding="utf-8")
        _check(out)


BATCH = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  GpuCompute:
    Type: AWS::Batch::ComputeEnvironment
    Properties:
      Type: MANAGED
      ComputeResources:
        Type: SPOT
        MinvCpus: 0
        MaxvCpus: 256
        InstanceTypes: {types}
        Subnets: [subnet-0123456789abcdef0]
        SecurityGroupIds: [sg-0123456789abcdef0]
        InstanceRole: ecsInstanceRole
"""


@pytest.mark.parametrize("types", ['[["p3.2xlarge"]]', "{p3: 2xlarge}", "[p3.2xlarge, [g5]]"])
def test_batch_instance_types_of_the_wrong_shape(tmp_path: Path, types: str) -> None:
    path = tmp_path / "batch.yaml"
    path.write_text(BATCH.format(types=types))
    source = scan_paths([path])
    assert source.errors == []
    (notice,) = [n for n in source.notices if "InstanceTypes" in n.message]
    assert notice.path == str(path) and "GpuCompute" in notice.message
    findings = {f.policy_id: f for f in evaluate(source.resources)}
    assert all(f.status is not Status.ERROR for f in findings.values()), \
        [f.message for f in findings.values()]
    # no type known for certain: the diversity of its pools is not known, never PASS
    assert findings["ASG-002"].status is Status.UNKNOWN


def test_a_scalar_where_a_list_is_expected_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, "
                    "region: us-east-1}\nmanagedNodeGroups:\n  - name: gpu\n    instanceTypes: "
                    "{g5: xlarge}\n    maxSize: [4]\n")
    source = scan_paths([path])
    messages = " ".join(n.message for n in source.notices)
    assert "InstanceTypes" in messages and "MaxSize" in messages
    assert all(n.path == str(path) for n in source.notices)
