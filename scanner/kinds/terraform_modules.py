"""Terraform module calls whose module was not read: a remote source that ``terraform init``
did not install (nor ``scan --fetch-modules`` fetch), or one whose fetch failed. What it
declares is not in the resource model: a policy reports it UNKNOWN rather than let a scan
without its resources pass in silence."""

from __future__ import annotations

from scanner.kinds.schema import Kind
from scanner.kinds.types import Str

UNREAD_MODULE_CALL = "terraform.module_call"

KINDS = (
    Kind(
        name=UNREAD_MODULE_CALL,
        doc="a Terraform module call whose module was not read; id its module address "
            "(`module.eks`, `module.platform.module.eks`, instance keys left out), located at "
            "the `module` block",
        attributes={
            "Source": Str(doc="the source argument, credentials removed"),
            "Version": Str(doc="the version constraint, when given"),
            "Reason": Str(doc="why it was not read"),
            "Fix": Str(doc="what reads it: terraform init, or scan --fetch-modules"),
        },
        formats="Terraform `.tf` / `.tf.json` (module blocks)",
    ),
)
