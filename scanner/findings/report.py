"""Build the findings JSON document (schema_version 1) from an evaluation.

The document is redacted before any renderer sees it (:mod:`scanner.findings.redact`): values the inputs
mark sensitive become ``(sensitive)``, credential-looking strings are replaced."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scanner import __version__
from scanner.catalog import Catalog
from scanner.findings.redact import redact_document
from scanner.model import Finding, InputError, Notice
from scanner.pricing.overlap import totals

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
    unpriced_regions: Sequence[str] = (),
    passed: Counter[str] | None = None,
    sensitive: Iterable[str] = (),
    root: Path | None = None,
) -> dict[str, Any]:
    """The report document. ``passed`` counts PASS results left out of ``findings``;
    ``sensitive``: values the inputs mark secret (each becomes ``(sensitive)``); ``root``: the
    repository root (scanner.inputs.repo_root) the findings' paths are made relative to."""
    cat = with_unpriced_regions(catalog.describe(), unpriced_regions)
    listed = [f.as_dict() for f in findings]
    if root is not None:
        inputs = {**inputs, "root": relocate(listed, root, Path.cwd())}
    return assemble(
        findings=listed,
        errors=[e.as_dict() for e in errors],
        notices=[n.as_dict() for n in notices],
        inputs=inputs,
        catalog=cat,
        coverage=coverage,
        passed=passed,
        resources=resources,
        deterministic=deterministic,
        sensitive=sensitive,
    )


def assemble(
    *,
    findings: list[dict[str, Any]],
    errors: Sequence[dict[str, Any]],
    notices: Sequence[dict[str, Any]],
    inputs: dict[str, Any],
    catalog: dict[str, Any],
    coverage: Sequence[dict[str, Any]],
    passed: Mapping[str, int] | None,
    resources: int,
    deterministic: bool,
    sensitive: Iterable[str] = (),
) -> dict[str, Any]:
    """The document from its parts, already as JSON values (``findings`` in report order),
    redacted (:func:`scanner.findings.redact.redact_document`). Each finding carries its compliance
    controls (:func:`scanner.compliance.with_controls`)."""
    from scanner.compliance import with_controls

    findings = with_controls(findings)
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "gpuaudit", "version": __version__},
        "inputs": inputs,
        "catalog": catalog,
        "summary": summarize(findings, passed=passed, resources=resources),
        "errors": sorted(errors, key=lambda e: (e["path"], e.get("line") or 0, e["reason"])),
        "notices": sorted(notices, key=lambda n: (n["path"], n.get("line") or 0, n["message"])),
        "coverage": sorted(coverage, key=lambda c: (str(c.get("account")), str(c.get("region")),
                                                    str(c.get("service")))),
        "findings": findings,
    }
    if not deterministic:
        doc["generated_at"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return redact_document(doc, sensitive)


def relocate(findings: list[dict[str, Any]], root: Path, cwd: Path) -> str:
    """Make the findings' file paths (``location.file``, the root module in ``location.root``
    and ``resource.root``) relative to the repository ``root``, so that every format names a
    file the same way, wherever the scan ran (a path outside the root is made absolute: SARIF
    places it in its own repository and says so). Returns the root relative to ``cwd``: the
    document's ``inputs.root`` (its paths are relative to that directory)."""
    from pathlib import PureWindowsPath

    from scanner.findings.paths import repo_relative

    def outside(path: str) -> str:  # not under the root: absolute, so never misread
        if PureWindowsPath(path).drive or "\x00" in path:
            return path
        return os.path.normpath(os.path.join(cwd, path)).replace(os.sep, "/")

    def moved(path: Any, directory: bool = False) -> Any:
        if not isinstance(path, str) or not path:
            return path
        if directory:  # the root itself is "."
            rel = repo_relative(f"{path.rstrip('/')}/_", root=root, base=cwd)
            return outside(path) if rel is None else "." if rel == "_" else rel[:-2]
        rel = repo_relative(path, root=root, base=cwd)
        return outside(path) if rel is None else rel

    for f in findings:
        loc = f.get("location")
        if isinstance(loc, dict):
            loc["file"] = moved(loc.get("file"))
            if "root" in loc:
                loc["root"] = moved(loc["root"], directory=True)
        res = f.get("resource")
        if isinstance(res, dict) and res.get("root"):
            res["root"] = moved(res["root"], directory=True)
    return os.path.relpath(root, cwd).replace(os.sep, "/")


def with_unpriced_regions(catalog: dict[str, Any], regions: Sequence[str]) -> dict[str, Any]:
    """The catalogue description, saying which regions were priced with us-east-1 prices."""
    if regions:
        catalog["unpriced_regions"] = sorted(regions)
        catalog["note"] = (f"prices are us-east-1 on-demand prices, used for "
                           f"{', '.join(sorted(regions))} too (the catalogue has no prices "
                           "there: gpuaudit catalog refresh --region R)")
    return catalog


def summarize(
    findings: Sequence[dict[str, Any]], *, passed: Mapping[str, int] | None, resources: int
) -> dict[str, Any]:
    """The report's ``summary`` of listed findings (as dicts) plus unlisted PASS counts."""
    by_status: Counter[str] = Counter()
    by_severity: Counter[str] = Counter()
    by_policy: dict[str, Counter[str]] = {}
    for f in findings:
        status = f["status"]
        by_status[status] += 1
        by_policy.setdefault(f["policy_id"], Counter())[status] += 1
        if status == "FAIL":
            by_severity[f["severity"]] += 1
    money = totals(findings)  # savings and exposure apart, each capacity counted once
    for pid, n in (passed or {}).items():
        if n:
            by_status["PASS"] += n
            by_policy.setdefault(pid, Counter())["PASS"] += n
    return {
        "by_status": dict(sorted(by_status.items())),
        "by_severity": dict(sorted(by_severity.items())),
        "by_policy": {k: dict(sorted(v.items())) for k, v in sorted(by_policy.items())},
        **money,
        "resources": resources,
    }
