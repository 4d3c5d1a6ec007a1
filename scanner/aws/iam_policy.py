"""The minimal read-only IAM policy, generated from what the collectors declare they call."""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from scanner.aws.price_list import CATALOG_CALLS
from scanner.aws.registry import COLLECTORS, declared_calls
from scanner.aws.targets import DISCOVERY_CALLS

# boto3 service name → IAM action prefix, where they differ.
_IAM_PREFIX: dict[str, str] = {}


def iam_action(service: str, operation: str) -> str:
    return f"{_IAM_PREFIX.get(service, service)}:{operation}"


def policy_document(kinds: Collection[str] | None = None) -> dict[str, Any]:
    """An IAM policy document allowing exactly the declared reads (for ``kinds``, default all).

    Target discovery (``ec2:DescribeRegions`` for ``--regions all``, ``organizations:ListAccounts``
    for ``--org``, needed in the management or delegated-administrator account only) is a
    separate statement, and so is ``pricing:GetProducts``, which only ``gpuaudit catalog
    refresh`` calls. ``sts:AssumeRole`` belongs to the identity that runs the audit, not here.
    """
    discovery = {iam_action(c.service, c.operation) for c in DISCOVERY_CALLS}
    reads = {iam_action(c.service, c.operation) for c in declared_calls(kinds)} - discovery
    doc: dict[str, Any] = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "GpuauditReadOnly",
                "Effect": "Allow",
                "Action": sorted(reads),
                "Resource": "*",
            },
            {
                "Sid": "GpuauditTargetDiscovery",
                "Effect": "Allow",
                "Action": sorted(discovery),
                "Resource": "*",
            },
        ],
    }
    if kinds is None:  # the whole policy: `catalog refresh` too
        doc["Statement"].append({
            "Sid": "GpuauditCatalogRefresh",
            "Effect": "Allow",
            "Action": sorted({iam_action(c.service, c.operation) for c in CATALOG_CALLS}),
            "Resource": "*",
        })
    return doc


def render(kinds: Collection[str] | None = None) -> str:
    return json.dumps(policy_document(kinds), indent=2) + "\n"


def render_send() -> str:
    """The policy `gpuaudit report send-securityhub` needs: its one write, kept apart from the
    audit's read-only policy (never attach it to the audit's role)."""
    from scanner.aws.securityhub import write_policy_document

    return json.dumps(write_policy_document(), indent=2) + "\n"


def all_actions() -> list[str]:
    """Every IAM action any collector or target discovery declares."""
    calls = [c for col in COLLECTORS for c in col.calls] + list(DISCOVERY_CALLS) + list(
        CATALOG_CALLS)
    return sorted({iam_action(c.service, c.operation) for c in calls})
