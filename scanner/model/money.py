"""The one builder of savings: structured parts in, an amount and a basis a person can recompute
out. Nothing else formats money in a basis; amounts are rounded only for display.

A :class:`Component` is "``quantity`` units of this capacity cost ``rate_before`` $/h now and
would cost ``rate_after`` $/h after the change, for ``hours`` a month". A saving is the sum of
its components, e.g. on-demand and spot units of one group priced apart::

    (12.24 - 0.526) $/h x 730 h x 1 instance [g4dn.xlarge in place of p3.8xlarge]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scanner.model import Savings

HOURS_PER_MONTH = 730  # a month, for every monthly amount (AWS's own convention)


def rate_text(x: float) -> str:
    """A $/h rate as prices are published: up to 6 decimals, no trailing zeros."""
    if x == 0:
        return "0"
    return f"{x:.6f}".rstrip("0").rstrip(".")


def usd_text(x: float) -> str:
    """A monthly amount for display: ``8,551.22``."""
    return f"{x:,.2f}"


def count_text(quantity: float | None, unit: str = "instance") -> str:
    """The multiplier of a basis: `` x 3 instances``, or `` per instance`` when not known."""
    if quantity is None:
        return f" per {unit}"
    shown = f"{quantity:g}"
    return f" x {shown} {unit}{'' if quantity == 1 else 's'}"


@dataclass(frozen=True)
class Component:
    rate_before: float  # $/h per unit now
    rate_after: float  # $/h per unit after the change
    quantity: float | None = 1  # units; None = not known (the basis says "per instance")
    unit: str = "instance"
    note: str = ""  # what the units are, where the rates come from
    hours: float = HOURS_PER_MONTH

    @property
    def usd_month(self) -> float:
        return (self.rate_before - self.rate_after) * self.hours * (
            1 if self.quantity is None else self.quantity)

    def text(self) -> str:
        rates = (rate_text(self.rate_before) if self.rate_after == 0 else
                 f"({rate_text(self.rate_before)} - {rate_text(self.rate_after)})")
        body = f"{rates} $/h x {self.hours:g} h{count_text(self.quantity, self.unit)}"
        return f"{body} [{self.note}]" if self.note else body


def build_savings(components: Sequence[Component], *, kind: str, note: str = "") -> Savings:
    """A :class:`Savings` whose amount is the sum of ``components`` and whose basis spells each
    one out (joined with `` + ``), then ``note``. Components of zero are left out of the text."""
    parts = [c for c in components if c.usd_month != 0] or list(components[:1])
    if not parts:
        raise ValueError("a saving needs at least one component")
    amount = sum(c.usd_month for c in parts)
    texts = [c.text() for c in parts]
    basis = texts[0] if len(texts) == 1 else " + ".join(f"({t})" for t in texts)
    if len(parts) > 1:
        basis += f" = {usd_text(amount)} $/month"
    if note:
        basis += f"; {note}"
    return Savings(max(amount, 0.0), basis, kind)
