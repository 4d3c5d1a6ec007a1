"""EventBridge event patterns against EC2's spot interruption events (SPOT-003)."""

from __future__ import annotations

import pytest

from policies.event_patterns import INTERRUPTION, MAX_OR, REBALANCE, matches
from scanner.model import Ref, Unknown

EC2 = ["aws.ec2"]


@pytest.mark.parametrize(("pattern", "events"), [
    ({"source": EC2, "detail-type": [INTERRUPTION]}, (INTERRUPTION,)),
    ({"source": EC2, "detail-type": [INTERRUPTION, REBALANCE]}, (INTERRUPTION, REBALANCE)),
    ({"source": EC2}, (INTERRUPTION, REBALANCE)),  # every EC2 event
    ({"detail-type": [REBALANCE]}, (REBALANCE,)),  # any source
    ({"source": EC2, "detail-type": [{"prefix": "EC2 Spot"}]}, (INTERRUPTION,)),
    ({"source": EC2, "detail-type": [{"wildcard": "EC2 * Recommendation"}]}, (REBALANCE,)),
    ({"source": EC2, "detail-type": [{"equals-ignore-case": INTERRUPTION.upper()}]},
     (INTERRUPTION,)),
    ({"source": EC2, "detail-type": [{"anything-but": [INTERRUPTION]}]}, (REBALANCE,)),
    ({"source": [{"prefix": "aws."}], "detail-type": [INTERRUPTION]}, (INTERRUPTION,)),
    ({"$or": [{"source": EC2, "detail-type": [INTERRUPTION]},
              {"source": ["aws.health"]}]}, (INTERRUPTION,)),
    # no match: another source, another detail-type
    ({"source": ["aws.s3"], "detail-type": [INTERRUPTION]}, ()),
    ({"source": EC2, "detail-type": ["EC2 Instance State-change Notification"]}, ()),
])
def test_which_interruption_events_a_pattern_matches(pattern: dict, events: tuple) -> None:
    found = matches(pattern)
    assert not isinstance(found, Unknown) and found[0] == events


def test_other_fields_narrow_but_still_match_and_are_named() -> None:
    found = matches({"source": EC2, "detail-type": [INTERRUPTION],
                     "detail": {"instance-action": ["terminate"]}})
    assert found == ((INTERRUPTION,), ("detail",))


@pytest.mark.parametrize("pattern", [
    Unknown("var.pattern has no value"),
    Ref("aws_autoscaling_group.gpu", "arn"),  # a plan: the JSON is known after apply
    "not json",
    {"source": EC2, "detail-type": [{"numeric": [">", 0]}]},  # a filter this does not read
    {"source": EC2, "detail-type": "EC2 Spot Instance Interruption Warning"},  # not a list
])
def test_a_pattern_that_cannot_be_read_is_unknown_never_a_match_or_none(pattern: object) -> None:
    assert isinstance(matches(pattern), Unknown)


def test_nested_or_branches_share_one_budget() -> None:
    """$or inside $or multiplies: 8 x 8 x 8 branches would be 512 walks; the budget is spent
    before each level is walked, and the answer is Unknown, not a guess."""
    leaf = {"source": ["aws.s3"]}
    nested: dict = leaf
    for _ in range(3):
        nested = {"$or": [nested] * 8}
    found = matches(nested)
    assert isinstance(found, Unknown) and str(MAX_OR) in found.reason
    assert matches({"$or": [leaf] * MAX_OR}) == ((), ())
