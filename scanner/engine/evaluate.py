"""Select policies, evaluate them over the resource index, apply suppressions, mutes, baseline."""

from __future__ import annotations

import dataclasses
import datetime as dt
import fnmatch
import functools
import hashlib
import os
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from policies import all_policies
from policies.base import Context, Policy
from scanner.catalog import Catalog, default_catalog
from scanner.engine.config import Config
from scanner.model import (
    Finding,
    Gap,
    Notice,
    Resource,
    Result,
    Skip,
    SourceKind,
    Status,
    Unknown,
)
from scanner.model.graph import ResourceIndex
from scanner.pricing.overlap import with_capacity
from scanner.pricing.rates import Pricing

if TYPE_CHECKING:
    from scanner.compute.census import GpuCensus


def select_policies(config: Config | None = None, policy_ids: Collection[str] | None = None,
                    skip_ids: Collection[str] = ()) -> list[Policy]:
    """Policies to run: named ones (even if off by default), else enabled ones, minus skips."""
    catalogue = all_policies()
    unknown = [p for p in [*(policy_ids or []), *skip_ids] if p not in catalogue]
    if unknown:
        raise KeyError(f"unknown policy id {unknown[0]} (known: {', '.join(catalogue)})")
    chosen: list[Policy] = []
    for pid, pol in catalogue.items():
        if policy_ids:
            on = pid in policy_ids
        else:
            configured = config.enabled(pid) if config else None
            on = pol.enabled_by_default if configured is None else configured
        if on and pid not in skip_ids:
            chosen.append(pol)
    return chosen


@dataclass
class Evaluation:
    findings: list[Finding]
    notices: list[Notice] = field(default_factory=list)
    # PASS results per policy that were counted but not turned into findings
    passed: Counter[str] = field(default_factory=Counter)
    # the GPU compute judged (in ``only_files`` when given): the report's coverage line
    census: GpuCensus | None = None


def evaluate(
    resources: list[Resource],
    *,
    config: Config | None = None,
    policy_ids: Collection[str] | None = None,
    skip_ids: Collection[str] = (),
    gaps: Sequence[Gap] = (),
    catalog: Catalog | None = None,
    baseline: Collection[str] = (),
    today: dt.date | None = None,
) -> list[Finding]:
    """All results (PASS included) of the selected policies, dressed as findings."""
    return run(resources, config=config, policy_ids=policy_ids, skip_ids=skip_ids, gaps=gaps,
               catalog=catalog, baseline=baseline, today=today).findings


def run(
    resources: list[Resource],
    *,
    config: Config | None = None,
    policy_ids: Collection[str] | None = None,
    skip_ids: Collection[str] = (),
    gaps: Sequence[Gap] = (),
    catalog: Catalog | None = None,
    baseline: Collection[str] = (),
    today: dt.date | None = None,
    include_passed: bool = True,
    only_files: Collection[str] | None = None,
    narrow: Callable[[Resource, Finding], Finding | None] | None = None,
) -> Evaluation:
    """Evaluate; with include_passed False, PASS results are only counted (large estates).

    ``only_files``: report only results on HCL resources declared in these files (the
    pre-commit case: a changed .tf is evaluated with its whole module, but only its own
    findings count). ``narrow``: each finding (suppressions applied) and its resource; it
    returns the finding to report, possibly reworded, or None to leave it out
    (``scanner.engine.change_scope``: what a change is answerable for)."""
    config = config or Config()
    catalog = catalog or default_catalog()
    policies = select_policies(config, policy_ids, skip_ids)
    index = ResourceIndex(resources)
    memo: dict[str, Any] = {}
    out = Evaluation([])
    mutes = _Mutes(config.mutes, today or dt.date.today(), out.notices, config.path)
    only = None if only_files is None else {os.path.realpath(f) for f in only_files}
    env = _Run(index, memo, config, catalog, Pricing.from_config(config.pricing), gaps,
               include_passed, narrow, only, mutes, set(baseline))
    for pol, part in zip(policies, _evaluate_all(policies, env), strict=True):
        out.findings.extend(part.findings)
        out.notices.extend(part.notices)
        if part.passed:
            out.passed[pol.id] += part.passed
    out.findings.sort(key=_sort_key)
    out.notices.extend(_catalogue_gaps(index, memo, catalog, only))
    from scanner.compute.census import gpu_census

    out.census = gpu_census((r for r in resources if only is None or _declared_in(r, only)),
                            _views(index, memo))
    return out


PARALLEL_MIN_RESOURCES = 5000  # fewer resources: the policies run in one process


@dataclass
class _Run:
    """What every policy of one evaluation is evaluated with."""

    index: ResourceIndex
    memo: dict[str, Any]
    config: Config
    catalog: Catalog
    pricing: Pricing
    gaps: Sequence[Gap]
    include_passed: bool
    narrow: Callable[[Resource, Finding], Finding | None] | None
    only: set[str] | None
    mutes: _Mutes
    baseline: set[str]


@dataclass
class _Part:
    """One policy's share of the evaluation."""

    findings: list[Finding] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    passed: int = 0  # PASS results counted, not turned into findings


def _evaluate_all(policies: Sequence[Policy], env: _Run) -> list[_Part]:
    """Each policy's part, in the policies' order. On a large input the policies are shared
    out among forked processes (:func:`scanner.inputs.workers.shared_out`), the costliest
    first; a part is the same whichever process evaluated it (each builds its own compute
    views), so the report is too."""
    from scanner.inputs.workers import shared_out, worker_count

    workers = worker_count(len(env.index.resources), PARALLEL_MIN_RESOURCES)
    if workers <= 1 or len(policies) < 2:
        return [_evaluate_policy(pol, env) for pol in policies]
    # the compute views, which most policies read, are built once and inherited
    Context(env.index, {}, env.catalog, env.memo).compute.warm()
    # the costliest first, so that no process is left with a long one at the end
    order = sorted(range(len(policies)), key=lambda i: -sum(
        len(env.index.of_kind(k)) for k in policies[i].kinds))
    done, _ = shared_out(lambda j: _evaluate_policy(policies[order[j]], env), len(order),
                         workers)
    parts: dict[int, _Part] = {order[j]: part for j, part in done.items()}
    return [parts[i] for i in range(len(policies))]


def _evaluate_policy(pol: Policy, env: _Run) -> _Part:
    """One policy on every resource of its kinds: its findings (suppressions, holes, change
    scope applied), its notices, the PASS results only counted."""
    part = _Part()
    ctx = Context(env.index, env.config.params(pol.id, pol.params), env.catalog, env.memo,
                  policy_id=pol.id, pricing=env.pricing)
    holes = _holes(pol, env.gaps)
    judged: set[str] = set()  # the holes' scopes in which the policy has a result
    only, narrow = env.only, env.narrow
    for kind in pol.kinds:
        for resource in env.index.of_kind(kind):
            try:
                results = list(pol.check(resource, ctx))
            except Exception as exc:  # a policy bug must not hide the rest of the audit
                results = [Result(Status.ERROR, f"policy {pol.id} failed on this resource: "
                                  f"{type(exc).__name__}: {exc}", resource)]
            for result in results:
                if only is not None and not _declared_in(result.resource, only):
                    continue
                result = _if_it_exists(result)
                hole = _hole_of(result.resource, holes) if holes else None
                if hole is not None:
                    judged.add(hole.key)
                    result = hole.unjudged(result)
                if result.status is Status.PASS and not env.include_passed and narrow is None:
                    part.passed += 1
                    continue
                finding = with_capacity(_finding(pol, result), result.resource, env.index)
                finding = _suppress(finding, result.resource.skips, env.mutes, env.baseline)
                if narrow is not None:
                    kept = narrow(result.resource, finding)
                    if kept is None:
                        continue
                    if kept.status is Status.PASS and not env.include_passed:
                        part.passed += 1
                        continue
                    finding = kept
                part.findings.append(finding)
    part.notices.extend(n for r, n in ctx.notices if only is None or _declared_in(r, only))
    part.findings.extend(_gap_errors(pol, holes, judged))
    return part


def _views(index: ResourceIndex, memo: dict[str, Any]) -> Any:
    """The compute views the policies built (new ones when no policy needed any)."""
    from scanner.compute import views

    found = memo.get("compute")
    return found if found is not None and found.index is index else views(index)


def _catalogue_gaps(index: ResourceIndex, memo: dict[str, Any], catalog: Catalog,
                    only: set[str] | None) -> list[Notice]:
    """A notice naming each GPU type the catalogue lacks (never a silent pass)."""
    from scanner.engine.catalog_coverage import lacking_notices

    built = _views(index, memo)
    memo["compute"] = built
    return [n for r, n in lacking_notices(index.resources, built, catalog)
            if only is None or _declared_in(r, only)]


IAC_HOLE = "iac:"  # the key of a root module's hole (a live scope is ACCOUNT/REGION)
WHOLE_ROOT = "*"


@dataclass
class _Hole:
    """What a policy reads that could not be read in one (account, region)."""

    scope: str
    account: str | None
    region: str | None
    missing: set[str] = field(default_factory=set)
    why: list[str] = field(default_factory=list)  # the gaps' reasons: the failed calls
    key: str = ""  # its key among the holes: the scope, or IAC_HOLE + a root module

    @property
    def message(self) -> str:
        if self.missing == {WHOLE_ROOT}:
            return f"could not evaluate: {'; '.join(self.why)}"
        return (f"could not evaluate: {', '.join(sorted(self.missing))} not readable here: "
                f"{'; '.join(self.why)}")

    def unjudged(self, result: Result) -> Result:
        """A verdict made without data the policy reads is no verdict: ERROR, naming the
        failed call (an ERROR the policy gave itself stays)."""
        if result.status is Status.ERROR:
            return result
        evidence: dict[str, Any] = {"unread": list(self.why)}
        if self.missing != {WHOLE_ROOT}:
            evidence = {"missing_kinds": sorted(self.missing), **evidence}
        return Result(Status.ERROR, self.message, result.resource, result.path, evidence, None)


def _holes(pol: Policy, gaps: Sequence[Gap]) -> dict[str, _Hole]:
    """The scopes where a kind this policy reads (``observed_needs``: a gap is always in
    observed state, a call that failed) could not be read, with what and why."""
    needs = set(pol.observed_needs)
    holes: dict[str, _Hole] = {}
    for gap in gaps:
        if gap.iac:  # a root module not read whole: every policy, every kind
            missing = {WHOLE_ROOT}
            key = IAC_HOLE + gap.scope
        else:
            missing = needs.intersection(gap.kinds)
            key = gap.scope
        if not missing:
            continue
        hole = holes.setdefault(key, _Hole(gap.scope, gap.account, gap.region, key=key))
        hole.missing |= missing
        if gap.reason not in hole.why:
            hole.why.append(gap.reason)
    return holes


def _hole_of(resource: Resource, holes: Mapping[str, _Hole]) -> _Hole | None:
    """The hole a live resource lies in: its (account, region), or its whole account when the
    account's regions could not even be listed (a gap of scope ``ACCOUNT/*``)."""
    prov = resource.provenance
    if prov.source is not SourceKind.AWS:  # IaC: only its own root module's hole
        return holes.get(IAC_HOLE + resource.scope)
    return holes.get(resource.scope) or holes.get(f"{prov.account}/*")


def _if_it_exists(result: Result) -> Result:
    """A verdict on a resource that may not exist (unknown count / for_each / condition), or
    one that leans on such a resource (``Result.doubt``), is UNKNOWN: neither PASS nor FAIL can
    be claimed for something that might not be created."""
    exists = result.resource.exists
    if result.status not in (Status.PASS, Status.FAIL):
        return result
    if exists is not True:
        why = exists.reason if isinstance(exists, Unknown) and exists.reason else "not known"
        doubt = f"whether this resource exists is not known ({why})"
    elif result.doubt is not None:
        doubt = result.doubt.reason or "it leans on a resource that may not exist"
    else:
        return result
    verdict = "would pass" if result.status is Status.PASS else "would fail"
    return Result(Status.UNKNOWN, f"{doubt}; it {verdict}: {result.message}", result.resource,
                  result.path, result.evidence, None)


def _declared_in(resource: Resource, files: set[str]) -> bool:
    """Only HCL resources are narrowed: a template or plan named by the user counts whole."""
    file = resource.provenance.file
    if resource.provenance.source is not SourceKind.TERRAFORM_HCL or file is None:
        return True
    return _realpath(file) in files


@functools.lru_cache(maxsize=4096)
def _realpath(path: str) -> str:
    return os.path.realpath(path)


def _sort_key(f: Finding) -> tuple[Any, ...]:
    return report_order(f.location, f.policy_id, f.resource, f.id)


def report_order(location: Mapping[str, Any] | None, policy_id: str,
                 resource: Mapping[str, Any], fid: str) -> tuple[Any, ...]:
    """The order of findings in a report: file and line, policy, account, region, root module
    (IaC: one module under two roots), resource."""
    loc = location or {}
    return (loc.get("file") or "", loc.get("start_line") or 0, policy_id,
            resource.get("account") or "", resource.get("region") or "",
            str(resource.get("root") or ""), resource["id"], fid)


def fingerprint(policy_id: str, resource: Mapping[str, Any], path: str) -> str:
    parts = [policy_id, resource.get("account") or "", resource.get("region") or "",
             resource.get("kind") or "", resource["id"], path]
    if resource.get("root"):  # IaC: the same module under two root modules is two resources
        parts.append("root=" + _stable_root(str(resource["root"]), os.getcwd()))
    # surrogatepass: a path that is not UTF-8 (lone surrogates) still hashes, stably
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:20]


@functools.lru_cache(maxsize=4096)
def _stable_root(root: str, cwd: str) -> str:
    """A root module (template, plan) as a finding's identity names it: relative to its git
    work tree when it lies in one, so that a finding keeps its id whatever directory the scan
    runs from (SARIF partialFingerprints, baselines, `report diff`); else as displayed."""
    try:
        from scanner.inputs.real_path import real_path

        real = real_path(os.path.join(cwd, root))
        top = _git_top(real if os.path.isdir(real) else os.path.dirname(real))
        if top is None:
            return root
        rel = os.path.relpath(real, top).replace(os.sep, "/")
    except (OSError, ValueError):  # an unreadable parent, a path that is not one
        return root
    return root if rel.startswith("..") else rel


@functools.lru_cache(maxsize=4096)
def _git_top(directory: str) -> str | None:
    """The nearest directory at or above ``directory`` holding ``.git`` (as
    scanner.inputs.repo_root.git_work_tree, with the parents' answers cached: 2,000 root modules
    share them)."""
    if os.path.exists(os.path.join(directory, ".git")):
        return directory
    parent = os.path.dirname(directory)
    return None if parent == directory else _git_top(parent)


@functools.lru_cache(maxsize=4096)
def display_path(file: str | None) -> str | None:
    """A path relative to the working directory when it lies below it (stable across machines)."""
    if not file:
        return file
    try:
        rel = os.path.relpath(file)
    except ValueError:
        return file
    return file if rel.startswith("..") else rel.replace(os.sep, "/")


def resource_identity(r: Resource) -> dict[str, Any]:
    """The resource part of a finding. IaC resources carry ``root``: the root module
    directory (Terraform) or template / plan they were read from, as a display path."""
    prov = r.provenance
    terraform = prov.source in (SourceKind.TERRAFORM_PLAN, SourceKind.TERRAFORM_HCL)
    ident = {
        "kind": r.kind,
        "id": r.id,
        "name": r.name,
        "address": r.id if terraform else None,
        "arn": prov.arn,
        "account": prov.account,
        "region": prov.region,
        "tags": dict(sorted((str(k), str(v)) for k, v in r.tags.items())),
    }
    if prov.source is not SourceKind.AWS and r.scope:
        ident["root"] = display_path(r.scope)
    return ident


def _finding(pol: Policy, result: Result) -> Finding:
    r = result.resource
    ident = resource_identity(r)
    prov = r.provenance
    location = None
    if prov.file:
        location = {"file": display_path(prov.file), "start_line": prov.start_line,
                    "end_line": prov.end_line}
        if ident.get("root"):
            location["root"] = ident["root"]
    return Finding(
        id=fingerprint(pol.id, ident, result.path),
        policy_id=pol.id,
        title=pol.title,
        severity=pol.severity,
        status=result.status,
        message=result.message,
        resource=ident,
        location=location,
        evidence=result.evidence,
        remediation=pol.remediation.for_kind(r.kind).as_dict(),
        savings=result.savings if result.status is Status.FAIL else None,
        suppression=None,
    )


class _Mutes:
    def __init__(self, entries: Iterable[dict[str, Any]], today: dt.date,
                 notices: list[Notice], path: str | None) -> None:
        self.active: list[dict[str, Any]] = []
        self.expired: list[dict[str, Any]] = []
        where = path or "config"
        for i, entry in enumerate(entries):
            label = f"mutes[{i}] ({entry.get('policy')} {entry.get('resource')})"
            if not str(entry.get("reason") or "").strip():
                notices.append(Notice(where, f"{label} has no reason: it does not mute"))
                continue
            expires = entry.get("expires")
            if expires:
                try:
                    day = dt.date.fromisoformat(str(expires))
                except ValueError:
                    notices.append(Notice(where, f"{label}: expires {expires!r} is not "
                                                 "YYYY-MM-DD: it does not mute"))
                    continue
                if day < today:
                    self.expired.append(entry)
                    continue
            self.active.append(entry)

    def match(self, finding: Finding) -> tuple[dict[str, Any] | None, bool]:
        names: list[Any] = [finding.resource.get(k) for k in ("id", "name", "address", "arn")]
        names = [n for n in names if n]
        for group, expired in ((self.active, False), (self.expired, True)):
            for entry in group:
                if not fnmatch.fnmatchcase(finding.policy_id, str(entry["policy"])):
                    continue
                if any(fnmatch.fnmatchcase(n, str(entry["resource"])) for n in names):
                    return entry, expired
        return None, False


def suppress_external(findings: Iterable[Finding], *, config: Config | None,
                      baseline: Collection[str], today: dt.date | None = None) -> list[Finding]:
    """The mute list and the baseline applied to findings no policy here made (checkov's):
    their inline skips are the other tool's own business."""
    config = config or Config()
    mutes = _Mutes(config.mutes, today or dt.date.today(), [], config.path)
    return [_suppress(f, (), mutes, set(baseline)) for f in findings]


def _suppress(finding: Finding, skips: Sequence[Skip], mutes: _Mutes,
              baseline: set[str]) -> Finding:
    if finding.status is not Status.FAIL:
        return finding
    for skip in skips:
        if skip.policy_id in (finding.policy_id, "ALL") and skip.reason.strip():
            return _with(finding, {"by": skip.by, "reason": skip.reason,
                                   "expires": skip.expires, "kind": "inSource"})
    entry, expired = mutes.match(finding)
    if entry is not None and not expired:
        return _with(finding, {"by": "mute list", "reason": entry["reason"],
                               "expires": entry.get("expires"), "kind": "external"})
    if finding.id in baseline:
        return _with(finding, {"by": "baseline", "reason": "present in the baseline report",
                               "expires": None, "kind": "external"})
    if entry is not None and expired:
        return dataclasses.replace(
            finding, message=f"{finding.message} (mute expired {entry.get('expires')})")
    return finding


def _with(finding: Finding, suppression: dict[str, Any]) -> Finding:
    return dataclasses.replace(finding, status=Status.SUPPRESSED, suppression=suppression)


def _gap_errors(pol: Policy, holes: Mapping[str, _Hole], judged: set[str]) -> list[Finding]:
    """One scope-level ERROR per hole where it is the only word: the policy has no result
    there, or the missing kinds are ones it judges (their resources are not there to carry an
    ERROR of their own)."""
    out: list[Finding] = []
    for scope, hole in sorted(holes.items()):
        if scope.startswith(IAC_HOLE):  # the input error already says it, once
            continue
        if scope in judged and not hole.missing.intersection(pol.kinds):
            continue
        missing = sorted(hole.missing)
        ident: dict[str, Any] = {"kind": "scope", "id": scope, "name": None, "address": None,
                                 "arn": None, "account": hole.account, "region": hole.region,
                                 "tags": {}}
        out.append(Finding(
            id=fingerprint(pol.id, ident, "gap:" + ",".join(missing)),
            policy_id=pol.id, title=pol.title, severity=pol.severity, status=Status.ERROR,
            message=hole.message, resource=ident, location=None,
            evidence={"missing_kinds": missing, "unread": list(hole.why)},
            remediation=pol.remediation.as_dict(), savings=None, suppression=None))
    return out
