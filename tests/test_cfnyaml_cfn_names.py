"""A launch template and the groups that name it with the same expression of values not known
statically but fixed per stack (``!Sub "${AWS::StackName}-gpu"``, a ``!Join`` of
``AWS::StackName``, a parameter without a default) are linked: the same expression is the same
string once deployed (tests/fixtures/cfnyaml_cfn_names/, YAML short form and JSON long form)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Ref, Status
from scanner.sources.scan import ScanOptions, scan_paths

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cfnyaml_cfn_names"
F, P, U = Status.FAIL, Status.PASS, Status.UNKNOWN


def _results(path: Path, **opts: str) -> dict[tuple[str, str], object]:
    source = scan_paths([path], ScanOptions(**opts))  # type: ignore[arg-type]
    assert source.errors == []
    return {(f.policy_id, f.resource["id"]): f for f in evaluate(source.resources)}


@pytest.mark.parametrize("region", [None, "us-west-2"])
def test_groups_named_after_the_stack_launch_from_their_template(region: str | None) -> None:
    results = _results(FIXTURES, **({"region": region} if region else {}))
    status = {k: f.status for k, f in results.items()}  # type: ignore[attr-defined]
    assert status[("ASG-001", "GpuGroup")] is F  # 100 % on-demand GPU group
    assert status[("ASG-001", "InferenceGroup")] is F  # JSON: Fn::Sub vs Fn::Join
    assert status[("ASG-001", "ClusterGroup")] is F  # ${ClusterName}: no default
    assert status[("ASG-001", "GpuSpotGroup")] is P  # 25 % on-demand
    for rid in ("GpuGroup", "InferenceGroup", "ClusterGroup", "GpuSpotGroup"):
        for (_pid, r), f in results.items():
            if r == rid:
                assert "launch template or configuration not found" not in f.message  # type: ignore[attr-defined]
    # a name no template of the stack has is still not known
    assert status[("ASG-001", "OtherGroup")] is U
    assert "not found" in results[("ASG-001", "OtherGroup")].message  # type: ignore[attr-defined]


def test_the_reference_by_name_becomes_a_reference_to_the_template() -> None:
    source = scan_paths([FIXTURES / "gpu-asg.yaml"])
    by_id = {r.id: r for r in source.resources}
    assert by_id["GpuGroup"].attrs["LaunchTemplate"]["LaunchTemplateName"] == \
        Ref("GpuLaunchTemplate")
    spec = by_id["GpuSpotGroup"].attrs["MixedInstancesPolicy"]["LaunchTemplate"][
        "LaunchTemplateSpecification"]
    assert spec["LaunchTemplateName"] == Ref("GpuLaunchTemplate")
    # the group's own name, the same expression, stays what it is: a name not known
    assert not isinstance(by_id["GpuGroup"].attrs["AutoScalingGroupName"], str | Ref)


TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Lt:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateName: {lt_name}
      LaunchTemplateData: {{InstanceType: g5.xlarge}}
{extra}
  Group:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MinSize: "1"
      MaxSize: "4"
      LaunchTemplate:
        LaunchTemplateName: {group_name}
        Version: !GetAtt Lt.LatestVersionNumber
"""
SECOND = """\
  Lt2:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateName: !Sub "${AWS::StackName}-gpu"
      LaunchTemplateData: {InstanceType: m5.large}
"""


@pytest.mark.parametrize(("lt_name", "group_name", "extra", "linked"), [
    ('!Sub "${AWS::StackName}-gpu"', '!Sub "${AWS::StackName}-gpu"', "", True),
    # YAML long form on one side, short on the other; Fn::Sub with a variable map
    ('{"Fn::Sub": "${AWS::StackName}-gpu"}', '!Sub "${AWS::StackName}-gpu"', "", True),
    ('{"Fn::Join": ["", [{"Ref": "AWS::StackName"}, "-gpu"]]}',
     '!Sub ["${S}-gpu", {S: !Ref "AWS::StackName"}]', "", True),
    ('!Sub "${AWS::AccountId}-${AWS::Region}"',
     '!Join ["-", [!Ref AWS::AccountId, !Ref AWS::Region]]', "", True),
    # the escape writes the literal text: another name
    ('!Sub "${AWS::StackName}-gpu"', '!Sub "${!AWS::StackName}-gpu"', "", False),
    ('!Sub "${AWS::StackName}-gpu"', '!Sub "${AWS::StackName}-gpu2"', "", False),
    # two templates of the same name (CloudFormation would refuse the second): neither
    ('!Sub "${AWS::StackName}-gpu"', '!Sub "${AWS::StackName}-gpu"', SECOND, False),
])
def test_what_links(tmp_path: Path, lt_name: str, group_name: str, extra: str,
                    linked: bool) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TEMPLATE.format(lt_name=lt_name, group_name=group_name, extra=extra))
    source = scan_paths([path])
    assert source.errors == []
    group = next(r for r in source.resources if r.id == "Group")
    name = group.attrs["LaunchTemplate"]["LaunchTemplateName"]
    assert (name == Ref("Lt")) is linked, name


def test_every_consumer_kind_links_by_the_same_expression() -> None:
    from scanner.compute.index import views
    from scanner.model.graph import ResourceIndex

    source = scan_paths([FIXTURES / "every-consumer.yaml"])
    assert source.errors == []
    v = views(ResourceIndex(source.resources))
    gpu = {r.id: v.of(r).types.gpu() for r in source.resources}  # type: ignore[union-attr]
    assert gpu == {"Lt": True, "Ng": True, "Ce": True, "Lc": True, "Asg": True, "Inst": True}
