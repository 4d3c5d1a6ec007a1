"""The rate money is figured at (config ``pricing``, scanner/pricing/rates.py): list prices by
default, the organisation's discounts with ``basis: discounted``, the committed rate of a
family a Savings Plan or Reserved Instances cover; every figure names its basis; a bad value is
exit 2 naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.engine.config import Config
from scanner.engine.evaluate import run
from scanner.model import Provenance, Resource, SourceKind
from scanner.pricing.rates import Pricing, family_of
from scanner.sources.cloudformation.reader import load_template

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CFN = FIXTURES / "cfn" / "policies" / "purchase.yaml"
G5 = 1.006
ACCOUNT = "123456789012"


def asg_001_saving(config: Config) -> tuple[float, str]:
    evaluation = run(load_template(CFN).resources, config=config, policy_ids=["ASG-001"])
    found = next(f for f in evaluation.findings if f.resource["id"] == "OpenGroup")
    assert found.savings is not None
    return found.savings.usd_month, found.savings.basis


def test_list_price_is_the_default_and_says_so() -> None:
    usd, basis = asg_001_saving(Config())
    assert usd == pytest.approx((G5 - 0.35 * G5) * 730 * 6)
    assert "list price" in basis and "discounted" not in basis


def test_a_discount_applies_only_on_the_discounted_basis_and_is_named() -> None:
    discounts = {"g5": 0.2, "p4d": 0.38}
    usd, basis = asg_001_saving(Config(pricing={"basis": "discounted", "discounts": discounts}))
    assert usd == pytest.approx((G5 * 0.8 - 0.35 * G5) * 730 * 6)
    assert "discounted 20 % (pricing.discounts.g5)" in basis
    assert "(0.8048 - 0.3521) $/h" in basis
    # the same discounts on the list basis change nothing
    listed, basis = asg_001_saving(Config(pricing={"basis": "list", "discounts": discounts}))
    assert listed == pytest.approx((G5 - 0.35 * G5) * 730 * 6) and "list price" in basis


def test_a_family_without_a_discount_says_list_price_on_the_discounted_basis() -> None:
    _usd, basis = asg_001_saving(Config(pricing={"basis": "discounted",
                                                 "discounts": {"p4d": 0.38}}))
    assert "list price (no pricing.discounts entry for g5)" in basis


def test_a_discount_deep_enough_leaves_no_spot_saving() -> None:
    evaluation = run(load_template(CFN).resources, policy_ids=["ASG-001"], config=Config(
        pricing={"basis": "discounted", "discounts": {"g5": 0.7}}))
    found = next(f for f in evaluation.findings if f.resource["id"] == "OpenGroup")
    assert found.status.value == "FAIL" and found.savings is None  # 0.30 x list < spot


def test_committed_capacity_saves_at_the_committed_rate_whatever_the_basis() -> None:
    usd, basis = asg_001_saving(Config(pricing={"committed": {"g5": 0.45}}))
    assert usd == pytest.approx((G5 * 0.55 - 0.35 * G5) * 730 * 6)
    assert "committed rate 45 % off (pricing.committed.g5)" in basis


def test_rates_per_account_come_before_the_family_s() -> None:
    pricing = Pricing.from_config({"basis": "discounted",
                                   "discounts": {"p4d": 0.38, ACCOUNT: {"p4d": 0.5}}})
    assert pricing.on_demand(10.0, "p4d.24xlarge", ACCOUNT).usd_hour == pytest.approx(5.0)
    assert pricing.on_demand(10.0, "p4d.24xlarge", ACCOUNT).basis == \
        f"discounted 50 % (pricing.discounts.{ACCOUNT}.p4d)"
    assert pricing.on_demand(10.0, "p4d.24xlarge", "210987654321").usd_hour == \
        pytest.approx(6.2)
    assert pricing.on_demand(10.0, "p4d.24xlarge", None).basis == \
        "discounted 38 % (pricing.discounts.p4d)"
    assert family_of("P4D.24xlarge") == "p4d"


def test_a_live_group_is_priced_at_its_account_s_rate() -> None:
    prov = Provenance(SourceKind.AWS, account=ACCOUNT, region="us-east-1")
    template = Resource("ec2.launch_template", "lt-1", {"LaunchTemplateId": "lt-1",
                        "LaunchTemplateName": "g5", "LaunchTemplateData": {
                            "InstanceType": "g5.xlarge"}}, prov, scope=f"{ACCOUNT}/us-east-1",
                        declared=False, aliases=("lt-1", "g5"))
    group = Resource("autoscaling.group", "g5-open", {
        "AutoScalingGroupName": "g5-open", "MinSize": 0, "MaxSize": 10, "DesiredCapacity": 10,
        "LaunchTemplate": {"LaunchTemplateId": "lt-1", "Version": "$Default"}}, prov,
        scope=f"{ACCOUNT}/us-east-1", declared=False, aliases=("g5-open",))
    config = Config(pricing={"basis": "discounted", "discounts": {ACCOUNT: {"g5": 0.1}}})
    (found,) = run([template, group], config=config, policy_ids=["ASG-001"]).findings
    assert found.savings is not None
    assert f"discounted 10 % (pricing.discounts.{ACCOUNT}.g5)" in found.savings.basis


@pytest.mark.parametrize(("text", "key"), [
    ("pricing:\n  basis: net\n", "pricing.basis"),
    ("pricing:\n  discounts:\n    p4d: 1.38\n", "pricing.discounts.p4d"),
    ("pricing:\n  discounts:\n    p4d: -0.1\n", "pricing.discounts.p4d"),
    ("pricing:\n  discounts:\n    P4D: 0.1\n", "pricing.discounts.P4D"),
    ("pricing:\n  discounts:\n    '123456789012': {p4d: two}\n",
     "pricing.discounts.123456789012.p4d"),
    ("pricing:\n  committed: {p5: 1}\n", "pricing.committed.p5"),
    ("pricing:\n  discount: {p5: 0.1}\n", "pricing.discount"),
])
def test_a_bad_pricing_value_is_exit_2_naming_the_key(tmp_path: Path, text: str,
                                                      key: str) -> None:
    config = tmp_path / ".gpuaudit.yaml"
    config.write_text(text)
    res = CliRunner().invoke(cli, ["scan", str(CFN), "--config", str(config)])
    assert res.exit_code == 2
    assert f"key '{key}'" in res.stderr and "Traceback" not in res.stderr
    if key == "pricing.discounts.P4D":  # what a key may be, said
        assert "a key matching ^[a-z][a-z0-9-]*$" in res.stderr


def test_a_good_pricing_config_is_read(tmp_path: Path) -> None:
    config = tmp_path / ".gpuaudit.yaml"
    config.write_text("pricing:\n  basis: discounted\n  discounts:\n    g5: 0.2\n"
                      "    '123456789012': {p4d: 0.4}\n  committed: {p5: 0.45}\n")
    res = CliRunner().invoke(cli, ["scan", str(CFN), "--config", str(config), "--format",
                                   "json", "--policy", "ASG-001"])
    assert res.exit_code == 0, res.stderr  # ASG-001 is medium, below the default --fail-on
    assert "discounted 20 % (pricing.discounts.g5)" in res.stdout


def test_right_sizing_money_is_at_the_rate_paid_and_names_it() -> None:
    """RS-002 on an idle instance: the full price at the rate paid (discounted here), the
    basis naming the discount."""
    from scanner.telemetry import COVERAGE, TELEMETRY
    from tests.model_builders import res

    instance = res("ec2.instance", "i-idle", InstanceType="g5.xlarge",
                   SubnetId="subnet-0123456789abcdef0")
    usage = res(TELEMETRY, "telemetry:i-idle", Target="i-idle", Source="history", Hours=336,
                Members=[{"Id": "i-idle", "Hours": 336, "Gpus": [
                    {"Index": "0", "Hours": 336, "UtilP50": 0, "UtilP95": 0, "UtilMax": 1,
                     "MemUsedMaxMiB": 200, "MemTotalMiB": 22888}]}])
    config = Config(pricing={"basis": "discounted", "discounts": {"g5": 0.25}})
    evaluation = run([instance, usage, res(COVERAGE, "c")], config=config,
                     policy_ids=["RS-002"])
    (found,) = [f for f in evaluation.findings if f.savings is not None]
    assert found.savings.usd_month == pytest.approx(G5 * 0.75 * 730)
    assert "discounted 25 % (pricing.discounts.g5)" in found.savings.basis
    listed = run([instance, usage, res(COVERAGE, "c")], policy_ids=["RS-002"])
    (found,) = [f for f in listed.findings if f.savings is not None]
    assert "list price" in found.savings.basis
