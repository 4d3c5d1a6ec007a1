"""Commitments (COST-001): how much of an account's GPU usage reserved instances and Savings
Plans cover (Cost Explorer, read once per account), and the desired capacity history of its
Auto Scaling groups (CloudWatch AWS/AutoScaling GroupDesiredCapacity, per region). Live only."""

from __future__ import annotations

from scanner.kinds.schema import Kind
from scanner.kinds.types import Map, Num, Obj, Str

COVERAGE = "ce.commitment_coverage"
CAPACITY = "telemetry.asg_capacity"

KINDS = (
    Kind(
        name=COVERAGE,
        doc="the reserved-instance and Savings Plans coverage of an account's EC2 usage per "
            "instance family over the lookback window; id commitments:ACCOUNT",
        attributes={
            "AccountId": Str(),
            "Start": Str(), "End": Str(),
            "Reserved": Map(Obj({"ReservedHours": Num(), "TotalRunningHours": Num()}),
                            doc="{family: hours} from GetReservationCoverage by instance type"),
            "SavingsPlans": Map(Obj({"SpendCovered": Num(), "TotalCost": Num()}),
                                doc="{family: USD} from GetSavingsPlansCoverage by family"),
        },
        live="GetReservationCoverage, GetSavingsPlansCoverage (once per account)",
    ),
    Kind(
        name=CAPACITY,
        doc="the hourly GroupDesiredCapacity of one Auto Scaling group over the lookback "
            "window; id capacity:GROUP",
        attributes={
            "Group": Str(doc="the Auto Scaling group's name"),
            "Start": Str(), "End": Str(),
            "Hours": Num(doc="hours with a datapoint"),
            "Base": Num(doc="the lowest hourly minimum"),
            "Peak": Num(doc="the highest hourly maximum"),
        },
        live="CloudWatch GetMetricData (AWS/AutoScaling GroupDesiredCapacity)",
    ),
)
