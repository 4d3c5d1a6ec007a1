"""Karpenter objects in a Kubernetes manifest that a CloudFormation template applies
(``AWSQS::Kubernetes::Resource``, the manifest as ``!Sub`` text or a mapping) are read by the
Karpenter source's translation, in the template's scope: the NodePool finds its EC2NodeClass
and the template's subnets by tag (tests/fixtures/cfnyaml_manifests_cfn/)."""

from __future__ import annotations

from pathlib import Path

from scanner.engine.evaluate import evaluate
from scanner.model import Status, Unknown
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cfnyaml_manifests_cfn"


def test_the_nodepool_applied_by_the_template_is_judged() -> None:
    source = scan_paths([FIXTURES / "karpenter-quickstart.yaml"])
    assert source.errors == [] and source.notices == []
    by_id = {r.id: r for r in source.resources}
    assert {"GpuNodePool/NodePool/gpu", "GpuNodePool/EC2NodeClass/gpu"} <= set(by_id)
    pool = by_id["GpuNodePool/NodePool/gpu"]
    assert (pool.provenance.start_line, pool.provenance.end_line) == (23, 70)
    assert by_id["GpuNodePool/EC2NodeClass/gpu"].attrs["Role"] == "KarpenterNodeRole-gpu-training"
    results = {(f.policy_id, f.resource["id"]): f.status for f in evaluate(source.resources)}
    assert results[("EBS-001", "GpuNodePool/EC2NodeClass/gpu")] is Status.FAIL
    assert results[("VPC-004", "GpuNodePool/NodePool/gpu")] is Status.PASS  # private subnet
    assert results[("VPC-001", "Vpc")] is Status.FAIL  # GPU pool, no S3 endpoint
    assert results[("ASG-002", "GpuNodePool/NodePool/gpu")] is Status.PASS
    # the Namespace manifest is no object gpuaudit reads
    assert not [r for r in source.resources if r.id.startswith("Namespace/")]


def test_a_part_not_known_is_unknown_and_a_broken_manifest_is_an_error(tmp_path: Path) -> None:
    text = (FIXTURES / "karpenter-quickstart.yaml").read_text()
    path = tmp_path / "t.yaml"
    path.write_text(text.replace("    Default: gpu-training\n", ""))  # no default
    source = scan_paths([path])
    node_class = next(r for r in source.resources if r.id.endswith("EC2NodeClass/gpu"))
    assert isinstance(node_class.attrs["Role"], Unknown)
    results = {(f.policy_id, f.resource["id"]): f.status for f in evaluate(source.resources)}
    assert results[("VPC-004", "GpuNodePool/NodePool/gpu")] is Status.UNKNOWN
    path.write_text(text.replace("          name: gpu\n        spec:", "          name: [gpu\n"
                                 "        spec:", 1))
    source = scan_paths([path])
    (error,) = source.errors
    assert "GpuNodePool" in error.reason and error.line == 23
