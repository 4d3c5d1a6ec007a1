"""The policy catalogue. Each module registers its policies with ``policies.base.policy``;
plugins and YAML policies join them through the one discovery of ``policies.discovery``."""

from __future__ import annotations

from policies.base import Policy
from policies.discovery import BUILTIN_MODULES as POLICY_MODULES
from policies.discovery import all_policies

__all__ = ["POLICY_MODULES", "Policy", "all_policies"]
