"""Which gpuaudit policies checkov can run, and the verdict of one on one resource.

checkov hands a check one resource at a time. A policy is exported only where one resource can
decide it; where the verdict would lean on a resource the check cannot see (a launch template's
group, a subnet's route table, the account's default encryption) the verdict is UNKNOWN, never a
guess. Policies are called only through their public registry (``policies.all_policies``,
``Policy.check``, ``policies.base.Context``), with the parameters of the gpuaudit config.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from scanner.model import Provenance, Resource, SourceKind, Status, Unknown, dig

CHECK_ID_PREFIX = "CKV_GPUAUDIT_"
CONFIG_ENV = "GPUAUDIT_CONFIG"
ONE_AT_A_TIME = "checkov hands a check one resource at a time"

Guard = Callable[[Resource, Mapping[str, Any]], "str | None"]


@dataclass(frozen=True)
class Verdict:
    status: Status  # PASS, FAIL or UNKNOWN
    message: str


def _any(resource: Resource, params: Mapping[str, Any]) -> str | None:
    return None


def _inline_mix(resource: Resource, params: Mapping[str, Any]) -> str | None:
    """A group is decided on its own only with an inline mixed instances policy (without one,
    its purchase option and types come from its launch template or configuration)."""
    if resource.kind != "autoscaling.group":
        return None
    mip = resource.get("MixedInstancesPolicy")
    if isinstance(mip, Unknown):
        return f"mixed instances policy not known: {mip.reason}"
    if not isinstance(mip, dict) or not mip:
        return (f"{ONE_AT_A_TIME}: this group has no inline mixed instances policy, so its "
                "purchase option and instance types come from its launch template or "
                "configuration, which the check cannot see")
    return None


def _inline_mix_and_types(resource: Resource, params: Mapping[str, Any]) -> str | None:
    """ASG-001 with ``gpu_only`` needs the group's own override types to know it is GPU."""
    why = _inline_mix(resource, params)
    if why or not params.get("gpu_only"):
        return why
    overrides = dig(resource.attrs, "MixedInstancesPolicy.LaunchTemplate.Overrides")
    types = [o.get("InstanceType") for o in overrides if isinstance(o, dict)] \
        if isinstance(overrides, list) else []
    if not types or not all(isinstance(t, str) for t in types):
        return (f"{ONE_AT_A_TIME}: gpu_only is set and the group's instance types are not all "
                "in its own overrides")
    return None


_EBS_TF = ("aws_ebs_volume", "aws_instance", "aws_launch_template", "aws_launch_configuration",
           "aws_spot_instance_request", "aws_spot_fleet_request")
_EBS_CFN = ("AWS::EC2::Volume", "AWS::EC2::Instance", "AWS::EC2::LaunchTemplate",
            "AWS::AutoScaling::LaunchConfiguration", "AWS::EC2::SpotFleet")
_SPOT_TF = ("aws_instance", "aws_launch_template", "aws_launch_configuration",
            "aws_autoscaling_group", "aws_spot_instance_request", "aws_spot_fleet_request",
            "aws_ec2_fleet")
_SPOT_CFN = ("AWS::EC2::LaunchTemplate", "AWS::AutoScaling::LaunchConfiguration",
             "AWS::AutoScaling::AutoScalingGroup", "AWS::EC2::SpotFleet", "AWS::EC2::EC2Fleet")


@dataclass(frozen=True)
class Export:
    policy_id: str
    terraform_types: tuple[str, ...]
    cloudformation_types: tuple[str, ...]
    category: str  # the name of a checkov CheckCategories member
    guard: Guard = _any
    # The account's default EBS encryption (and key) is read from a resource the check cannot
    # see: it is given to the policy as Unknown, so that an absent Encrypted is UNKNOWN.
    default_encryption_unseen: bool = False

    @property
    def check_id(self) -> str:
        return CHECK_ID_PREFIX + self.policy_id.replace("-", "_")


EXPORTS: dict[str, Export] = {e.policy_id: e for e in (
    Export("EBS-001", _EBS_TF, _EBS_CFN, "ENCRYPTION", default_encryption_unseen=True),
    Export("EBS-002", ("aws_ebs_encryption_by_default",), (), "ENCRYPTION"),
    Export("EBS-003", _EBS_TF, _EBS_CFN, "ENCRYPTION", default_encryption_unseen=True),
    Export("SPOT-001", _SPOT_TF, _SPOT_CFN, "GENERAL_SECURITY", _inline_mix),
    Export("SPOT-002", _SPOT_TF, _SPOT_CFN, "GENERAL_SECURITY", _inline_mix),
    Export("ASG-001", ("aws_autoscaling_group",), ("AWS::AutoScaling::AutoScalingGroup",),
           "GENERAL_SECURITY", _inline_mix_and_types),
    Export("ASG-002", ("aws_autoscaling_group",), ("AWS::AutoScaling::AutoScalingGroup",),
           "GENERAL_SECURITY", _inline_mix),
)}

_NETWORK = ("needs the network graph: which GPU compute runs in which subnet, and the VPC's "
            "subnets, route tables, internet gateways and endpoints")
_HISTORY = ("needs the resource's GPU utilization history (scan --utilization), which checkov "
            "does not read")
NOT_EXPORTED: dict[str, str] = {
    "VPC-001": _NETWORK,
    "VPC-002": _NETWORK,
    "VPC-003": "applies only to endpoints of a VPC that hosts GPU compute: " + _NETWORK,
    "VPC-004": "a subnet's public IP mapping and its route to an internet gateway decide it "
               "when the compute has no explicit flag: " + _NETWORK
               + " (the explicit flag alone is checkov's CKV_AWS_88)",
    "RS-001": _HISTORY,
    "RS-002": _HISTORY,
    "RS-003": _HISTORY,
}
NOT_REVIEWED = "not reviewed yet for evaluation on one resource at a time"


def not_exported_reason(policy_id: str) -> str:
    return NOT_EXPORTED.get(policy_id, NOT_REVIEWED)


@lru_cache(maxsize=1)
def config() -> Any:
    """The gpuaudit config: $GPUAUDIT_CONFIG, else .gpuaudit.yaml / pyproject.toml in the cwd
    (where checkov runs). A bad config raises ConfigError naming the file and key."""
    from scanner.engine.config import load_config

    path = os.environ.get(CONFIG_ENV)
    return load_config(Path(path) if path else None)


def enabled_exports() -> list[Export]:
    """The exports whose policy the gpuaudit config enables (off-by-default ones stay off)."""
    from scanner.engine.evaluate import select_policies

    on = {p.id for p in select_policies(config())}
    return [e for pid, e in EXPORTS.items() if pid in on]


def check_name(export: Export) -> str:
    from policies import all_policies

    return f"{export.policy_id}: {all_policies()[export.policy_id].title}"


def _unseen_defaults(resource: Resource) -> Resource:
    unseen = Unknown(f"{ONE_AT_A_TIME}: whether EBS encryption by default is on (and with which "
                     "key) is set on another resource")
    return Resource(kind="ec2.ebs_defaults", id="(EBS defaults, not visible to the check)",
                    attrs={"EbsEncryptionByDefault": unseen, "KmsKeyId": unseen},
                    provenance=Provenance(SourceKind.TERRAFORM_HCL), scope=resource.scope)


def evaluate(export: Export, resource: Resource) -> Verdict:
    """Run the exported policy on this one resource."""
    from policies import all_policies
    from policies.base import Context
    from scanner.catalog import default_catalog
    from scanner.engine.evaluate import _if_it_exists
    from scanner.model.graph import ResourceIndex

    pol = all_policies()[export.policy_id]
    if resource.kind not in pol.kinds:
        return Verdict(Status.UNKNOWN, f"{export.policy_id} does not evaluate {resource.kind}")
    params = config().params(pol.id, pol.params)
    why = export.guard(resource, params)
    if why:
        return Verdict(Status.UNKNOWN, why)
    seen = [resource]
    if export.default_encryption_unseen and resource.kind != "ec2.ebs_defaults":
        seen.append(_unseen_defaults(resource))
    ctx = Context(ResourceIndex(seen), params, default_catalog())
    # a resource that may not be created (a CloudFormation Condition, a count or for_each
    # checkov did not expand) gets no PASS or FAIL, as in gpuaudit's own scan
    results = [_if_it_exists(r) for r in pol.check(resource, ctx) if r.resource is resource]
    failing = [r.message for r in results if r.status is Status.FAIL]
    if failing:
        return Verdict(Status.FAIL, "; ".join(failing))
    if results and all(r.status is Status.PASS for r in results):
        return Verdict(Status.PASS, "; ".join(r.message for r in results))
    if results:
        other = next(r for r in results if r.status is not Status.PASS)
        return Verdict(Status.UNKNOWN, other.message)
    return Verdict(Status.UNKNOWN, f"{export.policy_id} gives no verdict on this resource: it "
                                   "does not apply, or it is decided on a related resource")


def decide(export: Export, framework: str, resource_type: str, conf: Mapping[str, Any], *,
           file: str | None = None, name: str | None = None) -> Verdict:
    """The verdict for checkov: ``framework`` is "terraform" or "cloudformation". Never raises:
    a configuration that cannot be read, or a policy that fails, is UNKNOWN with the reason."""
    from scanner.integrations.checkov.conf import (
        ConfError,
        cloudformation_resource,
        terraform_resource,
    )

    try:
        if framework == "terraform":
            resource = terraform_resource(resource_type, conf, file=file)
        else:
            resource = cloudformation_resource(conf, logical_id=name or "Resource", file=file)
        if resource is None:
            return Verdict(Status.UNKNOWN, f"{resource_type} is not in gpuaudit's resource model")
        return evaluate(export, resource)
    except ConfError as exc:
        return Verdict(Status.UNKNOWN, f"configuration not understood: {exc}")
    except Exception as exc:  # a bug must not stop checkov's run, nor pass a resource
        return Verdict(Status.UNKNOWN, f"gpuaudit failed on this resource: "
                                       f"{type(exc).__name__}: {exc}")
