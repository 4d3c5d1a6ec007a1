"""A value known only after apply inside an object attribute stays at its leaf.

awscc writes nested properties as object attributes: ``vpc_config = {security_group_ids =
[...], subnets = [...]}``. In a plan terraform keeps the object's known leaves, nulls an unknown
list element and leaves out an unknown member; the configuration has only the references of
the whole expression. The known subnets must still place the cluster in its VPC (VPC-001 on
that VPC), and a verdict resting on an unknown member (the KMS key of HyperPod instance storage)
is UNKNOWN naming it, never the verdict for an absent value (an AWS owned key: EBS-003 FAIL).
Fixture: tests/fixtures/tf_object_unknown (its add_awscc.py says how the plan was made).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Ref, Status, Unknown
from scanner.sources.terraform.hcl.expressions import evaluate as evaluate_expression
from scanner.sources.terraform.hcl.parse import parse_expression
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.sources.terraform.hcl.values import literal_scope
from scanner.sources.terraform.plan.reader import load_plan

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "tf_object_unknown"
F, P, U = Status.FAIL, Status.PASS, Status.UNKNOWN

EXPECTED = {
    ("VPC-001", "aws_vpc.hyperpod"): F,  # no S3 gateway endpoint in the clusters' VPC
    ("EBS-003", "awscc_sagemaker_cluster.hyperpod"): F,  # no storage config: AWS owned key
    ("EBS-003", "awscc_sagemaker_cluster.mixed"): F,
    ("EBS-003", "awscc_sagemaker_cluster.cmk"): P,  # aws_kms_key.hyperpod, known after apply
    ("EBS-003", "awscc_sagemaker_cluster.key_from_local"): U,  # which key: not known
}


def _results(resources: list) -> dict[tuple[str, str], Any]:
    return {(f.policy_id, f.resource["id"]): f
            for f in evaluate(resources, policy_ids=["VPC-001", "VPC-002", "EBS-003"])}


def _sources(tmp_path: Path) -> list[tuple[str, Any]]:
    alone = tmp_path / "plan.json"
    shutil.copy(FIXTURE / "plan.json", alone)
    return [("hcl", load_terraform_dir([FIXTURE])),
            ("plan", load_plan(FIXTURE / "plan.json", source_dir=FIXTURE)),
            ("plan alone", load_plan(alone))]


def test_known_subnets_place_the_cluster_and_unknown_leaves_stay_unknown(tmp_path: Path) -> None:
    for name, source in _sources(tmp_path):
        assert not source.errors, name
        got = _results(source.resources)
        assert {k: f.status for k, f in got.items()} == EXPECTED, name
        msg = got[("EBS-003", "awscc_sagemaker_cluster.key_from_local")].message
        assert "KMS key" in msg and "not known" in msg, (name, msg)


def test_plan_fills_each_leaf_of_the_object() -> None:
    source = load_plan(FIXTURE / "plan.json", source_dir=FIXTURE)
    by_id = {r.id: r for r in source.resources}
    cluster = by_id["awscc_sagemaker_cluster.hyperpod"]
    assert cluster.get("VpcConfig") == {
        "SecurityGroupIds": [Ref("aws_security_group.efa", "id")],
        "Subnets": [Ref("aws_subnet.private", "id")]}
    # the known members of the instance group are all there
    group = cluster.get("InstanceGroups")[0]
    assert group["InstanceType"] == "ml.p5.48xlarge" and group["InstanceCount"] == 2
    ebs = by_id["awscc_sagemaker_cluster.key_from_local"].get("InstanceGroups")[0][
        "InstanceStorageConfigs"][0]["EbsVolumeConfig"]
    assert ebs["RootVolume"] is True and ebs["VolumeSizeInGB"] == 500
    assert isinstance(ebs["VolumeKmsKeyId"], Unknown)
    assert "volume_kms_key_id" in ebs["VolumeKmsKeyId"].reason
    cmk = by_id["awscc_sagemaker_cluster.cmk"].get("InstanceGroups")[0][
        "InstanceStorageConfigs"][0]["EbsVolumeConfig"]
    assert cmk["VolumeKmsKeyId"] == Ref("aws_kms_key.hyperpod", "arn")


def test_a_known_element_beside_an_unknown_one_in_a_plan_list(tmp_path: Path) -> None:
    """``subnets = ["subnet-0abc", aws_subnet.private.id]``: the known id stays, the null
    element becomes the subnet resource."""
    import json

    doc = json.loads((FIXTURE / "plan.json").read_text())
    for r in doc["planned_values"]["root_module"]["resources"]:
        if r["address"] == "awscc_sagemaker_cluster.mixed":
            r["values"]["vpc_config"]["subnets"] = ["subnet-0abc", None]
    (tmp_path / "plan.json").write_text(json.dumps(doc))
    source = load_plan(tmp_path / "plan.json")
    mixed = {r.id: r for r in source.resources}["awscc_sagemaker_cluster.mixed"]
    assert mixed.get("VpcConfig")["Subnets"] == ["subnet-0abc",
                                                 Ref("aws_subnet.private_b", "id")]


U_LEAF = Unknown("var.u has no value")
R_LEAF = Ref("aws_subnet.a")


@pytest.mark.parametrize(("text", "value"), [
    ("{ for k, v in {a = u, b = 1} : k => v }", {"a": U_LEAF, "b": 1}),
    ("[for s in [r, u] : s]", [R_LEAF, U_LEAF]),
    ('tomap({a = u, b = "x"})', {"a": U_LEAF, "b": "x"}),
    ("{security_group_ids = [u], subnets = [r]}.subnets", [R_LEAF]),
    ("merge({a = u}, {b = r})", {"a": U_LEAF, "b": R_LEAF}),
    ('zipmap(["a", "b"], [r, u])', {"a": R_LEAF, "b": U_LEAF}),
    ("values({a = u, b = 1})", [U_LEAF, 1]),
])
def test_hcl_keeps_unknown_at_the_leaf(text: str, value: Any) -> None:
    got = evaluate_expression(parse_expression(text), literal_scope({"u": U_LEAF, "r": R_LEAF}))
    assert got == value
