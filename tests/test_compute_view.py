"""The compute view (scanner/compute): one view per resource, built once by its kind's
extractor; what each view says, and what adding a kind takes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scanner.compute import DEVICES, GROUP, LAUNCHES, PLACES, SPOT, kinds_with, registry, views
from scanner.compute.view import GpuRequirement, SpotOffer, Types
from scanner.kinds import schema
from scanner.model import Ref, Unknown
from scanner.model.graph import ResourceIndex
from tests.model_builders import res

ROOT = Path(__file__).resolve().parents[1]


def view_of(resources, rid):
    index = ResourceIndex(resources)
    return views(index).of(next(r for r in resources if r.id == rid))


def test_every_compute_kind_is_a_kind_of_the_schema_and_provides_what_policies_ask():
    kinds = schema().kinds
    assert set(registry.registered()) <= set(kinds)
    assert kinds_with(LAUNCHES)[:7] == ("ec2.instance", "ec2.launch_template",
                                       "autoscaling.launch_configuration", "autoscaling.group",
                                       "ec2.spot_request", "ec2.spot_fleet", "ec2.fleet")
    assert {"eks.nodegroup", "batch.compute_environment", "sagemaker.cluster"} <= set(
        kinds_with(LAUNCHES, PLACES))
    assert kinds_with(DEVICES)[0] == "ec2.volume"
    assert kinds_with(GROUP)[:1] == ("autoscaling.group",)
    assert {"eks.nodegroup", "batch.compute_environment"} <= set(kinds_with(GROUP))
    assert {"karpenter.node_pool", "eksctl.node_group", "parallelcluster.queue"} <= \
        set(kinds_with(LAUNCHES))
    assert "ec2.launch_template" not in kinds_with(PLACES)
    assert set(schema().kinds_with_fact("ec2.spot_prices")) <= set(kinds_with(SPOT))


def test_a_view_is_built_once_per_resource(monkeypatch):
    calls = []
    ext = registry.get("ec2.instance")
    monkeypatch.setitem(registry._REGISTRY, "ec2.instance", registry.Extractor(
        ext.kind, lambda r, v: calls.append(r.id) or ext.extract(r, v), ext.provides, ext.reads,
        ext.rank))
    inst = res("ec2.instance", "i", InstanceType="g5.xlarge", SubnetId="subnet-1")
    shared = views(ResourceIndex([inst]))
    first = shared.of(inst)
    assert shared.of(inst) is first and calls == ["i"]


def test_facts_keep_their_attribute_paths():
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={
        "InstanceType": "g5.xlarge",
        "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "0.5"}},
        "NetworkInterfaces": [{"DeviceIndex": 0, "AssociatePublicIpAddress": True}],
        "BlockDeviceMappings": [{"DeviceName": "/dev/xvda", "Ebs": {"Encrypted": False}}]})
    view = view_of([lt], "lt")
    assert view.purchase.spot[0].path == \
        "LaunchTemplateData.InstanceMarketOptions.SpotOptions.MaxPrice"
    assert view.network.public_ip[0].path == \
        "LaunchTemplateData.NetworkInterfaces[0].AssociatePublicIpAddress"
    assert view.devices[0].path == "LaunchTemplateData.BlockDeviceMappings[0].Ebs"
    assert not view.network.placed


def test_unknown_stays_unknown_in_the_view():
    group = res("autoscaling.group", "g", DesiredCapacity=Unknown("var.n"), MinSize=1, MaxSize=4,
                VPCZoneIdentifier=Unknown("var.subnets"),
                MixedInstancesPolicy={"LaunchTemplate": {"Overrides": Unknown("var.types")}})
    view = view_of([group], "g")
    assert isinstance(view.types.values[0], Unknown) and isinstance(view.types.gpu(), Unknown)
    assert isinstance(view.purchase.split, Unknown) and view.purchase.split.reason == "var.n"
    assert isinstance(view.network.subnets[0], Unknown)
    unread = res("ec2.launch_template", "lt", declared=False,
                 LaunchTemplateData=Unknown("the default version was not returned"))
    view = view_of([unread], "lt")
    assert isinstance(view.types.values[0], Unknown)
    assert isinstance(view.purchase.spot, Unknown)


def test_a_template_without_a_type_launches_its_consumers_types():
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={})
    group = res("autoscaling.group", "g", MinSize=1, MaxSize=2, MixedInstancesPolicy={
        "LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateId": Ref("lt")},
                           "Overrides": [{"InstanceType": "p5.48xlarge"}]}})
    fleet = res("ec2.fleet", "f", LaunchTemplateConfigs=[{
        "LaunchTemplateSpecification": {"LaunchTemplateId": Ref("lt")},
        "Overrides": [{"InstanceType": "g6.xlarge"}]}])
    assert view_of([lt, group, fleet], "lt").types.values == ("p5.48xlarge", "g6.xlarge")
    assert view_of([lt], "lt").types.values == ()


def test_a_max_price_may_be_a_percentage_of_on_demand():
    assert SpotOffer("g5.xlarge", None, "BidPercentage", None, max_price_percent=60).cap(
        2.0) == pytest.approx(1.2)
    assert SpotOffer("g5.xlarge", "0.5", "SpotPrice", None).cap(2.0) == 0.5
    assert SpotOffer("g5.xlarge", None, "SpotPrice", None).cap(2.0) is None


def test_a_gpu_requirement_makes_gpu_compute_without_a_type():
    assert Types((), GpuRequirement(True, "InstanceRequirements")).gpu() is True
    assert Types((), GpuRequirement(False, "InstanceRequirements")).gpu() is False
    maybe = Types((), GpuRequirement(Unknown("var.accelerators"), "InstanceRequirements"))
    assert isinstance(maybe.gpu(), Unknown)
    assert Types(("m5.large",)).gpu() is False and Types(("trn2.48xlarge",)).gpu() is True


KIND_MODULE = '''
from scanner.kinds.facts import SPOT_PRICES
from scanner.kinds.schema import CloudFormation, Kind
from scanner.kinds.types import Bool, Price, Ref, Str

KINDS = (Kind(
    name="test.gpu_pool", doc="a pool of GPU instances (a kind made up for this test)",
    attributes={"InstanceType": Str(), "SubnetId": Ref(kinds=("ec2.subnet",)),
                "Encrypted": Bool(), "SpotMaxPrice": Price(), "Spot": Bool()},
    cloudformation=(CloudFormation("AWS::Test::GpuPool"),), facts=(SPOT_PRICES.name,)),)
'''

EXTRACTOR_MODULE = '''
from scanner.compute.launch import placement
from scanner.compute.registry import DEVICES, LAUNCHES, PLACES, SPOT, extractor
from scanner.compute.view import ComputeView, Device, Network, Purchase, SpotOffer, Types


@extractor("test.gpu_pool", provides=(LAUNCHES, PLACES, SPOT, DEVICES))
def gpu_pool(r, views):
    subnets = (r.get("SubnetId"),) if r.get("SubnetId") is not None else ()
    spot = ((SpotOffer(r.get("InstanceType"), r.get("SpotMaxPrice"), "SpotMaxPrice", None),)
            if r.get("Spot") else ())
    return ComputeView(
        r, types=Types((r.get("InstanceType"),)), purchase=Purchase(spot=spot),
        devices=(Device("Encrypted", "the pool's disks", r.get("Encrypted")),),
        network=Network(placed=True, subnets=placement(subnets, (), views.index, r.scope)))
'''

RUN = '''
import json, sys
import scanner.kinds, scanner.compute.extractors
scanner.kinds.__path__.append(sys.argv[1])
scanner.compute.extractors.__path__.append(sys.argv[2])
from scanner.engine.evaluate import run
from scanner.sources.cloudformation.reader import load_template
source = load_template(__import__("pathlib").Path(sys.argv[3]))
out = run(source.resources, policy_ids=["EBS-001", "VPC-004", "SPOT-001", "VPC-001"])
print(json.dumps(sorted([f.policy_id, f.resource["id"], f.status.value, f.message]
                        for f in out.findings)))
'''


def test_a_new_kind_is_a_schema_module_and_an_extractor_module(tmp_path):
    """Adding a compute kind touches no policy and no source list: a module declaring the kind
    (attributes, types, CloudFormation type) and a module registering its extractor are enough
    for the CloudFormation source to read and coerce it and for every policy whose question
    applies to judge it."""
    (tmp_path / "kinds").mkdir()
    (tmp_path / "kinds" / "testpool.py").write_text(KIND_MODULE)
    (tmp_path / "extractors").mkdir()
    (tmp_path / "extractors" / "testpool.py").write_text(EXTRACTOR_MODULE)
    template = tmp_path / "pool.yaml"
    template.write_text(textwrap.dedent("""\
        Resources:
          Vpc: {Type: AWS::EC2::VPC, Properties: {CidrBlock: 10.0.0.0/16}}
          Subnet: {Type: AWS::EC2::Subnet, Properties: {VpcId: !Ref Vpc}}
          Pool:
            Type: AWS::Test::GpuPool
            Properties: {InstanceType: p5.48xlarge, SubnetId: !Ref Subnet,
                         Encrypted: "false", Spot: "true"}
          Elsewhere:
            Type: AWS::Test::GpuPool
            Properties: {InstanceType: g5.xlarge, Encrypted: true}
        """))
    proc = subprocess.run([sys.executable, "-c", RUN, str(tmp_path / "kinds"),
                           str(tmp_path / "extractors"), str(template)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = {(p, r): (s, m) for p, r, s, m in json.loads(proc.stdout)}
    assert got[("EBS-001", "Pool")] == ("FAIL", "EBS storage not encrypted: the pool's disks")
    assert got[("EBS-001", "Elsewhere")][0] == "PASS"
    assert got[("SPOT-001", "Pool")][0] == "FAIL"  # spot without a max price
    assert ("SPOT-001", "Elsewhere") not in got  # no spot: not applicable
    assert got[("VPC-004", "Pool")][0] == "PASS"
    assert got[("VPC-004", "Elsewhere")][0] == "UNKNOWN"  # no subnet: the default VPC
    assert got[("VPC-001", "Vpc")][0] == "FAIL"  # GPU compute in a VPC without an endpoint
