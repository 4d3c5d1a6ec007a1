"""gpuaudit's policies as checkov checks. Loaded by checkov, never by gpuaudit itself.

Each check is a thin adapter: it hands the resource configuration checkov gives it to
:func:`scanner.integrations.checkov.exports.decide`, which runs gpuaudit's own policy, and
returns PASSED, FAILED or UNKNOWN with gpuaudit's message in the check's details.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:
    from scanner.integrations.checkov import exports
except ImportError:  # checkov runs from an environment of its own (pipx, its own venv):
    # use the gpuaudit this directory belongs to (the policies' code is pure Python).
    sys.path.append(str(Path(__file__).resolve().parents[4]))
    from scanner.integrations.checkov import exports

from checkov.cloudformation.checks.resource.base_resource_check import (
    BaseResourceCheck as CloudFormationCheck,
)
from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import (
    BaseResourceCheck as TerraformCheck,
)

from scanner.model import Status

_RESULTS = {Status.PASS: CheckResult.PASSED, Status.FAIL: CheckResult.FAILED}


def _entity_name(check: Any) -> str | None:
    """The resource's name (CloudFormation logical id) from checkov's ``file:type:name``."""
    path = getattr(check, "entity_path", "") or ""
    return path.rsplit(":", 1)[-1] or None if ":" in path else None


def _file(check: Any) -> str | None:
    path = getattr(check, "entity_path", "") or ""
    return path.split(":", 1)[0] or None


# misc: checkov is untyped here (its own environment): its base classes are Any
class GpuauditTerraformCheck(TerraformCheck):  # type: ignore[misc]
    def __init__(self, export: exports.Export) -> None:
        self.export = export
        super().__init__(name=exports.check_name(export), id=export.check_id,
                         categories=[CheckCategories[export.category]],
                         supported_resources=list(export.terraform_types),
                         guideline=f"gpuaudit policies show {export.policy_id}")

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        verdict = exports.decide(self.export, "terraform", self.entity_type, conf,
                                 file=_file(self))
        self.details.append(verdict.message)
        return _RESULTS.get(verdict.status, CheckResult.UNKNOWN)


# misc: checkov is untyped here (its own environment): its base classes are Any
class GpuauditCloudFormationCheck(CloudFormationCheck):  # type: ignore[misc]
    def __init__(self, export: exports.Export) -> None:
        self.export = export
        super().__init__(name=exports.check_name(export), id=export.check_id,
                         categories=[CheckCategories[export.category]],
                         supported_resources=list(export.cloudformation_types),
                         guideline=f"gpuaudit policies show {export.policy_id}")

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        verdict = exports.decide(self.export, "cloudformation", self.entity_type, conf,
                                 file=_file(self), name=_entity_name(self))
        self.details.append(verdict.message)
        return _RESULTS.get(verdict.status, CheckResult.UNKNOWN)


for _export in exports.enabled_exports():
    if _export.terraform_types:
        GpuauditTerraformCheck(_export)
    if _export.cloudformation_types:
        GpuauditCloudFormationCheck(_export)
