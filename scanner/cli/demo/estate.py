"""The sandbox account of `gpuaudit demo`: a GPU estate seeded into moto in this process.

What a first audit of a GPU team's account typically finds, one of each:

- us-east-1 (encryption by default off):
  - ``llm-training``: an Auto Scaling group of 4 p4d.24xlarge, 100 % on-demand (ASG-001);
  - ``inference-spot`` (g5.2xlarge, a bid of 1.10 $/h, above the 0.7 x on-demand cap) and
    ``batch-spot`` (g6.xlarge, no bid at all, so up to the on-demand price) spot launch
    templates, and an ``inference`` group of spot capacity without a bid cap (SPOT-001);
  - a 2 TiB unencrypted ``datasets-scratch`` volume, beside the instances' root volumes, which
    are unencrypted too (the image's mapping; EBS-001);
  - the ``training`` VPC that hosts all of that, without an S3 gateway endpoint (VPC-001);
  - ``notebook-idle``, a g5.xlarge whose GPU did nothing for 14 days, and ``train-exp-7``, a
    p3.8xlarge whose 4 V100s peaked at a fraction of one (three never used), both with 14 days
    of CloudWatch agent GPU metrics (CWAgent ``nvidia_smi_*``, hourly) for right-sizing;
- us-west-2, configured well: encryption by default on, an S3 gateway endpoint with a scoped
  policy, an encrypted volume and a spot template with a bid inside the band.

Seeding writes through plain boto3 clients (moto intercepts them); gpuaudit itself only reads,
through its read-only client factory, as in a real account.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

AMI = "ami-12c6146b"  # an image moto knows in every region
EAST, WEST = "us-east-1", "us-west-2"
REGIONS = (EAST, WEST)
LOOKBACK_DAYS = 14
METRIC_BATCH = 100  # data points per PutMetricData call

# (GPU name as nvidia-smi prints it, memory.total in MiB) per instance type seeded with metrics
GPUS = {
    "g5.xlarge": ("NVIDIA A10G", 1, 23028.0),
    "p3.8xlarge": ("Tesla V100-SXM2-16GB", 4, 16384.0),
}


@dataclass
class Estate:
    """Ids of what was seeded, for the demo's summary and for tests."""

    account: str = ""
    ids: dict[str, str] = field(default_factory=dict)  # "kind:name" or instance name -> id
    types: dict[str, str] = field(default_factory=dict)  # instance name -> instance type
    metric_points: int = 0


def seed(now: dt.datetime | None = None) -> Estate:
    """Create the estate in the moto backend this process talks to (``mock_aws`` active)."""
    import boto3

    estate = Estate()
    estate.account = boto3.client("sts", region_name=EAST).get_caller_identity()["Account"]
    _seed_east(estate)
    _seed_west(estate)
    when = (now or dt.datetime.now(dt.timezone.utc)).replace(minute=0, second=0, microsecond=0)
    cloudwatch = boto3.client("cloudwatch", region_name=EAST)
    for name, pattern in (("notebook-idle", _idle), ("train-exp-7", _oversized)):
        estate.metric_points += put_gpu_metrics(
            cloudwatch, estate.ids[name], estate.types[name], when, pattern)
    return estate


def _tags(kind: str, name: str, **extra: str) -> list[dict[str, Any]]:
    tags = [{"Key": "Name", "Value": name}, {"Key": "team", "Value": "ml-platform"}]
    tags += [{"Key": k, "Value": v} for k, v in extra.items()]
    return [{"ResourceType": kind, "Tags": tags}]


def _seed_east(estate: Estate) -> None:
    import boto3

    ec2 = boto3.client("ec2", region_name=EAST)
    autoscaling = boto3.client("autoscaling", region_name=EAST)
    ids = estate.ids
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16", TagSpecifications=_tags("vpc", "training"))
    ids["vpc:training"] = vpc["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(
        VpcId=ids["vpc:training"], CidrBlock="10.20.1.0/24", AvailabilityZone=f"{EAST}a",
        TagSpecifications=_tags("subnet", "training-a"),
    )["Subnet"]["SubnetId"]
    ids["subnet:training-a"] = subnet

    encrypted_root = [{"DeviceName": "/dev/xvda", "Ebs": {"VolumeSize": 200, "Encrypted": True,
                                                          "VolumeType": "gp3"}}]
    ids["lt:train-p4d"] = ec2.create_launch_template(
        LaunchTemplateName="train-p4d",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "p4d.24xlarge"},
    )["LaunchTemplate"]["LaunchTemplateId"]
    ids["lt:inference-spot"] = ec2.create_launch_template(
        LaunchTemplateName="inference-spot",
        LaunchTemplateData={
            "ImageId": AMI, "InstanceType": "g5.2xlarge", "BlockDeviceMappings": encrypted_root,
            "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "1.10"}},
        },
    )["LaunchTemplate"]["LaunchTemplateId"]
    # The inference group sets its spot share in its mixed instances policy: its template must
    # not request spot itself (AWS rejects that combination).
    ids["lt:inference"] = ec2.create_launch_template(
        LaunchTemplateName="inference",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "g5.2xlarge",
                            "BlockDeviceMappings": encrypted_root},
    )["LaunchTemplate"]["LaunchTemplateId"]
    ids["lt:batch-spot"] = ec2.create_launch_template(
        LaunchTemplateName="batch-spot",
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "g6.xlarge",
                            "InstanceMarketOptions": {"MarketType": "spot"}},
    )["LaunchTemplate"]["LaunchTemplateId"]

    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="llm-training", MinSize=2, MaxSize=8, DesiredCapacity=4,
        VPCZoneIdentifier=subnet,
        LaunchTemplate={"LaunchTemplateName": "train-p4d", "Version": "$Default"},
        Tags=[{"Key": "team", "Value": "ml-platform", "PropagateAtLaunch": True}],
    )
    autoscaling.create_auto_scaling_group(
        AutoScalingGroupName="inference", MinSize=0, MaxSize=6, DesiredCapacity=0,
        VPCZoneIdentifier=subnet,
        MixedInstancesPolicy={
            "LaunchTemplate": {
                "LaunchTemplateSpecification": {"LaunchTemplateName": "inference",
                                                "Version": "$Default"},
                "Overrides": [{"InstanceType": "g5.2xlarge"}, {"InstanceType": "g6.xlarge"}],
            },
            "InstancesDistribution": {
                "OnDemandBaseCapacity": 0,
                "OnDemandPercentageAboveBaseCapacity": 30,
                "SpotAllocationStrategy": "price-capacity-optimized",
            },
        },
    )
    for name, itype in (("notebook-idle", "g5.xlarge"), ("train-exp-7", "p3.8xlarge")):
        inst = ec2.run_instances(
            ImageId=AMI, MinCount=1, MaxCount=1, InstanceType=itype, SubnetId=subnet,
            TagSpecifications=[*_tags("instance", name), *_tags("volume", f"{name}-root")],
        )["Instances"][0]
        ids[name] = inst["InstanceId"]
        estate.types[name] = itype
    ids["volume:datasets-scratch"] = ec2.create_volume(
        Size=2048, AvailabilityZone=f"{EAST}a", VolumeType="gp3",
        TagSpecifications=_tags("volume", "datasets-scratch"),
    )["VolumeId"]
    ids["volume:checkpoints"] = ec2.create_volume(
        Size=1024, AvailabilityZone=f"{EAST}a", VolumeType="gp3", Encrypted=True,
        TagSpecifications=_tags("volume", "checkpoints"),
    )["VolumeId"]


def _seed_west(estate: Estate) -> None:
    import boto3

    ec2 = boto3.client("ec2", region_name=WEST)
    ids = estate.ids
    ec2.enable_ebs_encryption_by_default()
    vpc = ec2.create_vpc(CidrBlock="10.40.0.0/16", TagSpecifications=_tags("vpc", "serving"))
    ids["vpc:serving"] = vpc["Vpc"]["VpcId"]
    tables = ec2.describe_route_tables(
        Filters=[{"Name": "vpc-id", "Values": [ids["vpc:serving"]]}]
    )["RouteTables"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "s3:ListBucket"],
            "Resource": ["arn:aws:s3:::serving-models", "arn:aws:s3:::serving-models/*"],
            "Condition": {"StringEquals": {"aws:PrincipalAccount": estate.account}},
        }],
    }
    ids["vpce:serving-s3"] = ec2.create_vpc_endpoint(
        VpcId=ids["vpc:serving"], ServiceName=f"com.amazonaws.{WEST}.s3",
        VpcEndpointType="Gateway", RouteTableIds=[t["RouteTableId"] for t in tables],
        PolicyDocument=json.dumps(policy),
    )["VpcEndpoint"]["VpcEndpointId"]
    ids["volume:serving-models"] = ec2.create_volume(
        Size=500, AvailabilityZone=f"{WEST}a", VolumeType="gp3", Encrypted=True,
        TagSpecifications=_tags("volume", "serving-models"),
    )["VolumeId"]
    ids["lt:serving-spot"] = ec2.create_launch_template(
        LaunchTemplateName="serving-spot",
        LaunchTemplateData={
            "ImageId": AMI, "InstanceType": "g6.xlarge",
            "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "0.45"}},
        },
    )["LaunchTemplate"]["LaunchTemplateId"]


# -- CloudWatch agent GPU metrics -------------------------------------------------------------


def _idle(hour: int, gpu: int, total: float) -> tuple[float, float]:
    """(utilization %, memory used MiB): a notebook left running, a driver context loaded."""
    return (1.0 if hour % 24 == 9 else 0.0), 412.0


def _oversized(hour: int, gpu: int, total: float) -> tuple[float, float]:
    """A job sized for 4 V100s that keeps one of them busy a quarter of the time, in a daily
    rhythm: the whole load fits on one GPU with room to spare (and nothing crosses NVLink)."""
    if gpu >= 1:
        return 0.0, 310.0
    day = 0.5 + 0.5 * math.sin(2 * math.pi * (hour % 24) / 24)
    return round(6.0 + 16.0 * day, 1), round(2100.0 + 1400.0 * day)


def gpu_series(
    instance_id: str, instance_type: str, end: dt.datetime, pattern: Any
) -> Iterator[dict[str, Any]]:
    """PutMetricData entries: hourly points over the lookback, per GPU and metric."""
    name, count, total = GPUS[instance_type]
    hours = LOOKBACK_DAYS * 24
    for h in range(hours):
        when = end - dt.timedelta(hours=hours - 1 - h)
        for gpu in range(count):
            util, used = pattern(when.hour, gpu, total)
            dims = [{"Name": "InstanceId", "Value": instance_id},
                    {"Name": "index", "Value": str(gpu)}, {"Name": "name", "Value": name}]
            for metric, value, unit in (("nvidia_smi_utilization_gpu", util, "Percent"),
                                        ("nvidia_smi_memory_used", used, "Megabytes"),
                                        ("nvidia_smi_memory_total", total, "Megabytes")):
                yield {"MetricName": metric, "Dimensions": dims, "Timestamp": when,
                       "Value": value, "Unit": unit}


def put_gpu_metrics(
    cloudwatch: Any, instance_id: str, instance_type: str, end: dt.datetime, pattern: Any
) -> int:
    points = list(gpu_series(instance_id, instance_type, end, pattern))
    for batch in _chunks(points, METRIC_BATCH):
        cloudwatch.put_metric_data(Namespace="CWAgent", MetricData=batch)
    return len(points)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
