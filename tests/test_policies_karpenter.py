"""Each policy that applies to Karpenter NodePools and EC2NodeClasses, on manifests written the
way public repositories write them (tests/fixtures/karpenter/policies/<case>/: the manifests,
and the Terraform or CloudFormation that declares the subnets Karpenter discovers by tag).

The exact (policy, resource, status) results are asserted, so a policy whose question does not
apply (SPOT-001/002: Karpenter sets no spot max price; ASG-001: no on-demand/spot split to
configure; EBS-002: no account setting) must give no result at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policies import all_policies
from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import scan_paths

CASES_DIR = Path(__file__).resolve().parent / "fixtures" / "karpenter" / "policies"
F, P, U = Status.FAIL, Status.PASS, Status.UNKNOWN
ALL = tuple(pid for pid in all_policies() if not pid.startswith("RS-"))

CASES: list[tuple[str, list[tuple[str, str, Status]]]] = [
    ("private_gpu", [
        ("EBS-001", "EC2NodeClass/gpu", P),
        ("EBS-003", "EC2NodeClass/gpu", P),  # kmsKeyID: a customer-managed key
        ("ASG-002", "NodePool/gpu", P),  # g5 and g6 in four sizes, spot and on-demand
        ("VPC-001", "aws_vpc.this", P),
        ("VPC-002", "aws_subnet.private[0]", P),
        ("VPC-002", "aws_subnet.private[1]", P),
        ("VPC-003", "aws_vpc_endpoint.s3", P),
        ("VPC-004", "NodePool/gpu", P),  # private subnets selected by tag
        ("SPOT-003", "NodePool/gpu", U),  # spot; its interruption queue is not read
    ]),
    ("public_gpu", [
        ("EBS-001", "EC2NodeClass/training", F),  # encrypted: false
        ("EBS-003", "EC2NodeClass/training", F),  # /dev/xvdb names the AWS-managed key
        ("ASG-002", "NodePool/p5-spot", F),  # spot only, one instance type
        ("VPC-001", "aws_vpc.main", F),
        ("VPC-004", "NodePool/p5-spot", F),  # public subnet routing to the IGW
        ("SPOT-003", "NodePool/p5-spot", U),  # spot, no rule in the scan, queue not read
        ("NET-001", "NodePool/p5-spot", U),  # EFA per pod request; no node count
    ]),
    ("endpoint_misses_subnet", [
        ("EBS-001", "EC2NodeClass/inference", P),  # Karpenter's default mappings: encrypted
        ("EBS-003", "EC2NodeClass/inference", U),  # ... with the account's default key
        ("VPC-001", "Vpc", P),
        ("VPC-002", "GpuSubnet", F),
        ("VPC-003", "S3Endpoint", F),
        ("VPC-004", "NodePool/inference", F),  # associatePublicIPAddress: true
    ]),
    ("unresolved", [
        ("EBS-001", "EC2NodeClass/default", P),
        ("EBS-003", "EC2NodeClass/default", U),  # the account's default key, not named
        ("VPC-004", "NodePool/gpu-g5", U),  # no subnet in the scan carries its tags
        ("VPC-001", "NodePool/gpu-g5", U),  # so the VPC it runs in is not known either
        ("ASG-002", "NodePool/general", P),  # c, m, r: spot pools of many types
    ]),
    ("terraform", [
        ("EBS-001", "kubectl_manifest.karpenter_node_class", P),
        ("EBS-003", "kubectl_manifest.karpenter_node_class", U),
        ("ASG-002", "kubectl_manifest.karpenter_node_pool", F),
        ("VPC-004", "kubectl_manifest.karpenter_node_pool", P),
        ("ASG-002", "kubernetes_manifest.inferentia_pool", P),
        ("VPC-004", "kubernetes_manifest.inferentia_pool", P),
        ("EBS-001", "helm_release.karpenter_resources_g5/EC2NodeClass/g5-gpu-karpenter", F),
        ("ASG-002", "helm_release.karpenter_resources_g5/NodePool/g5-gpu-karpenter", F),
        ("VPC-004", "helm_release.karpenter_resources_g5/NodePool/g5-gpu-karpenter", P),
        ("VPC-001", "aws_vpc.this", F),  # GPU pools in its subnet, no S3 gateway endpoint
        ("TF-001", "module.eks", U),  # a registry module, not installed: said, not guessed
        ("SPOT-003", "kubectl_manifest.karpenter_node_pool", U),
        ("SPOT-003", "kubernetes_manifest.inferentia_pool", U),
        ("SPOT-003", "helm_release.karpenter_resources_g5/NodePool/g5-gpu-karpenter", U),
    ]),
    ("snapshot", [  # a data volume from snapshotID: its encryption is the snapshot's
        ("EBS-001", "EC2NodeClass/cache", U),  # snapshotID, encrypted unset
        ("EBS-001", "EC2NodeClass/cache-encrypted", P),  # snapshotID, encrypted: true
        ("EBS-001", "EC2NodeClass/scratch", F),  # no snapshot, encrypted: false
        ("EBS-003", "EC2NodeClass/cache", U),  # the account's default key, not named
        ("EBS-003", "EC2NodeClass/cache-encrypted", U),
        ("EBS-003", "EC2NodeClass/scratch", U),
    ]),
    ("spot_interruption_queue", [  # EventBridge rules to Karpenter's queue, in the scan
        ("EBS-001", "EC2NodeClass/gpu", P),
        ("EBS-003", "EC2NodeClass/gpu", U),
        ("ASG-002", "NodePool/gpu-spot", P),
        ("SPOT-003", "NodePool/gpu-spot", P),
        ("VPC-004", "NodePool/gpu-spot", U),  # its subnet is not in the scan
        ("VPC-001", "NodePool/gpu-spot", U),  # nor, then, its VPC
    ]),
]


def _results(case: str) -> list[tuple[str, str, Status]]:
    source = scan_paths([CASES_DIR / case])
    assert source.errors == []
    findings = evaluate(source.resources, policy_ids=ALL)
    return [(f.policy_id, f.resource["id"], f.status) for f in findings]


@pytest.mark.parametrize(("case", "expected"), CASES, ids=[c[0] for c in CASES])
def test_policy_results(case: str, expected: list[tuple[str, str, Status]]) -> None:
    assert sorted(_results(case)) == sorted(expected)


APPLIES = {"EBS-001", "EBS-003", "ASG-002", "VPC-001", "VPC-002", "VPC-003", "VPC-004"}
# NET-001 judges NodePools but can only say UNKNOWN (docs/policies/NET-001.md)
UNKNOWN_ONLY = {"NET-001"}


def test_every_policy_that_applies_has_a_failing_and_a_passing_case() -> None:
    failing = {pid for _, exp in CASES for pid, _, status in exp if status is F}
    passing = {pid for _, exp in CASES for pid, _, status in exp if status is P}
    assert failing >= APPLIES and passing >= APPLIES
    # and the others never judge a Karpenter object
    judged = {pid for _, exp in CASES for pid, rid, _ in exp
              if "NodePool" in rid or "NodeClass" in rid or "manifest" in rid}
    # SPOT-003 judges spot NodePools: PASS on a rule in the scan, else UNKNOWN (Karpenter's
    # interruption queue setting is not read), never FAIL
    assert judged <= APPLIES | UNKNOWN_ONLY | {"SPOT-003"}
    assert {s for _, exp in CASES for pid, _, s in exp if pid == "SPOT-003"} == {P, U}
    assert not {(pid, s) for _, exp in CASES for pid, _, s in exp
                if pid in UNKNOWN_ONLY and s is not Status.UNKNOWN}


def test_a_finding_points_at_the_document_in_a_multi_document_file() -> None:
    source = scan_paths([CASES_DIR / "public_gpu"])
    findings = evaluate(source.resources, policy_ids=["EBS-001", "ASG-002"])
    by_id = {f.resource["id"]: f for f in findings}
    node_class, pool = by_id["EC2NodeClass/training"], by_id["NodePool/p5-spot"]
    assert node_class.location["start_line"] == 3 and node_class.location["end_line"] == 29
    assert pool.location["start_line"] == 31
    assert pool.location["file"].endswith("manifests/karpenter.yaml")
    assert pool.resource["root"].endswith("manifests/karpenter.yaml")


def test_the_terraform_rendered_manifest_reads_the_known_parts_around_the_unknown_ones() -> None:
    source = scan_paths([CASES_DIR / "terraform"])
    node_class = next(r for r in source.resources
                      if r.id == "kubectl_manifest.karpenter_node_class")
    terms = node_class.attrs["SubnetSelectorTerms"]
    assert terms == [{"Tags": {"karpenter.sh/discovery": "llm-serving"}}]
    role = node_class.attrs["Role"]
    assert not isinstance(role, str) and "module.eks" in role.reason
    assert "GPUAUDITHOLE" not in repr(node_class.attrs)
    assert node_class.provenance.start_line == 25
