"""AWS Budgets: a budget (Terraform ``aws_budgets_budget``, CloudFormation
``AWS::Budgets::Budget``, live DescribeBudgets), and the marker that an account's budgets were
listed whole (live only: COST-002 can say "no budget" only where the list is complete)."""

from __future__ import annotations

from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import Json, List, Map, Num, Obj, Str

BUDGET = "budgets.budget"
ACCOUNT_BUDGETS = "budgets.account"

KINDS = (
    Kind(
        name=BUDGET,
        doc="an AWS Budget (what it tracks, and its cost filters)",
        attributes={
            "Budget": Obj({
                "BudgetName": Str(),
                "BudgetType": Str(doc="COST, USAGE, RI_UTILIZATION, RI_COVERAGE, "
                                      "SAVINGS_PLANS_UTILIZATION, SAVINGS_PLANS_COVERAGE"),
                "TimeUnit": Str(),
                "CostFilters": Map(List(Str()), doc="{dimension: [values]}; none = every cost"),
                "FilterExpression": Json(doc="the newer filter form (live)"),
            }),
            "AccountId": Str(),
        },
        terraform=(Terraform("aws_budgets_budget", blocks={"cost_filter": ("name", "values")},
                             note="cost_filter blocks (and the older cost_filters map) become "
                                  "Budget.CostFilters"),),
        cloudformation=(CloudFormation("AWS::Budgets::Budget"),),
        live="DescribeBudgets (once per account)",
    ),
    Kind(
        name=ACCOUNT_BUDGETS,
        doc="an account whose budgets were listed whole (live DescribeBudgets); id "
            "budgets:ACCOUNT",
        attributes={"AccountId": Str(), "Budgets": Num(doc="how many budgets it has")},
        live="DescribeBudgets (once per account)",
    ),
)
