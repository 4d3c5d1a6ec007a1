"""A census of GPU compute in scanned trees, and what every policy made of it.

For each tree (scanned as ``gpuaudit scan`` scans it: ``scanner.sources.scan.scan_paths``) and each kind
family of the compute registry (``scanner.compute.registry``): how many objects there are, how
many are GPU compute (certainly, or maybe: their types are not known), and for each policy how
many of the GPU ones it judged PASS / FAIL / UNKNOWN / ERROR, and how many it did not judge and
why: not applicable by design (the README's policy table: no spot max price exists for a node
group, HyperPod encrypts every volume …) or missing input (subnets that are not in the scan, a
placeholder, no utilization history). A result on the resource that carries an object's storage
(its launch template, a NodePool's EC2NodeClass) or its network (its subnets, its VPC, the VPC's
endpoints) counts as judging the object. An object not judged for a reason this tool does not
know is "unexplained": a bug to look at.

    python tools/count_gpu_objects.py NAME=PATH [NAME=PATH ...]        print the tables
    python tools/count_gpu_objects.py --update FILE NAME=PATH [...]    rewrite FILE's tables

``--update`` replaces what lies between ``<!-- count_gpu_objects:begin -->`` and
``<!-- count_gpu_objects:end -->`` in FILE (docs/real-repositories.md). Every policy runs,
EBS-003 (off by default) included; EBS-002 judges an account setting, not an object, and is left
out of the per-object counts.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policies import all_policies
from policies.base import Policy
from scanner.catalog import default_catalog, is_gpu_type, vendor_by_family
from scanner.compute import Placement, Views, registry, views
from scanner.compute.view import ComputeView
from scanner.engine.evaluate import run
from scanner.model import Finding, Notice, Ref, Resource, Unknown
from scanner.model.graph import ResourceIndex
from scanner.sources.scan import scan_paths

BEGIN = "<!-- count_gpu_objects:begin -->"
END = "<!-- count_gpu_objects:end -->"

# Kind families, by the prefix of the kind's name (a kind of a new prefix is its own family).
FAMILIES = (
    ("ec2.", "EC2 (instances, launch templates, ASGs, spot, fleets)"),
    ("autoscaling.", "EC2 (instances, launch templates, ASGs, spot, fleets)"),
    ("eks.", "EKS managed node groups"),
    ("batch.", "AWS Batch"),
    ("sagemaker.", "SageMaker HyperPod"),
    ("karpenter.", "Karpenter"),
    ("eksctl.", "eksctl"),
    ("parallelcluster.", "ParallelCluster"),
)
SHORT = {"EC2 (instances, launch templates, ASGs, spot, fleets)": "EC2",
         "EKS managed node groups": "EKS MNG", "AWS Batch": "Batch",
         "SageMaker HyperPod": "HyperPod"}

JUDGED, BY_DESIGN, NO_INPUT, UNEXPLAINED = "judged", "by design", "missing input", "unexplained"
ORDER = ("FAIL", "ERROR", "UNKNOWN", "SUPPRESSED", "PASS")  # an object's worst status counts
PER_OBJECT_SKIP = ("EBS-002",)  # an account setting, not a property of an object
EBS_CARRIED = ("EBS-001", "EBS-003")
NETWORK = ("VPC-001", "VPC-002", "VPC-003")

# Why a policy does not judge a kind at all (the README's policy table and its notes).
NOT_FOR_KIND = {
    ("SPOT-001", "eks.nodegroup"): "EKS offers no spot max price for a node group",
    ("SPOT-002", "eks.nodegroup"): "EKS offers no spot max price for a node group",
    ("SPOT-001", "karpenter.node_pool"): "Karpenter sets no spot max price",
    ("SPOT-002", "karpenter.node_pool"): "Karpenter sets no spot max price",
    ("SPOT-001", "sagemaker.cluster"): "HyperPod has no spot option",
    ("SPOT-002", "sagemaker.cluster"): "HyperPod has no spot option",
    ("ASG-001", "karpenter.node_pool"): "a NodePool has no on-demand/spot split to configure",
    ("ASG-001", "parallelcluster.queue"): "a compute resource has one capacity type",
    ("ASG-001", "sagemaker.cluster"): "HyperPod has no spot option",
    ("ASG-002", "sagemaker.cluster"): "HyperPod has no spot option",
    ("ASG-001", "ec2.launch_template"): "a template holds no group (its group is judged)",
    ("ASG-002", "ec2.launch_template"): "a template holds no group (its group is judged)",
}
RS_NOT_FOR = "RS-* judge instances, Auto Scaling groups and EKS node groups on their utilization"


def family_of(kind: str) -> str:
    return next((name for prefix, name in FAMILIES if kind.startswith(prefix)),
                kind.split(".", 1)[0])


@dataclass
class Verdict:
    """What one policy made of one GPU object."""

    category: str
    statuses: Counter[str] = field(default_factory=Counter)
    reason: str = ""  # why not judged; for a judged object, where (e.g. "on its VPC")

    @property
    def worst(self) -> str:
        return next((s for s in ORDER if self.statuses[s]), "")


@dataclass
class GpuObject:
    resource: Resource
    family: str
    gpu: str  # "yes" or "maybe"
    types: list[str]
    file: str
    line: int | None
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    root: str = ""  # the Terraform root module that instantiates it, when not its own dir


@dataclass
class Census:
    name: str
    objects: Counter[tuple[str, str]]  # (family, kind) -> objects
    gpu: Counter[tuple[str, str]]
    maybe: Counter[tuple[str, str]]
    gpu_objects: list[GpuObject]
    policies: list[str]
    unfetched_modules: list[Notice]


# -- the census ------------------------------------------------------------------------------


def census(name: str, root: Path, policy_ids: Sequence[str] | None = None) -> Census:
    """Scan ``root`` as ``gpuaudit scan`` does, evaluate every policy, and judge each GPU
    object of each compute kind against each policy."""
    source = scan_paths([root])
    resources = source.resources
    catalogue = all_policies()
    chosen = list(policy_ids) if policy_ids else list(catalogue)
    on: dict[int, list[Finding]] = defaultdict(list)

    def keep(resource: Resource, finding: Finding) -> Finding:
        on[id(resource)].append(finding)
        return finding

    evaluation = run(resources, policy_ids=chosen, narrow=keep)
    index = ResourceIndex(resources)
    shared = views(index)
    ctx = _Context(index, shared, on, evaluation.notices)
    objects: Counter[tuple[str, str]] = Counter()
    gpu: Counter[tuple[str, str]] = Counter()
    maybe: Counter[tuple[str, str]] = Counter()
    found: list[GpuObject] = []
    for kind in registry.registered():
        fam = family_of(kind)
        for r in index.of_kind(kind):
            objects[(fam, kind)] += 1
            view = shared.of(r)
            fact = view.types.gpu() if view is not None else False
            if fact is False or view is None:
                continue
            (gpu if fact is True else maybe)[(fam, kind)] += 1
            obj = GpuObject(r, fam, "yes" if fact is True else "maybe", _types(view),
                            _relative(r.provenance.file or r.scope, root),
                            r.provenance.start_line)
            scope = r.scope
            if os.path.isdir(scope) and os.path.dirname(r.provenance.file or "") != scope:
                obj.root = _relative(scope, root)
            for pid in chosen:
                if pid not in PER_OBJECT_SKIP:
                    obj.verdicts[pid] = judge(catalogue[pid], r, view, ctx)
            found.append(obj)
    unfetched = [n for n in source.notices if "is not fetched" in n.message]
    return Census(name, objects, gpu, maybe, found,
                  [p for p in chosen if p not in PER_OBJECT_SKIP], unfetched)


def _types(view: ComputeView) -> list[str]:
    named = [t for t in view.types.values if isinstance(t, str)]
    if named:
        return sorted(set(named))
    req = view.types.requirement
    if req is not None and req.detail:
        return [f"by requirement: {req.detail}"]
    first = next((t for t in view.types.values if isinstance(t, Unknown)), None)
    return [f"not known: {first.reason}"] if first is not None else []


def _relative(path: str, root: Path) -> str:
    try:
        return os.path.relpath(path, root)
    except ValueError:
        return path


@dataclass
class _Context:
    index: ResourceIndex
    views: Views
    on: dict[int, list[Finding]]
    notices: list[Notice]
    _placements: dict[int, Placement] | None = None

    def results(self, resource: Resource, pid: str) -> list[Finding]:
        return [f for f in self.on.get(id(resource), ()) if f.policy_id == pid]

    def placement(self, resource: Resource) -> Placement | None:
        if self._placements is None:
            self._placements = {id(p.compute): p for p in self.views.gpu_placements()}
        return self._placements.get(id(resource))


def _verdict(findings: Iterable[Finding], where: str = "") -> Verdict:
    return Verdict(JUDGED, Counter(f.status.value for f in findings), where)


# -- why (not) judged ------------------------------------------------------------------------


def judge(pol: Policy, r: Resource, view: ComputeView, ctx: _Context) -> Verdict:
    """What ``pol`` made of the GPU object ``r``: its results (on itself, or on what carries
    its storage or network), else why there is none."""
    own = ctx.results(r, pol.id)
    if own:
        return _verdict(own)
    if pol.id in NETWORK:
        return _network(pol.id, r, view, ctx)
    if pol.id in EBS_CARRIED:
        return _storage(pol, r, view, ctx)
    if pol.id.startswith("RS-"):
        return _rightsizing(pol, r, view)
    if r.kind not in pol.kinds:
        return Verdict(BY_DESIGN, reason=NOT_FOR_KIND.get((pol.id, r.kind),
                                                          f"{pol.id} does not judge {r.kind}"))
    if pol.id == "VPC-004":
        return _public_ip(view)
    if pol.id in ("SPOT-001", "SPOT-002"):
        return _spot(r, view)
    if pol.id in ("ASG-001", "ASG-002"):
        return _purchase(pol.id, r, view, ctx)
    return Verdict(UNEXPLAINED, reason="no result, and no reason known to this tool")


def _network(pid: str, r: Resource, view: ComputeView, ctx: _Context) -> Verdict:
    net = view.network
    if net is None or not net.placed:
        if view.resource.kind == "sagemaker.cluster" and net is not None:
            return Verdict(BY_DESIGN, reason="no VpcConfig: it runs in SageMaker's own VPC")
        return Verdict(BY_DESIGN, reason="places no capacity itself (its consumers are judged)")
    placement = ctx.placement(r)
    if placement is None:
        gpu = view.types.gpu()
        why = gpu.reason if isinstance(gpu, Unknown) else "not GPU compute"
        return Verdict(NO_INPUT, reason=f"whether it is GPU compute is not known ({why})")
    if not placement.subnets:
        if not placement.unresolved and r.kind == "eksctl.node_group":
            return Verdict(NO_INPUT, reason="the VPC eksctl creates is built from eksctl's own "
                                            "template, not declared in the file")
        return Verdict(NO_INPUT, reason=_unplaced(placement.unresolved, net.zones))
    vpcs = {id(v): v for s in placement.subnets
            if (v := ctx.index.vpc_of_subnet(s)) is not None}
    if not vpcs:
        return Verdict(NO_INPUT, reason="its subnets' VPC is not in the scan")
    partial = " (some of its subnets are not in the scan)" if placement.unresolved else ""
    if pid == "VPC-001":
        found = [f for v in vpcs.values() for f in ctx.results(v, pid)]
        return _verdict(found, "on its VPC" + partial) if found else \
            Verdict(UNEXPLAINED, reason="its VPC has no VPC-001 result")
    if pid == "VPC-002":
        found = [f for s in {id(s): s for s in placement.subnets}.values()
                 for f in ctx.results(s, pid)]
        if found:
            return _verdict(found, "on its subnets" + partial)
        if any(f.status.value in ("FAIL", "UNKNOWN") for v in vpcs.values()
               for f in ctx.results(v, "VPC-001")):
            return Verdict(BY_DESIGN, reason="its VPC has no (known) S3 gateway endpoint: "
                                             "VPC-001 reports it")
        return Verdict(UNEXPLAINED, reason="its subnets have no VPC-002 result")
    endpoints = [e for v in vpcs.values() for e in ctx.index.endpoints_of_vpc(v)]
    found = [f for e in endpoints for f in ctx.results(e, pid)]
    if found:
        return _verdict(found, "on its VPC's endpoints" + partial)
    if not endpoints:
        return Verdict(BY_DESIGN, reason="no VPC endpoint in its VPC")
    return Verdict(UNEXPLAINED, reason="its VPC's endpoints have no VPC-003 result")


def _unplaced(unresolved: list[Any], zones: tuple[Any, ...]) -> str:
    for ref in unresolved:
        if isinstance(ref, Unknown):
            return f"its subnets are not known: {ref.reason}"
    for ref in unresolved:
        text = str(ref) if isinstance(ref, Ref) else repr(ref)
        return f"its subnet {text} is not in the scan"
    if zones:
        return "no subnet: the default VPC, which no scan holds"
    return "it names no subnet"


def _storage(pol: Policy, r: Resource, view: ComputeView, ctx: _Context) -> Verdict:
    if view.devices and all(d.service_encrypted for d in view.devices) and pol.id == "EBS-001":
        return Verdict(BY_DESIGN, reason="the service encrypts every volume (EBS-003 judges "
                                         "the key)")
    if not view.devices or r.kind not in pol.kinds:
        for use in view.templates:
            found = ctx.results(use.template, pol.id)
            if found:
                return _verdict(found, f"on {_what(use.template)} {use.template.id}")
        if view.templates:
            carrier = view.templates[0].template
            inner = ctx.views.of(carrier)
            if inner is not None and pol.id == "EBS-003":
                why = _not_encrypted(carrier, ctx)
                if why:
                    return Verdict(BY_DESIGN, reason=f"on {_what(carrier)} {carrier.id}: {why}")
            return Verdict(UNEXPLAINED, reason=f"{_what(carrier)} {carrier.id} has no result")
        if r.kind not in pol.kinds:
            return Verdict(BY_DESIGN, reason=f"{pol.id} does not judge {r.kind}")
        return Verdict(UNEXPLAINED, reason="no storage device in its view")
    if pol.id == "EBS-003":
        why = _not_encrypted(r, ctx)
        if why:
            return Verdict(BY_DESIGN, reason=why)
    return Verdict(UNEXPLAINED, reason="no result, and no reason known to this tool")


def _not_encrypted(r: Resource, ctx: _Context) -> str:
    """EBS-003 judges encrypted devices only: why there is none (EBS-001's verdict)."""
    worst = _verdict(ctx.results(r, "EBS-001")).worst
    if worst in ("FAIL", "UNKNOWN"):
        return f"no device known to be encrypted (EBS-001 {worst}): no key to judge"
    return ""


def _what(r: Resource) -> str:
    return {"ec2.launch_template": "its launch template",
            "autoscaling.launch_configuration": "its launch configuration",
            "karpenter.ec2_node_class": "its EC2NodeClass"}.get(r.kind, r.kind)


def _public_ip(view: ComputeView) -> Verdict:
    if view.network is None:
        return Verdict(BY_DESIGN, reason="holds no network settings")
    if not view.network.public_ip_applies:
        return Verdict(BY_DESIGN, reason="no public-IP setting exists for it")
    return Verdict(UNEXPLAINED, reason="no result, and no reason known to this tool")


def _spot(r: Resource, view: ComputeView) -> Verdict:
    if view.purchase.spot == ():
        if r.kind == "eksctl.node_group" and r.get("Managed") is True:
            return Verdict(BY_DESIGN, reason="a managed node group has no spot max price")
        return Verdict(BY_DESIGN, reason="buys no spot capacity")
    return Verdict(UNEXPLAINED, reason="no result, and no reason known to this tool")


def _purchase(pid: str, r: Resource, view: ComputeView, ctx: _Context) -> Verdict:
    purchase = view.purchase
    if pid == "ASG-001":
        if purchase.fixed_market:
            return Verdict(BY_DESIGN, reason="one purchase option by construction (the mix is "
                                             "made across groups)")
        if purchase.split is None:
            return Verdict(BY_DESIGN, reason="no on-demand/spot split to configure")
        said = [n for n in ctx.notices if n.message.startswith(f"ASG-001 {r.id}:")]
        if said:
            return Verdict(BY_DESIGN, reason="too small to hold a split in the band (a notice)")
        return Verdict(UNEXPLAINED, reason="no result, and no reason known to this tool")
    spot = any(p.spot is not False for p in purchase.pools)
    split = purchase.split
    if not spot and (split is None or (not isinstance(split, Unknown) and split.spot <= 0)):
        return Verdict(BY_DESIGN, reason="buys no spot capacity")
    return Verdict(UNEXPLAINED, reason="no result, and no reason known to this tool")


def _rightsizing(pol: Policy, r: Resource, view: ComputeView) -> Verdict:
    if r.kind not in pol.kinds:
        return Verdict(BY_DESIGN, reason=RS_NOT_FOR)
    gpus = [t for t in view.types.values if isinstance(t, str) and is_gpu_type(t)]
    catalogue = default_catalog()
    vendors = {s.gpu_vendor if (s := catalogue.spec(t)) is not None else vendor_by_family(t)
               for t in gpus}
    if gpus and "nvidia" not in vendors:
        return Verdict(BY_DESIGN, reason="not NVIDIA: RS-* measure NVIDIA GPUs")
    return Verdict(NO_INPUT, reason="no utilization history given (--utilization)")


# -- tables ----------------------------------------------------------------------------------


def objects_table(censuses: Sequence[Census]) -> list[str]:
    rows = ["| repository | family | kind | objects | GPU compute | GPU not known |",
            "|---|---|---|---|---|---|"]
    for c in censuses:
        for (fam, kind), n in sorted(c.objects.items(), key=lambda kv: _fam_key(kv[0])):
            rows.append(f"| {c.name} | {fam} | `{kind}` | {n} | {c.gpu[(fam, kind)]} | "
                        f"{c.maybe[(fam, kind)]} |")
    return rows


def _fam_key(item: tuple[str, str]) -> tuple[int, str]:
    fam, kind = item
    order = list(dict.fromkeys(name for _p, name in FAMILIES))
    return (order.index(fam) if fam in order else len(order), kind)


def policy_table(censuses: Sequence[Census]) -> list[str]:
    """Per repository, family and policy: the GPU objects (certain and maybe) and what the
    policy made of them. Cells: the judged ones by their worst status, then "n/a" (not
    applicable by design), "no input" (missing input) and "??" (unexplained)."""
    families = list(dict.fromkeys(o.family for c in censuses for o in c.gpu_objects))
    families.sort(key=lambda f: _fam_key((f, "")))
    head = "| repository | policy | " + " | ".join(SHORT.get(f, f) for f in families) + " |"
    rows = [head, "|---|---|" + "---|" * len(families)]
    for c in censuses:
        counts = [sum(1 for o in c.gpu_objects if o.family == f) for f in families]
        rows.append(f"| {c.name} | *GPU objects* | " + " | ".join(
            f"*{n}*" if n else " " for n in counts) + " |")
        for pid in c.policies:
            cells = []
            for fam in families:
                objs = [o for o in c.gpu_objects if o.family == fam]
                cells.append(cell([o.verdicts[pid] for o in objs]) if objs else " ")
            rows.append(f"| {c.name} | {pid} | " + " | ".join(cells) + " |")
    return rows


def cell(verdicts: Sequence[Verdict]) -> str:
    judged = Counter(v.worst for v in verdicts if v.category == JUDGED)
    parts = [f"{judged[s]} {s}" for s in ORDER if judged[s]]
    other = Counter(v.category for v in verdicts if v.category != JUDGED)
    for cat, label in ((BY_DESIGN, "n/a"), (NO_INPUT, "no input"), (UNEXPLAINED, "??")):
        if other[cat]:
            parts.append(f"{other[cat]} {label}")
    return ", ".join(parts) or "—"


def reasons_table(censuses: Sequence[Census]) -> list[str]:
    """Why GPU objects were not judged: one row per reason, with the families (and how many
    objects of each) it holds for; policies with the very same rows share one."""
    rows = ["| repository | policies | not judged because | why | GPU objects |",
            "|---|---|---|---|---|"]
    for c in censuses:
        seen: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
        for o in c.gpu_objects:
            for pid, v in o.verdicts.items():
                if v.category != JUDGED:
                    seen[(pid, v.category, _general(v.reason))][o.family] += 1
        lines: dict[tuple[str, str, str], list[str]] = defaultdict(list)
        for (pid, cat, why), fams in seen.items():
            where = ", ".join(f"{SHORT.get(f, f)} {n}" for f, n in
                              sorted(fams.items(), key=lambda kv: _fam_key((kv[0], ""))))
            lines[(cat, why, where)].append(pid)
        for (cat, why, where), pids in sorted(lines.items(), key=lambda kv: (
                min(c.policies.index(p) for p in kv[1]), kv[0])):
            rows.append(f"| {c.name} | {', '.join(pids)} | {cat} | {_md(why)} | {where} |")
    return rows


def _general(reason: str) -> str:
    """A reason without the object's own names, so that equal reasons group."""
    reason = re.sub(r"(its (launch template|EC2NodeClass|launch configuration)) \S+?(:|$)",
                    r"\1\3", reason)
    return re.sub(r"subnet \S+ is not in the scan", "subnet … is not in the scan", reason)


def gpu_objects_table(censuses: Sequence[Census]) -> list[str]:
    rows = ["| repository | file:line | kind | object | types | GPU | results |",
            "|---|---|---|---|---|---|---|"]
    for c in censuses:
        for o in sorted(c.gpu_objects, key=lambda o: (o.file, o.line or 0, o.resource.id)):
            judged = "; ".join(
                f"{pid} {v.worst}" + (f" ({v.reason})" if v.reason else "")
                for pid, v in o.verdicts.items() if v.category == JUDGED)
            root = f" (root module `{o.root}`)" if o.root else ""
            rows.append(f"| {c.name} | `{o.file}:{o.line or ''}`{root} | `{o.resource.kind}` | "
                        f"{_md(o.resource.id)} | {_md(', '.join(o.types))} | {o.gpu} | "
                        f"{_md(judged) or '—'} |")
    return rows


def summary_table(censuses: Sequence[Census]) -> list[str]:
    """Policy x repository: how many GPU objects the policy judged (by worst result), and how
    many it did not, by design (n/a) or for want of input."""
    policies = list(dict.fromkeys(p for c in censuses for p in c.policies))
    rows = ["| policy | " + " | ".join(f"{c.name} ({len(c.gpu_objects)} GPU objects)"
                                       for c in censuses) + " |",
            "|---|" + "---|" * len(censuses)]
    for pid in policies:
        cells = []
        for c in censuses:
            vs = [o.verdicts[pid] for o in c.gpu_objects if pid in o.verdicts]
            cells.append(_summary_cell(vs))
        rows.append(f"| {pid} | " + " | ".join(cells) + " |")
    return rows


def _summary_cell(verdicts: Sequence[Verdict]) -> str:
    judged = [v for v in verdicts if v.category == JUDGED]
    worst = Counter(v.worst for v in judged)
    how = ", ".join(f"{worst[s]} {s}" for s in ORDER if worst[s])
    parts = [f"**{len(judged)}** judged" + (f" ({how})" if how else "")]
    other = Counter(v.category for v in verdicts if v.category != JUDGED)
    for cat, label in ((BY_DESIGN, "n/a"), (NO_INPUT, "no input"), (UNEXPLAINED, "??")):
        if other[cat]:
            parts.append(f"{other[cat]} {label}")
    return ", ".join(parts)


def unexplained(censuses: Sequence[Census]) -> list[str]:
    return [f"{c.name}: {o.file}:{o.line} {o.resource.id} {pid}: {v.reason}"
            for c in censuses for o in c.gpu_objects for pid, v in o.verdicts.items()
            if v.category == UNEXPLAINED]


def remote_modules_table(censuses: Sequence[Census]) -> list[str]:
    """Remote module calls the scan could not read (no ``terraform init``): GPU compute inside
    them is not counted anywhere above."""
    rows = ["| repository | remote module calls not fetched | sources |", "|---|---|---|"]
    for c in censuses:
        sources = Counter(m.group(1) for n in c.unfetched_modules
                          if (m := re.search(r"remote module source '([^']+)'", n.message)))
        listed = ", ".join(f"`{src}` ×{n}" if n > 1 else f"`{src}`"
                           for src, n in sorted(sources.items()))
        rows.append(f"| {c.name} | {len(c.unfetched_modules)} | {listed or '—'} |")
    return rows


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(censuses: Sequence[Census]) -> str:
    """Every table, as the Markdown block ``--update`` writes."""
    parts = [
        "Objects of each compute kind, and how many are GPU compute:", "",
        *objects_table(censuses), "",
        "What each policy made of the GPU objects (certain and maybe), per kind family. A "
        "cell counts objects by their worst result; \"n/a\": not applicable by design; "
        "\"no input\": an input the scan does not hold; \"??\": unexplained (none is "
        "expected):", "",
        *policy_table(censuses), "",
        "Why the GPU objects a policy did not judge were not judged:", "",
        *reasons_table(censuses), "",
        "Remote modules the scan could not read (their resources are in no count above):", "",
        *remote_modules_table(censuses), "",
        "Summary: the GPU objects each policy judged (by worst result), and the others:", "",
        *summary_table(censuses), "",
        "Every GPU object, with the results that judged it:", "",
        *gpu_objects_table(censuses), "",
    ]
    left = unexplained(censuses)
    if left:
        parts += ["Unexplained (bugs to look at):", "", *(f"- {_md(x)}" for x in left), ""]
    return "\n".join(parts)


def update(path: Path, block: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{path}: no {BEGIN} … {END} block to replace")
    path.write_text(text[:start + len(BEGIN)] + "\n" + block + "\n" + text[end:],
                    encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", type=Path, help="rewrite this file's generated block")
    parser.add_argument("trees", nargs="+", metavar="NAME=PATH")
    args = parser.parse_args(argv)
    censuses = []
    for arg in args.trees:
        name, _, path = arg.partition("=")
        if not path:
            parser.error(f"{arg}: expected NAME=PATH")
        censuses.append(census(name, Path(path)))
    block = render(censuses)
    if args.update:
        update(args.update, block)
    else:
        print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
