"""The rate money is figured at: list prices, or the organisation's discounted rate
(``pricing.basis: discounted`` with ``pricing.discounts``), and the committed rate of capacity a
Savings Plan or Reserved Instances cover (``pricing.committed``), per instance family and
optionally per account. Every figure names its basis: ``list price``, ``discounted 38 %
(pricing.discounts.p4d)``, ``committed rate 45 % off (pricing.committed.p4d)``.

Discounts apply to on-demand rates only: spot is bought at the spot market's price."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scanner.pricing.prices import ON_DEMAND, Price

LIST, DISCOUNTED = "list", "discounted"
LIST_PRICE = "list price"


@dataclass(frozen=True)
class Rate:
    usd_hour: float
    basis: str  # "list price", "discounted 38 % (pricing.discounts.p4d)", …


@dataclass(frozen=True)
class Pricing:
    """``pricing`` of the config (validated by its JSON Schema before it gets here)."""

    basis: str = LIST
    discounts: Mapping[str, Any] = field(default_factory=dict)
    committed: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, data: Mapping[str, Any] | None) -> Pricing:
        data = data or {}
        return cls(basis=str(data.get("basis") or LIST),
                   discounts=dict(data.get("discounts") or {}),
                   committed=dict(data.get("committed") or {}))

    def on_demand(self, list_usd_hour: float, instance_type: str,
                  account: str | None = None) -> Rate:
        """The on-demand rate of one unit of ``instance_type`` (list price ``list_usd_hour``)
        in ``account``: its committed rate where a commitment covers its family, else the
        discounted rate when the basis is discounted and a discount is set, else the list."""
        family = family_of(instance_type)
        found = _share(self.committed, family, account, "pricing.committed")
        if found is not None:
            share, key = found
            return Rate(list_usd_hour * (1 - share),
                        f"committed rate {_percent(share)} off ({key})")
        if self.basis == DISCOUNTED:
            found = _share(self.discounts, family, account, "pricing.discounts")
            if found is not None:
                share, key = found
                return Rate(list_usd_hour * (1 - share), f"discounted {_percent(share)} ({key})")
            return Rate(list_usd_hour, f"{LIST_PRICE} (no pricing.discounts entry for {family})")
        return Rate(list_usd_hour, LIST_PRICE)


def family_of(instance_type: str) -> str:
    """``p4d.24xlarge`` -> ``p4d``."""
    return instance_type.split(".", 1)[0].lower()


def _share(table: Mapping[str, Any], family: str, account: str | None,
           name: str) -> tuple[float, str] | None:
    per_account = table.get(account) if account else None
    if isinstance(per_account, Mapping) and isinstance(per_account.get(family), int | float):
        return float(per_account[family]), f"{name}.{account}.{family}"
    value = table.get(family)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value), f"{name}.{family}"
    return None


def _percent(share: float) -> str:
    return f"{share * 100:g} %"


LIST_PRICING = Pricing()


def paid(found: Price, pricing: Pricing, account: str | None) -> Price:
    """``found`` (a catalogue or live price) at the rate paid, its basis naming it: on-demand
    at ``pricing``'s rate for its family and account; spot at the market's price (no discount
    applies to it)."""
    if found.usd_hour is None:
        return found
    if found.market != ON_DEMAND:
        return replace(found, basis=f"{found.basis}, the spot market's price")
    rate = pricing.on_demand(found.usd_hour, found.instance_type, account)
    return replace(found, usd_hour=rate.usd_hour, basis=f"{found.basis}, {rate.basis}")
