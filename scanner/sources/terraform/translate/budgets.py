"""AWS Budgets (COST-002)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.translate.coerce import Attrs, _blocks, _is_map, _list, _pairs, _put


def _cost_filters(v: Mapping[str, Any]) -> Any:
    """``cost_filter { name values }`` blocks (and the older ``cost_filters`` map) as the API's
    ``CostFilters`` ``{dimension: [values]}``; Unknown when a block or name is not known."""
    blocks = _blocks(v.get("cost_filter"))
    if isinstance(blocks, Unknown):
        return Unknown(f"cost_filter blocks not known ({blocks.reason or 'known at apply'})")
    out: dict[str, Any] = {}
    for b in blocks or []:
        if isinstance(b, Unknown) or not isinstance(b.get("name"), str):
            return Unknown("a cost_filter's name is not known")
        out[b["name"]] = _list(b.get("values"))
    legacy = v.get("cost_filters")
    if isinstance(legacy, Unknown | Ref):
        return Unknown("cost_filters not known")
    if _is_map(legacy):
        for key, value in legacy.items():
            out.setdefault(str(key), _list(value))
    return out or None


def _budgets_budget(v: Mapping[str, Any]) -> tuple[str, Attrs, Any, tuple[str, ...]]:
    budget = _pairs({}, v, (("name", "BudgetName"), ("budget_type", "BudgetType"),
                            ("time_unit", "TimeUnit")))
    _put(budget, "CostFilters", _cost_filters(v))
    a = _pairs({"Budget": budget}, v, (("account_id", "AccountId"),))
    return "budgets.budget", a, budget.get("BudgetName"), ()
