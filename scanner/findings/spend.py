"""The report's ``spend`` (``audit --with-spend``): its one shape, the estimated saving as a
share of it, and the spend of reports merged (``report merge``).

A spend covers (account, region) pairs: ``read`` lists them, ``rows`` hold the actual GPU
spend per (account, region, instance type) of the period, ``not_read`` the accounts whose
spend could not be read and why. A spend not read whole has an ``error``, no ``total_usd``
(``read_usd`` is the part read) and no share: never an amount of 0, never a part shown as
the whole. Amounts are added as decimals, to the cent."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from scanner.catalog import family_of

METRIC = "UnblendedCost"
SOURCE = "Cost Explorer GetCostAndUsage"
NAMED = 5  # accounts not read named in the error; the rest counted


def cents(values: Iterable[Any]) -> float:
    """The sum of amounts, as decimals, to the cent."""
    return float(sum((Decimal(str(v)) for v in values), Decimal(0)).quantize(Decimal("0.01")))


def by_family(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    fams: dict[str, list[Any]] = {}
    for r in rows:
        fams.setdefault(family_of(str(r["instance_type"])), []).append(r["usd"])
    return {fam: cents(v) for fam, v in sorted(fams.items())}


def row_key(r: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(r.get("account") or ""), str(r.get("region") or ""), str(r["instance_type"]))


def spend_document(start: str, end: str, *, rows: Sequence[Mapping[str, Any]],
                   read: Sequence[Mapping[str, Any]], not_read: Sequence[Mapping[str, Any]],
                   estimated: bool, no_data: bool) -> dict[str, Any]:
    """The report's ``spend`` from its rows, the pairs read and the accounts not read (the one
    shape an audit and a merge of audits write)."""
    listed = sorted((dict(r) for r in rows), key=row_key)
    doc: dict[str, Any] = {
        "period": {"start": start, "end": end}, "metric": METRIC, "source": SOURCE,
        "estimated": estimated, "total_usd": cents(r["usd"] for r in listed),
        "by_family": by_family(listed), "rows": listed, "no_data": no_data,
        "read": [dict(r) for r in read],
    }
    if not read and not not_read:
        doc["error"] = "no account was audited: there is no spend to read"
    if not_read:
        doc["not_read"] = [dict(n) for n in not_read]
        doc["read_usd"] = doc["total_usd"]
        named = "; ".join(f"{n['account']}: {n['reason']}" for n in not_read[:NAMED])
        more = f" (+{len(not_read) - NAMED} more)" if len(not_read) > NAMED else ""
        accounts = {str(n["account"]) for n in not_read} | {str(r["account"]) for r in read}
        doc["error"] = (f"{len({str(n['account']) for n in not_read})} of {len(accounts)} "
                        f"account(s) could not be read ({named}{more})")
    if "error" in doc:
        doc.pop("total_usd")
    return doc


def with_saving_share(spend: dict[str, Any], summary: Mapping[str, Any]) -> dict[str, Any]:
    """``spend`` with the estimated monthly saving as a share of the month's actual GPU spend
    (None when the spend was not read whole, or was 0: a share of nothing, or of a part, is
    not a number)."""
    total = spend.get("total_usd")
    saving = summary.get("savings_usd_month") or 0
    share = round(float(saving) / float(total), 4) if isinstance(total, int | float) and \
        total > 0 and "error" not in spend else None
    return {**spend, "saving_share": share}


def _period(spend: Mapping[str, Any]) -> tuple[str, str] | None:
    p = spend.get("period")
    if isinstance(p, Mapping) and isinstance(p.get("start"), str) and isinstance(p.get("end"), str):
        return (p["start"], p["end"])
    return None


def merged_spend(parts: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The spend of reports merged, ``parts`` as (name, document): the pairs each read, added
    (shards audit different pairs); a pair two reports both read (a shard run twice) counted
    once (``notes`` says so when their amounts differ: the first is kept); the accounts a
    report could not read, or audited without --with-spend, not read (the merged spend is then
    an error: the total of the rest is not the whole). Reports of different periods are not
    added (an error saying so). None when no report carries a spend."""
    spends = [(name, doc.get("spend")) for name, doc in parts]
    given = [(name, s) for name, s in spends if isinstance(s, Mapping)]
    if not given:
        return None
    periods = {name: _period(s) for name, s in given}
    if len(set(periods.values())) != 1 or None in periods.values():
        said = "; ".join(f"{name}: {' to '.join(p) if p else 'no period'}"
                         for name, p in periods.items())
        return {"metric": METRIC, "source": SOURCE, "saving_share": None,
                "error": f"the reports' spends are of different periods ({said}): they are "
                         "not added"}
    start, end = next(iter(periods.values()))  # type: ignore[misc]
    kept: dict[tuple[str, str], tuple[str, list[dict[str, Any]]]] = {}
    missing: dict[tuple[str, str], str] = {}  # (account, region or "*") -> why not read
    notes: list[str] = []
    estimated, no_data = False, True
    for name, doc in parts:
        spend = doc.get("spend")
        if not isinstance(spend, Mapping):
            for pair in audited_pairs(doc):
                missing.setdefault(pair, f"{name} was audited without --with-spend")
            continue
        if not isinstance(spend.get("read"), list):
            inputs = doc.get("inputs") or {}
            for account in inputs.get("accounts") or ["?"]:
                missing.setdefault((str(account), "*"), f"{name}: its spend does not say "
                                   "which accounts and regions it covers: not added")
            continue
        estimated |= bool(spend.get("estimated"))
        no_data &= bool(spend.get("no_data"))
        mine: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in spend.get("rows") or []:
            mine.setdefault((str(r.get("account")), str(r.get("region"))), []).append(dict(r))
        for entry in spend["read"]:
            for region in entry.get("regions") or []:
                pair = (str(entry.get("account")), str(region))
                rows = sorted(mine.get(pair, []), key=row_key)
                if pair not in kept:
                    kept[pair] = (name, rows)
                elif kept[pair][1] != rows:
                    first, theirs = kept[pair]
                    notes.append(f"{'/'.join(pair)}: {first} and {name} read different spends "
                                 f"(${cents(r['usd'] for r in theirs):,.2f} and "
                                 f"${cents(r['usd'] for r in rows):,.2f}): {first}'s is kept")
        for n in spend.get("not_read") or []:
            for region in n.get("regions") or ["*"]:
                missing.setdefault((str(n.get("account")), str(region)),
                                   f"{name}: {n.get('reason')}")
    reached = {account for account, _ in kept}
    gaps = {pair: why for pair, why in missing.items()
            if pair not in kept and not (pair[1] == "*" and pair[0] in reached)}
    read = _by_account(kept)
    not_read: dict[tuple[str, str], list[str]] = {}
    for (account, region), why in sorted(gaps.items()):
        not_read.setdefault((account, why), []).append(region)
    doc = spend_document(
        start, end, rows=[r for _, rows in kept.values() for r in rows], read=read,
        not_read=[{"account": a, "regions": regions, "reason": why}
                  for (a, why), regions in sorted(not_read.items())],
        estimated=estimated, no_data=bool(read) and no_data)
    if notes:
        doc["notes"] = notes
    return doc


def audited_pairs(doc: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The (account, region) pairs a live report audited: its coverage rows (what is read once
    per account, region "*", left out), else its inputs' accounts x regions."""
    pairs = {(str(c.get("account")), str(c.get("region"))) for c in doc.get("coverage") or []
             if c.get("region") != "*"}
    if pairs:
        return pairs
    inputs = doc.get("inputs") or {}
    return {(str(a), str(r)) for a in inputs.get("accounts") or []
            for r in inputs.get("regions") or ["*"]}


def _by_account(pairs: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    accounts: dict[str, list[str]] = {}
    for account, region in sorted(pairs):
        accounts.setdefault(account, []).append(region)
    return [{"account": a, "regions": regions} for a, regions in accounts.items()]
