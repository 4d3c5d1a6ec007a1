"""Build the findings JSON document (schema_version 1) from an evaluation.

The document is redacted before any renderer sees it (:mod:`scanner.findings.redact`):
values the inputs
mark sensitive become ``(sensitive)``, credential-looking strings are replaced."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scanner import __version__
from scanner.catalog import Catalog
from scanner.findings.redact import redact_document
from scanner.model import Finding, InputError, Notice
from scanner.pricing.overlap import totals

SCHEMA_VERSION = 1

if TYPE_CHECKING:
    from scanner.compute.census import GpuCensus


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
    census: GpuCensus | None = None,
) -> dict[str, Any]:
    """The report document. ``passed`` counts PASS results left out of ``findings``;
    ``sensitive``: values the inputs mark secret (each becomes ``(sensitive)``); ``root``: the
    repository root (scanner.inputs.repo_root) the findings' paths are made relative to;
    ``census``: the evaluation's GPU census, which gives ``summary.coverage``
    (:func:`coverage_summary`)."""
    cat = with_unpriced_regions(catalog.describe(), unpriced_regions)
    listed = [f.as_dict() for f in findings]
    if root is not None:
        inputs = {**inputs, "root": relocate(listed, root, Path.cwd())}
    doc = assemble(
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
    if census is not None:
        doc["summary"]["coverage"] = coverage_summary(census, doc["findings"])
    return doc


def coverage_summary(census: GpuCensus, findings: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What a run judged, for the coverage line of every format (reports.common.coverage_line):
    the GPU compute judged (``gpu_resources``; ``maybe_gpu_resources``: whether it launches GPUs
    is not known), the files its resources are declared in (``files``; live resources, which
    have none: their account/regions, ``places``), the Terraform module calls not read
    (``unread_module_calls``, by kind of source: registry, git, archive, other) and the UNKNOWN
    results (``unknown``, TF-001's included). Zero GPU resources with unread module calls is
    never a silent green: the line says what was not read."""
    from scanner.sources.terraform.module_sources import (
        ArchiveSource,
        GitSource,
        LocalSource,
        RegistrySource,
        parse_source,
    )

    kinds = {RegistrySource: "registry", GitSource: "git", ArchiveSource: "archive",
             LocalSource: "local"}

    def kind_of(source: Any) -> str:
        if not isinstance(source, str) or not source:
            return "other"
        return kinds.get(type(parse_source(source)), "other")

    sources = Counter(kind_of(source) for source in census.unread_sources)
    return {
        "gpu_resources": census.gpu,
        "maybe_gpu_resources": census.maybe,
        "files": len(census.files),
        "places": len(census.places),
        "unread_module_calls": len(census.unread_sources),
        "unread_module_sources": dict(sorted(sources.items())),
        "unknown": sum(1 for f in findings if f.get("status") == "UNKNOWN"),
    }


def merged_coverage(parts: Sequence[Mapping[str, Any] | None],
                    findings: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The coverage of reports merged (``report merge``): the parts' numbers added (the parts
    cover different inputs: an overlapping part is not counted), UNKNOWN counted again on the
    merged findings. None when a part has none (a report of an older gpuaudit): a coverage of
    some parts only would claim too little."""
    given = [p for p in parts if isinstance(p, Mapping)]
    if not parts or len(given) != len(parts):
        return None
    out: dict[str, Any] = {k: 0 for k in ("gpu_resources", "maybe_gpu_resources", "files",
                                          "places", "unread_module_calls")}
    sources: Counter[str] = Counter()
    for part in given:
        for key in out:
            value = part.get(key)
            out[key] += value if isinstance(value, int) and value >= 0 else 0
        for kind, n in (part.get("unread_module_sources") or {}).items():
            sources[str(kind)] += n if isinstance(n, int) and n >= 0 else 0
    out["unread_module_sources"] = dict(sorted(sources.items()))
    out["unknown"] = sum(1 for f in findings if f.get("status") == "UNKNOWN")
    return dict(sorted(out.items()))


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

    seen: dict[tuple[str, bool], str] = {}  # thousands of findings share a few files

    def moved(path: Any, directory: bool = False) -> Any:
        if not isinstance(path, str) or not path:
            return path
        known = seen.get((path, directory))
        if known is None:
            known = seen[(path, directory)] = _moved(path, directory)
        return known

    def _moved(path: str, directory: bool) -> str:
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
