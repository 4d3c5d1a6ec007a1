# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""Each live collector against moto in-process: every normalized attribute checked."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.collectors.ebs import EBS_KMS
from scanner.aws.collectors.spot_prices import SPOT_PRICES
from scanner.aws.registry import ALL_KINDS, DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.model import Provenance, Skip, SourceKind, SourceResult, Unknown
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    RECORDER,
    REGION,
    aws,
    aws_env,
    by_kind,
    client,
    declared_only,
    one,
)

SCOPE = f"{ACCOUNT}/{REGION}"


def run(kinds: Any = DEFAULT_KINDS, regions: tuple[str, ...] = (REGION,)) -> SourceResult:
    return collect(TargetSpec(regions=regions), kinds=kinds, max_workers=2)


def ec2_arn(kind: str, rid: str) -> str:
    return f"arn:aws:ec2:{REGION}:{ACCOUNT}:{kind}/{rid}"


def assert_live_identity(r: Any, rid: str, name: str | None, arn: str | None) -> None:
    assert r.id == rid
    assert r.name == name
    assert r.scope == SCOPE
    assert r.declared is False
    assert r.provenance == Provenance(SourceKind.AWS, account=ACCOUNT, region=REGION, arn=arn)
    expected_aliases = tuple(dict.fromkeys(a for a in (rid, name, arn) if a))
    assert r.aliases == expected_aliases


def network() -> dict[str, str]:
    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    a = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24", AvailabilityZone="us-east-1a")
    b = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24", AvailabilityZone="us-east-1b")
    return {"vpc": vpc, "a": a["Subnet"]["SubnetId"], "b": b["Subnet"]["SubnetId"]}


# -- EBS -----------------------------------------------------------------------------------------


def test_volumes_are_normalized(aws: None) -> None:
    ec2 = client("ec2")
    key = client("kms").create_key()["KeyMetadata"]["Arn"]
    enc = ec2.create_volume(
        Size=100,
        AvailabilityZone="us-east-1a",
        VolumeType="gp3",
        Encrypted=True,
        KmsKeyId=key,
        TagSpecifications=[
            {
                "ResourceType": "volume",
                "Tags": [{"Key": "Name", "Value": "scratch"}, {"Key": "team", "Value": "ml"}],
            }
        ],
    )["VolumeId"]
    plain = ec2.create_volume(Size=8, AvailabilityZone="us-east-1b")["VolumeId"]
    inst = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    ec2.attach_volume(VolumeId=plain, InstanceId=inst, Device="/dev/sdf")

    result = run({"ec2.volume"})
    assert result.errors == [] and result.gaps == []
    v = one(result.resources, "ec2.volume", enc)
    assert_live_identity(v, enc, "scratch", ec2_arn("volume", enc))
    assert v.tags == {"Name": "scratch", "team": "ml"}
    assert v.attrs["Encrypted"] is True
    assert v.attrs["KmsKeyId"] == key
    assert v.attrs["Size"] == 100 and isinstance(v.attrs["Size"], int)
    assert v.attrs["VolumeType"] == "gp3"
    assert v.attrs["AvailabilityZone"] == "us-east-1a"
    assert v.attrs["Attachments"] == []
    assert "Tags" not in v.attrs
    assert isinstance(v.attrs["CreateTime"], str)  # JSON-safe

    p = one(result.resources, "ec2.volume", plain)
    assert_live_identity(p, plain, None, ec2_arn("volume", plain))
    assert p.attrs["Encrypted"] is False
    assert p.attrs["Size"] == 8
    assert p.attrs["Attachments"] == [
        {"InstanceId": inst, "Device": "/dev/sdf", "State": "attached"}
    ]


def test_skip_tag_becomes_skips_and_notices(aws: None) -> None:
    tag = "EBS-001:scratch disk, wiped nightly;SPOT-001;nonsense;ebs-003: lower case id"
    vid = client("ec2").create_volume(
        Size=1,
        AvailabilityZone="us-east-1a",
        TagSpecifications=[
            {"ResourceType": "volume", "Tags": [{"Key": "gpuaudit:skip", "Value": tag}]}
        ],
    )["VolumeId"]
    result = run({"ec2.volume"})
    v = one(result.resources, "ec2.volume", vid)
    assert v.skips == (
        Skip("EBS-001", "scratch disk, wiped nightly", "tag gpuaudit:skip"),
        Skip("EBS-003", "lower case id", "tag gpuaudit:skip"),
    )
    messages = sorted(n.message for n in result.notices)
    assert len(messages) == 2
    assert all(n.path == f"{SCOPE}/{vid}" for n in result.notices)
    assert any("SPOT-001 has no reason" in m for m in messages)
    assert any("'nonsense' is not POLICY-ID:reason" in m for m in messages)


def test_ebs_defaults_per_account_region(aws: None) -> None:
    client("ec2").enable_ebs_encryption_by_default()
    client("ec2", region="eu-west-1")  # untouched region: default off
    result = run({"ec2.ebs_defaults"}, regions=(REGION, "eu-west-1"))
    assert result.errors == []
    on = one(result.resources, "ec2.ebs_defaults", SCOPE)
    assert on.attrs["EbsEncryptionByDefault"] is True
    assert isinstance(on.attrs["KmsKeyId"], Unknown)  # not read: no policy needs it
    assert on.provenance.account == ACCOUNT and on.provenance.arn is None
    off = one(result.resources, "ec2.ebs_defaults", f"{ACCOUNT}/eu-west-1")
    assert off.attrs["EbsEncryptionByDefault"] is False
    assert off.scope == f"{ACCOUNT}/eu-west-1"


def test_default_kms_key_is_read_only_when_needed_and_its_failure_is_a_narrow_gap(
    aws: None,
) -> None:
    ec2 = client("ec2")
    ec2.enable_ebs_encryption_by_default()
    aliases = client("kms").list_aliases()["Aliases"]
    aws_key = next(a["TargetKeyId"] for a in aliases if a["AliasName"] == "alias/aws/ebs")
    aws_arn = f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{aws_key}"
    cmk = client("kms").create_key()["KeyMetadata"]["Arn"]
    managed = ec2.create_volume(
        Size=1, AvailabilityZone="us-east-1a", Encrypted=True, KmsKeyId=aws_arn
    )["VolumeId"]
    custom = ec2.create_volume(Size=1, AvailabilityZone="us-east-1a", Encrypted=True, KmsKeyId=cmk)[
        "VolumeId"
    ]
    plain = ec2.create_volume(Size=1, AvailabilityZone="us-east-1a")["VolumeId"]

    mark = RECORDER.mark()
    without = run({"ec2.volume", "ec2.ebs_defaults"})
    sent = {op for _, op in RECORDER.since(mark)}
    assert "GetEbsDefaultKmsKeyId" not in sent and "ListAliases" not in sent
    assert "KmsKeyManager" not in one(without.resources, "ec2.volume", managed).attrs

    result = run({"ec2.volume", "ec2.ebs_defaults", EBS_KMS})
    # moto does not implement GetEbsDefaultKmsKeyId: an error and a gap for EBS_KMS only.
    assert [e.path for e in result.errors] == [f"{SCOPE}/ec2:GetEbsDefaultKmsKeyId"]
    assert result.errors[0].kind == "aws"
    assert "not implemented" in result.errors[0].reason
    assert len(result.gaps) == 1
    gap = result.gaps[0]
    assert gap.kinds == (EBS_KMS,)
    assert (gap.scope, gap.account, gap.region) == (SCOPE, ACCOUNT, REGION)
    defaults = one(result.resources, "ec2.ebs_defaults")
    assert defaults.attrs["EbsEncryptionByDefault"] is True
    assert isinstance(defaults.attrs["KmsKeyId"], Unknown)
    vols = {v.id: v for v in by_kind(result.resources, "ec2.volume")}
    assert vols[managed].attrs["KmsKeyManager"] == "AWS"
    assert vols[custom].attrs["KmsKeyManager"] == "CUSTOMER"
    assert "KmsKeyManager" not in vols[plain].attrs
    ebs_row = next(c for c in result.coverage if c["service"] == "ebs")
    assert ebs_row["status"] == "error" and "GetEbsDefaultKmsKeyId" in ebs_row["error"]


# -- instances -----------------------------------------------------------------------------------


def test_instances_are_normalized(aws: None) -> None:
    net = network()
    ec2 = client("ec2")
    lt = ec2.create_launch_template(
        LaunchTemplateName="gpu-lt",
        LaunchTemplateData={"InstanceType": "g5.xlarge", "ImageId": AMI},
    )["LaunchTemplate"]
    private = ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType="p4d.24xlarge",
        SubnetId=net["a"],
        TagSpecifications=[
            {"ResourceType": "instance", "Tags": [{"Key": "Name", "Value": "trainer"}]}
        ],
    )["Instances"][0]["InstanceId"]
    public = ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType="g5.xlarge",
        NetworkInterfaces=[
            {"DeviceIndex": 0, "SubnetId": net["b"], "AssociatePublicIpAddress": True}
        ],
    )["Instances"][0]["InstanceId"]
    from_lt = ec2.run_instances(
        MinCount=1, MaxCount=1, LaunchTemplate={"LaunchTemplateId": lt["LaunchTemplateId"]}
    )["Instances"][0]["InstanceId"]
    spot = ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType="g4dn.xlarge",
        InstanceMarketOptions={"MarketType": "spot"},
    )["Instances"][0]["InstanceId"]
    gone = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    ec2.terminate_instances(InstanceIds=[gone])
    stopped = ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    ec2.stop_instances(InstanceIds=[stopped])

    result = run({"ec2.instance", "ec2.volume"})
    ids = {r.id for r in by_kind(result.resources, "ec2.instance")}
    assert ids == {private, public, from_lt, spot, stopped}  # terminated is gone

    p = one(result.resources, "ec2.instance", private)
    assert_live_identity(p, private, "trainer", ec2_arn("instance", private))
    assert p.tags == {"Name": "trainer"}
    assert p.attrs["InstanceType"] == "p4d.24xlarge"
    assert p.attrs["ImageId"] == AMI
    assert p.attrs["State"] == "running"
    assert p.attrs["SubnetId"] == net["a"] and p.attrs["VpcId"] == net["vpc"]
    assert p.attrs["AvailabilityZone"] == "us-east-1a"
    assert p.attrs.get("PublicIpAddress") is None
    assert p.attrs["AssociatePublicIpAddress"] is False
    nic = p.attrs["NetworkInterfaces"][0]
    assert nic["DeviceIndex"] == 0 and nic["SubnetId"] == net["a"]
    assert nic["AssociatePublicIpAddress"] is False
    assert "InstanceLifecycle" not in p.attrs and "LaunchTemplate" not in p.attrs
    # block devices, with the volume's own facts joined in memory
    (bdm,) = p.attrs["BlockDeviceMappings"]
    root = next(
        v
        for v in by_kind(result.resources, "ec2.volume")
        if v.attrs["Attachments"] and v.attrs["Attachments"][0]["InstanceId"] == private
    )
    assert bdm["DeviceName"] == "/dev/sda1"
    assert bdm["Ebs"]["VolumeId"] == root.id
    assert bdm["Ebs"]["Encrypted"] is False
    assert bdm["Ebs"]["VolumeSize"] == root.attrs["Size"]
    assert bdm["Ebs"]["VolumeType"] == root.attrs["VolumeType"]

    pub = one(result.resources, "ec2.instance", public)
    assert pub.attrs["PublicIpAddress"]
    assert pub.attrs["AssociatePublicIpAddress"] is True
    assert pub.attrs["NetworkInterfaces"][0]["AssociatePublicIpAddress"] is True
    assert pub.attrs["NetworkInterfaces"][0]["PublicIp"] == pub.attrs["PublicIpAddress"]

    t = one(result.resources, "ec2.instance", from_lt)
    assert t.attrs["LaunchTemplate"] == {"LaunchTemplateId": lt["LaunchTemplateId"], "Version": "1"}
    assert t.attrs["InstanceType"] == "g5.xlarge"

    s = one(result.resources, "ec2.instance", spot)
    assert s.attrs["InstanceLifecycle"] == "spot"
    assert one(result.resources, "ec2.instance", stopped).attrs["State"] == "stopped"


def test_instance_block_devices_without_volumes_stay_as_listed(aws: None) -> None:
    iid = client("ec2").run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0][
        "InstanceId"
    ]
    result = run({"ec2.instance"})
    (bdm,) = one(result.resources, "ec2.instance", iid).attrs["BlockDeviceMappings"]
    assert bdm["Ebs"]["VolumeId"].startswith("vol-")
    assert "Encrypted" not in bdm["Ebs"]  # volumes were not read: nothing guessed
    assert by_kind(result.resources, "ec2.volume") == []


# -- launch templates ----------------------------------------------------------------------------


def test_launch_templates_default_and_latest_versions(aws: None) -> None:
    ec2 = client("ec2")
    data = {
        "InstanceType": "g5.12xlarge",
        "ImageId": AMI,
        "BlockDeviceMappings": [
            {"DeviceName": "/dev/xvda", "Ebs": {"Encrypted": True, "VolumeSize": 200}}
        ],
        "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "2.50"}},
        "NetworkInterfaces": [{"DeviceIndex": 0, "AssociatePublicIpAddress": False}],
    }
    lt = ec2.create_launch_template(
        LaunchTemplateName="train",
        LaunchTemplateData=data,
        TagSpecifications=[
            {"ResourceType": "launch-template", "Tags": [{"Key": "team", "Value": "ml"}]}
        ],
    )["LaunchTemplate"]
    ec2.create_launch_template_version(
        LaunchTemplateName="train", LaunchTemplateData={**data, "InstanceType": "p5.48xlarge"}
    )
    single = ec2.create_launch_template(
        LaunchTemplateName="single", LaunchTemplateData={"InstanceType": "g4dn.xlarge"}
    )["LaunchTemplate"]

    result = run({"ec2.launch_template"})
    assert result.errors == []
    ltid = lt["LaunchTemplateId"]
    r = one(result.resources, "ec2.launch_template", ltid)
    assert_live_identity(r, ltid, "train", ec2_arn("launch-template", ltid))
    assert r.tags == {"team": "ml"}
    assert r.attrs["LaunchTemplateName"] == "train"
    assert r.attrs["DefaultVersionNumber"] == 1 and r.attrs["LatestVersionNumber"] == 2
    d = r.attrs["LaunchTemplateData"]
    assert d["InstanceType"] == "g5.12xlarge"
    assert d["ImageId"] == AMI
    assert d["BlockDeviceMappings"][0]["Ebs"]["Encrypted"] is True
    assert d["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 200
    assert d["InstanceMarketOptions"] == {"MarketType": "spot", "SpotOptions": {"MaxPrice": "2.50"}}
    assert d["NetworkInterfaces"][0]["AssociatePublicIpAddress"] is False
    assert r.attrs["LatestLaunchTemplateData"]["InstanceType"] == "p5.48xlarge"

    s = one(result.resources, "ec2.launch_template", single["LaunchTemplateId"])
    assert s.attrs["LaunchTemplateData"] == {"InstanceType": "g4dn.xlarge"}
    assert "LatestLaunchTemplateData" not in s.attrs  # latest is the default

    # two walks per region, not one call per template
    ops = [op for _, op in RECORDER.calls if op.startswith("DescribeLaunchTemplate")]
    assert ops[-2:] == ["DescribeLaunchTemplates", "DescribeLaunchTemplateVersions"]


# -- Auto Scaling --------------------------------------------------------------------------------


def test_auto_scaling_groups_configurations_and_policies(aws: None) -> None:
    net = network()
    ec2 = client("ec2")
    asg = client("autoscaling")
    lt = ec2.create_launch_template(
        LaunchTemplateName="gpu-lt",
        LaunchTemplateData={"InstanceType": "g5.xlarge", "ImageId": AMI},
    )["LaunchTemplate"]
    asg.create_auto_scaling_group(
        AutoScalingGroupName="mixed",
        MinSize=0,
        MaxSize=10,
        DesiredCapacity=0,
        VPCZoneIdentifier=f"{net['a']},{net['b']}",
        CapacityRebalance=True,
        MixedInstancesPolicy={
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {
                    "LaunchTemplateName": "gpu-lt",
                    "Version": "$Latest",
                },
                "Overrides": [
                    {"InstanceType": "g5.xlarge", "WeightedCapacity": "1"},
                    {"InstanceType": "g5.2xlarge", "WeightedCapacity": "2"},
                ],
            },
            "InstancesDistribution": {
                "OnDemandBaseCapacity": 1,
                "OnDemandPercentageAboveBaseCapacity": 30,
                "SpotAllocationStrategy": "price-capacity-optimized",
                "SpotMaxPrice": "0.9",
            },
        },
        Tags=[{"Key": "Name", "Value": "gpu-pool", "PropagateAtLaunch": True}],
    )
    asg.create_auto_scaling_group(
        AutoScalingGroupName="plain",
        MinSize=1,
        MaxSize=2,
        LaunchTemplate={"LaunchTemplateId": lt["LaunchTemplateId"], "Version": "$Default"},
        VPCZoneIdentifier=net["a"],
    )
    asg.create_launch_configuration(
        LaunchConfigurationName="old-lc",
        ImageId=AMI,
        InstanceType="p3.2xlarge",
        SpotPrice="1.20",
        AssociatePublicIpAddress=True,
        UserData="c2VjcmV0",
        BlockDeviceMappings=[
            {"DeviceName": "/dev/xvda", "Ebs": {"VolumeSize": 50, "Encrypted": False}}
        ],
    )
    asg.put_scaling_policy(
        AutoScalingGroupName="mixed",
        PolicyName="cpu50",
        PolicyType="TargetTrackingScaling",
        TargetTrackingConfiguration={
            "PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"},
            "TargetValue": 50.0,
        },
    )

    result = run(
        {"autoscaling.group", "autoscaling.launch_configuration", "autoscaling.scaling_policy"}
    )
    assert result.errors == []
    g = one(result.resources, "autoscaling.group", "mixed")
    arn = g.provenance.arn
    assert arn and arn.startswith("arn:aws:autoscaling:") and arn.endswith("mixed")
    assert_live_identity(g, "mixed", "mixed", arn)
    assert g.tags == {"Name": "gpu-pool"}
    assert g.attrs["AutoScalingGroupName"] == "mixed"
    assert (g.attrs["MinSize"], g.attrs["MaxSize"], g.attrs["DesiredCapacity"]) == (0, 10, 0)
    assert g.attrs["VPCZoneIdentifier"] == [net["a"], net["b"]]
    assert g.attrs["CapacityRebalance"] is True
    mip = g.attrs["MixedInstancesPolicy"]
    spec = mip["LaunchTemplate"]["LaunchTemplateSpecification"]
    assert spec["LaunchTemplateName"] == "gpu-lt" and spec["Version"] == "$Latest"
    assert mip["LaunchTemplate"]["Overrides"] == [
        {"InstanceType": "g5.xlarge", "WeightedCapacity": 1},
        {"InstanceType": "g5.2xlarge", "WeightedCapacity": 2},
    ]
    dist = mip["InstancesDistribution"]
    assert dist["OnDemandBaseCapacity"] == 1
    assert dist["OnDemandPercentageAboveBaseCapacity"] == 30
    assert dist["SpotAllocationStrategy"] == "price-capacity-optimized"
    assert dist["SpotMaxPrice"] == "0.9"

    p = one(result.resources, "autoscaling.group", "plain")
    assert p.attrs["LaunchTemplate"]["LaunchTemplateId"] == lt["LaunchTemplateId"]
    assert p.attrs["LaunchTemplate"]["Version"] == "$Default"
    assert p.attrs["VPCZoneIdentifier"] == [net["a"]]
    assert p.attrs["DesiredCapacity"] == 1
    assert p.attrs["CapacityRebalance"] is False
    assert "MixedInstancesPolicy" not in p.attrs
    assert [i["InstanceId"].startswith("i-") for i in p.attrs["Instances"]] == [True]

    lc = one(result.resources, "autoscaling.launch_configuration", "old-lc")
    assert_live_identity(lc, "old-lc", "old-lc", lc.provenance.arn)
    assert lc.provenance.arn and ":launchConfiguration:" in lc.provenance.arn
    assert lc.attrs["LaunchConfigurationName"] == "old-lc"
    assert lc.attrs["InstanceType"] == "p3.2xlarge"
    assert lc.attrs["SpotPrice"] == "1.20"
    assert lc.attrs["AssociatePublicIpAddress"] is True
    assert lc.attrs["BlockDeviceMappings"][0]["Ebs"]["Encrypted"] is False
    assert "UserData" not in lc.attrs

    sp = one(result.resources, "autoscaling.scaling_policy")
    assert sp.id == "mixed/cpu50" and sp.name == "cpu50"
    assert sp.attrs["AutoScalingGroupName"] == "mixed"
    assert sp.attrs["PolicyType"] == "TargetTrackingScaling"
    assert sp.provenance.arn and sp.provenance.arn in sp.aliases


def test_auto_scaling_lists_follow_next_token(aws: None) -> None:
    asg = client("autoscaling")
    for n in range(52):  # moto pages Auto Scaling lists by 50
        asg.create_launch_configuration(
            LaunchConfigurationName=f"lc-{n:02}", ImageId=AMI, InstanceType="g5.xlarge"
        )
        asg.create_auto_scaling_group(
            AutoScalingGroupName=f"asg-{n:02}",
            LaunchConfigurationName=f"lc-{n:02}",
            MinSize=0,
            MaxSize=1,
            AvailabilityZones=["us-east-1a"],
        )
    mark = RECORDER.mark()
    result = run({"autoscaling.group", "autoscaling.launch_configuration"})
    assert len(by_kind(result.resources, "autoscaling.group")) == 52
    assert len(by_kind(result.resources, "autoscaling.launch_configuration")) == 52
    sent = [op for _, op in RECORDER.since(mark)]
    assert sent.count("DescribeAutoScalingGroups") == 2
    assert sent.count("DescribeLaunchConfigurations") == 2
    row = next(c for c in result.coverage if c["service"] == "autoscaling")
    assert row == {
        "account": ACCOUNT,
        "region": REGION,
        "service": "autoscaling",
        "status": "ok",
        "calls": 4,
    }


# -- spot ----------------------------------------------------------------------------------------


def test_spot_requests_fleets_and_ec2_fleets(aws: None) -> None:
    net = network()
    ec2 = client("ec2")
    req = ec2.request_spot_instances(
        SpotPrice="0.50",
        InstanceCount=1,
        LaunchSpecification={
            "ImageId": AMI,
            "InstanceType": "g5.xlarge",
            "SubnetId": net["a"],
            "UserData": "c2VjcmV0",
            "BlockDeviceMappings": [
                {"DeviceName": "/dev/xvda", "Ebs": {"VolumeSize": 20, "Encrypted": True}}
            ],
        },
    )["SpotInstanceRequests"][0]["SpotInstanceRequestId"]
    cancelled = ec2.request_spot_instances(
        SpotPrice="0.40", LaunchSpecification={"ImageId": AMI, "InstanceType": "g5.xlarge"}
    )["SpotInstanceRequests"][0]["SpotInstanceRequestId"]
    ec2.cancel_spot_instance_requests(SpotInstanceRequestIds=[cancelled])
    lt = ec2.create_launch_template(
        LaunchTemplateName="fleet-lt",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "g5.xlarge"},
    )["LaunchTemplate"]
    sfr = ec2.request_spot_fleet(
        SpotFleetRequestConfig={
            "IamFleetRole": f"arn:aws:iam::{ACCOUNT}:role/fleet",
            "SpotPrice": "3.00",
            "TargetCapacity": 4,
            "AllocationStrategy": "lowestPrice",
            "LaunchSpecifications": [
                {
                    "ImageId": AMI,
                    "InstanceType": "g5.xlarge",
                    "SubnetId": net["a"],
                    "WeightedCapacity": 1.0,
                    "SpotPrice": "1.00",
                    "UserData": "c2VjcmV0",
                },
                {
                    "ImageId": AMI,
                    "InstanceType": "g5.2xlarge",
                    "SubnetId": net["b"],
                    "WeightedCapacity": 2.0,
                },
            ],
        }
    )["SpotFleetRequestId"]
    fleet = ec2.create_fleet(
        Type="maintain",
        TargetCapacitySpecification={
            "TotalTargetCapacity": 6,
            "OnDemandTargetCapacity": 2,
            "SpotTargetCapacity": 4,
            "DefaultTargetCapacityType": "spot",
        },
        SpotOptions={"AllocationStrategy": "capacity-optimized"},
        LaunchTemplateConfigs=[
            {
                "LaunchTemplateSpecification": {
                    "LaunchTemplateId": lt["LaunchTemplateId"],
                    "Version": "1",
                },
                "Overrides": [
                    {
                        "InstanceType": "g5.xlarge",
                        "SubnetId": net["a"],
                        "MaxPrice": "0.80",
                        "WeightedCapacity": 2.0,
                    }
                ],
            }
        ],
        TagSpecifications=[{"ResourceType": "fleet", "Tags": [{"Key": "Name", "Value": "batch"}]}],
    )["FleetId"]

    result = run({"ec2.spot_request", "ec2.spot_fleet", "ec2.fleet"})
    assert result.errors == []
    requests = {r.id for r in by_kind(result.resources, "ec2.spot_request")}
    assert req in requests and cancelled not in requests  # (moto's fleets add their own)
    r = one(result.resources, "ec2.spot_request", req)
    assert_live_identity(r, req, None, ec2_arn("spot-instances-request", req))
    assert float(r.attrs["SpotPrice"]) == 0.5
    assert r.attrs["InstanceCount"] == 1
    ls = r.attrs["LaunchSpecification"]
    assert ls["InstanceType"] == "g5.xlarge" and ls["SubnetId"] == net["a"]
    assert "UserData" not in ls  # (moto drops the block device mappings of spot requests)

    f = one(result.resources, "ec2.spot_fleet", sfr)
    assert_live_identity(f, sfr, None, ec2_arn("spot-fleet-request", sfr))
    cfg = f.attrs["SpotFleetRequestConfig"]
    assert cfg["SpotPrice"] == "3.00"
    assert cfg["TargetCapacity"] == 4 and isinstance(cfg["TargetCapacity"], int)
    assert cfg["AllocationStrategy"] == "lowestPrice"
    specs = cfg["LaunchSpecifications"]
    assert [s["InstanceType"] for s in specs] == ["g5.xlarge", "g5.2xlarge"]
    assert [s["WeightedCapacity"] for s in specs] == [1, 2]
    assert [s.get("SubnetId") for s in specs] == [net["a"], net["b"]]
    assert specs[0]["SpotPrice"] == "1.00"
    assert all("UserData" not in s for s in specs)
    assert cfg["LaunchTemplateConfigs"] == []

    e = one(result.resources, "ec2.fleet", fleet)
    assert_live_identity(e, fleet, "batch", ec2_arn("fleet", fleet))
    assert e.attrs["Type"] == "maintain"
    assert e.attrs["TargetCapacitySpecification"] == {
        "TotalTargetCapacity": 6,
        "OnDemandTargetCapacity": 2,
        "SpotTargetCapacity": 4,
        "DefaultTargetCapacityType": "spot",
    }
    assert e.attrs["SpotOptions"]["AllocationStrategy"] == "capacity-optimized"
    (ltc,) = e.attrs["LaunchTemplateConfigs"]
    assert ltc["LaunchTemplateSpecification"]["LaunchTemplateId"] == lt["LaunchTemplateId"]
    assert ltc["Overrides"] == [
        {
            "InstanceType": "g5.xlarge",
            "SubnetId": net["a"],
            "MaxPrice": "0.80",
            "WeightedCapacity": 2,
        }
    ]


# -- networking ----------------------------------------------------------------------------------


def test_vpcs_subnets_route_tables_gateways_endpoints(aws: None) -> None:
    net = network()
    ec2 = client("ec2")
    ec2.modify_subnet_attribute(SubnetId=net["b"], MapPublicIpOnLaunch={"Value": True})
    ec2.create_tags(Resources=[net["vpc"]], Tags=[{"Key": "Name", "Value": "gpu-vpc"}])
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=net["vpc"])
    public_rt = ec2.create_route_table(VpcId=net["vpc"])["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=public_rt, SubnetId=net["b"])
    main_rt = ec2.describe_route_tables(
        Filters=[
            {"Name": "vpc-id", "Values": [net["vpc"]]},
            {"Name": "association.main", "Values": ["true"]},
        ]
    )["RouteTables"][0]["RouteTableId"]
    policy = (
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",'
        '"Action":"s3:GetObject","Resource":"arn:aws:s3:::data/*"}]}'
    )
    ep = ec2.create_vpc_endpoint(
        VpcId=net["vpc"],
        ServiceName=f"com.amazonaws.{REGION}.s3",
        VpcEndpointType="Gateway",
        RouteTableIds=[main_rt],
        PolicyDocument=policy,
    )["VpcEndpoint"]["VpcEndpointId"]

    mark = RECORDER.mark()
    result = run(
        {"ec2.vpc", "ec2.subnet", "ec2.route_table", "ec2.internet_gateway", "ec2.vpc_endpoint"}
    )
    assert result.errors == []
    sent = [op for _, op in RECORDER.since(mark)]
    assert sent.count("DescribeRouteTables") == 1  # once per region, joined in memory
    assert sent.count("DescribeSubnets") == 1

    v = one(result.resources, "ec2.vpc", net["vpc"])
    assert_live_identity(v, net["vpc"], "gpu-vpc", ec2_arn("vpc", net["vpc"]))
    assert v.attrs["CidrBlock"] == "10.0.0.0/16"

    a = one(result.resources, "ec2.subnet", net["a"])
    assert a.provenance.arn == ec2_arn("subnet", net["a"])
    assert a.attrs["VpcId"] == net["vpc"]
    assert a.attrs["CidrBlock"] == "10.0.1.0/24"
    assert a.attrs["AvailabilityZone"] == "us-east-1a"
    assert a.attrs["MapPublicIpOnLaunch"] is False
    assert one(result.resources, "ec2.subnet", net["b"]).attrs["MapPublicIpOnLaunch"] is True

    pub = one(result.resources, "ec2.route_table", public_rt)
    assert pub.provenance.arn == ec2_arn("route-table", public_rt)
    assert pub.attrs["VpcId"] == net["vpc"]
    assert pub.attrs["Main"] is False
    assert [(x["SubnetId"], x["Main"]) for x in pub.attrs["Associations"]] == [(net["b"], False)]
    assert {"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": igw}.items() <= next(
        r for r in pub.attrs["Routes"] if r.get("DestinationCidrBlock") == "0.0.0.0/0"
    ).items()
    main = one(result.resources, "ec2.route_table", main_rt)
    assert main.attrs["Main"] is True
    assert [x["Main"] for x in main.attrs["Associations"]] == [True]

    g = one(result.resources, "ec2.internet_gateway", igw)
    assert g.attrs["VpcId"] == net["vpc"]
    assert g.provenance.arn == ec2_arn("internet-gateway", igw)

    e = one(result.resources, "ec2.vpc_endpoint", ep)
    assert e.provenance.arn == ec2_arn("vpc-endpoint", ep)
    assert e.attrs["VpcId"] == net["vpc"]
    assert e.attrs["ServiceName"] == f"com.amazonaws.{REGION}.s3"
    assert e.attrs["VpcEndpointType"] == "Gateway"
    assert e.attrs["RouteTableIds"] == [main_rt]
    assert e.attrs["PolicyDocument"] == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::data/*",
            }
        ],
    }


# -- selection -----------------------------------------------------------------------------------


def test_only_the_needed_calls_are_made(aws: None) -> None:
    mark = RECORDER.mark()
    result = run({"ec2.volume"})
    assert sorted(set(RECORDER.since(mark))) == [
        ("ec2", "DescribeVolumes"),
        ("sts", "GetCallerIdentity"),
    ]
    assert [c["service"] for c in result.coverage] == ["ebs"]


@pytest.mark.parametrize("kinds", [DEFAULT_KINDS, ALL_KINDS])
def test_every_collector_runs_for_all_kinds(aws: None, kinds: Any) -> None:
    result = run(kinds)
    # the GPU utilization collector (CloudWatch) runs only when RS-* ask for its kinds
    utilization = {"cloudwatch"} if kinds is ALL_KINDS else set()
    # COST-001's reads (off by default: Cost Explorer bills each request) likewise
    commitments = {"asg_capacity", "commitments"} if kinds is ALL_KINDS else set()
    assert {c["service"] for c in result.coverage} == {
        "budgets",  # read once per account
        "ebs",
        "instances",
        "launch_templates",
        "autoscaling",
        "spot",
        "eks",
        "batch",
        "sagemaker",
        "vpc",
        "alarms",
        "events",
        "s3",
        "spot_prices",
    } | utilization | commitments
    assert all(c["account"] == ACCOUNT and c["region"] == (
        "*" if c["service"] in ("budgets", "commitments") else REGION) for c in result.coverage)


# -- spot prices ---------------------------------------------------------------------------------


def test_current_spot_prices_are_attached_once_per_region(aws: None) -> None:
    ec2 = client("ec2")
    lt = ec2.create_launch_template(
        LaunchTemplateName="spot-lt",
        LaunchTemplateData={
            "InstanceType": "g5.xlarge",
            "ImageId": AMI,
            "InstanceMarketOptions": {"MarketType": "spot"},
        },
    )["LaunchTemplate"]["LaunchTemplateId"]
    client("autoscaling").create_auto_scaling_group(
        AutoScalingGroupName="mixed",
        MinSize=0,
        MaxSize=2,
        AvailabilityZones=["us-east-1a"],
        MixedInstancesPolicy={
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateId": lt},
                "Overrides": [{"InstanceType": "g5.2xlarge"}],
            }
        },
    )
    mark = RECORDER.mark()
    result = run({"ec2.launch_template", "autoscaling.group", SPOT_PRICES})
    assert [op for _, op in RECORDER.since(mark)].count("DescribeSpotPriceHistory") == 1
    assert result.errors == []
    template = one(result.resources, "ec2.launch_template", lt)
    assert template.attrs["CurrentSpotPrices"] == {"g5.xlarge": "0.00001"}  # moto's price
    group = one(result.resources, "autoscaling.group", "mixed")
    assert group.attrs["CurrentSpotPrices"] == {"g5.2xlarge": "0.00001", "g5.xlarge": "0.00001"}
    # not asked for: not called, not attached
    mark = RECORDER.mark()
    plain = run({"ec2.launch_template"})
    assert "CurrentSpotPrices" not in one(plain.resources, "ec2.launch_template").attrs
    assert ("ec2", "DescribeSpotPriceHistory") not in RECORDER.since(mark)
