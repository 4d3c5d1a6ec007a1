"""Parity: the HCL source and the plan source agree on the same code.

For every committed plan fixture (tests/fixtures/terraform/<case>/: the .tf files and the
plan.json real terraform made of them), every policy is evaluated on the HCL and on the plan;
the FAIL sets of (policy, resource id) must be equal, and so must every other status, except
where a difference is expected: EXPECTED lists those, each with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.engine.config import Config
from scanner.engine.evaluate import evaluate
from scanner.model import SourceResult, Status
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.sources.terraform.plan.reader import load_plan

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "terraform"
CASES = sorted(p.parent.name for p in FIXTURES.glob("*/plan.json"))

# (case) -> {(policy, resource id): why the HCL and plan results must differ}.
# A data source other than aws_iam_policy_document is read by terraform at plan time: the plan
# knows it, the HCL source says UNKNOWN. The other way round, the plan alone cannot know what
# only the .tf holds (a local's value behind each.value, a dynamic block's unknown for_each).
_EACH_VALUE = ("subnet_ids come through each.value of a module for_each over a local map: a plan "
               "keeps the references, not the local's value (HCL evaluates it)")
_DYNAMIC = ("a dynamic block_device_mappings whose for_each holds a KMS key ARN known only after "
            "apply is missing from the plan (HCL follows aws_kms_key.ebs.arn)")
EXPECTED: dict[str, dict[tuple[str, str], str]] = {
    "awskinds_fail": {
        ("VPC-004", 'module.eks_managed_node_group["gpu_lt"].aws_eks_node_group.this'):
            _EACH_VALUE,
        ("VPC-004", 'module.eks_managed_node_group["gpu_spot"].aws_eks_node_group.this'):
            _EACH_VALUE,
        # the plan cannot tell their VPC (UNKNOWN on them); HCL places them, judged on the VPC
        ("VPC-001", 'module.eks_managed_node_group["gpu_lt"].aws_eks_node_group.this'):
            _EACH_VALUE,
        ("VPC-001", 'module.eks_managed_node_group["gpu_spot"].aws_eks_node_group.this'):
            _EACH_VALUE,
    },
    "awskinds_pass": {
        ("EBS-001", 'module.eks_managed_node_group["gpu_od"].aws_launch_template.this[0]'):
            _DYNAMIC,
        ("EBS-003", 'module.eks_managed_node_group["gpu_od"].aws_launch_template.this[0]'):
            _DYNAMIC,
    },
}

Results = dict[tuple[str, str], Status]


def _results(source: SourceResult) -> Results:
    config = Config(policies={"EBS-003": {"enabled": True}})  # every policy, EBS-003 included
    return {
        (f.policy_id, f.resource["id"]): f.status
        for f in evaluate(source.resources, config=config, gaps=source.gaps)
    }


def _both(case: str) -> tuple[Results, Results]:
    directory = FIXTURES / case
    hcl = load_terraform_dir([directory])
    plan = load_plan(directory / "plan.json")
    assert hcl.errors == [] and plan.errors == []
    return _results(hcl), _results(plan)


def test_there_are_plan_fixtures() -> None:
    assert CASES, "no committed plan fixtures found"


@pytest.mark.parametrize("case", CASES)
def test_fail_sets_are_equal(case: str) -> None:
    hcl, plan = _both(case)
    expected = EXPECTED.get(case, {})
    fails_hcl = {k for k, s in hcl.items() if s is Status.FAIL and k not in expected}
    fails_plan = {k for k, s in plan.items() if s is Status.FAIL and k not in expected}
    assert fails_hcl, "a parity fixture without failures proves little"
    assert sorted(fails_hcl - fails_plan) == [], "FAIL on the HCL only"
    assert sorted(fails_plan - fails_hcl) == [], "FAIL on the plan only"


@pytest.mark.parametrize("case", CASES)
def test_every_status_is_equal(case: str) -> None:
    hcl, plan = _both(case)
    expected = EXPECTED.get(case, {})
    diff = {
        k: (hcl.get(k), plan.get(k))
        for k in set(hcl) | set(plan)
        if hcl.get(k) != plan.get(k) and k not in expected
    }
    assert diff == {}
    for key, why in expected.items():  # a listed difference that disappeared: update EXPECTED
        assert hcl.get(key) != plan.get(key), f"{key} no longer differs ({why})"
