"""The on-demand / spot split of a group at desired capacity, AWS's rule (see the design):
D = desired, else MinSize, and MaxSize when D is 0 (not applicable when that is 0 too);
od = min(base, D) + ceil(max(D - base, 0) x pct / 100) (AWS rounds in favour of on-demand).
A group without an instances distribution is all on-demand, or all spot when what it launches
from requests spot."""

from __future__ import annotations

import math
from typing import Any

from scanner.compute.values import to_int
from scanner.compute.view import (
    CAPACITY_BLOCK,
    MIXED,
    ON_DEMAND,
    PREPAID,
    RESERVATION_OPEN,
    RESERVATION_TARGETED,
    SPOT,
    Attr,
    Capacity,
    Split,
)
from scanner.model import Unknown


def group_split(capacity: Capacity, distribution: Any, *, all_spot: bool | Unknown,
                base: Attr, percent: Attr) -> Split | Unknown | None:
    """``distribution``: the mixed instances policy (a mapping, an Unknown, or falsy for none);
    ``base`` / ``percent`` its on-demand base capacity and percentage above base."""
    desired, basis = capacity.desired.value, "DesiredCapacity"
    if desired is None:
        desired, basis = capacity.min.value, "MinSize (no DesiredCapacity)"
    if isinstance(desired, Unknown):
        return desired
    if not desired:
        desired, basis = capacity.max.value, "MaxSize (desired is 0)"
        if isinstance(desired, Unknown):
            return desired
        if not desired:
            return None
    if isinstance(distribution, Unknown):
        return distribution
    if distribution:
        b, p = to_int(base.value), to_int(percent.value)
        if isinstance(b, Unknown):
            return b
        if isinstance(p, Unknown):
            return p
        b = b or 0
        p = 100 if p is None else p
        return Split(desired, on_demand_count(desired, b, p), capacity.weighted, basis)
    if isinstance(all_spot, Unknown):
        return all_spot
    return Split(desired, 0 if all_spot else desired, capacity.weighted, basis)


def on_demand_count(desired: int, base: int, percent: int) -> int:
    """AWS's rule: the on-demand units of ``desired`` with on-demand base capacity ``base`` and
    ``percent`` on-demand above base (rounded up, in favour of on-demand)."""
    return min(base, desired) + math.ceil(max(desired - base, 0) * percent / 100)


def setting_for(desired: int, on_demand: int) -> tuple[int, int]:
    """An (on-demand base capacity, percentage above base) that gives exactly ``on_demand`` of
    ``desired`` units by AWS's rule: base 0 and the largest percentage that rounds up to it
    where one exists, else a base of ``on_demand`` and 0 % above it."""
    percent = 100 * on_demand // desired if desired > 0 else 0
    if on_demand_count(desired, 0, percent) == on_demand:
        return 0, percent
    return on_demand, 0


def market_option(market: Any, reservation: Any, prefix: str = "") -> tuple[str | Unknown, str]:
    """The purchase option of a launch specification and the attribute that decides it.

    ``market``: ``InstanceMarketOptions.MarketType`` (None: on-demand); ``reservation``:
    ``CapacityReservationSpecification`` (None: none). The market decides first: ``spot`` is spot
    and ``capacity-block`` a Capacity Block whatever the reservation preference says (an open
    preference on spot keeps spot). On-demand capacity with a reservation target (an id or a
    resource group) or ``capacity-reservations-only`` runs in a reservation held ahead
    (reservation-targeted); with ``open`` it consumes a matching open reservation when there is
    one (reservation-open); with ``none`` or nothing it is on-demand."""
    market_path = f"{prefix}InstanceMarketOptions.MarketType"
    if isinstance(market, Unknown):
        return Unknown(f"market type not known ({market.reason})" if market.reason
                       else "market type not known"), market_path
    kind = market.strip().lower() if isinstance(market, str) else ""
    if kind == SPOT:
        return SPOT, market_path
    if kind == CAPACITY_BLOCK:
        return CAPACITY_BLOCK, market_path
    if market is not None and kind not in ("", ON_DEMAND):
        return Unknown(f"market type {market!r} is not one EC2 knows"), market_path
    return reservation_option(reservation, f"{prefix}CapacityReservationSpecification")


def reservation_option(spec: Any, path: str) -> tuple[str | Unknown, str]:
    """On-demand capacity and its ``CapacityReservationSpecification`` (a launch template's, an
    instance's: ``CapacityReservationPreference`` and ``CapacityReservationTarget`` with
    ``CapacityReservationId`` / ``CapacityReservationResourceGroupArn``; an Auto Scaling
    group's: ``CapacityReservationTarget`` with ``CapacityReservationIds`` /
    ``CapacityReservationResourceGroupArns``)."""
    if spec is None:
        return ON_DEMAND, ""
    if isinstance(spec, Unknown):
        return Unknown(f"capacity reservation settings not known ({spec.reason})"), path
    if not isinstance(spec, dict):
        return ON_DEMAND, ""
    target = spec.get("CapacityReservationTarget")
    target_path = f"{path}.CapacityReservationTarget"
    if isinstance(target, Unknown):
        return Unknown(f"capacity reservation target not known ({target.reason})"), target_path
    if isinstance(target, dict):
        for key in TARGET_KEYS:
            value = target.get(key)
            if value is not None and value != [] and value != "":
                return RESERVATION_TARGETED, f"{target_path}.{key}"
    pref_path = f"{path}.CapacityReservationPreference"
    pref = spec.get("CapacityReservationPreference")
    if isinstance(pref, Unknown):
        return Unknown(f"capacity reservation preference not known ({pref.reason})"), pref_path
    pref = pref.strip().lower() if isinstance(pref, str) else None
    if pref == "capacity-reservations-only":
        return RESERVATION_TARGETED, pref_path
    if pref == "open":
        return RESERVATION_OPEN, pref_path
    return ON_DEMAND, pref_path if pref else ""


TARGET_KEYS = ("CapacityReservationId", "CapacityReservationResourceGroupArn",
               "CapacityReservationIds", "CapacityReservationResourceGroupArns")


def group_option(split: Split | Unknown | None, template: str | Unknown,
                 template_path: str, own: tuple[str | Unknown, str],
                 split_path: str) -> tuple[str | Unknown, str]:
    """A group's purchase option: prepaid capacity it launches into (its template's Capacity
    Block or targeted reservation, or its own reservation target) decides; else its split at
    desired capacity (all spot, all on-demand, or mixed); else what its template says."""
    for option, path in ((template, template_path), own):
        if option in PREPAID:
            return option, path
    for option, path in ((template, template_path), own):
        if isinstance(option, Unknown):
            return option, path
    if isinstance(split, Split) and split.desired > 0:
        if split.on_demand == 0:
            return SPOT, split_path or template_path
        if split.spot > 0:
            return MIXED, split_path
    if isinstance(split, Unknown) and split_path:
        return split, split_path
    if template == SPOT:
        return SPOT, template_path
    for option, path in (own, (template, template_path)):
        if option == RESERVATION_OPEN:
            return option, path
    return ON_DEMAND, ""


def capacity_text(split: Split) -> str:
    """The capacity a split is taken at, with its number: "DesiredCapacity 4",
    "MaxSize 4 (desired is 0)", "MinSize 2 (no DesiredCapacity)"."""
    name, _, rest = split.basis.partition(" ")
    return f"{name} {split.desired}" + (f" {rest}" if rest else "")


REJECTED_SPOT_TEMPLATE = (
    "{group} uses launch template {template}, which requests spot (InstanceMarketOptions "
    "MarketType spot), inside a mixed instances policy: AWS rejects this (\"Incompatible launch "
    "template: You cannot use a launch template that is set to request Spot Instances "
    "(InstanceMarketOptions) when you configure an Auto Scaling group with a mixed instances "
    "policy\")")
