"""The policy catalogue. Each module registers its policies with ``policies.base.policy``."""

from __future__ import annotations

import importlib

from policies.base import REGISTRY, Policy

POLICY_MODULES = ("policies.ebs", "policies.vpc", "policies.spot", "policies.asg",
                  "policies.rightsizing", "policies.unread_modules")


def all_policies() -> dict[str, Policy]:
    for name in POLICY_MODULES:
        importlib.import_module(name)
    return dict(sorted(REGISTRY.items()))
