"""EC2 placement groups (NET-001: a cluster placement group keeps multi-node training on one
network spine). Declared in IaC only: live, a group or template names its placement group, and
its strategy is not read (DescribePlacementGroups is not among the audit's calls), so NET-001
says UNKNOWN there rather than guess the strategy."""

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
    ),
)
