"""Build the findings JSON document (schema_version 1) from an evaluation."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import Any

from scanner import __version__
from scanner.catalog import Catalog
from scanner.model import Finding, InputError, Notice, Status

SCHEMA_VERSION = 1


def build_report(
    findings: Sequence[Finding],
    *,
    errors: Sequence[InputError],
    notices: Sequence[Notice],
    inputs: dict[str, Any],
    catalog: Catalog,
    resources: int,
    coverage: Sequence[dict[str, Any]] = (),
    deterministic: bool = False,
    catalog_note: str | None = None,
    passed: Counter[str] | None = None,
) -> dict[str, Any]:
    """The report document. ``passed`` counts PASS results left out of ``findings``."""
    by_status = Counter(f.status.value for f in findings)
    if passed:
        by_status["PASS"] += sum(passed.values())
    by_severity = Counter(f.severity.value for f in findings if f.status is Status.FAIL)
    by_policy: dict[str, Counter[str]] = {}
    for f in findings:
        by_policy.setdefault(f.policy_id, Counter())[f.status.value] += 1
    for pid, n in (passed or {}).items():
        by_policy.setdefault(pid, Counter())["PASS"] += n
    savings = sum(f.savings.usd_month for f in findings
                  if f.savings is not None and f.status is Status.FAIL)
    cat = catalog.describe()
    if catalog_note:
        cat["note"] = catalog_note
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "gpuaudit", "version": __version__},
        "inputs": inputs,
        "catalog": cat,
        "summary": {
            "by_status": dict(sorted(by_status.items())),
            "by_severity": dict(sorted(by_severity.items())),
            "by_policy": {k: dict(sorted(v.items())) for k, v in sorted(by_policy.items())},
            "savings_usd_month": round(savings, 2),
            "resources": resources,
        },
        "errors": sorted((e.as_dict() for e in errors),
                         key=lambda e: (e["path"], e.get("line") or 0, e["reason"])),
        "notices": sorted((n.as_dict() for n in notices),
                          key=lambda n: (n["path"], n.get("line") or 0, n["message"])),
        "coverage": sorted(coverage, key=lambda c: (str(c.get("account")), str(c.get("region")),
                                                    str(c.get("service")))),
        "findings": [f.as_dict() for f in findings],
    }
    if not deterministic:
        doc["generated_at"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return doc
