"""Networking: VPCs, subnets, route tables and routes, internet gateways, VPC endpoints.

A ``Ref`` to a VPC with attr ``default_route_table_id`` / ``main_route_table_id`` means that
VPC's main route table."""

from __future__ import annotations

from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import Bool, Ids, Json, List, Obj, Ref, Str

VPC = ("ec2.vpc",)
TABLE = ("ec2.route_table",)
SUBNET = ("ec2.subnet",)
ENDPOINT = ("ec2.vpc_endpoint",)

ROUTE = {
    "DestinationCidrBlock": Str(),
    "DestinationIpv6CidrBlock": Str(),
    "DestinationPrefixListId": Str(),
    "GatewayId": Ref(kinds=("ec2.internet_gateway",)),
    "NatGatewayId": Str(),
    "TransitGatewayId": Str(),
    "VpcEndpointId": Ref(kinds=ENDPOINT),
    "NetworkInterfaceId": Str(),
    "VpcPeeringConnectionId": Str(),
    "EgressOnlyInternetGatewayId": Str(),
    "CarrierGatewayId": Str(),
    "LocalGatewayId": Str(),
    "CoreNetworkArn": Str(),
}
_ROUTE_BLOCK = {"route": ("gateway_id", "nat_gateway_id", "vpc_endpoint_id",
                          "transit_gateway_id", "network_interface_id",
                          "vpc_peering_connection_id", "egress_only_gateway_id")}

KINDS = (
    Kind(
        name="ec2.vpc",
        doc="a VPC",
        attributes={"CidrBlock": Str(), "InstanceTenancy": Str(), "EnableDnsSupport": Bool(),
                    "EnableDnsHostnames": Bool(), "DefaultRouteTableId": Str(),
                    "MainRouteTableId": Str(), "IsDefault": Bool(doc="live")},
        terraform=(Terraform("aws_vpc"),),
        cloudformation=(CloudFormation("AWS::EC2::VPC"),),
        live="DescribeVpcs",
    ),
    Kind(
        name="ec2.subnet",
        doc="a subnet",
        attributes={"VpcId": Ref(kinds=VPC), "CidrBlock": Str(), "AvailabilityZone": Str(),
                    "AvailabilityZoneId": Str(), "MapPublicIpOnLaunch": Bool(),
                    "DefaultForAz": Bool(doc="live: a default subnet of the default VPC")},
        terraform=(Terraform("aws_subnet"),),
        cloudformation=(CloudFormation("AWS::EC2::Subnet"),),
        live="DescribeSubnets",
    ),
    Kind(
        name="ec2.route_table",
        doc="a route table",
        attributes={
            "VpcId": Ref(kinds=VPC),
            "Routes": List(Obj(dict(ROUTE))),
            "Main": Bool(doc="live, or Terraform aws_default_route_table"),
            "Associations": List(Obj({"SubnetId": Ref(kinds=SUBNET), "Main": Bool(),
                                      "GatewayId": Str()}), doc="live"),
        },
        terraform=(Terraform("aws_route_table", blocks=_ROUTE_BLOCK,
                             note="inline route blocks become Routes"),
                   Terraform("aws_default_route_table", blocks=_ROUTE_BLOCK,
                             note="a route table with Main: true")),
        cloudformation=(CloudFormation("AWS::EC2::RouteTable"),),
        live="DescribeRouteTables",
    ),
    Kind(
        name="ec2.route",
        doc="a route declared on its own (IaC)",
        attributes={"RouteTableId": Ref(kinds=TABLE), **ROUTE},
        terraform=(Terraform("aws_route"),),
        cloudformation=(CloudFormation("AWS::EC2::Route"),),
    ),
    Kind(
        name="ec2.route_table_association",
        doc="a subnet's (or gateway's) explicit route table",
        attributes={"RouteTableId": Ref(kinds=TABLE), "SubnetId": Ref(kinds=SUBNET),
                    "GatewayId": Str()},
        terraform=(Terraform("aws_route_table_association"),),
        cloudformation=(CloudFormation("AWS::EC2::SubnetRouteTableAssociation"),),
    ),
    Kind(
        name="ec2.main_route_table_association",
        doc="which route table is a VPC's main table",
        attributes={"VpcId": Ref(kinds=VPC), "RouteTableId": Ref(kinds=TABLE)},
        terraform=(Terraform("aws_main_route_table_association"),),
    ),
    Kind(
        name="ec2.internet_gateway",
        doc="an internet gateway",
        attributes={"VpcId": Ref(kinds=VPC, doc="Terraform inline attachment; live")},
        terraform=(Terraform("aws_internet_gateway"),),
        cloudformation=(CloudFormation("AWS::EC2::InternetGateway"),),
        live="DescribeInternetGateways",
    ),
    Kind(
        name="ec2.gateway_attachment",
        doc="an internet gateway attached to a VPC",
        attributes={"VpcId": Ref(kinds=VPC),
                    "InternetGatewayId": Ref(kinds=("ec2.internet_gateway",))},
        terraform=(Terraform("aws_internet_gateway_attachment"),),
        cloudformation=(CloudFormation("AWS::EC2::VPCGatewayAttachment"),),
    ),
    Kind(
        name="ec2.vpc_endpoint",
        doc="a VPC endpoint",
        attributes={
            "VpcId": Ref(kinds=VPC),
            "ServiceName": Str(doc="S3 by pattern com.amazonaws.<region>.s3"),
            "VpcEndpointType": Str(doc="absent = Gateway"),
            "RouteTableIds": Ids(kinds=TABLE),
            "SubnetIds": Ids(kinds=SUBNET),
            "SecurityGroupIds": Ids(),
            "PrivateDnsEnabled": Bool(),
            "PolicyDocument": Json(doc="JSON text parsed by the sources"),
        },
        terraform=(Terraform("aws_vpc_endpoint"),),
        cloudformation=(CloudFormation("AWS::EC2::VPCEndpoint"),),
        live="DescribeVpcEndpoints",
    ),
    Kind(
        name="ec2.vpc_endpoint_route_table_association",
        doc="a route table added to a gateway endpoint on its own",
        attributes={"VpcEndpointId": Ref(kinds=ENDPOINT), "RouteTableId": Ref(kinds=TABLE)},
        terraform=(Terraform("aws_vpc_endpoint_route_table_association"),),
    ),
    Kind(
        name="ec2.vpc_endpoint_policy",
        doc="an endpoint policy declared on its own",
        attributes={"VpcEndpointId": Ref(kinds=ENDPOINT), "PolicyDocument": Json()},
        terraform=(Terraform("aws_vpc_endpoint_policy"),),
    ),
)
