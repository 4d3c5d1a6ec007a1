# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""The same policies on live resources: collected from moto, evaluated by the engine."""

from __future__ import annotations

from typing import Any

from scanner.aws.collect import collect
from scanner.aws.collectors.ebs import EBS_KMS
from scanner.aws.collectors.spot_prices import SPOT_PRICES
from scanner.aws.registry import DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import evaluate
from scanner.model import Finding, SourceResult
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    REGION,
    Fault,
    aws,
    aws_env,
    client,
    declared_only,
    ec2_error,
    session_maker,
)

SCOPE = f"{ACCOUNT}/{REGION}"


def results(result: SourceResult, *policies: str) -> dict[tuple[str, str], Finding]:
    findings = evaluate(result.resources, policy_ids=policies, gaps=result.gaps)
    return {(f.policy_id, f.resource["id"]): f for f in findings}


def status(found: dict[tuple[str, str], Finding]) -> dict[tuple[str, str], str]:
    return {k: f.status.value for k, f in found.items()}


def gpu_network() -> dict[str, Any]:
    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    private = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.2.0/24")["Subnet"]["SubnetId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    public_rt = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_rt, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=public_rt, SubnetId=public)
    main_rt = ec2.describe_route_tables(
        Filters=[
            {"Name": "vpc-id", "Values": [vpc]},
            {"Name": "association.main", "Values": ["true"]},
        ]
    )["RouteTables"][0]["RouteTableId"]
    # the S3 gateway endpoint covers the main table only, with the default (full) policy
    ep = ec2.create_vpc_endpoint(
        VpcId=vpc, ServiceName=f"com.amazonaws.{REGION}.s3", RouteTableIds=[main_rt]
    )["VpcEndpoint"]["VpcEndpointId"]
    hidden = ec2.run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge", SubnetId=private
    )["Instances"][0]["InstanceId"]
    exposed = ec2.run_instances(
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType="p4d.24xlarge",
        NetworkInterfaces=[
            {"DeviceIndex": 0, "SubnetId": public, "AssociatePublicIpAddress": True}
        ],
    )["Instances"][0]["InstanceId"]
    return {
        "vpc": vpc,
        "private": private,
        "public": public,
        "endpoint": ep,
        "hidden": hidden,
        "exposed": exposed,
    }


def test_vpc_policies_on_live_network(aws: None) -> None:
    ids = gpu_network()
    result = collect(TargetSpec(regions=(REGION,)), kinds=DEFAULT_KINDS)
    found = status(results(result, "VPC-001", "VPC-002", "VPC-003", "VPC-004"))
    assert found[("VPC-001", ids["vpc"])] == "PASS"  # it has an S3 gateway endpoint
    assert found[("VPC-002", ids["private"])] == "PASS"  # main table, covered
    assert found[("VPC-002", ids["public"])] == "FAIL"  # explicit table, not covered
    assert found[("VPC-003", ids["endpoint"])] == "FAIL"  # moto's default: allow everything
    assert found[("VPC-004", ids["hidden"])] == "PASS"
    assert found[("VPC-004", ids["exposed"])] == "FAIL"  # live: it has a public IP


def test_a_gap_is_an_error_on_the_policies_that_need_it(aws: None) -> None:
    ids = gpu_network()
    denied = Fault(403, ec2_error("UnauthorizedOperation"))
    result = collect(
        TargetSpec(regions=(REGION,)),
        kinds=DEFAULT_KINDS,
        session_maker=session_maker({"before-send.ec2.DescribeRouteTables": denied}),
    )
    found = results(result, "VPC-001", "VPC-002", "EBS-002")
    # without route tables no subnet is judged: each is an ERROR naming the failed call, and
    # there is no scope-level ERROR beside them (the subnets carry it)
    for subnet in ("public", "private"):
        error = found[("VPC-002", ids[subnet])]
        assert error.status.value == "ERROR"
        assert error.message.startswith("could not evaluate: ec2.route_table not readable here: "
                                        "ec2:DescribeRouteTables: access denied")
    assert ("VPC-002", SCOPE) not in found
    # VPC-001 says where S3 traffic goes without an endpoint (the subnets' routes): it reads
    # route tables too, so it is not judged without them rather than say a route it cannot see
    vpc_001 = found[("VPC-001", ids["vpc"])]
    assert vpc_001.status.value == "ERROR" and "ec2:DescribeRouteTables" in vpc_001.message
    assert found[("EBS-002", SCOPE)].status.value == "FAIL"  # unaffected


def test_ebs_003_on_live_volumes_tells_the_aws_managed_key(aws: None) -> None:
    ec2 = client("ec2")
    aws_key = next(
        a["TargetKeyId"]
        for a in client("kms").list_aliases()["Aliases"]
        if a["AliasName"] == "alias/aws/ebs"
    )
    managed = ec2.create_volume(
        Size=1,
        AvailabilityZone="us-east-1a",
        Encrypted=True,
        KmsKeyId=f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{aws_key}",
    )
    custom = ec2.create_volume(
        Size=1,
        AvailabilityZone="us-east-1a",
        Encrypted=True,
        KmsKeyId=client("kms").create_key()["KeyMetadata"]["Arn"],
    )
    # moto has no GetEbsDefaultKmsKeyId: without the default key EBS-003 judges nothing in
    # the region (tests/test_aws_live_faults.py serves the key through the fault proxy and
    # checks the verdicts on these two volumes)
    result = collect(
        TargetSpec(regions=(REGION,)), kinds={"ec2.volume", "ec2.ebs_defaults", EBS_KMS}
    )
    assert [g.kinds for g in result.gaps] == [(EBS_KMS,)]
    found = status(results(result, "EBS-003"))
    assert found == {("EBS-003", managed["VolumeId"]): "ERROR",
                     ("EBS-003", custom["VolumeId"]): "ERROR"}


SPOT_HISTORY = (
    '<DescribeSpotPriceHistoryResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">'
    "<spotPriceHistorySet>"
    + "".join(
        f"<item><instanceType>g5.xlarge</instanceType><productDescription>Linux/UNIX"
        f"</productDescription><spotPrice>{price}</spotPrice><timestamp>2026-01-01T00:00:00Z"
        f"</timestamp><availabilityZone>{az}</availabilityZone></item>"
        for az, price in (("us-east-1a", "0.950000"), ("us-east-1b", "0.900000"))
    )
    + "</spotPriceHistorySet></DescribeSpotPriceHistoryResponse>"
)


def test_spot_002_live_max_price_below_the_current_spot_price(aws: None) -> None:
    lt = client("ec2").create_launch_template(
        LaunchTemplateName="cheap",
        LaunchTemplateData={
            "InstanceType": "g5.xlarge",
            "ImageId": AMI,
            "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "0.60"}},
        },
    )["LaunchTemplate"]["LaunchTemplateId"]
    prices = Fault(200, SPOT_HISTORY)
    result = collect(
        TargetSpec(regions=(REGION,)),
        kinds={"ec2.launch_template", SPOT_PRICES},
        session_maker=session_maker({"before-send.ec2.DescribeSpotPriceHistory": prices}),
    )
    assert prices.attempts == 1
    found = results(result, "SPOT-001", "SPOT-002")
    assert found[("SPOT-001", lt)].status.value == "PASS"  # 0.60 <= 0.7 x 1.006
    spot = found[("SPOT-002", lt)]
    assert spot.status.value == "FAIL"
    assert "below the current spot price 0.9 $/h" in spot.message  # the lowest zone's price
    assert spot.evidence["current_spot_price"] == 0.9
