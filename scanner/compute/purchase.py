"""The on-demand / spot split of a group at desired capacity, AWS's rule (see the design):
D = desired, else MinSize, and MaxSize when D is 0 (not applicable when that is 0 too);
od = min(base, D) + ceil(max(D - base, 0) x pct / 100) (AWS rounds in favour of on-demand).
A group without an instances distribution is all on-demand, or all spot when what it launches
from requests spot."""

from __future__ import annotations

import math
from typing import Any

from scanner.compute.values import to_int
from scanner.compute.view import Attr, Capacity, Split
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
        od = min(b, desired) + math.ceil(max(desired - b, 0) * p / 100)
        return Split(desired, od, capacity.weighted, basis)
    if isinstance(all_spot, Unknown):
        return all_spot
    return Split(desired, 0 if all_spot else desired, capacity.weighted, basis)
