"""Inline suppressions written in a YAML configuration, in the live tag's syntax:
``EBS-001:reason;VPC-004:reason`` (a Kubernetes annotation ``gpuaudit/skip``, an eksctl node
group tag or a ParallelCluster queue tag ``gpuaudit:skip``). A reason is required."""

from __future__ import annotations

import re
from typing import Any

from scanner.model import Skip

_POLICY_ID = re.compile(r"^[A-Z][A-Z0-9]*-\d{3}$")


def parse_skips(value: Any, by: str) -> tuple[tuple[Skip, ...], list[str]]:
    """Skips, plus a message for every unusable entry (no policy id, no reason)."""
    if not isinstance(value, str):
        return (), [f"{by} must be text such as 'EBS-001:reason'; ignored"]
    skips: list[Skip] = []
    problems: list[str] = []
    for raw in re.split(r"[;\n]", value[:10_000]):
        entry = raw.strip()
        if not entry:
            continue
        policy, sep, reason = entry.partition(":")
        policy, reason = policy.strip().upper(), reason.strip()
        if not _POLICY_ID.match(policy):
            problems.append(f"{by}: {entry[:80]!r} is not POLICY-ID:reason; ignored")
        elif not sep or not reason:
            problems.append(f"{by}: skip of {policy} has no reason and is not applied")
        else:
            skips.append(Skip(policy_id=policy, reason=reason, by=by))
    return tuple(skips), problems
