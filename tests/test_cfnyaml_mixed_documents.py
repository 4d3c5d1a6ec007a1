"""A YAML file of several documents of different formats (a Karpenter NodePool, an eksctl
ClusterConfig, a ParallelCluster configuration, in any order): every document of every format
is read, each finding points at its own document, and a document of a kind gpuaudit does not
read is named in a notice with its file and line (tests/fixtures/cfnyaml_mixed_documents/)."""

from __future__ import annotations

from pathlib import Path

from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.karpenter.reader import read_if_manifests
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cfnyaml_mixed_documents"


def test_every_document_of_every_format_is_read() -> None:
    source = scan_paths([FIXTURES / "cluster.yaml"])
    assert source.errors == []
    spans = {r.id: (r.provenance.start_line, r.provenance.end_line) for r in source.resources}
    assert spans == {"NodePool/gpu": (4, 21), "EC2NodeClass/gpu": (43, 59),
                     "ClusterConfig/training/managedNodeGroups/gpu-od": (29, 33)}
    results = {(f.policy_id, f.resource["id"]): f.status for f in evaluate(source.resources)}
    # the eksctl group after the NodePool is judged (it was dropped), and so is the class
    assert results[("EBS-001", "ClusterConfig/training/managedNodeGroups/gpu-od")] is Status.FAIL
    assert results[("VPC-004", "ClusterConfig/training/managedNodeGroups/gpu-od")] is Status.FAIL
    assert results[("EBS-001", "EC2NodeClass/gpu")] is Status.FAIL
    assert results[("ASG-002", "NodePool/gpu")] is Status.FAIL
    (notice,) = [n for n in source.notices if "not of a kind" in n.message]
    assert notice.line == 35 and "ConfigMap" in notice.message
    assert notice.path.endswith("cluster.yaml")


def test_parallelcluster_then_eksctl() -> None:
    source = scan_paths([FIXTURES / "pcluster-then-eksctl.yaml"])
    assert source.errors == []
    ids = {r.id for r in source.resources}
    assert {"Scheduling/SlurmQueues/gpu", "HeadNode",
            "ClusterConfig/inference/nodeGroups/g5"} <= ids
    results = {(f.policy_id, f.resource["id"]): f.status for f in evaluate(source.resources)}
    assert results[("SPOT-001", "Scheduling/SlurmQueues/gpu")] is Status.FAIL
    assert results[("EBS-001", "ClusterConfig/inference/nodeGroups/g5")] is Status.FAIL
    (notice,) = [n for n in source.notices if "not of a kind" in n.message]
    assert notice.line == 33 and "a list" in notice.message


def test_a_format_read_alone_still_skips_the_others_quietly() -> None:
    result = read_if_manifests(FIXTURES / "cluster.yaml")
    assert result is not None
    assert {r.id for r in result.resources} == {"NodePool/gpu", "EC2NodeClass/gpu"}
    assert result.notices == [] and result.errors == []


def test_a_broken_document_of_a_format_is_an_error_and_the_others_are_read(
        tmp_path: Path) -> None:
    text = (FIXTURES / "cluster.yaml").read_text()
    # a key written twice: that document is an error, the documents around it are read
    path = tmp_path / "cluster.yaml"
    path.write_text(text.replace("  name: training\n", "  name: training\n  name: t2\n", 1))
    source = scan_paths([path])
    (error,) = source.errors
    assert error.path == str(path) and error.line == 27 and "duplicate" in error.reason
    assert {r.id for r in source.resources} == {"NodePool/gpu", "EC2NodeClass/gpu"}
    # a syntax error: what comes before it is read, the error names its line
    path.write_text(text.replace("  name: training\n", "  name: [training\n", 1))
    source = scan_paths([path])
    assert [e.path for e in source.errors] == [str(path)] and source.errors[0].line
    assert "NodePool/gpu" in {r.id for r in source.resources}


def test_yaml_that_only_mentions_a_format_is_not_iac(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("# helm values\nnotes: |\n  apiVersion: karpenter.sh/v1\n  kind: NodePool\n"
                    "replicas: 2\n")
    source = scan_paths([path])
    assert source.resources == [] and source.errors == []


def test_many_documents_of_other_kinds_are_named_within_a_budget(tmp_path: Path) -> None:
    from scanner.sources.yaml_documents.dispatch import MAX_NAMED

    text = (FIXTURES / "cluster.yaml").read_text()
    others = "".join(f"---\napiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\n"
                     for i in range(500))
    path = tmp_path / "many.yaml"
    path.write_text(text + others)
    source = scan_paths([path])
    named = [n for n in source.notices if "not of a kind" in n.message]
    assert len(named) == MAX_NAMED + 1
    assert "481 more documents" in named[-1].message
    assert {"NodePool/gpu", "EC2NodeClass/gpu"} <= {r.id for r in source.resources}
