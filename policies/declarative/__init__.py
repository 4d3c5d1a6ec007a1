"""Declarative policies written by users: one YAML file per policy, in a directory named by
``--policy-dir`` or ``policy_dirs:`` of the config (docs/user-policies.md).

Enters: a directory. Leaves: ``policies.api.UserPolicy`` objects, the same to the engine and
the reports as built-in ones, each validated against ``policies/declarative/policy.schema.json`` and
against the kind schema (every path it reads exists on one of its kinds or in the compute
view) before anything is scanned; a file that is not is a PolicyFileError naming file and line.
"""

from __future__ import annotations

from policies.declarative.load import (
    SCHEMA_FILE,
    PolicyFileError,
    load_policy_dir,
    load_policy_file,
    policy_files,
)

__all__ = ["SCHEMA_FILE", "PolicyFileError", "load_policy_dir", "load_policy_file",
           "policy_files"]
