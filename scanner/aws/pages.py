"""One answer, read across its pages: each resource once, every resource from the asked region.

A paginated answer can hold the same resource twice (a list that changes between pages, a
proxy or a paginator bug repeating a page): counted twice, a volume would give a PASS and a FAIL
or double a saving. ``one_copy_each`` keeps one copy of each id when the copies agree, and when
they disagree the answer is not taken at all (``InconsistentAnswer``: ERROR for the kinds the
call feeds in that region, naming the id): which copy is right cannot be told, and a silent pick
could be the wrong verdict.

An answer about another region (a wrong endpoint, a proxy or a cache answering for the wrong
region: an ARN or an Availability Zone of us-west-2 in a us-east-1 reply) is no answer about the
asked one: ``check_region`` raises ``ForeignAnswer`` (the same ERROR), never turning the
resources into data of the asked region. What is checked: every ``AvailabilityZone`` (and
``AvailabilityZones``) value, and every ARN under a key that names one (``...Arn``, ``...ARN``,
``arn``) or under a KMS key id, at any depth of the item (at most :data:`MAX_DEPTH`); an ARN of
a global service (IAM: an empty region) passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from scanner.aws.answers import UnreadableAnswer

MAX_DEPTH = 8

# The list key of an answer -> the fields that identify one of its items. Keys not listed
# (metrics, datapoints) are left as they are: an item without an identity is not a resource.
IDENTITY: dict[str, tuple[str, ...]] = {
    "Volumes": ("VolumeId",),
    "Reservations": ("ReservationId",),
    "LaunchTemplates": ("LaunchTemplateId",),
    "LaunchTemplateVersions": ("LaunchTemplateId", "VersionNumber"),
    "AutoScalingGroups": ("AutoScalingGroupName",),
    "LaunchConfigurations": ("LaunchConfigurationName",),
    "ScalingPolicies": ("PolicyARN",),
    "SpotInstanceRequests": ("SpotInstanceRequestId",),
    "SpotFleetRequestConfigs": ("SpotFleetRequestId",),
    "Fleets": ("FleetId",),
    "Vpcs": ("VpcId",),
    "Subnets": ("SubnetId",),
    "RouteTables": ("RouteTableId",),
    "InternetGateways": ("InternetGatewayId",),
    "VpcEndpoints": ("VpcEndpointId",),
    "Aliases": ("AliasName",),
    "computeEnvironments": ("computeEnvironmentArn",),
    "ClusterSummaries": ("ClusterArn",),
    "SpotPriceHistory": ("AvailabilityZone", "InstanceType", "ProductDescription", "Timestamp"),
    "clusters": (),  # EKS: names (strings) are their own identity
    "nodegroups": (),
    "Buckets": ("Name",),
}
_ZONE_KEYS = frozenset({"AvailabilityZone", "availabilityZone", "AvailabilityZones"})


class InconsistentAnswer(UnreadableAnswer):
    """Two copies of one resource in one answer say different things."""


class ForeignAnswer(UnreadableAnswer):
    """The answer holds a resource of another region than the one asked."""


def _identity(key: str, item: Any) -> tuple[Any, ...] | None:
    fields = IDENTITY.get(key)
    if fields is None:
        return None
    if not fields:
        return (item,) if isinstance(item, str) else None
    if not isinstance(item, dict):
        return None
    ident = tuple(item.get(f) for f in fields)
    return None if all(v is None for v in ident) else ident


def _shown(ident: tuple[Any, ...]) -> str:
    return "/".join(str(v) for v in ident)[:120]


def one_copy_each(key: str, items: Iterable[Any]) -> list[Any]:
    """``items`` of the list ``key`` with each resource once (see the module docstring)."""
    seen: dict[tuple[Any, ...], Any] = {}
    out: list[Any] = []
    for item in items:
        ident = _identity(key, item)
        if ident is None:
            out.append(item)
            continue
        first = seen.get(ident)
        if first is None:
            seen[ident] = item
            out.append(item)
        elif first != item:
            raise InconsistentAnswer(
                f"{key}: {_shown(ident)} is in the answer twice, and the copies disagree "
                "(a list that changed between pages, or a repeated page): not read")
    if key == "Reservations":
        out = _one_instance_each(out)
    return out


def _one_instance_each(reservations: list[Any]) -> list[Any]:
    """The same instance in two reservations: one copy (or the answer, if they disagree)."""
    seen: dict[str, Any] = {}
    out = []
    for reservation in reservations:
        instances = reservation.get("Instances") if isinstance(reservation, dict) else None
        if not isinstance(instances, list):
            out.append(reservation)
            continue
        kept = []
        for inst in instances:
            iid = inst.get("InstanceId") if isinstance(inst, dict) else None
            if not isinstance(iid, str):
                kept.append(inst)
                continue
            first = seen.get(iid)
            if first is None:
                seen[iid] = inst
                kept.append(inst)
            elif first != inst:
                raise InconsistentAnswer(
                    f"Reservations: instance {iid[:40]} is in the answer twice, and the copies "
                    "disagree: not read")
        out.append(reservation if len(kept) == len(instances)
                   else {**reservation, "Instances": kept})
    return out


def _region_of_zone(zone: str, region: str) -> bool:
    """``zone`` (us-east-1a, us-west-2-lax-1a) is in ``region``."""
    if not zone.startswith(region):
        return False
    rest = zone[len(region):]
    return rest == "" or rest[0] == "-" or rest[0].isalpha()


def _arn_key(key: str) -> bool:
    low = key.lower()
    return low.endswith("arn") or low.endswith("arns") or low in ("kmskeyid", "kmskeyarn")


def check_region(value: Any, region: str, what: str = "") -> None:
    """Raise ``ForeignAnswer`` when ``value`` (an item, or a whole answer) names a zone or an
    ARN of another region than ``region``."""
    _walk(value, region, what, 0)


def _walk(value: Any, region: str, what: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                if k in _ZONE_KEYS:
                    for zone in (v if isinstance(v, list) else [v]):
                        if isinstance(zone, str) and zone and not _region_of_zone(zone, region):
                            _foreign(what, region, f"{k} {zone[:40]}")
                elif _arn_key(k):
                    for arn in (v if isinstance(v, list) else [v]):
                        _check_arn(arn, region, what, k)
            if isinstance(v, dict | list):
                _walk(v, region, what, depth + 1)
    elif isinstance(value, list):
        for v in value:
            if isinstance(v, dict | list):
                _walk(v, region, what, depth + 1)


def _check_arn(arn: Any, region: str, what: str, key: str) -> None:
    if not isinstance(arn, str) or not arn.startswith("arn:"):
        return
    parts = arn.split(":", 5)
    if len(parts) > 3 and parts[3] and parts[3] != region:
        _foreign(what, region, f"{key} of region {parts[3][:30]}")


def _foreign(what: str, region: str, found: str) -> None:
    raise ForeignAnswer(
        f"{what + ': ' if what else ''}the answer to a {region} request holds {found}: not "
        f"an answer about {region} (a wrong endpoint, proxy or cache): not read")
