"""The eksctl and ParallelCluster sources on hostile and unusual input: a file that is clearly
of the format but malformed is an input error naming the file and line; YAML of another kind
is ignored quietly; no traceback; placeholders read as UNKNOWN."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.model import Unknown
from scanner.sources.eksctl.reader import read_if_cluster_config
from scanner.sources.parallelcluster.reader import read_if_cluster_configuration
from scanner.sources.scan import scan_paths

EKSCTL = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata:
  name: demo
  region: us-east-1
managedNodeGroups:
  - name: gpu
    instanceType: g5.2xlarge
    desiredCapacity: 2
"""

PCLUSTER = """\
Region: us-east-1
HeadNode:
  InstanceType: m5.xlarge
  Networking:
    SubnetId: subnet-0123
Scheduling:
  Scheduler: slurm
  SlurmQueues:
    - Name: gpu
      ComputeResources:
        - Name: g5
          InstanceType: g5.12xlarge
      Networking:
        SubnetIds: [subnet-0456]
"""


def write(tmp_path: Path, text: str, name: str = "cfg.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_an_eksctl_node_group_is_read_with_its_lines(tmp_path: Path) -> None:
    result = read_if_cluster_config(write(tmp_path, EKSCTL))
    (ng,) = result.resources
    assert ng.id == "ClusterConfig/demo/managedNodeGroups/gpu"
    assert ng.attrs["InstanceType"] == "g5.2xlarge" and ng.attrs["DesiredCapacity"] == 2
    assert ng.attrs["Managed"] is True and ng.attrs["ClusterName"] == "demo"
    assert (ng.provenance.start_line, ng.provenance.end_line) == (7, 9)


@pytest.mark.parametrize(("text", "line", "what"), [
    (EKSCTL.replace("managedNodeGroups:\n  - name", "managedNodeGroups: oops\nx:\n  - name"), 6,
     "managedNodeGroups is not a list"),
    (EKSCTL.replace("  - name: gpu\n    instanceType: g5.2xlarge\n    desiredCapacity: 2\n",
                    "  - gpu\n"), 7, "managedNodeGroups[0] is not a mapping"),
    (EKSCTL + "    instanceType: [\n", 11, "YAML syntax error"),
    (EKSCTL.replace("  region: us-east-1\n", "  region: us-east-1\n  region: eu-west-1\n"), 6,
     "duplicate key 'region'"),
])
def test_a_malformed_cluster_config_is_an_error_naming_the_line(tmp_path: Path, text: str,
                                                                line: int, what: str) -> None:
    result = scan_paths([write(tmp_path, text)])
    assert [e.line for e in result.errors] == [line]
    assert what in result.errors[0].reason and result.errors[0].path.endswith("cfg.yaml")


def test_eksctl_placeholders_and_bad_values_are_unknown(tmp_path: Path) -> None:
    text = EKSCTL.replace("g5.2xlarge", "${INSTANCE_TYPE}").replace(
        "desiredCapacity: 2", "desiredCapacity: lots")
    result = read_if_cluster_config(write(tmp_path, text))
    (ng,) = result.resources
    assert isinstance(ng.attrs["InstanceType"], Unknown)
    assert isinstance(ng.attrs["DesiredCapacity"], Unknown)
    assert any("not an integer" in n.message for n in result.notices)


@pytest.mark.parametrize("text", [
    "apiVersion: eksctl.io/v1alpha5\nkind: SomethingElse\n",
    "# uses apiVersion: eksctl.io/v1alpha5 in a comment only\nkey: [\n",
    "Scheduling: weekly\nHeadNode: none\n",  # not a ParallelCluster structure
    "Scheduling:\n  cron: '0 1 * * *'\n",
])
def test_yaml_of_another_kind_is_ignored_quietly(tmp_path: Path, text: str) -> None:
    result = scan_paths([write(tmp_path, text)])
    assert result.resources == [] and result.errors == []


def test_a_parallelcluster_configuration_is_read(tmp_path: Path) -> None:
    result = read_if_cluster_configuration(write(tmp_path, PCLUSTER))
    by_id = {r.id: r for r in result.resources}
    assert set(by_id) == {"HeadNode", "Scheduling/SlurmQueues/gpu"}
    queue = by_id["Scheduling/SlurmQueues/gpu"]
    assert queue.attrs["Scheduler"] == "slurm" and queue.attrs["Region"] == "us-east-1"
    assert queue.provenance.start_line == 9


@pytest.mark.parametrize(("text", "line", "what"), [
    (PCLUSTER.replace("  SlurmQueues:\n    - Name: gpu",
                      "  SlurmQueues: gpu\n  X:\n    - Name: gpu"),
     8, "SlurmQueues is not a list"),
    (PCLUSTER.replace("      ComputeResources:\n        - Name: g5\n"
                      "          InstanceType: g5.12xlarge\n", "      ComputeResources: 3\n"),
     10, "ComputeResources is not a list"),
    (PCLUSTER + "  SlurmSettings: {\n", 16, "YAML syntax error"),
])
def test_a_malformed_parallelcluster_configuration_is_an_error(tmp_path: Path, text: str,
                                                               line: int, what: str) -> None:
    result = scan_paths([write(tmp_path, text)])
    assert [e.line for e in result.errors] == [line]
    assert what in result.errors[0].reason


def test_an_alias_bomb_in_a_cluster_configuration_is_an_error(tmp_path: Path) -> None:
    lines = [PCLUSTER, "X0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"X{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    result = scan_paths([write(tmp_path, "\n".join(lines) + "\n")])
    assert result.resources == []
    assert any("more than 1,000,000 values" in e.reason for e in result.errors)


def test_a_skip_tag_on_a_queue_and_on_a_node_group(tmp_path: Path) -> None:
    pc = PCLUSTER.replace("    - Name: gpu\n", "    - Name: gpu\n      Tags:\n"
                          "        - Key: gpuaudit:skip\n"
                          "          Value: VPC-004:subnet is private by design\n")
    (queue,) = [r for r in read_if_cluster_configuration(write(tmp_path, pc)).resources
                if r.kind == "parallelcluster.queue"]
    assert [(s.policy_id, s.reason) for s in queue.skips] == [
        ("VPC-004", "subnet is private by design")]
    ng = EKSCTL + "    tags:\n      gpuaudit:skip: 'EBS-001'\n"
    result = read_if_cluster_config(write(tmp_path, ng, "ng.yaml"))
    assert result.resources[0].skips == ()
    assert any("no reason" in n.message for n in result.notices)


HELM_NODE_CLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms:
    - alias: al2023@latest
  role: {{ .Values.role }}
"""


@pytest.mark.parametrize(("name", "text", "line", "action"), [
    # a Helm chart template: an unquoted action is a flow mapping to YAML
    ("chart/templates/ec2nodeclass.yaml", HELM_NODE_CLASS, 8, "{{ .Values.role }}"),
    # a Jinja-templated ParallelCluster configuration: an action and a {% %} statement
    ("pcluster.config.yaml", "Image:\n  Os: {{ os }}\n" + PCLUSTER, 2, "{{ os }}"),
    ("pcluster.config.yaml", PCLUSTER.replace(
        "    - Name: gpu\n", "{% for q in queues %}\n    - Name: gpu\n") + "{% endfor %}\n",
     9, "{% for q in queues %}"),
])
def test_a_template_that_does_not_parse_is_not_read_and_says_so(
        tmp_path: Path, name: str, text: str, line: int, action: str) -> None:
    """YAML only once rendered: never an input error about its YAML, never judged; a notice
    naming the file and the line says it was not read because it is a template."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if "chart" in name:
        (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1\n")
    path.write_text(text)
    result = scan_paths([tmp_path])
    assert result.errors == [] and result.resources == []
    (notice,) = [n for n in result.notices if n.path == str(path)]
    assert notice.line == line
    assert notice.message.startswith(f"not read, a template: {action} (line {line})")
    assert "render it" in notice.message


def test_a_template_whose_actions_parse_reads_them_as_unknown(tmp_path: Path) -> None:
    """A quoted action parses: the file is read, each action's value UNKNOWN (never its
    literal text), and a notice says it is a template."""
    text = HELM_NODE_CLASS.replace("{{ .Values.role }}", '"{{ .Values.role }}"')
    text += '  associatePublicIPAddress: "{{ .Values.public }}"\n'
    path = write(tmp_path, text, "nc.yaml")
    result = scan_paths([path])
    assert result.errors == []
    (nc,) = result.resources
    assert isinstance(nc.attrs["AssociatePublicIpAddress"], Unknown)
    assert isinstance(nc.attrs["Role"], Unknown)
    assert not any(isinstance(v, str) and "{{" in v for v in nc.attrs.values())
    (notice,) = result.notices
    assert (notice.path, notice.line) == (str(path), 8)
    assert notice.message.startswith("a template ({{ .Values.role }} at line 8)")
    assert "UNKNOWN" in notice.message


@pytest.mark.parametrize("text", [
    HELM_NODE_CLASS.replace("{{ .Values.role }}", "[KarpenterRole"),  # no template action
    # an action in a comment only: a real syntax error is still the file's
    "# rendered from {{ values }}\n" + PCLUSTER + "  SlurmSettings: {\n",
    # a CloudFormation dynamic reference is a value, not a template action
    PCLUSTER.replace("subnet-0123", "'{{resolve:ssm:/net/subnet}}'") + "  SlurmSettings: {\n",
])
def test_a_syntax_error_in_a_file_that_is_no_template_is_still_an_input_error(
        tmp_path: Path, text: str) -> None:
    result = scan_paths([write(tmp_path, text)])
    assert len(result.errors) == 1 and "template" not in result.errors[0].reason
    assert not any(n.message.startswith("not read, a template") for n in result.notices)


def test_a_scan_of_templates_never_looks_clean_nor_judges_action_text(tmp_path: Path) -> None:
    """End to end: a template not read is counted in the coverage line and the table's first
    line; a quoted action is UNKNOWN in every policy that reads it, never PASS/FAIL on its
    literal text."""
    import json

    from click.testing import CliRunner

    from scanner.cli.main import cli

    (tmp_path / "jinja").mkdir()
    (tmp_path / "jinja" / "pcluster.config.yaml").write_text("Image:\n  Os: {{ os }}\n" + PCLUSTER)
    runner = CliRunner()
    table = runner.invoke(cli, ["scan", str(tmp_path / "jinja"), "--fail-on", "none"])
    said = " ".join(table.output.split())
    assert "No failing" not in said
    assert said.startswith("Not everything was read: 1 template not read (see Notices)")
    assert "0 unknown; 1 template not read (render first; see the notices)" in said
    quoted = PCLUSTER.replace("InstanceType: g5.12xlarge", 'InstanceType: "{{ itype }}"')
    (tmp_path / "q.yaml").write_text(quoted)
    out = runner.invoke(cli, ["scan", str(tmp_path / "q.yaml"), "--format", "json",
                              "--include-passed", "--fail-on", "none"])
    doc = json.loads(out.stdout)
    queue = [f for f in doc["findings"] if f["resource"]["id"] == "Scheduling/SlurmQueues/gpu"]
    on_type = [f for f in queue if "{{ itype }}" in f["message"]]
    assert on_type and all(f["status"] == "UNKNOWN" for f in on_type)
    assert not any(f["status"] in ("PASS", "FAIL") and "{{" in json.dumps(f) for f in queue)
    assert any(n["message"].startswith("a template ({{ itype }}") for n in doc["notices"])


def test_a_jinja_cloudformation_template_is_not_read_and_says_so(tmp_path: Path) -> None:
    """A CloudFormation template with a Jinja statement where it fails to parse is a template
    of a template: a notice naming the action and its line, no input error. A syntax error
    away from any action is still an input error."""
    from scanner.sources.scan import scan_paths

    body = ("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  Dir:\n"
            "    Type: AWS::DirectoryService::SimpleAD\n    Properties:\n"
            "      Name: corp.example.com\n"
            "      {% if directory_type == \"SimpleAD\" %}\n      Size: Small\n"
            "      {% endif %}\n")
    (tmp_path / "jinja.yaml").write_text(body)
    (tmp_path / "broken.yaml").write_text(
        "AWSTemplateFormatVersion: '2010-09-09'\nDescription: \"{{ not here }}\"\n"
        "Resources:\n  V:\n    Type: AWS::EC2::Volume\n    Properties: {Size: [1, 2\n")
    result = scan_paths([tmp_path])
    assert [e.path for e in result.errors] == [str(tmp_path / "broken.yaml")]
    said = [n for n in result.notices if n.path == str(tmp_path / "jinja.yaml")]
    assert len(said) == 1 and said[0].message.startswith("not read, a template: {% if")
    assert "(line 7)" in said[0].message


def test_a_cluster_custom_resource_without_its_configuration_is_a_notice(
        tmp_path: Path) -> None:
    from scanner.sources.scan import scan_paths

    (tmp_path / "t.yaml").write_text(
        "AWSTemplateFormatVersion: '2010-09-09'\nParameters:\n  Token: {Type: String}\n"
        "Resources:\n  Cluster:\n    Type: Custom::PclusterCluster\n"
        "    Properties: {ServiceToken: !Ref Token, ClusterName: c}\n")
    result = scan_paths([tmp_path])
    assert result.errors == []
    assert any("has no ClusterConfiguration" in n.message and "not judged" in n.message
               for n in result.notices)
