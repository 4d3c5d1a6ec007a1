"""The Karpenter source: manifest files and Terraform-applied manifests, hostile input included.

A file that is clearly Karpenter but malformed is an input error naming the file and line; YAML
that is not Karpenter is ignored quietly, even next to a NodePool in one file; no traceback, and
bounded work (an alias bomb stops at the value budget).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.compute import views
from scanner.model import Provenance, SourceKind, Unknown
from scanner.model.graph import ResourceIndex
from scanner.sources.karpenter.reader import read_if_manifests
from scanner.sources.karpenter.terraform import from_terraform
from scanner.sources.scan import NOT_IAC, scan_paths
from scanner.sources.yaml_documents.holes import HoledText

NODE_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: gpu
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot"]
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["p4d.24xlarge"]
"""


def write(tmp_path: Path, text: str | bytes, name: str = "karpenter.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def read(tmp_path: Path, text: str | bytes, name: str = "karpenter.yaml") -> Any:
    return read_if_manifests(write(tmp_path, text, name))


def test_a_nodepool_is_read_with_its_lines(tmp_path: Path) -> None:
    result = read(tmp_path, NODE_POOL)
    (pool,) = result.resources
    assert pool.kind == "karpenter.node_pool" and pool.id == "NodePool/gpu"
    assert pool.provenance.source is SourceKind.KARPENTER
    assert (pool.provenance.start_line, pool.provenance.end_line) == (1, 18)
    assert pool.attrs["Requirements"][1] == {
        "Key": "node.kubernetes.io/instance-type", "Operator": "In", "Values": ["p4d.24xlarge"]}
    assert result.errors == [] and result.notices == []


@pytest.mark.parametrize("text", [
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
    # mentions Karpenter in labels and annotations, but is not a Karpenter object
    "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    karpenter.sh/nodepool: gpu\n",
    # a CRD of Karpenter's chart: apiVersion apiextensions, group karpenter.sh
    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n"
    "  group: karpenter.sh\n  versions:\n  - name: v1\n",
    # the text names a Karpenter apiVersion inside a string, and does not parse
    'description: "see apiVersion: karpenter.sh/v1"\nbroken: [\n',
])
def test_yaml_that_is_not_karpenter_is_ignored_quietly(tmp_path: Path, text: str) -> None:
    assert read(tmp_path, text) is None
    result = scan_paths([tmp_path])
    assert result.resources == [] and result.errors == [] and result.notices == []


def test_a_file_named_on_the_command_line_that_is_not_iac_gets_the_notice(tmp_path: Path) -> None:
    path = write(tmp_path, "apiVersion: v1\nkind: ConfigMap\n", "cm.yaml")
    result = scan_paths([path])
    assert [n.message for n in result.notices] == [NOT_IAC.format(n=1)]


def test_a_configmap_next_to_a_nodepool_is_skipped_and_its_duplicate_key_too(
        tmp_path: Path) -> None:
    text = ("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: 1\n  a: 2\n---\n" + NODE_POOL
            + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: x\n")
    result = read(tmp_path, text)
    assert [r.id for r in result.resources] == ["NodePool/gpu"]
    assert result.resources[0].provenance.start_line == 7
    assert result.errors == []


def test_a_duplicate_key_in_a_nodepool_is_an_error_naming_its_line(tmp_path: Path) -> None:
    text = NODE_POOL.replace("metadata:\n  name: gpu\n", "metadata:\n  name: gpu\n  name: gpu2\n")
    result = read(tmp_path, text)
    assert result.resources == []
    (error,) = result.errors
    assert error.line == 5 and "duplicate key 'name'" in error.reason
    assert error.path.endswith("karpenter.yaml")


def test_a_syntax_error_in_a_clearly_karpenter_file_is_an_error_naming_the_line(
        tmp_path: Path) -> None:
    text = NODE_POOL + "        - key: [unclosed\n"
    result = read(tmp_path, text)
    (error,) = result.errors
    assert error.line == 20 and "YAML syntax error" in error.reason
    assert result.resources == []


def test_documents_before_a_syntax_error_are_still_read(tmp_path: Path) -> None:
    text = NODE_POOL + "---\napiVersion: karpenter.sh/v1\nkind: NodePool\nspec: [\n"
    result = read(tmp_path, text)
    assert [r.id for r in result.resources] == ["NodePool/gpu"]
    assert len(result.errors) == 1 and result.errors[0].line is not None


@pytest.mark.parametrize(("spec", "what"), [
    ("spec: [1, 2]\n", "spec is not a mapping"),
    ("spec:\n  template:\n    spec:\n      requirements: gpu\n", "requirements is not a list"),
    ("spec:\n  template: 3\n", "spec.template is not a mapping"),
])
def test_a_malformed_nodepool_is_an_error_naming_it(tmp_path: Path, spec: str,
                                                    what: str) -> None:
    text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: bad\n" + spec
    result = read(tmp_path, text)
    assert result.resources == []
    (error,) = result.errors
    assert what in error.reason and "NodePool bad" in error.reason
    assert error.line is not None and error.line >= 5


def test_an_alias_bomb_is_an_error_not_a_hang(tmp_path: Path) -> None:
    lines = ["apiVersion: karpenter.sh/v1", "kind: NodePool", "metadata: {name: bomb}",
             "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    result = read(tmp_path, "\n".join(lines) + "\n")
    assert result.resources == []
    assert any("more than 1,000,000 values" in e.reason for e in result.errors)


def test_anchors_and_aliases_are_expanded_as_kubectl_does(tmp_path: Path) -> None:
    text = NODE_POOL.replace('values: ["p4d.24xlarge"]',
                             'values: &types ["p4d.24xlarge", "p5.48xlarge"]')
    text += "        - key: karpenter.k8s.aws/instance-type-copy\n          operator: In\n" \
            "          values: *types\n"
    (pool,) = read(tmp_path, text).resources
    assert pool.attrs["Requirements"][2]["Values"] == ["p4d.24xlarge", "p5.48xlarge"]


def test_a_recursive_alias_is_an_error(tmp_path: Path) -> None:
    text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: &m {name: x, self: *m}\n"
    result = read(tmp_path, text)
    assert result.resources == [] and result.errors


def test_a_helm_chart_template_is_a_notice(tmp_path: Path) -> None:
    text = ("{{- if .Values.nodePool.enabled }}\napiVersion: karpenter.sh/v1\nkind: NodePool\n"
            "metadata:\n  name: {{ .Values.name }}\n{{- end }}\n")
    result = read(tmp_path, text)
    assert result.resources == [] and result.errors == []
    assert "helm template" in result.notices[0].message


def test_the_pre_v1beta1_provisioner_is_a_notice(tmp_path: Path) -> None:
    text = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\n"
    result = read(tmp_path, text)
    assert result.resources == [] and result.errors == []
    assert "removed in v0.32" in result.notices[0].message


def test_a_kind_list_and_json_manifests_are_read(tmp_path: Path) -> None:
    text = ('{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "karpenter.sh/v1", '
            '"kind": "NodePool", "metadata": {"name": "a"}, "spec": {}}]}')
    result = read(tmp_path, text, "list.json")
    assert [r.id for r in result.resources] == ["NodePool/a"]


def test_placeholders_are_unknown_never_literal_instance_types(tmp_path: Path) -> None:
    text = NODE_POOL.replace('values: ["p4d.24xlarge"]', 'values: ["${INSTANCE_TYPE}"]')
    (pool,) = read(tmp_path, text).resources
    values = pool.attrs["Requirements"][1]["Values"]
    assert isinstance(values[0], Unknown) and "INSTANCE_TYPE" in values[0].reason
    view = views(ResourceIndex([pool])).of(pool)
    assert isinstance(view.types.gpu(), Unknown)


@pytest.mark.parametrize("data", [
    b"apiVersion: karpenter.sh/v1\nkind: NodePool\n\x00\x01",
    b"apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: \xff\xfe\xfa}\n",
])
def test_binary_or_undecodable_karpenter_files_are_input_errors(tmp_path: Path,
                                                                data: bytes) -> None:
    result = read(tmp_path, data)
    assert result.resources == [] and len(result.errors) == 1
    assert result.errors[0].line == 3


def test_a_skip_annotation_suppresses_with_its_reason(tmp_path: Path) -> None:
    text = NODE_POOL.replace("metadata:\n  name: gpu\n", "metadata:\n  name: gpu\n  annotations:\n"
                             "    gpuaudit/skip: 'ASG-002:one type reserved by a capacity "
                             "block; VPC-004'\n")
    result = read(tmp_path, text)
    (pool,) = result.resources
    assert [(s.policy_id, s.reason) for s in pool.skips] == [
        ("ASG-002", "one type reserved by a capacity block")]
    assert any("VPC-004" in n.message and "no reason" in n.message for n in result.notices)


# -- from Terraform -----------------------------------------------------------------------------

PROV = Provenance(SourceKind.TERRAFORM_HCL, file="main.tf", start_line=10, end_line=30)


def tf(tf_type: str, address: str, values: dict[str, Any]) -> Any:
    return from_terraform(tf_type, address, values, provenance=PROV, scope="root")


def test_an_unknown_yaml_body_is_a_notice_when_the_address_names_karpenter() -> None:
    found, notices, errors = tf("kubectl_manifest", "kubectl_manifest.karpenter_pool",
                                {"yaml_body": Unknown("local.x is not known")})
    assert found == [] and errors == []
    assert "not scanned" in notices[0].message and notices[0].line == 10
    assert tf("kubectl_manifest", "kubectl_manifest.argo",
              {"yaml_body": Unknown("x")}) == ([], [], [])


def test_a_malformed_yaml_body_is_an_error_naming_the_resource() -> None:
    found, _notices, errors = tf("kubectl_manifest", "kubectl_manifest.pool",
                                 {"yaml_body": NODE_POOL + "  spec: [\n"})
    assert found == []
    assert errors and errors[0].path == "main.tf" and errors[0].line == 10
    assert "kubectl_manifest.pool" in errors[0].reason


def test_a_hole_token_cannot_be_forged_by_the_text() -> None:
    text = HoledText(NODE_POOL.replace("p4d.24xlarge", "GPUAUDITHOLE000000000000N0X"))
    (pool,), _, _ = tf("kubectl_manifest", "kubectl_manifest.pool", {"yaml_body": text})
    assert pool.attrs["Requirements"][1]["Values"] == ["GPUAUDITHOLE000000000000N0X"]
    real = HoledText("")
    token = real.token(Unknown("module.eks.x is known only after apply"))
    real.text = NODE_POOL.replace("p4d.24xlarge", token)
    (pool,), _, _ = tf("kubectl_manifest", "kubectl_manifest.pool", {"yaml_body": real})
    value = pool.attrs["Requirements"][1]["Values"][0]
    assert isinstance(value, Unknown) and "module.eks.x" in value.reason


def test_helm_values_carrying_raw_manifests() -> None:
    import yaml

    values = {"chart": "raw", "values": [
        yaml.safe_dump({"resources": [yaml.safe_load(NODE_POOL)]}),
        "resources2: []\n"]}
    found, _n, errors = tf("helm_release", "helm_release.pools", values)
    assert errors == [] and [r.id for r in found] == ["helm_release.pools/NodePool/gpu"]
    assert tf("helm_release", "helm_release.pools", dict(values, set=[
        {"name": "resources", "value": "none"}]))[0] == []  # set replaces the list


def test_the_karpenter_resources_chart_values_become_a_pool_and_a_class() -> None:
    values = {"chart": "./helm-charts/karpenter-resources", "values": [
        "name: g6\nnodePool:\n  requirements:\n  - key: karpenter.k8s.aws/instance-family\n"
        "    operator: In\n    values: [g6]\nec2NodeClass:\n  subnetSelectorTerms:\n"
        "    id: subnet-0abc\n"],
        "set": [{"name": "ec2NodeClass.amiFamily", "value": "Custom"}]}
    found, _n, errors = tf("helm_release", "helm_release.g6", values)
    assert errors == []
    by_kind = {r.kind: r for r in found}
    assert by_kind["karpenter.ec2_node_class"].attrs["SubnetSelectorTerms"] == [
        {"Id": "subnet-0abc"}]
    assert by_kind["karpenter.ec2_node_class"].attrs["AmiFamily"] == "Custom"
    assert by_kind["karpenter.node_pool"].attrs["NodeClassRef"]["Name"] == "g6"


def test_a_manifest_file_terraform_renders_is_reported_once_from_terraform(
        tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n}\n'
        'resource "kubectl_manifest" "gpu_pool" {\n  yaml_body = templatefile('
        '"${path.module}/nodepool.yaml", { ZONE = module.eks.azs[0] })\n}\n')
    write(tmp_path, NODE_POOL.replace('["spot"]', '["spot"]\n        - key: '
                                      'topology.kubernetes.io/zone\n          operator: In\n'
                                      '          values: ["${ZONE}"]'), "nodepool.yaml")
    result = scan_paths([tmp_path])
    (pool,) = [r for r in result.resources if r.kind == "karpenter.node_pool"]
    assert pool.id == "kubectl_manifest.gpu_pool"
    zone = pool.attrs["Requirements"][1]["Values"][0]
    assert isinstance(zone, Unknown) and "module.eks" in zone.reason
    assert any("reported from there" in n.message for n in result.notices)


def test_no_hole_token_reaches_a_value_that_reads_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n}\n'
        'resource "kubectl_manifest" "pool" {\n  yaml_body = <<-YAML\n'
        + "".join("    " + line + "\n" for line in NODE_POOL.replace(
            "p4d.24xlarge", "${module.eks.gpu_type}").splitlines())
        + '  YAML\n}\n'
        'resource "aws_instance" "copy" {\n'
        '  instance_type = kubectl_manifest.pool.yaml_body\n  subnet_id = "subnet-1"\n}\n')
    result = scan_paths([tmp_path])
    by_id = {r.id: r for r in result.resources}
    assert isinstance(by_id["aws_instance.copy"].attrs["InstanceType"], Unknown)
    value = by_id["kubectl_manifest.pool"].attrs["Requirements"][1]["Values"][0]
    assert isinstance(value, Unknown)
    assert "GPUAUDITHOLE" not in repr([r.attrs for r in result.resources])
