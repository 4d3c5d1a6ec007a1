"""Declared facts: what a live collector adds to resources of other kinds when a policy needs it.

A fact has a name (what a policy lists in ``needs`` and a collector's ``Call`` feeds, so that a
failed call is a gap on exactly the policies that needed the fact), and the attributes it adds to
each kind. A resource without the attribute simply was not given the fact (IaC, or not read).
"""

from __future__ import annotations

from dataclasses import dataclass

from scanner.kinds.types import FieldType, Map, Price, Str


@dataclass(frozen=True)
class Fact:
    name: str
    doc: str
    # kind -> (attribute, type) the fact adds to resources of that kind
    adds: tuple[tuple[str, str, FieldType], ...]

    def attribute(self, kind: str) -> str:
        """The attribute this fact adds to resources of ``kind``."""
        for k, attr, _t in self.adds:
            if k == kind:
                return attr
        raise KeyError(f"fact {self.name} adds nothing to {kind}")

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(k for k, _a, _t in self.adds))


_SPOT_CAPABLE = ("ec2.launch_template", "autoscaling.group", "autoscaling.launch_configuration",
                 "ec2.spot_request", "ec2.spot_fleet", "ec2.fleet")

SPOT_PRICES = Fact(
    name="ec2.spot_prices",
    doc="The current spot price of each instance type the resource can launch, the lowest over "
        "the region's Availability Zones (live: DescribeSpotPriceHistory).",
    adds=tuple((k, "CurrentSpotPrices", Map(Price())) for k in _SPOT_CAPABLE),
)

EBS_KMS_KEYS = Fact(
    name="ec2.ebs_kms_keys",
    doc="Which KMS keys EBS uses: whether an encrypted volume's key is the AWS-managed "
        "alias/aws/ebs key (kms:ListAliases), and the account's default EBS key "
        "(GetEbsDefaultKmsKeyId).",
    adds=(("ec2.volume", "KmsKeyManager", Str(doc='"AWS" or "CUSTOMER"')),
          ("ec2.ebs_defaults", "KmsKeyId", Str(doc="the default EBS key"))),
)

FACTS: tuple[Fact, ...] = (SPOT_PRICES, EBS_KMS_KEYS)
