"""Spot GPU capacity without interruption handling (SPOT-003).

Three handlers, any one passes: an EventBridge rule on EC2's two-minute interruption warning or
rebalance recommendation with a target (in the same account and region; in IaC anywhere in the
scanned tree), capacity rebalance on the group, a termination lifecycle hook on the group.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from policies.base import Context, Remediation, policy
from policies.event_patterns import matches
from policies.yaml_kinds import NODE_GROUP, NODE_POOL, QUEUE
from scanner.compute import GROUP as GROUPED
from scanner.compute import LAUNCHES, PLACES, POOLS, ComputeView, kinds_with, reads_of
from scanner.compute import SPOT as MAY_SPOT
from scanner.compute.view import MIXED, SPOT
from scanner.model import Resource, Result, Severity, Status, Unknown
from scanner.model.graph import ResourceIndex, doubt

RULE = "events.rule"
TARGET = "events.target"
HOOK = "autoscaling.lifecycle_hook"
GROUP = "autoscaling.group"
TERMINATING = "autoscaling:EC2_INSTANCE_TERMINATING"
# Every kind that places capacity that may be spot (a SageMaker HyperPod cluster or a head node
# cannot be).
_MAYBE = set(kinds_with(MAY_SPOT)) | set(kinds_with(POOLS)) | set(kinds_with(GROUPED))
SPOT_KINDS = tuple(k for k in kinds_with(LAUNCHES, PLACES) if k in _MAYBE)
# Capacity rebalance, where a kind configures it (attribute path).
REBALANCE_PATHS = {
    GROUP: "CapacityRebalance",
    NODE_GROUP: "InstancesDistribution.CapacityRebalance",
    "ec2.spot_fleet": "SpotFleetRequestConfig.SpotMaintenanceStrategies.CapacityRebalance."
                      "ReplacementStrategy",
    "ec2.fleet": "SpotOptions.MaintenanceStrategies.CapacityRebalance.ReplacementStrategy",
}
# Services that handle spot interruptions themselves (why, per kind; eksctl: managed only).
BY_SERVICE = {
    "eks.nodegroup": "an EKS managed node group: EKS enables Capacity Rebalancing and drains "
                     "spot nodes on rebalance recommendations itself",
    NODE_GROUP: "an eksctl managed node group: EKS enables Capacity Rebalancing and drains "
                "spot nodes on rebalance recommendations itself",
}
KARPENTER_LIMIT = ("Karpenter drains spot nodes only with its interruption queue "
                   "(settings.interruptionQueue / --interruption-queue), which gpuaudit does not "
                   "read")


@dataclass(frozen=True)
class Handler:
    what: str  # "event rule", "capacity rebalance", "termination lifecycle hook", "service"
    name: str
    present: bool | Unknown
    detail: str = ""

    def row(self) -> dict[str, Any]:
        out: dict[str, Any] = {"handler": self.what, "name": self.name,
                               "present": self.present if isinstance(self.present, bool)
                               else None}
        if isinstance(self.present, Unknown):
            out["unknown"] = self.present.reason
        if self.detail:
            out["detail"] = self.detail
        return out


@policy(
    id="SPOT-003",
    title="Spot GPU capacity without interruption handling",
    severity=Severity.MEDIUM,
    category="cost",
    kinds=SPOT_KINDS,
    needs=(*reads_of(SPOT_KINDS), RULE, TARGET, HOOK),
    description="Spot capacity gets a two-minute warning before it is reclaimed (and, earlier, "
                "a rebalance recommendation); a GPU job that is not told loses its work since "
                "the last checkpoint. Spot GPU capacity (spot-ness from the compute view's "
                "purchase option: spot or mixed; a purchase option that is not known gives "
                "UNKNOWN) passes with any one of: an enabled EventBridge rule on the default "
                "bus whose pattern matches source aws.ec2 and detail-type \"EC2 Spot Instance "
                "Interruption Warning\" or \"EC2 Instance Rebalance Recommendation\" and that "
                "has at least one target (live: in the same account and region; IaC: anywhere "
                "in the scanned tree); capacity rebalance on the group; a termination lifecycle "
                "hook (autoscaling:EC2_INSTANCE_TERMINATING) on the group. EKS managed node "
                "groups handle it themselves. A Karpenter NodePool with spot capacity passes "
                "on a matching rule; its interruption queue setting is not read, so without one "
                "it is UNKNOWN. A rule whose pattern or targets cannot be known makes that "
                "handler unknown; with no other handler known, the result is UNKNOWN.",
    remediation=Remediation(
        text="Send EC2 Spot Instance Interruption Warnings and Rebalance Recommendations to a "
             "handler that checkpoints and drains the node (an EventBridge rule with a target "
             "such as an SQS queue for aws-node-termination-handler or Karpenter), and on Auto "
             "Scaling groups enable capacity rebalance or add a termination lifecycle hook.",
        terraform='resource "aws_cloudwatch_event_rule" "spot_interruption" {\n'
                  '  name          = "spot-interruption"\n'
                  "  event_pattern = jsonencode({\n"
                  '    source        = ["aws.ec2"]\n'
                  '    "detail-type" = ["EC2 Spot Instance Interruption Warning",\n'
                  '                     "EC2 Instance Rebalance Recommendation"]\n'
                  "  })\n}\n\n"
                  'resource "aws_cloudwatch_event_target" "spot_interruption" {\n'
                  "  rule = aws_cloudwatch_event_rule.spot_interruption.name\n"
                  "  arn  = aws_sqs_queue.node_termination.arn\n}\n\n"
                  "# and on the aws_autoscaling_group:\ncapacity_rebalance = true",
        cloudformation="SpotInterruptionRule:\n  Type: AWS::Events::Rule\n  Properties:\n"
                       "    EventPattern:\n      source: [aws.ec2]\n      detail-type:\n"
                       "        - EC2 Spot Instance Interruption Warning\n"
                       "        - EC2 Instance Rebalance Recommendation\n"
                       "    Targets:\n      - Id: node-termination\n"
                       "        Arn: !GetAtt NodeTerminationQueue.Arn\n"
                       "# and on the AWS::AutoScaling::AutoScalingGroup:\n"
                       "CapacityRebalance: true",
        by_kind={
            NODE_POOL: Remediation(
                text="Set Karpenter's interruption queue (settings.interruptionQueue in the "
                     "Helm values) and the EventBridge rules that feed it (spot interruption "
                     "warning, rebalance recommendation)."),
            QUEUE: Remediation(
                text="Add an EventBridge rule on EC2 Spot Instance Interruption Warnings with a "
                     "target that checkpoints or requeues the jobs of the node."),
        }),
)
def spot_003(resource: Resource, ctx: Context) -> Iterator[Result]:
    view = ctx.compute.of(resource)
    if view is None:
        return
    spot = spot_capacity(resource, view, ctx)
    if spot is False:
        return
    gpu = view.types.gpu()
    if gpu is False:
        return
    evidence: dict[str, Any] = {}
    if isinstance(spot, Unknown):
        yield ctx.result(resource, Status.UNKNOWN, f"whether it runs on spot is not known "
                         f"({spot.reason})", evidence=evidence)
        return
    handlers = _handlers(resource, ctx)
    evidence["handlers"] = [h.row() for h in handlers]
    evidence["event_rules"] = [h.name for h in handlers
                               if h.what == "event rule" and h.present is True]
    evidence["capacity_rebalance"] = next(
        (h.present if isinstance(h.present, bool) else None
         for h in handlers if h.what == "capacity rebalance"), "not applicable")
    evidence["termination_hooks"] = [h.name for h in handlers
                                     if h.what == "termination lifecycle hook"
                                     and h.present is True]
    present = [h for h in handlers if h.present is True]
    if present:
        h = present[0]
        yield ctx.result(resource, Status.PASS, f"spot interruptions handled: {h.what} "
                         f"{h.name}" + (f" ({h.detail})" if h.detail else ""),
                         evidence=evidence)
        return
    unknown = [h for h in handlers if isinstance(h.present, Unknown)]
    if unknown:
        h = unknown[0]
        yield ctx.result(resource, Status.UNKNOWN, f"no interruption handler is known: {h.what} "
                         f"{h.name}: {h.present.reason}",  # type: ignore[union-attr]
                         evidence=evidence)
        return
    kinds = ["EventBridge rule (with a target) on the interruption warning or rebalance "
             "recommendation"]
    if resource.kind in REBALANCE_PATHS:
        kinds += ["capacity rebalance"]
    if resource.kind == GROUP:
        kinds += ["termination lifecycle hook"]
    message = "spot GPU capacity without interruption handling: no " + ", no ".join(kinds)
    if isinstance(gpu, Unknown):
        yield ctx.result(resource, Status.UNKNOWN, f"{message}, and whether it is GPU compute "
                         f"is not known ({gpu.reason})", evidence=evidence)
        return
    yield ctx.result(resource, Status.FAIL, message,
                     path=REBALANCE_PATHS.get(resource.kind, ""), evidence=evidence)


def spot_capacity(resource: Resource, view: ComputeView, ctx: Context) -> bool | Unknown:
    """Whether the resource holds spot capacity of its own: its purchase option (spot or mixed),
    its spot pools, its spot offers. False for capacity judged elsewhere (a group's member, an
    EKS node group's group, a request's instance) and for a configuration AWS rejects."""
    if view.managed_by is not None or not view.active:
        return False
    if resource.kind == "ec2.instance":
        if ctx.compute.owner_of(resource) is not None:
            return False
        request = resource.get("SpotInstanceRequestId")
        if request and ctx.index.resolve(request, resource.scope, "ec2.spot_request"):
            return False
    p = view.purchase
    if p.rejected:
        ctx.notice(resource, "not judged: its purchase configuration is rejected by AWS "
                             "(see ASG-004)")
        return False
    if p.option in (SPOT, MIXED):
        return True
    unknown: Unknown | None = p.option if isinstance(p.option, Unknown) else None
    for pool in p.pools:
        if pool.spot is True:
            return True
        if isinstance(pool.spot, Unknown):
            unknown = unknown or pool.spot
    if isinstance(p.spot, Unknown):
        unknown = unknown or p.spot
    elif p.spot:
        return True
    return unknown if unknown is not None else False


# -- handlers -----------------------------------------------------------------------------------


def _handlers(resource: Resource, ctx: Context) -> list[Handler]:
    out: list[Handler] = []
    service = BY_SERVICE.get(resource.kind)
    if service and (resource.kind != NODE_GROUP or resource.get("Managed") is True):
        out.append(Handler("service", resource.kind, True, service))
    out.extend(event_rules(resource, ctx.index))
    path = REBALANCE_PATHS.get(resource.kind)
    if path and not (resource.kind == NODE_GROUP and resource.get("Managed") is True):
        value = resource.get(path)  # True, or a fleet's replacement strategy ("launch")
        present: bool | Unknown = value if isinstance(value, Unknown) else (
            value is True or (isinstance(value, str) and bool(value)))
        out.append(Handler("capacity rebalance", path, present))
    if resource.kind == GROUP:
        out.extend(_hooks(resource, ctx.index))
    if resource.kind == NODE_POOL and not any(h.present is True for h in out):
        out.append(Handler("interruption queue", "Karpenter settings", Unknown(KARPENTER_LIMIT)))
    return out


def _targets(index: ResourceIndex) -> dict[int, list[Resource]]:
    def build() -> dict[int, list[Resource]]:
        out: dict[int, list[Resource]] = defaultdict(list)
        for t in index.of_kind(TARGET):
            for rule in index.resolve_all(t.get("Rule"), t.scope, RULE):
                out[id(rule)].append(t)
        return out

    return index.memo("spot_interruption:targets", build)


def event_rules(resource: Resource, index: ResourceIndex) -> list[Handler]:
    """The EventBridge rules that may handle the resource's spot interruptions: live, those of
    its account and region; declared, those of the whole scan. Rules that cannot match EC2's
    interruption events are left out."""
    rules = index.of_kind(RULE) if resource.declared else index.of_kind(RULE, resource.scope)
    out: list[Handler] = []
    for rule in rules:
        if rule.declared != resource.declared:
            continue
        found = matches(rule.get("EventPattern"))
        name = rule.name or rule.id
        if isinstance(found, Unknown):
            if rule.get("EventPattern") is None:
                continue  # a scheduled rule
            out.append(Handler("event rule", rule.id, found))
            continue
        events, others = found
        if not events:
            continue
        detail = ", ".join(events) + (f"; also filters on {', '.join(others)}" if others else "")
        present = _rule_handles(rule, index)
        out.append(Handler("event rule", name if rule.declared is False else rule.id, present,
                           detail))
    return out


def _rule_handles(rule: Resource, index: ResourceIndex) -> bool | Unknown:
    why = doubt(rule)
    if why is not None:
        return why
    state = rule.get("State")
    if isinstance(state, Unknown):
        return Unknown(f"its state is not known ({state.reason})")
    if isinstance(state, str) and state.upper() == "DISABLED":
        return False
    bus = rule.get("EventBusName")
    if isinstance(bus, Unknown):
        return Unknown(f"its event bus is not known ({bus.reason})")
    if isinstance(bus, str) and bus and bus != "default" and not bus.endswith("/default"):
        return False  # EC2's events reach the default bus only
    inline = rule.get("Targets")
    if isinstance(inline, Unknown):
        return Unknown(f"its targets are not known ({inline.reason})")
    targets = list(inline or []) + _targets(index).get(id(rule), [])
    if not targets:
        return False
    sure = [t for t in targets if not isinstance(t, Resource) or doubt(t) is None]
    if sure:
        return True
    return doubt(*targets) or Unknown("its targets may not exist")


def _hooks(group: Resource, index: ResourceIndex) -> list[Handler]:
    def build() -> dict[int, list[Resource]]:
        out: dict[int, list[Resource]] = defaultdict(list)
        for h in index.of_kind(HOOK):
            for g in index.resolve_all(h.get("AutoScalingGroupName"), h.scope, GROUP):
                out[id(g)].append(h)
        return out

    joined = index.memo("spot_interruption:hooks", build)
    out: list[Handler] = []
    own = group.get("LifecycleHookSpecificationList")
    if isinstance(own, Unknown):
        out.append(Handler("termination lifecycle hook", "LifecycleHookSpecificationList",
                           Unknown(f"its lifecycle hooks are not known ({own.reason})")))
    for i, spec in enumerate(own if isinstance(own, list) else []):
        name = spec.get("LifecycleHookName") if isinstance(spec, dict) else None
        label = name if isinstance(name, str) else f"LifecycleHookSpecificationList[{i}]"
        out.append(Handler("termination lifecycle hook", label, _terminating(spec)))
    for hook in joined.get(id(group), []):
        why = doubt(hook)
        present = why if why is not None else _terminating(hook.attrs)
        out.append(Handler("termination lifecycle hook", hook.name or hook.id, present))
    return [h for h in out if h.present is not False] or [
        Handler("termination lifecycle hook", "", False)]


def _terminating(spec: Any) -> bool | Unknown:
    if not isinstance(spec, dict):
        return Unknown("a lifecycle hook is not known")
    transition = spec.get("LifecycleTransition")
    if isinstance(transition, Unknown):
        return Unknown(f"its transition is not known ({transition.reason})")
    return transition == TERMINATING
