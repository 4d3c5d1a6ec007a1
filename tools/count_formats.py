"""Count the objects of the YAML formats (Karpenter, eksctl, ParallelCluster) in scanned trees:
how many there are, how many are GPU compute (and how many may be), and which policies judged
them how (PASS / FAIL / UNKNOWN / SUPPRESSED), as a Markdown table.

    python tools/count_formats.py NAME=PATH [NAME=PATH ...]

Used for docs/real-repositories-formats.md (the three public repositories of issue 13).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

from scanner.compute import views
from scanner.engine import evaluate
from scanner.graph import ResourceIndex
from scanner.model import Unknown
from scanner.scan import scan_paths

FAMILIES = {
    "karpenter.node_pool": "Karpenter NodePool",
    "karpenter.ec2_node_class": "Karpenter EC2NodeClass",
    "eksctl.node_group": "eksctl node group",
    "parallelcluster.queue": "ParallelCluster queue",
    "parallelcluster.head_node": "ParallelCluster head node",
    "parallelcluster.shared_storage": "ParallelCluster shared EBS",
}
STATUSES = ("PASS", "FAIL", "UNKNOWN", "SUPPRESSED", "ERROR")


def count(name: str, path: Path) -> list[str]:
    source = scan_paths([path])
    ours = [r for r in source.resources if r.kind in FAMILIES]
    shared = views(ResourceIndex(source.resources))
    gpu: dict[str, int] = Counter()
    gpu_ids: set[tuple[str, str]] = set()
    maybe: dict[str, int] = Counter()
    total: dict[str, int] = Counter(r.kind for r in ours)
    for r in ours:
        view = shared.of(r)
        fact = view.types.gpu() if view is not None else False
        if fact is True:
            gpu[r.kind] += 1
            gpu_ids.add((r.scope, r.id))
        elif isinstance(fact, Unknown):
            maybe[r.kind] += 1
    findings = evaluate(source.resources)
    judged: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    on_gpu: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    by_identity = {(r.kind, r.id, r.scope) for r in ours}
    for f in findings:
        if f.resource["kind"] in FAMILIES:
            judged[(f.resource["kind"], f.policy_id)][f.status.value] += 1
            scope = next((s for k, i, s in by_identity if k == f.resource["kind"]
                          and i == f.resource["id"]), None)
            if (scope, f.resource["id"]) in gpu_ids:
                on_gpu[(f.resource["kind"], f.policy_id)][f.status.value] += 1
    rows = []
    for kind, label in FAMILIES.items():
        if not total[kind]:
            continue
        rows.append(f"| {name} | {label} | {total[kind]} | {gpu[kind]} | {maybe[kind]} | "
                    f"{_verdicts(on_gpu, kind)} | {_verdicts(judged, kind)} |")
    return rows


def _verdicts(judged: dict[tuple[str, str], Counter[str]], kind: str) -> str:
    policies = sorted({p for k, p in judged if k == kind})
    return "; ".join(f"{p}: " + ", ".join(f"{judged[(kind, p)][s]} {s}" for s in STATUSES
                                          if judged[(kind, p)][s]) for p in policies) or "—"


def main(argv: list[str]) -> int:
    print("| repository | kind | objects | GPU compute | GPU not known | on the GPU ones | "
          "on all of them |")
    print("|---|---|---|---|---|---|---|")
    for arg in argv:
        name, _, path = arg.partition("=")
        for row in count(name, Path(path)):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
