"""A ParallelCluster cluster declared in a CloudFormation template (``Custom::PclusterCluster``,
``Custom::PClusterCluster`` as CDK writes it, ``AWS::ParallelCluster::Cluster``): its
``ClusterConfiguration`` (a mapping, or YAML text through ``!Sub``) is read by the
ParallelCluster source, parameters resolved where known and UNKNOWN where not, and every queue
points at the template's lines (tests/fixtures/cfnyaml_pcluster_cfn/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Ref, Status, Unknown
from scanner.sources.scan import ScanOptions, scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cfnyaml_pcluster_cfn"
F, P, U = Status.FAIL, Status.PASS, Status.UNKNOWN
GPU_QUEUE = "PclusterCluster/Scheduling/SlurmQueues/gpu-spot"


def _scan(path: Path, **opts: Any) -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
    source = scan_paths([path], ScanOptions(**opts))
    assert source.errors == [], source.errors
    results = {(f.policy_id, f.resource["id"]): f for f in evaluate(source.resources)}
    return {r.id: r for r in source.resources}, results


def test_the_gpu_queue_of_a_mapping_configuration_is_judged() -> None:
    resources, results = _scan(FIXTURES / "pcluster-mapping.yaml")
    assert {"PclusterCluster/HeadNode", GPU_QUEUE,
            "PclusterCluster/Scheduling/SlurmQueues/cpu"} <= set(resources)
    queue = resources[GPU_QUEUE]
    assert queue.kind == "parallelcluster.queue"
    assert (queue.provenance.start_line, queue.provenance.end_line) == (26, 69)
    assert queue.provenance.file.endswith("pcluster-mapping.yaml")
    # the parameter's default is the instance type
    assert queue.attrs["ComputeResources"][0]["InstanceType"] == "p4d.24xlarge"
    status = {k: f.status for k, f in results.items()}
    assert status[("SPOT-001", GPU_QUEUE)] is F  # spot without a max price
    assert status[("EBS-001", GPU_QUEUE)] is F  # RootVolume Encrypted: false
    assert status[("ASG-002", GPU_QUEUE)] is F  # one type in its spot pool
    assert status[("VPC-004", GPU_QUEUE)] is U  # the subnet is a parameter without default
    # the CPU queue is not GPU compute: no GPU-only policy judges it
    assert not [k for k in results if k[1].endswith("/cpu") and k[0] in ("VPC-004", "SPOT-001")]
    assert results[("SPOT-001", GPU_QUEUE)].location["start_line"] == 26


def test_a_parameter_given_on_the_command_line_is_used() -> None:
    resources, results = _scan(FIXTURES / "pcluster-mapping.yaml",
                               cfn_params={"GpuInstanceType": "g5.xlarge"})
    assert resources[GPU_QUEUE].attrs["ComputeResources"][0]["InstanceType"] == "g5.xlarge"
    assert "g5.xlarge" in results[("SPOT-001", GPU_QUEUE)].message


def test_a_configuration_written_as_yaml_text() -> None:
    resources, results = _scan(FIXTURES / "pcluster-text.yaml")
    queue = resources["Cluster/Scheduling/SlurmQueues/g5"]
    assert queue.attrs["ComputeResources"][0]["InstanceType"] == "g5.12xlarge"
    (subnet,) = queue.attrs["Networking"]["SubnetIds"]
    assert isinstance(subnet, Unknown) and "SubnetId" in subnet.reason  # no default
    assert isinstance(queue.attrs["Region"], Unknown)  # ${AWS::Region}, no --region
    assert results[("VPC-004", "Cluster/Scheduling/SlurmQueues/g5")].status is F
    assert (queue.provenance.start_line, queue.provenance.end_line) == (11, 36)
    resources, _ = _scan(FIXTURES / "pcluster-text.yaml", region="eu-west-1")
    assert resources["Cluster/Scheduling/SlurmQueues/g5"].attrs["Region"] == "eu-west-1"


def test_cdk_output_links_the_queue_to_the_template_s_subnet() -> None:
    resources, results = _scan(FIXTURES / "cdk-pcluster.template.json")
    queue = resources["HPCCLUSTER/Scheduling/SlurmQueues/h100"]
    assert queue.attrs["Networking"]["SubnetIds"] == [Ref("PrivateSubnet")]
    assert results[("VPC-001", "Vpc")].status is F  # hosts the p5 queue, no S3 endpoint
    assert results[("VPC-004", "HPCCLUSTER/Scheduling/SlurmQueues/h100")].status is P
    assert [s.policy_id for s in queue.skips] == ["EBS-003"]  # the resource's Metadata skip


TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Type:
    Type: String
  Env:
    Type: String
Conditions:
  Never: !Equals ["a", "b"]
  IsProd: !Equals [!Ref Env, prod]
Resources:
  Cluster:
    Type: Custom::PclusterCluster
{condition}    Properties:
      ServiceToken: arn:aws:lambda:us-east-1:111122223333:function:pcluster
      ClusterConfiguration: {config}
"""
CONFIG = ("{HeadNode: {InstanceType: c5.large}, Scheduling: {Scheduler: slurm, SlurmQueues: "
          "[{Name: q, ComputeResources: [{Name: r, InstanceType: %s}], Networking: "
          "{SubnetIds: [subnet-1]}}]}}")


def _template(tmp_path: Path, config: str, condition: str = "") -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE.format(config=config, condition=condition))
    return path


def test_an_instance_type_from_a_parameter_without_default_is_unknown(tmp_path: Path) -> None:
    source = scan_paths([_template(tmp_path, CONFIG % "!Ref Type")])
    queue = next(r for r in source.resources if r.id == "Cluster/Scheduling/SlurmQueues/q")
    assert isinstance(queue.attrs["ComputeResources"][0]["InstanceType"], Unknown)
    findings = evaluate(source.resources)
    assert not [f for f in findings if f.status in (P, F) and f.policy_id == "VPC-004"]


def test_conditions(tmp_path: Path) -> None:
    never = scan_paths([_template(tmp_path, CONFIG % "p4d.24xlarge", "    Condition: Never\n")])
    assert never.resources == []
    maybe = scan_paths([_template(tmp_path, CONFIG % "p4d.24xlarge", "    Condition: IsProd\n")])
    assert maybe.resources and all(isinstance(r.exists, Unknown) for r in maybe.resources)


@pytest.mark.parametrize(("config", "reason"), [
    ("[a, b]", "not a ParallelCluster configuration"),
    ("!Sub \"HeadNode: [oops\"", "YAML syntax error"),
    ("!Sub \"Scheduling: {SlurmQueues: {a: 1}}\\nHeadNode: {}\"", "SlurmQueues is not a list"),
])
def test_a_malformed_configuration_is_an_input_error_naming_the_resource(
        tmp_path: Path, config: str, reason: str) -> None:
    source = scan_paths([_template(tmp_path, config)])
    (error,) = source.errors
    assert reason in error.reason and "Cluster" in error.reason and error.line == 11


@pytest.mark.parametrize(("config", "judged"), [
    # the queue list chosen by a condition that cannot be decided
    ("{HeadNode: {InstanceType: c5.large}, Scheduling: {Scheduler: slurm, SlurmQueues: "
     "!If [IsProd, [{Name: a}], [{Name: b}]]}}", set()),
    # one compute resource list not known: the queue is read, its types not known
    ("{HeadNode: {InstanceType: c5.large}, Scheduling: {Scheduler: slurm, SlurmQueues: "
     "[{Name: q, ComputeResources: !If [IsProd, [], []], Networking: {SubnetIds: [s-1]}}]}}",
     {"Cluster/Scheduling/SlurmQueues/q"}),
    ("{HeadNode: !If [IsProd, {}, {}], Scheduling: !If [IsProd, {}, {}]}", set()),
])
def test_parts_not_known_are_notices_not_errors(tmp_path: Path, config: str,
                                                judged: set[str]) -> None:
    source = scan_paths([_template(tmp_path, config)])
    assert source.errors == []
    assert {r.id for r in source.resources if r.kind == "parallelcluster.queue"} == judged
    if not judged:
        assert any("not known" in n.message and n.line == 11 for n in source.notices)
    findings = evaluate(source.resources)
    assert all(f.status is not Status.ERROR for f in findings)
    if judged:  # its types are not known: UNKNOWN, never PASS or FAIL on them
        (spot,) = [f for f in findings if f.policy_id == "VPC-004"] or [None]
        assert spot is None or spot.status is Status.UNKNOWN


@pytest.mark.parametrize(("rtype", "config", "read"), [
    # CDK names the custom resource as the user likes
    ("Custom::HpcCluster", CONFIG % "p4d.24xlarge", True),
    ("AWS::CloudFormation::CustomResource", CONFIG % "p4d.24xlarge", True),
    ("Custom::HpcCluster", "!ToJsonString " + CONFIG % "p4d.24xlarge", True),
    ("Custom::HpcCluster", '!Sub "HeadNode: {}\\nScheduling: {SlurmQueues: []}"', True),
    # another custom resource with a property of that name is not a cluster
    ("Custom::Other", "{Name: x}", False),
])
def test_a_custom_resource_that_holds_a_configuration(tmp_path: Path, rtype: str, config: str,
                                                       read: bool) -> None:
    path = _template(tmp_path, config)
    path.write_text(path.read_text().replace("Custom::PclusterCluster", rtype))
    source = scan_paths([path])
    assert source.errors == []
    assert bool([r for r in source.resources if r.kind.startswith("parallelcluster.")]) is read
