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
