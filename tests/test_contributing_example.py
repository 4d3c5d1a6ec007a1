"""The policy CONTRIBUTING.md shows is code that registers and judges: a GPU instance without
detailed monitoring FAILs, with it PASSes, an unknown value is UNKNOWN, a CPU instance gets no
result."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from policies.base import REGISTRY
from scanner.engine.evaluate import run
from scanner.model import Provenance, Resource, SourceKind, Status, Unknown

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def example_policy():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)
    assert code, "CONTRIBUTING.md shows no policy"
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "CONTRIBUTING.md", "exec"), namespace)
    try:
        yield REGISTRY["OPS-100"]
    finally:
        REGISTRY.pop("OPS-100", None)


def _instance(name: str, itype: str, monitoring: object) -> Resource:
    attrs = {"InstanceType": itype}
    if monitoring is not None:
        attrs["Monitoring"] = monitoring
    return Resource(kind="ec2.instance", id=f"aws_instance.{name}", name=name, attrs=attrs,
                    provenance=Provenance(SourceKind.TERRAFORM_HCL, "main.tf", 1), scope=".")


def test_the_example_policy_judges(example_policy) -> None:
    assert example_policy.category == "operations"
    assert "enableDetailedMonitoring" in example_policy.remediation.for_kind(
        "eksctl.node_group").text
    resources = [_instance("off", "g5.xlarge", False), _instance("on", "g5.xlarge", True),
                 _instance("maybe", "g5.xlarge", Unknown("var.monitoring has no value")),
                 _instance("cpu", "m5.large", False)]
    evaluation = run(resources, policy_ids={"OPS-100"})
    verdicts = {f.resource["name"]: f.status for f in evaluation.findings}
    assert verdicts == {"off": Status.FAIL, "on": Status.PASS, "maybe": Status.UNKNOWN}
