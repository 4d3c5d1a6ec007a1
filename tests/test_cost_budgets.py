# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""COST-002: a budget that covers the GPU compute of an account. Live against moto (budgets
set through its API), and in Terraform HCL and CloudFormation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.aws.collect import collect
from scanner.aws.registry import DEFAULT_KINDS
from scanner.aws.targets import TargetSpec
from scanner.engine.evaluate import run
from scanner.kinds.budgets import ACCOUNT_BUDGETS, BUDGET
from scanner.model import Finding, SourceResult
from scanner.sources.scan import scan_paths
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    AMI,
    REGION,
    Fault,
    aws,
    aws_env,
    client,
    declared_only,
    session_maker,
)

FIXTURES = Path(__file__).parent / "fixtures" / "cost"
EC2 = "Amazon Elastic Compute Cloud - Compute"
KINDS = DEFAULT_KINDS | {BUDGET, ACCOUNT_BUDGETS}


def cost_002(result: SourceResult) -> tuple[list[Finding], list[str]]:
    out = run(result.resources, policy_ids=["COST-002"], gaps=result.gaps)
    return out.findings, [n.message for n in out.notices]


def gpu_instance(itype: str = "g5.xlarge") -> str:
    return str(client("ec2").run_instances(ImageId=AMI, MinCount=1, MaxCount=1,
                                           InstanceType=itype)["Instances"][0]["InstanceId"])


def budget(name: str, filters: dict[str, list[str]] | None = None,
           budget_type: str = "COST") -> None:
    spec: dict[str, Any] = {"BudgetName": name, "BudgetType": budget_type, "TimeUnit": "MONTHLY",
                            "BudgetLimit": {"Amount": "1000", "Unit": "USD"}}
    if filters is not None:
        spec["CostFilters"] = filters
    client("budgets").create_budget(AccountId=ACCOUNT, Budget=spec)


def audit() -> SourceResult:
    return collect(TargetSpec(regions=(REGION,)), kinds=KINDS)


def only(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, [(f.status.value, f.resource["id"]) for f in findings]
    return findings[0]


def test_live_no_budget_at_all_fails(aws: None) -> None:
    iid = gpu_instance()
    f = only(cost_002(audit())[0])
    assert f.status.value == "FAIL"
    assert f.resource["id"] == f"budgets:{ACCOUNT}" and f.resource["region"] is None
    assert f.evidence["budgets"] == []
    assert f.evidence["gpu_compute"]["examples"] == [iid]


def test_live_budget_on_other_services_only_fails(aws: None) -> None:
    gpu_instance()
    budget("storage", {"Service": ["Amazon Simple Storage Service"]})
    budget("ri-coverage", None, budget_type="RI_COVERAGE")  # a ratio, not spend
    f = only(cost_002(audit())[0])
    assert f.status.value == "FAIL"
    assert "budgets: ri-coverage, storage" in f.message
    rows = {r["name"]: r for r in f.evidence["budgets"]}
    assert rows["storage"]["cost_filters"] == {"Service": ["Amazon Simple Storage Service"]}
    assert rows["storage"]["covers_gpu_compute"] is False


@pytest.mark.parametrize(("filters", "why"), [
    (None, "no cost filter"),
    ({"Service": [EC2, "Amazon Simple Storage Service"]}, "EC2 compute"),
    ({"InstanceType": ["g5.xlarge"]}, "GPU instance types"),
    ({"Service": [EC2], "Region": [REGION]}, "EC2 compute"),
])
def test_live_covering_budget_passes(aws: None, filters: dict[str, list[str]] | None,
                                     why: str) -> None:
    gpu_instance()
    budget("storage", {"Service": ["Amazon Simple Storage Service"]})
    budget("gpu", filters)
    f = only(cost_002(audit())[0])
    assert f.status.value == "PASS", f.message
    assert f.message.startswith("budget gpu covers the GPU compute") and why in f.message


def test_live_filters_that_cannot_be_judged_are_unknown(aws: None) -> None:
    gpu_instance()
    budget("team", {"TagKeyValue": ["user:team$ml"]})
    budget("other-region", {"Service": [EC2], "Region": ["eu-west-1"]})  # not where it runs
    f = only(cost_002(audit())[0])
    assert f.status.value == "UNKNOWN" and "TagKeyValue" in f.message


def test_live_no_gpu_compute_is_not_applicable(aws: None) -> None:
    client("ec2").run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="m5.large")
    assert cost_002(audit()) == ([], [])


def test_live_denied_describe_budgets_is_an_error_never_a_pass(aws: None) -> None:
    gpu_instance()
    budget("gpu", None)  # would pass, if it could be read
    denied = Fault(400, json.dumps({"__type": "AccessDeniedException",
                                    "Message": "not authorized to perform budgets:ViewBudget"}),
                   "application/x-amz-json-1.1")
    result = collect(TargetSpec(regions=(REGION,)), kinds=KINDS,
                     session_maker=session_maker({"before-send.budgets.DescribeBudgets": denied}))
    assert not [r for r in result.resources if r.kind in (BUDGET, ACCOUNT_BUDGETS)]
    f = only(cost_002(result)[0])
    assert f.status.value == "ERROR" and "budgets:DescribeBudgets" in f.message
    assert f.resource["id"] == f"{ACCOUNT}/*"
    assert any(e.path == f"{ACCOUNT}/*/budgets:DescribeBudgets" for e in result.errors)
    assert {(c["region"], c["status"]) for c in result.coverage
            if c["service"] == "budgets"} == {("*", "error")}


def test_live_budgets_are_read_once_per_account_not_per_region(aws: None) -> None:
    from tests.aws_helpers import RECORDER

    gpu_instance()
    mark = RECORDER.mark()
    collect(TargetSpec(regions=(REGION, "us-west-2", "eu-west-1")), kinds=KINDS)
    assert RECORDER.since(mark).count(("budgets", "DescribeBudgets")) == 1


# -- IaC -------------------------------------------------------------------------------------


def scan(name: str) -> tuple[list[Finding], list[str]]:
    return cost_002(scan_paths([FIXTURES / name]))


def test_terraform_budget_on_ec2_compute_passes() -> None:
    findings, notices = scan("tf_covered")
    f = only(findings)
    assert (f.status.value, f.resource["id"]) == ("PASS", "aws_budgets_budget.ec2")
    assert f.evidence["budgets"][0]["cost_filters"] == {"Service": [EC2]}
    assert notices == []


@pytest.mark.parametrize("tree", ["tf_none", "tf_other"])
def test_terraform_without_a_covering_budget_is_a_notice_never_a_fail(tree: str) -> None:
    findings, notices = scan(tree)
    assert findings == []  # no FAIL (nor PASS): the account may have a budget elsewhere
    assert notices == ["COST-002 aws_instance.notebook: no budget declared here covers GPU "
                       "compute; whether the account has one elsewhere is not known (a live "
                       "audit reads its budgets)"]


def test_cloudformation_budget_on_gpu_instance_types_passes() -> None:
    f = only(scan("cfn")[0])
    assert (f.status.value, f.resource["id"]) == ("PASS", "GpuBudget")
    assert f.evidence["budgets"][0]["cost_filters"] == {"InstanceType": ["g5.xlarge",
                                                                          "g5.2xlarge"]}


def test_terraform_budget_with_unknown_filters_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('''
variable "services" { type = list(string) }
resource "aws_instance" "gpu" {
  ami           = "ami-12c6146b"
  instance_type = "p5.48xlarge"
}
resource "aws_budgets_budget" "b" {
  name         = "by-service"
  budget_type  = "COST"
  limit_amount = "100"
  limit_unit   = "USD"
  time_unit    = "MONTHLY"
  cost_filter {
    name   = "Service"
    values = var.services
  }
}
''')
    f = only(cost_002(scan_paths([tmp_path]))[0])
    assert f.status.value == "UNKNOWN" and "Service filter are not known" in f.message


def test_no_gpu_compute_in_iac_is_not_applicable(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('resource "aws_instance" "web" {\n'
                                      '  ami = "ami-1"\n  instance_type = "m5.large"\n}\n')
    assert cost_002(scan_paths([tmp_path])) == ([], [])


def test_terraform_plan_json_made_by_real_terraform() -> None:
    """The same translator reads plan JSON (tools/make_plan_fixtures.sh cost_budget): the
    budget on GPU instance types passes, the S3 one has no result of its own."""
    plan = Path(__file__).parent / "fixtures" / "terraform" / "cost_budget" / "plan.json"
    findings, notices = cost_002(scan_paths([plan]))
    f = only(findings)
    assert (f.status.value, f.resource["id"]) == ("PASS", "aws_budgets_budget.gpu")
    rows = {r["name"]: r["covers_gpu_compute"] for r in f.evidence["budgets"]}
    assert rows == {"budget-s3-monthly": False, "gpu-instances": True}
    assert notices == []
