"""IaC is priced in the region it deploys to when the input says it: CloudFormation with
``--region``, a Terraform plan's aws provider region (a constant, or one root variable), the
root module's ``provider "aws" { region = ... }`` when it evaluates to a region name, an eksctl
ClusterConfig's ``metadata.region``. The region is a pricing hint (``Provenance.pricing_region``),
not the resource's identity: findings keep their fingerprints and ``resource.region`` stays
empty for IaC, with or without it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scanner.catalog import Catalog, default_catalog, region_name
from scanner.engine.evaluate import evaluate
from scanner.model import Provenance, Resource, SourceKind
from scanner.pricing.prices import region_of

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "terraform"
EU = "eu-west-1"
EU_PRICE = 1.5  # g5.xlarge, made up (the shipped catalogue's is 1.123)


def no_eu_catalog() -> Catalog:
    """The shipped catalogue without its eu-west-1 prices (a region it lacks)."""
    cat = default_catalog()
    instances = {name: replace(spec, prices={r: p for r, p in spec.prices.items() if r != EU})
                 for name, spec in cat.instances.items()}
    return replace(cat, instances=instances, regions=tuple(r for r in cat.regions if r != EU))


def eu_catalog() -> Catalog:
    cat = default_catalog()
    spec = cat.instances["g5.xlarge"]
    instances = {**cat.instances, "g5.xlarge": replace(spec, prices={
        **spec.prices, "us-east-1": spec.price_usd_hour or 0.0, EU: EU_PRICE})}
    return replace(cat, instances=instances, regions=(*cat.regions, EU))


def asg001(resources: list[Resource], catalog: Catalog | None = None) -> Any:
    fails = [f for f in evaluate(resources, policy_ids=["ASG-001"], catalog=catalog)
             if f.status.value == "FAIL"]
    assert len(fails) == 1, fails
    return fails[0]


TEMPLATE = """AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Template:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData: {InstanceType: g5.xlarge}
  Group:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MinSize: "4"
      MaxSize: "4"
      DesiredCapacity: "4"
      VPCZoneIdentifier: [subnet-0123456789abcdef0]
      LaunchTemplate: {LaunchTemplateId: !Ref Template, Version: "1"}
"""


def test_cloudformation_priced_in_its_region(tmp_path: Path) -> None:
    from scanner.sources.cloudformation.reader import load_template

    path = tmp_path / "stack.yaml"
    path.write_text(TEMPLATE)
    unknown = asg001(load_template(path).resources)
    assert "(region not known)" in unknown.savings.basis
    no_price = asg001(load_template(path, region=EU).resources, no_eu_catalog())
    assert "(region not known)" not in no_price.savings.basis
    assert f"the catalogue has no {EU} price" in no_price.savings.basis
    priced = asg001(load_template(path, region=EU).resources, eu_catalog())
    assert f"on-demand g5.xlarge {EU}" in priced.savings.basis
    assert "us-east-1" not in priced.savings.basis
    assert str(EU_PRICE) in priced.savings.basis
    # a pricing hint, not identity: same fingerprint, no resource.region
    assert unknown.id == no_price.id == priced.id
    assert unknown.resource["region"] is None and priced.resource["region"] is None


def test_terraform_hcl_provider_region(tmp_path: Path) -> None:
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    (tmp_path / "modules" / "gpu").mkdir(parents=True)
    (tmp_path / "modules" / "gpu" / "main.tf").write_text(GROUP.replace("NAME", "in_module"))
    (tmp_path / "main.tf").write_text('''
variable "region" { default = "eu-west-1" }
locals { where = var.region }
provider "aws" { region = local.where }
provider "aws" {
  alias  = "west"
  region = "us-west-2"
}
module "gpu" { source = "./modules/gpu" }
module "elsewhere" {
  source    = "./modules/gpu"
  providers = { aws = aws.west }
}
''' + GROUP.replace("NAME", "here") + GROUP.replace("NAME", "aliased").replace(
        "resource \"aws_autoscaling_group\" \"aliased\" {",
        "resource \"aws_autoscaling_group\" \"aliased\" {\n  provider = aws.west"))
    resources = load_terraform_dir([tmp_path]).resources
    regions = {r.id: region_of(r) for r in resources if r.kind == "autoscaling.group"}
    assert regions == {"aws_autoscaling_group.here": EU,
                       "module.gpu.aws_autoscaling_group.in_module": EU,
                       # another provider configuration: its region is not followed
                       "aws_autoscaling_group.aliased": None,
                       "module.elsewhere.aws_autoscaling_group.in_module": None}
    found = {f.resource["id"]: f for f in evaluate(resources, policy_ids=["ASG-001"],
                                                    catalog=eu_catalog())}
    assert f"on-demand g5.xlarge {EU}" in found["aws_autoscaling_group.here"].savings.basis
    assert "(region not known)" in found["aws_autoscaling_group.aliased"].savings.basis
    assert all(f.resource["region"] is None for f in found.values())


@pytest.mark.parametrize("region", ['var.nothing', '"not a region"', 'data.aws_region.x.name'])
def test_terraform_hcl_region_not_known(tmp_path: Path, region: str) -> None:
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    (tmp_path / "main.tf").write_text(f'''
variable "nothing" {{}}
provider "aws" {{ region = {region} }}
''' + GROUP.replace("NAME", "g"))
    resources = load_terraform_dir([tmp_path]).resources
    assert {region_of(r) for r in resources} == {None}


GROUP = '''
resource "aws_launch_template" "NAME" { instance_type = "g5.xlarge" }
resource "aws_autoscaling_group" "NAME" {
  min_size            = 4
  max_size            = 4
  desired_capacity    = 4
  vpc_zone_identifier = ["subnet-0123456789abcdef0"]
  launch_template { id = aws_launch_template.NAME.id }
}
'''


def plan_with_region(tmp_path: Path, expression: dict[str, Any],
                     variables: dict[str, Any] | None = None) -> Path:
    doc = json.loads((FIXTURES / "gpu_modules" / "plan.json").read_text())
    doc["configuration"]["provider_config"]["aws"]["expressions"]["region"] = expression
    _grow_infer_group(doc)
    if variables is not None:
        doc["variables"] = variables
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("expression, variables, expected", [
    ({"constant_value": EU}, None, EU),
    ({"references": ["var.region"]}, {"region": {"value": EU}}, EU),
    ({"references": ["var.region"]}, {"region": {"value": 7}}, None),
    ({"references": ["local.region"]}, None, None),
    ({"references": ["var.a", "var.b"]}, {"a": {"value": EU}, "b": {"value": EU}}, None),
])
def test_terraform_plan_provider_region(tmp_path: Path, expression: dict[str, Any],
                                        variables: dict[str, Any] | None,
                                        expected: str | None) -> None:
    from scanner.sources.terraform.plan.reader import load_plan

    result = load_plan(plan_with_region(tmp_path, expression, variables))
    assert {region_of(r) for r in result.resources} == {expected}
    fail = next(f for f in evaluate(result.resources, policy_ids=["ASG-001"],
                                    catalog=no_eu_catalog())
                if f.savings is not None)
    if expected is None:
        assert "(region not known)" in fail.savings.basis
    else:
        assert f"the catalogue has no {expected} price" in fail.savings.basis
    assert fail.resource["region"] is None


def _grow_infer_group(doc: dict[str, Any]) -> None:
    """The fixture's all-on-demand group runs 2 instances: no split of 2 is inside ASG-001's
    20-40 % band, so it books no saving. At 3 (1 on-demand = 33 %) its saving prices a region."""
    def grow(values: dict[str, Any]) -> None:
        if values.get("name") == "gpu-infer" and values.get("desired_capacity") == 2:
            values["desired_capacity"] = 3

    for change in doc["resource_changes"]:
        grow(change["change"].get("after") or {})
    stack = [doc["planned_values"]["root_module"]]
    while stack:
        module = stack.pop()
        stack.extend(module.get("child_modules", []))
        for resource in module.get("resources", []):
            grow(resource.get("values") or {})


def test_the_plan_fixtures_name_their_region(tmp_path: Path) -> None:
    from scanner.sources.terraform.plan.reader import load_plan

    result = load_plan(FIXTURES / "gpu_modules" / "plan.json")
    assert {region_of(r) for r in result.resources} == {"us-east-1"}
    # as shipped, the only all-on-demand group runs 2 instances: no compliant split, no saving
    assert [f.savings for f in evaluate(result.resources, policy_ids=["ASG-001"])
            if f.savings is not None] == []
    result = load_plan(plan_with_region(tmp_path, {"constant_value": "us-east-1"}))
    assert {region_of(r) for r in result.resources} == {"us-east-1"}
    basis = [f.savings.basis for f in evaluate(result.resources, policy_ids=["ASG-001"])
             if f.savings is not None]
    assert basis and all("(region not known)" not in b and "us-east-1" in b for b in basis)


def test_live_region_comes_first_and_region_names_are_checked() -> None:
    live = Resource("ec2.instance", "i-1", {}, Provenance(SourceKind.AWS, region="us-west-2",
                                                          pricing_region=EU), "a/us-west-2")
    assert region_of(live) == "us-west-2"
    assert [region_name(v) for v in ("us-east-1", "us-gov-west-1", "ap-southeast-2")] == [
        "us-east-1", "us-gov-west-1", "ap-southeast-2"]
    assert [region_name(v) for v in ("", "US-EAST-1", "us-east-1 ", "${AWS::Region}", 1,
                                     "x" * 300, "us-east-1\nfoo")] == [None] * 7


def test_eksctl_metadata_region(tmp_path: Path) -> None:
    from scanner.sources.eksctl.reader import read_if_cluster_config

    path = tmp_path / "cluster.yaml"
    path.write_text("""apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: ml, region: eu-west-1}
managedNodeGroups:
  - name: gpu
    instanceType: g5.xlarge
    desiredCapacity: 2
""")
    result = read_if_cluster_config(path)
    assert result is not None and {region_of(r) for r in result.resources} == {EU}


def test_spot_caps_are_priced_in_the_region_too(tmp_path: Path) -> None:
    """SPOT-001's cap is a share of the on-demand price where the capacity runs."""
    from scanner.sources.cloudformation.reader import load_template

    path = tmp_path / "spot.yaml"
    path.write_text("""AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Spot:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData:
        InstanceType: g5.xlarge
        InstanceMarketOptions: {MarketType: spot, SpotOptions: {MaxPrice: "1.4"}}
  Node:
    Type: AWS::EC2::Instance
    Properties:
      LaunchTemplate: {LaunchTemplateId: !Ref Spot, Version: "1"}
""")

    def spot001(region: str | None, catalog: Catalog | None = None) -> Any:
        resources = load_template(path, region=region).resources
        (found,) = evaluate(resources, policy_ids=["SPOT-001"], catalog=catalog)
        return found

    here = spot001(None)  # 1.4 > 0.7 x 1.006 (us-east-1)
    assert here.status.value == "FAIL" and "(region not known)" in here.savings.basis
    no_eu = spot001(EU, no_eu_catalog())  # no eu-west-1 price: us-east-1's, said so
    assert no_eu.status.value == "FAIL"
    assert f"the catalogue has no {EU} price" in no_eu.savings.basis
    eu = spot001(EU, eu_catalog())  # 1.4 > 0.7 x 1.5 (eu-west-1)
    assert eu.status.value == "FAIL" and f"on-demand g5.xlarge {EU}" in eu.savings.basis
    assert eu.savings.usd_month == pytest.approx((1.4 - 0.7 * EU_PRICE) * 730)
    assert eu.evidence["offers"][0]["on_demand_usd_hour"] == EU_PRICE
