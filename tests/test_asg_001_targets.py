"""ASG-001 prices a saving only at a split it would pass: the on-demand count inside the band
closest to the group's own (the fewest units moved to spot). A group whose size holds no split
inside the band (2 instances: 0, 50 or 100 % for 20-40 %) still FAILs, with no saving, and says
which size would hold one. The same on CloudFormation and Terraform HCL."""

from __future__ import annotations

from pathlib import Path

import pytest

from policies.asg import compliant_on_demand, in_band
from scanner.compute.purchase import on_demand_count, setting_for
from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import scan_paths

CFN = """AWSTemplateFormatVersion: "2010-09-09"
Resources:
  LT:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData: {{InstanceType: p4de.24xlarge, ImageId: ami-12345678}}
{groups}
"""
CFN_GROUP = """  G{desired}:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MinSize: "0"
      MaxSize: "64"
      DesiredCapacity: "{desired}"
      VPCZoneIdentifier: [subnet-1]
      LaunchTemplate: {{LaunchTemplateId: !Ref LT, Version: "1"}}
"""
HCL = """resource "aws_launch_template" "lt" {{
  instance_type = "p4de.24xlarge"
  image_id      = "ami-12345678"
}}
{groups}
"""
HCL_GROUP = """resource "aws_autoscaling_group" "g{desired}" {{
  min_size            = 0
  max_size            = 64
  desired_capacity    = {desired}
  vpc_zone_identifier = ["subnet-1"]
  launch_template {{
    id = aws_launch_template.lt.id
  }}
}}
"""
SIZES = (2, 3, 5, 10)


def _write(tmp_path: Path, source: str) -> Path:
    if source == "cloudformation":
        (tmp_path / "t.yaml").write_text(CFN.format(
            groups="".join(CFN_GROUP.format(desired=d) for d in SIZES)))
    else:
        (tmp_path / "main.tf").write_text(HCL.format(
            groups="".join(HCL_GROUP.format(desired=d) for d in SIZES)))
    return tmp_path


@pytest.mark.parametrize("source", ["cloudformation", "hcl"])
def test_the_saving_is_priced_at_a_split_the_policy_passes(tmp_path: Path, source: str) -> None:
    found = evaluate(scan_paths([_write(tmp_path, source)]).resources, policy_ids=["ASG-001"])
    by_size = {f.evidence["desired"]: f for f in found}
    assert sorted(by_size) == list(SIZES)
    assert all(f.status is Status.FAIL for f in found)  # all on demand: above the band
    two = by_size[2]
    assert two.savings is None and two.evidence["target_on_demand"] is None
    assert "no split of 2 instances is inside the band" in two.message
    assert "a desired capacity of 3 holds one" in two.message
    # the target is inside the band (the fewest moved) and the saving moves the rest
    for desired, target in ((3, 1), (5, 2), (10, 4)):
        f = by_size[desired]
        assert f.evidence["target_on_demand"] == target
        assert in_band(target, desired, 20, 40)
        assert f.savings is not None and f"{target} of {desired}" in f.savings.basis
        base, percent = (f.evidence["target_setting"][k] for k in (
            "on_demand_base_capacity", "on_demand_percentage_above_base_capacity"))
        assert on_demand_count(desired, base, percent) == target  # AWS's rounding gives it


@pytest.mark.parametrize(("desired", "on_demand", "expected"), [
    (2, 2, None), (2, 0, None), (1, 1, None), (3, 3, 1), (3, 0, 1), (5, 5, 2), (5, 0, 1),
    (10, 10, 4), (10, 0, 2), (10, 3, 3), (7, 7, 2)])
def test_compliant_on_demand(desired: int, on_demand: int, expected: int | None) -> None:
    assert compliant_on_demand(desired, on_demand, 20, 40) == expected
    if expected is not None:
        assert in_band(expected, desired, 20, 40)
    else:
        assert not any(in_band(k, desired, 20, 40) for k in range(desired + 1))


@pytest.mark.parametrize(("desired", "on_demand"), [(d, k) for d in range(1, 30)
                                                    for k in range(d + 1)])
def test_setting_for_gives_the_count(desired: int, on_demand: int) -> None:
    assert on_demand_count(desired, *setting_for(desired, on_demand)) == on_demand
