"""EC2 placement groups (NET-001: a cluster placement group keeps multi-node training on one
network spine)."""

from __future__ import annotations

from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import Int, Str

KINDS = (
    Kind(
        name="ec2.placement_group",
        doc="an EC2 placement group; aliases: its name",
        attributes={"GroupName": Str(), "Strategy": Str(doc="cluster, spread or partition"),
                    "PartitionCount": Int(), "SpreadLevel": Str()},
        terraform=(Terraform("aws_placement_group"),),
        cloudformation=(CloudFormation("AWS::EC2::PlacementGroup"),),
        live="DescribePlacementGroups",
    ),
)
