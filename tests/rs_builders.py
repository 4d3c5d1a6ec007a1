"""Hand-built utilization records and a runner for the right-sizing decision tests
(``tests/test_rs_*.py``): the catalogue with its facts pinned (``tests.rs_catalog``), every
resource deployed to us-east-1 unless it says otherwise."""

from __future__ import annotations

from typing import Any

from scanner.catalog import Catalog
from scanner.engine.evaluate import run as run_engine
from scanner.model import Finding, Resource
from scanner.telemetry import COVERAGE, TELEMETRY
from tests.model_builders import res
from tests.rs_catalog import facts_catalog, in_region

RS = ("RS-001", "RS-002", "RS-003")


def gpu(index: int, p95: float, top: float, mem: float | None, hours: int = 336,
        **extra: Any) -> dict[str, Any]:
    """One GPU's statistics as the telemetry readers keep them (``extra``: more of them,
    e.g. ``**{"UtilP99.5": 40}``)."""
    return {"Index": str(index), "Hours": hours, "UtilP50": p95 / 2, "UtilP95": p95,
            "UtilMax": top, "MemUsedMaxMiB": mem, "MemTotalMiB": None, **extra}


def member(mid: str, gpus: list[dict[str, Any]], **host: Any) -> dict[str, Any]:
    return {"Id": mid, "Hours": max(g["Hours"] for g in gpus), "Gpus": gpus, **host}


def usage(target: str, *members: dict[str, Any], declared: bool = True) -> Resource:
    return res(TELEMETRY, f"telemetry:{target}", declared=declared, Target=target,
               Source="history", LookbackDays=14, Hours=max(m["Hours"] for m in members),
               Members=list(members))


def coverage(declared: bool = True) -> Resource:
    return res(COVERAGE, "coverage", declared=declared)


def group(gid: str, itype: str, desired: int, *, lt: str = "lt", **extra: Any) -> list[Resource]:
    """An Auto Scaling group of ``desired`` ``itype`` from launch template ``lt``."""
    data = extra.pop("LaunchTemplateData", {})
    return [res("autoscaling.group", gid, DesiredCapacity=desired, MinSize=0,
                MaxSize=max(desired, 1) * 2, LaunchTemplate={"LaunchTemplateName": lt}, **extra),
            res("ec2.launch_template", lt, LaunchTemplateData={"InstanceType": itype, **data})]


def evaluate(*resources: Resource, policies: tuple[str, ...] = RS,
             catalog: Catalog | None = None, region: str | None = "us-east-1",
             **params: Any) -> tuple[dict[tuple[str, str], Finding], list[str]]:
    """Findings by (policy, resource id), and the notices' texts."""
    from scanner.engine.config import Config

    config = Config(policies={p: dict(params) for p in policies}) if params else None
    placed = [in_region(r, region) if region else r for r in resources]
    out = run_engine(placed, policy_ids=policies,
                     config=config, catalog=catalog or facts_catalog())
    found = {(f.policy_id, f.resource["id"]): f for f in out.findings}
    return found, [n.message for n in out.notices]
