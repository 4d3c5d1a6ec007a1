"""Each policy that applies to eksctl node groups and ParallelCluster configurations, on files
written the way public repositories write them (tests/fixtures/eksctl/policies,
tests/fixtures/parallelcluster/policies). The exact (policy, resource, status) results are
asserted: a policy whose question does not apply gives no result at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policies import all_policies
from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures"
F, P, U = Status.FAIL, Status.PASS, Status.UNKNOWN
# EBS-003 (off by default) is asserted on its own below
ALL = tuple(pid for pid in all_policies() if not pid.startswith("RS-") and pid != "EBS-003")
NG = "ClusterConfig/{}/{}/{}"
Q = "Scheduling/SlurmQueues/{}"

EKSCTL: list[tuple[str, list[tuple[str, str, Status]]]] = [
    ("unmanaged_pass.yaml", [
        (pid, NG.format("train-mix", "nodeGroups", "gpu-mix"), P)
        for pid in ("ASG-001", "ASG-002", "EBS-001", "SPOT-001", "SPOT-002", "VPC-004",
                    "SPOT-003")]),  # SPOT-003: instancesDistribution.capacityRebalance
    ("unmanaged_fail.yaml", [
        ("ASG-001", NG.format("train", "nodeGroups", "p4d"), F),  # all on-demand
        ("EBS-001", NG.format("train", "nodeGroups", "p4d"), F),  # volumeEncrypted: false
        ("VPC-004", NG.format("train", "nodeGroups", "p4d"), F),  # eksctl's public subnets
        ("NET-001", NG.format("train", "nodeGroups", "p4d"), P),  # efaEnabled
        ("ASG-001", NG.format("train", "nodeGroups", "g5-spot"), F),  # all spot
        ("ASG-002", NG.format("train", "nodeGroups", "g5-spot"), F),
        ("EBS-001", NG.format("train", "nodeGroups", "g5-spot"), P),
        ("SPOT-001", NG.format("train", "nodeGroups", "g5-spot"), F),  # maxPrice 5.0
        ("SPOT-002", NG.format("train", "nodeGroups", "g5-spot"), P),
        ("VPC-004", NG.format("train", "nodeGroups", "g5-spot"), P),
        ("ASG-001", NG.format("train", "nodeGroups", "g6-cheap"), P),
        ("ASG-002", NG.format("train", "nodeGroups", "g6-cheap"), P),
        ("EBS-001", NG.format("train", "nodeGroups", "g6-cheap"), P),
        ("SPOT-001", NG.format("train", "nodeGroups", "g6-cheap"), P),
        ("SPOT-002", NG.format("train", "nodeGroups", "g6-cheap"), F),  # maxPrice 0.1
        ("VPC-004", NG.format("train", "nodeGroups", "g6-cheap"), P),
        ("SPOT-003", NG.format("train", "nodeGroups", "g5-spot"), F),  # no handler
        ("SPOT-003", NG.format("train", "nodeGroups", "g6-cheap"), F),
    ]),
    ("managed.yaml", [
        # spot managed node groups: no max price (SPOT-*), no split (ASG-001); pools only
        ("ASG-002", NG.format("infer", "managedNodeGroups", "g5-spot"), F),
        ("EBS-001", NG.format("infer", "managedNodeGroups", "g5-spot"), F),  # unset: default
        ("VPC-004", NG.format("infer", "managedNodeGroups", "g5-spot"), U),  # existing VPC
        ("ASG-002", NG.format("infer", "managedNodeGroups", "g6-spot"), P),
        ("EBS-001", NG.format("infer", "managedNodeGroups", "g6-spot"), P),
        ("VPC-004", NG.format("infer", "managedNodeGroups", "g6-spot"), U),
        ("EBS-001", NG.format("infer", "managedNodeGroups", "p5"), P),
        ("VPC-004", NG.format("infer", "managedNodeGroups", "p5"), U),
        # EKS drains managed spot nodes itself (capacity rebalancing)
        ("SPOT-003", NG.format("infer", "managedNodeGroups", "g5-spot"), P),
        ("SPOT-003", NG.format("infer", "managedNodeGroups", "g6-spot"), P),
        ("NET-001", NG.format("infer", "managedNodeGroups", "p5"), F),  # 2 nodes, no EFA
    ]),
]

PCLUSTER: list[tuple[str, list[tuple[str, str, Status]]]] = [
    ("pass.yaml", [
        ("EBS-001", "HeadNode", P),  # encrypted by default
        ("ASG-002", Q.format("gpu-spot"), P),
        ("EBS-001", Q.format("gpu-spot"), P),
        ("SPOT-001", Q.format("gpu-spot"), P),
        ("SPOT-002", Q.format("gpu-spot"), P),
        ("VPC-004", Q.format("gpu-spot"), P),
        ("EBS-001", Q.format("compute-gpu"), P),
        ("VPC-004", Q.format("compute-gpu"), P),
        ("NET-001", Q.format("compute-gpu"), P),  # Efa and a placement group
        ("EBS-001", "SharedStorage/HomeEbs", P),  # shared EBS: encrypted by default
        # a cluster configuration cannot declare an EventBridge rule: spot queues fail SPOT-003
        # unless a rule is in the scanned tree beside it
        ("SPOT-003", Q.format("gpu-spot"), F),
    ]),
    ("fail.yaml", [
        ("EBS-001", "HeadNode", F),
        ("ASG-002", Q.format("p5-spot"), F),  # one type, lowest-price by default
        ("EBS-001", Q.format("p5-spot"), F),
        ("SPOT-001", Q.format("p5-spot"), F),  # no SpotPrice: the on-demand price
        ("SPOT-002", Q.format("p5-spot"), P),
        ("VPC-004", Q.format("p5-spot"), F),  # AssignPublicIp: true
        ("NET-001", Q.format("p5-spot"), F),  # MaxCount 4, no Efa, no placement group
        ("NET-001", Q.format("p4d-cheap"), F),  # MaxCount absent: 10
        ("ASG-002", Q.format("p4d-cheap"), P),
        ("EBS-001", Q.format("p4d-cheap"), P),
        ("SPOT-001", Q.format("p4d-cheap"), P),
        ("SPOT-002", Q.format("p4d-cheap"), F),  # SpotPrice 1.0 for a p4d
        ("VPC-004", Q.format("p4d-cheap"), P),
        ("EBS-001", "SharedStorage/scratch", F),
        ("EBS-001", "SharedStorage/datasets", U),  # an existing volume
        ("SPOT-003", Q.format("p5-spot"), F),
        ("SPOT-003", Q.format("p4d-cheap"), F),
    ]),
]

# An eksctl or ParallelCluster file declares no VPC (eksctl creates one from its own template, or
# both name existing subnets by id): VPC-001 is UNKNOWN on every GPU node group and queue (its
# VPC is not known), never silent, never PASS or FAIL.
VPC_NOT_KNOWN = {
    "unmanaged_pass.yaml": [NG.format("train-mix", "nodeGroups", "gpu-mix")],
    "unmanaged_fail.yaml": [NG.format("train", "nodeGroups", g) for g in ("p4d", "g5-spot",
                                                                           "g6-cheap")],
    "managed.yaml": [NG.format("infer", "managedNodeGroups", g) for g in ("g5-spot", "g6-spot",
                                                                           "p5")],
    "pass.yaml": [Q.format("gpu-spot"), Q.format("compute-gpu")],
    "fail.yaml": [Q.format("p5-spot"), Q.format("p4d-cheap")],
}
for _name, _expected in EKSCTL + PCLUSTER:
    _expected.extend(("VPC-001", rid, U) for rid in VPC_NOT_KNOWN[_name])


def _results(path: Path) -> list[tuple[str, str, Status]]:
    source = scan_paths([path])
    assert source.errors == [] and source.resources
    return [(f.policy_id, f.resource["id"], f.status)
            for f in evaluate(source.resources, policy_ids=ALL)]


@pytest.mark.parametrize(("name", "expected"), EKSCTL, ids=[c[0] for c in EKSCTL])
def test_eksctl_policy_results(name: str, expected: list[tuple[str, str, Status]]) -> None:
    assert sorted(_results(FIXTURES / "eksctl" / "policies" / name)) == sorted(expected)


@pytest.mark.parametrize(("name", "expected"), PCLUSTER, ids=[c[0] for c in PCLUSTER])
def test_parallelcluster_policy_results(name: str,
                                        expected: list[tuple[str, str, Status]]) -> None:
    assert sorted(_results(FIXTURES / "parallelcluster" / "policies" / name)) == \
        sorted(expected)


@pytest.mark.parametrize(("cases", "applies"), [
    (EKSCTL, {"ASG-001", "ASG-002", "EBS-001", "NET-001", "SPOT-001", "SPOT-002", "VPC-004",
              "SPOT-003"}),
    (PCLUSTER, {"ASG-002", "EBS-001", "NET-001", "SPOT-001", "SPOT-002", "VPC-004"}),
], ids=["eksctl", "parallelcluster"])
def test_every_policy_that_applies_has_a_failing_and_a_passing_case(cases, applies) -> None:
    failing = {pid for _, exp in cases for pid, _, status in exp if status is F}
    passing = {pid for _, exp in cases for pid, _, status in exp if status is P}
    assert applies <= failing and applies <= passing
    assert {pid for _, exp in cases for pid, _, _ in exp} <= applies | {"SPOT-003", "VPC-001"}


def test_ebs_003_reads_the_kms_keys_of_node_groups_and_queues(tmp_path: Path) -> None:
    (tmp_path / "ng.yaml").write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\n"
        "managedNodeGroups:\n  - name: cmk\n    volumeEncrypted: true\n"
        "    volumeKmsKeyID: arn:aws:kms:us-east-1:111122223333:key/abcd\n"
        "  - name: aws-key\n    volumeEncrypted: true\n"
        "    volumeKmsKeyID: arn:aws:kms:us-east-1:111122223333:alias/aws/ebs\n"
        "  - name: default-key\n    volumeEncrypted: true\n")
    (tmp_path / "pc.yaml").write_text(
        "HeadNode:\n  InstanceType: m5.large\n  LocalStorage:\n    RootVolume:\n"
        "      Encrypted: true\n      KmsKeyId: arn:aws:kms:us-east-1:111122223333:key/ef\n"
        "Scheduling:\n  Scheduler: slurm\n  SlurmQueues:\n    - Name: q\n"
        "      ComputeResources: [{Name: c, InstanceType: g5.xlarge}]\n"
        "      Networking: {SubnetIds: [subnet-1]}\n")
    source = scan_paths([tmp_path])
    got = sorted((f.resource["id"], f.status) for f in
                 evaluate(source.resources, policy_ids=["EBS-003"]))
    # no key named: the account's default EBS key, which nothing here names
    assert got == [("ClusterConfig/c/managedNodeGroups/aws-key", F),
                   ("ClusterConfig/c/managedNodeGroups/cmk", P),
                   ("ClusterConfig/c/managedNodeGroups/default-key", U),
                   ("HeadNode", P), ("Scheduling/SlurmQueues/q", U)]


def test_ebs_001_a_parallelcluster_shared_volume_from_a_snapshot(tmp_path: Path) -> None:
    # a volume from an encrypted snapshot is encrypted whatever Encrypted says: Encrypted: false
    # with a snapshot is not known; left out, ParallelCluster encrypts it (true) all the same
    (tmp_path / "pc.yaml").write_text(
        "HeadNode:\n  InstanceType: m5.large\n  LocalStorage:\n    RootVolume:\n"
        "      Encrypted: true\n"
        "Scheduling:\n  Scheduler: slurm\n  SlurmQueues: []\n"
        "SharedStorage:\n"
        "  - {Name: restored, MountDir: /r, StorageType: Ebs,\n"
        "     EbsSettings: {SnapshotId: snap-0123456789abcdef0, Encrypted: false}}\n"
        "  - {Name: restored-default, MountDir: /d, StorageType: Ebs,\n"
        "     EbsSettings: {SnapshotId: snap-0123456789abcdef0}}\n"
        "  - {Name: restored-encrypted, MountDir: /e, StorageType: Ebs,\n"
        "     EbsSettings: {SnapshotId: snap-0123456789abcdef0, Encrypted: true}}\n"
        "  - {Name: scratch, MountDir: /s, StorageType: Ebs, EbsSettings: {Encrypted: false}}\n")
    source = scan_paths([tmp_path])
    findings = {f.resource["id"]: f for f in evaluate(source.resources, policy_ids=["EBS-001"])}
    assert {rid: f.status for rid, f in findings.items()} == {
        "HeadNode": P, "SharedStorage/restored": U, "SharedStorage/restored-default": P,
        "SharedStorage/restored-encrypted": P, "SharedStorage/scratch": F}
    assert "(EbsSettings.SnapshotId)" in findings["SharedStorage/restored"].message


def test_aws_batch_queues_of_parallelcluster_cap_spot_by_percentage(tmp_path: Path) -> None:
    (tmp_path / "batch.yaml").write_text(
        "Region: us-east-1\nHeadNode:\n  InstanceType: m5.large\nScheduling:\n"
        "  Scheduler: awsbatch\n  AwsBatchQueues:\n"
        "    - Name: full\n      CapacityType: SPOT\n      Networking: {SubnetIds: [subnet-1]}\n"
        "      ComputeResources:\n        - Name: g5\n          InstanceTypes: [g5.xlarge]\n"
        "    - Name: half\n      CapacityType: SPOT\n      Networking: {SubnetIds: [subnet-1]}\n"
        "      ComputeResources:\n        - Name: g5\n          InstanceTypes: [g5.xlarge]\n"
        "          SpotBidPercentage: 50\n")
    source = scan_paths([tmp_path])
    got = sorted((f.policy_id, f.resource["id"], f.status) for f in
                 evaluate(source.resources, policy_ids=["SPOT-001", "SPOT-002"]))
    assert got == [("SPOT-001", "Scheduling/AwsBatchQueues/full", F),  # absent: 100 %
                   ("SPOT-001", "Scheduling/AwsBatchQueues/half", P),
                   ("SPOT-002", "Scheduling/AwsBatchQueues/full", P),
                   ("SPOT-002", "Scheduling/AwsBatchQueues/half", P)]


def test_eksctl_sizes_left_out_take_eksctl_defaults(tmp_path: Path) -> None:
    """eksctl fills an unset minSize with desiredCapacity (else 2), an unset maxSize with
    desiredCapacity (else minSize) and an unset desiredCapacity with minSize: a group of
    ``desiredCapacity: 2`` is fixed at two instances, which cannot hold a 20-40 % split (a
    notice, as for an Auto Scaling group of MaxSize 2), while ``desiredCapacity: 5`` can."""
    (tmp_path / "ng.yaml").write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\n"
        "nodeGroups:\n"
        "  - {name: two, instanceType: g5.xlarge, desiredCapacity: 2}\n"
        "  - {name: min-one, instanceType: g5.xlarge, minSize: 1}\n"
        "  - {name: default, instanceType: g5.xlarge}\n"
        "  - {name: five, instanceType: g5.xlarge, desiredCapacity: 5}\n")
    source = scan_paths([tmp_path])
    found = evaluate(source.resources, policy_ids=["ASG-001"])
    got = sorted((f.resource["id"], f.status) for f in found)
    assert got == [(NG.format("c", "nodeGroups", "five"), F)]
    from scanner.compute import views

    sizes = {r.id: (c.desired.value, c.min.value, c.max.value)
             for r in source.resources
             if (v := views(source.resources).of(r)) is not None and (c := v.capacity)}
    assert sizes == {NG.format("c", "nodeGroups", "two"): (2, 2, 2),
                     NG.format("c", "nodeGroups", "min-one"): (1, 1, 1),
                     NG.format("c", "nodeGroups", "default"): (2, 2, 2),
                     NG.format("c", "nodeGroups", "five"): (5, 5, 5)}


def test_aws_batch_queues_of_parallelcluster_are_judged_on_their_spot_pools(
        tmp_path: Path) -> None:
    """ParallelCluster creates an AWS Batch queue's compute environment without an allocation
    strategy: Batch's BEST_FIT takes the lowest-priced type first, so a SPOT queue is not
    diversified whatever its types; an on-demand queue buys no spot."""
    (tmp_path / "batch.yaml").write_text(
        "Region: us-east-1\nHeadNode:\n  InstanceType: m5.large\nScheduling:\n"
        "  Scheduler: awsbatch\n  AwsBatchQueues:\n"
        "    - Name: one\n      CapacityType: SPOT\n      Networking: {SubnetIds: [subnet-1]}\n"
        "      ComputeResources:\n        - Name: g4dn\n          InstanceTypes: [g4dn.xlarge]\n"
        "    - Name: families\n      CapacityType: SPOT\n"
        "      Networking: {SubnetIds: [subnet-1]}\n"
        "      ComputeResources:\n        - Name: gpus\n          InstanceTypes: [g5, g6]\n"
        "    - Name: od\n      Networking: {SubnetIds: [subnet-1]}\n"
        "      ComputeResources:\n        - Name: gpus\n          InstanceTypes: [g5]\n")
    source = scan_paths([tmp_path])
    found = evaluate(source.resources, policy_ids=["ASG-002"])
    got = sorted((f.resource["id"], f.status) for f in found)
    assert got == [("Scheduling/AwsBatchQueues/families", F),
                   ("Scheduling/AwsBatchQueues/one", F)]
    one = next(f for f in found if f.resource["id"].endswith("/one"))
    assert "at most 1 instance type" in one.message and "lowest-price" in one.message
    families = next(f for f in found if f.resource["id"].endswith("/families"))
    assert "instance type" not in families.message.split(":", 2)[-1]


def test_eksctl_vpc_004_evidence_shows_private_networking_as_written(tmp_path: Path) -> None:
    """In a VPC eksctl creates, privateNetworking decides the public IP: the evidence shows the
    setting as the file writes it (true, false, or not set), and the message says which."""
    (tmp_path / "ng.yaml").write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\n"
        "nodeGroups:\n"
        "  - {name: private, instanceType: g5.xlarge, privateNetworking: true}\n"
        "  - {name: public, instanceType: g5.xlarge, privateNetworking: false}\n"
        "  - {name: unset, instanceType: g5.xlarge}\n")
    source = scan_paths([tmp_path])
    found = {f.resource["name"]: f for f in evaluate(source.resources, policy_ids=["VPC-004"])}
    assert {n: (f.status, f.evidence["PrivateNetworking"]) for n, f in found.items()} == {
        "private": (P, True), "public": (F, False), "unset": (F, None)}
    assert "privateNetworking is true" in found["private"].message
    assert "privateNetworking is false" in found["public"].message
    assert "privateNetworking is not set" in found["unset"].message


def test_asg001_an_eksctl_node_group_saves_only_at_a_split_inside_the_band(
        tmp_path: Path) -> None:
    """The field case: an eksctl nodeGroup of desiredCapacity 2, all on-demand, was booked a
    saving for 0 of 2 on-demand, a split the policy FAILs (0 % is below 20-40 %). No split of 2
    is inside the band: a FAIL with no saving. desiredCapacity 3 saves down to 1 (33 %)."""
    (tmp_path / "ng.yaml").write_text(
        "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\n"
        "nodeGroups:\n"
        "  - {name: two, instanceType: p4d.24xlarge, desiredCapacity: 2, maxSize: 8}\n"
        "  - {name: three, instanceType: p4d.24xlarge, desiredCapacity: 3, maxSize: 8}\n")
    source = scan_paths([tmp_path])
    found = {f.resource["id"]: f for f in evaluate(source.resources, policy_ids=["ASG-001"])}
    two, three = found[NG.format("c", "nodeGroups", "two")], \
        found[NG.format("c", "nodeGroups", "three")]
    assert two.status is F and two.savings is None and two.evidence["target_on_demand"] is None
    assert "no split of 2 instances is inside the band" in two.message
    assert three.status is F and three.evidence["target_on_demand"] == 1
    assert three.savings is not None and "x 2 instances" in three.savings.basis
