"""tools/count_gpu_objects.py, the census behind docs/real-repositories.md, on a small tree made
of fixtures in the shapes of the three public repositories (a HyperPod cluster through awscc, an
eksctl ClusterConfig, a Karpenter NodePool with its EC2NodeClass, EKS node groups and Batch
compute environments in CloudFormation): its counts, its reasons, and the block it rewrites."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("count_gpu_objects",
                                                  ROOT / "tools" / "count_gpu_objects.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("count_gpu_objects", module)
    spec.loader.exec_module(module)
    return module


tool = _tool()


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(FIXTURES / "hcl" / "hyperpod_awscc", root / "hyperpod")
    shutil.copytree(FIXTURES / "karpenter" / "policies" / "private_gpu", root / "karpenter")
    (root / "eksctl").mkdir()
    shutil.copy(FIXTURES / "eksctl" / "policies" / "managed.yaml", root / "eksctl")
    (root / "cfn").mkdir()
    shutil.copy(FIXTURES / "cfn" / "awskinds" / "eks_batch_fail.yaml", root / "cfn")
    return root


@pytest.fixture(scope="module")
def census(tree: Path) -> object:
    return tool.census("small", tree)


def _object(census: object, kind: str, ident: str) -> object:
    [found] = [o for o in census.gpu_objects if o.resource.kind == kind and o.resource.id == ident]
    return found


def test_it_counts_objects_and_gpu_compute_per_kind(census: object) -> None:
    fam = tool.family_of
    assert census.objects[(fam("sagemaker.cluster"), "sagemaker.cluster")] == 2
    assert census.gpu[(fam("sagemaker.cluster"), "sagemaker.cluster")] == 2
    assert census.objects[(fam("karpenter.ec2_node_class"), "karpenter.ec2_node_class")] == 1
    assert census.gpu[(fam("karpenter.ec2_node_class"), "karpenter.ec2_node_class")] == 0
    assert census.gpu[("eksctl", "eksctl.node_group")] == 3
    assert sum(census.maybe.values()) == 0
    assert len(census.gpu_objects) == sum(census.gpu.values())
    assert "EBS-002" not in census.policies  # an account setting, not an object's


def test_results_on_what_carries_an_object_count_for_it(census: object) -> None:
    cluster = _object(census, "sagemaker.cluster", "module.cluster.awscc_sagemaker_cluster.this")
    vpc = cluster.verdicts["VPC-001"]
    assert (vpc.category, vpc.worst, vpc.reason) == (tool.JUDGED, "PASS", "on its VPC")
    assert cluster.verdicts["VPC-003"].worst == "FAIL"
    assert cluster.verdicts["EBS-003"].worst == "FAIL"
    pool = _object(census, "karpenter.node_pool", "NodePool/gpu")
    ebs = pool.verdicts["EBS-001"]
    assert ebs.category == tool.JUDGED and ebs.reason.startswith("on its EC2NodeClass")


def test_what_was_not_judged_says_why(census: object) -> None:
    cluster = _object(census, "sagemaker.cluster", "module.cluster.awscc_sagemaker_cluster.this")
    assert cluster.verdicts["EBS-001"].category == tool.BY_DESIGN
    assert cluster.verdicts["VPC-004"].category == tool.BY_DESIGN
    assert cluster.verdicts["SPOT-001"].reason == "HyperPod has no spot option"
    eksctl = [o for o in census.gpu_objects if o.resource.kind == "eksctl.node_group"]
    for o in eksctl:  # subnets named by id: no subnet of the scan
        v = o.verdicts["VPC-001"]  # UNKNOWN on the node group itself: its VPC is not known
        assert (v.category, v.worst) == (tool.JUDGED, "UNKNOWN"), v
        v = o.verdicts["VPC-002"]  # no subnet of the scan to judge (VPC-001 says why)
        assert v.category == tool.NO_INPUT and "is not in the scan" in v.reason, v
    pool = _object(census, "karpenter.node_pool", "NodePool/gpu")
    assert pool.verdicts["RS-001"].category == tool.BY_DESIGN
    assert tool.unexplained([census]) == []


def test_the_tables(census: object) -> None:
    text = tool.render([census])
    assert "| small | SageMaker HyperPod | `sagemaker.cluster` | 2 | 2 | 0 |" in text
    summary = tool.summary_table([census])
    assert summary[0] == f"| policy | small ({len(census.gpu_objects)} GPU objects) |"
    judged = sum(1 for o in census.gpu_objects if o.verdicts["VPC-001"].category == "judged")
    assert judged >= 4  # HyperPod x2, the NodePool, the CloudFormation node group and CE
    [row] = [r for r in summary if r.startswith("| VPC-001 |")]
    assert row.startswith(f"| VPC-001 | **{judged}** judged (")
    [rs] = [r for r in summary if r.startswith("| RS-001 |")]
    assert "no input" in rs and "n/a" in rs  # node groups lack utilization; the rest n/a
    assert "Unexplained" not in text
    assert tool.cell([tool.Verdict(tool.BY_DESIGN), tool.Verdict(tool.NO_INPUT),
                      tool.Verdict(tool.UNEXPLAINED)]) == "1 n/a, 1 no input, 1 ??"


def test_update_rewrites_only_the_generated_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\nprose\n\n{tool.BEGIN}\nold table\n{tool.END}\n\nmore prose\n")
    tool.update(page, "| new |")
    assert page.read_text() == (f"# Title\n\nprose\n\n{tool.BEGIN}\n| new |\n{tool.END}\n\n"
                                "more prose\n")
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    with pytest.raises(SystemExit, match="no <!-- count_gpu_objects:begin -->"):
        tool.update(bare, "x")


def test_the_docs_page_holds_the_block_the_tool_rewrites() -> None:
    text = (ROOT / "docs" / "real-repositories.md").read_text(encoding="utf-8")
    assert text.count(tool.BEGIN) == 1 and text.count(tool.END) == 1
    assert text.index(tool.BEGIN) < text.index(tool.END)
