"""Regional on-demand prices: tools/build_catalog.py reads tsaol/aws-gpu's ``data/*_instances.js``
(instances.vantage.sh data) as data, keeps commercial regions only, keeps karpenter's newer
us-east-1 price and logs a disagreement over 10 %; the shipped catalogue carries each region's
price with its date; IaC deployed to eu-west-1 books its money at the eu-west-1 price and says
so, with the price's date; a type the catalogue has no eu-west-1 price for falls back to
us-east-1, said so."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from scanner.catalog import catalog_from_doc, default_catalog
from scanner.engine.evaluate import evaluate
from scanner.model import Finding
from scanner.pricing.prices import price

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
AWS_GPU = FIXTURES / "catalog" / "aws_gpu"
KARPENTER_GO = FIXTURES / "catalog" / "karpenter_pricing_aws_gpu.go"
EXTRACT = ROOT / "tools" / "regional_prices_2026-01-21.json"
EU, BASE = "eu-west-1", "us-east-1"
REGIONAL_DATE, KARPENTER_DATE = "2026-01-21", "2026-07-20"
TYPES = {"g4dn.xlarge", "g4dn.2xlarge", "g5.xlarge", "g5.2xlarge"}
_CSV = """instance_type,vcpu,mem_gib,arch,gpu_model,gpu_count,gpu_mem_gib,network_gbps,efa,\
price_usd_hour_us_east_1,fp16_dense_tflops_per_gpu,source
g5.xlarge,4,16,x86_64,A10G,1,22.35,10,false,1.006,,spec:test row; price:test row
g4dn.xlarge,4,16,x86_64,T4,1,15,25,false,0.526,,spec:test row; price:test row
"""


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("build_catalog",
                                                  ROOT / "tools" / "build_catalog.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    path = tmp_path / "ref.csv"
    path.write_text(_CSV)
    return path


# -- reading the files ----------------------------------------------------------------------------

def test_the_js_files_are_read_as_data_in_commercial_regions_only() -> None:
    got = _tool().read_regional_prices(AWS_GPU, TYPES)
    assert got.updated == REGIONAL_DATE
    assert "tsaol/aws-gpu@" in got.note and f"updated {REGIONAL_DATE}" in got.note
    assert sorted(got.prices) == ["ap-northeast-1", EU, BASE]
    assert got.prices[EU] == {"g4dn.xlarge": 0.587, "g4dn.2xlarge": 0.838, "g5.xlarge": 1.123,
                              "g5.2xlarge": 1.35296}
    # no Local Zone, Wavelength Zone or GovCloud price comes in under any name
    names = {t for prices in got.prices.values() for t in prices}
    assert names == TYPES
    for region in ("us-west-2-lax-1", "eu-west-3-wl1-cmn1", "us-east-1-wl1",
                   "us-west-2-wl1-lax1", "us-gov-west-1"):
        assert region not in got.prices


def test_one_file_and_types_the_catalogue_lacks() -> None:
    got = _tool().read_regional_prices(AWS_GPU / "g5_instances.js", {"g5.xlarge", "p9.huge"})
    assert got.prices == {"ap-northeast-1": {"g5.xlarge": 1.459}, EU: {"g5.xlarge": 1.123},
                          BASE: {"g5.xlarge": 1.006}}


HEADER = "// Auto-generated from instances.vantage.sh data\n// Last updated: 2026-01-21\n\n"


@pytest.mark.parametrize("body, words", [
    # code, not data: never run, refused naming the file
    ('var instanceData = [{"apiName": "g5.xlarge", "pricing": {"eu-west-1": '
     '{"onDemand": (function () { return 1; })()}}}];\n', "not JSON"),
    ('var instanceData = [{"apiName": "g5.xlarge"}]; fetch("https://example.com/");\n',
     "no 'var NAME = [...];' array"),
    ('var instanceData = ["g5.xlarge"];\n', "item 0: expected an object"),
    ("module.exports = {};\n", "no 'var NAME = [...];' array"),
])
def test_a_file_that_is_not_the_data_array_is_refused(tmp_path: Path, body: str,
                                                      words: str) -> None:
    path = tmp_path / "g5_instances.js"
    path.write_text(HEADER + body)
    with pytest.raises(ValueError, match=r"g5_instances\.js") as err:
        _tool().read_regional_prices(path, TYPES)
    assert words in str(err.value)


def test_an_undated_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g5_instances.js"
    path.write_text((AWS_GPU / "g5_instances.js").read_text().replace(
        "// Last updated: 2026-01-21\n", ""))
    with pytest.raises(ValueError, match="cannot be dated"):
        _tool().read_regional_prices(path, TYPES)


def test_figures_that_are_not_prices_are_left_out_and_a_conflict_is_refused(
        tmp_path: Path) -> None:
    rows = [{"apiName": "g5.xlarge", "pricing": {
        EU: {"onDemand": None}, "eu-west-2": {"onDemand": "1.2"}, "eu-west-3": {"onDemand": 0},
        "eu-north-1": {"onDemand": True}, "eu-south-1": {"onDemand": -1},
        "eu-central-1": {"reserved": 0.7}, "ca-central-1": "1.1", "sa-east-1": {"onDemand": 2}}},
        {"name": "u-p6e-gb200x36", "pricing": {}}]  # an UltraServer: no apiName, no price
    (tmp_path / "g5_instances.js").write_text(
        HEADER + f"var instanceData = {json.dumps(rows, indent=2)};\n")
    assert _tool().read_regional_prices(tmp_path, TYPES).prices == {
        "sa-east-1": {"g5.xlarge": 2.0}}
    rows[0]["pricing"] = {"sa-east-1": {"onDemand": 3}}
    (tmp_path / "all_gpu_instances.js").write_text(
        HEADER + f"var instanceData = {json.dumps(rows)};\n")
    with pytest.raises(ValueError, match=r"g5\.xlarge sa-east-1: .*which is right is not known"):
        _tool().read_regional_prices(tmp_path, TYPES)


# -- building -------------------------------------------------------------------------------------

def test_build_adds_the_regions_and_keeps_karpenters_us_east_1(reference: Path) -> None:
    log: list[str] = []
    doc, _ = _tool().build(reference, KARPENTER_GO, regional=[AWS_GPU], log=log)
    cat = catalog_from_doc(json.loads(json.dumps(doc)), "built")
    g5 = cat.spec("g5.xlarge")
    assert g5 is not None
    assert g5.prices == {BASE: 1.006, EU: 1.123, "ap-northeast-1": 1.459}
    assert g5.price_dates == {BASE: KARPENTER_DATE, EU: REGIONAL_DATE,
                              "ap-northeast-1": REGIONAL_DATE}
    assert cat.price_date("g5.xlarge", EU) == REGIONAL_DATE
    assert cat.price_date("g5.xlarge", BASE) == KARPENTER_DATE
    assert cat.price_date("g5.xlarge", "ap-south-1") is None  # no price there
    text = g5.figure_sources["price"]
    assert "us-east-1: aws/karpenter-provider-aws@" in text and KARPENTER_DATE in text
    assert "ap-northeast-1, eu-west-1: tsaol/aws-gpu@" in text and REGIONAL_DATE in text
    assert cat.as_of == REGIONAL_DATE  # the oldest price it rests on
    assert "us-west-2-lax-1" not in cat.regions and "us-gov-west-1" not in cat.regions
    assert not [line for line in log if "disagreement" in line]
    assert any("tsaol/aws-gpu@" in line and "prices in 3 regions" in line for line in log)


def test_a_us_east_1_disagreement_over_10_percent_is_logged_and_karpenter_kept(
        reference: Path, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    text = (AWS_GPU / "g5_instances.js").read_text()
    assert '"onDemand": 1.006,' in text
    (folder / "g5_instances.js").write_text(text.replace('"onDemand": 1.006,',
                                                         '"onDemand": 10.06,'))
    (folder / "g4dn_instances.js").write_text((AWS_GPU / "g4dn_instances.js").read_text()
                                              .replace('"onDemand": 0.526,',
                                                       '"onDemand": 0.55,'))  # +4.6 %: quiet
    log: list[str] = []
    doc, _ = _tool().build(reference, KARPENTER_GO, regional=[folder], log=log)
    assert doc["instances"]["g5.xlarge"]["prices"][BASE] == 1.006
    wrong = [line for line in log if "disagreement" in line]
    assert len(wrong) == 1, log
    assert "g5.xlarge us-east-1: 1.006 $/h kept" in wrong[0] and "10.06 $/h" in wrong[0]
    assert "+900%" in wrong[0]


def test_price_list_offers_win_over_the_regional_source(reference: Path) -> None:
    doc, _ = _tool().build(reference, KARPENTER_GO, regional=[AWS_GPU],
                           offers=[FIXTURES / "catalog" / "offer_AmazonEC2_eu-west-1.json"])
    p5 = doc["instances"]["p5.48xlarge"]
    assert p5["prices"][EU] == 61.6448 and p5["price_dates"][EU] == "2026-12-01"
    g5 = doc["instances"]["g5.xlarge"]  # the offer file has it too: its price wins
    assert g5["price_dates"][EU] == "2026-12-01"
    assert "eu-west-1: AWS Price List offer_AmazonEC2_eu-west-1.json" in \
        g5["figure_sources"]["price"]
    g4dn = doc["instances"]["g4dn.xlarge"]  # the offer file has not: the regional source's
    assert g4dn["prices"][EU] == 0.587 and g4dn["price_dates"][EU] == REGIONAL_DATE


def test_the_extract_round_trips(tmp_path: Path) -> None:
    tool = _tool()
    got = tool.read_regional_prices(AWS_GPU, TYPES)
    path = tmp_path / "extract.json"
    tool.write_regional_prices(got, path)
    back = tool.read_regional_prices(path, TYPES)
    assert (back.prices, back.updated, back.note) == (got.prices, got.updated, got.note)
    (tmp_path / "other.json").write_text('{"prices": {}}')
    with pytest.raises(ValueError, match="not a regional price extract"):
        tool.read_regional_prices(tmp_path / "other.json", TYPES)


# -- the vendored extract and the shipped catalogue -----------------------------------------------

def test_the_vendored_extract_agrees_with_karpenter_on_us_east_1() -> None:
    """The sanity check of the parse: the older source's us-east-1 figures are karpenter's
    within 10 % (they are equal today, 76 of 76)."""
    tool = _tool()
    karpenter = tool.parse_karpenter(KARPENTER_GO.read_text())[BASE]
    extract = json.loads(EXTRACT.read_text())
    assert extract["updated"] == REGIONAL_DATE and len(extract["commit"]) == 40
    compared = 0
    for name, by_region in extract["prices"].items():
        for region in by_region:
            assert tool._COMMERCIAL_REGION.fullmatch(region), region
            assert not region.startswith(("cn-", "us-gov-")), region
        if BASE in by_region and name in karpenter:
            assert abs(by_region[BASE] - karpenter[name]) <= 0.10 * karpenter[name], name
            compared += 1
    assert compared >= 70


def test_the_shipped_catalogue_carries_the_extract_with_its_dates() -> None:
    cat = default_catalog()
    extract = json.loads(EXTRACT.read_text())["prices"]
    for name, by_region in extract.items():
        spec = cat.spec(name)
        assert spec is not None, name
        for region, usd in by_region.items():
            if region == BASE and "karpenter" in spec.figure_sources["price"]:
                continue
            assert spec.prices[region] == usd, (name, region)
            assert cat.price_date(name, region) == REGIONAL_DATE, (name, region)
    assert cat.regional_price("g5.xlarge", EU) == 1.123
    assert cat.price_date("g5.xlarge", BASE) == KARPENTER_DATE
    assert cat.regional_price("g5.xlarge", BASE) == 1.006  # unchanged
    assert EU in cat.regions and "ap-northeast-1" in cat.regions


# -- scanning IaC deployed to eu-west-1 -----------------------------------------------------------

ASG_TEMPLATE = """AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Template:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData: {InstanceType: INSTANCE_TYPE}
  Group:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MinSize: "4"
      MaxSize: "4"
      DesiredCapacity: "4"
      VPCZoneIdentifier: [subnet-0123456789abcdef0]
      LaunchTemplate: {LaunchTemplateId: !Ref Template, Version: "1"}
"""
SPOT_TEMPLATE = """AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Spot:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateData:
        InstanceType: g5.xlarge
        InstanceMarketOptions: {MarketType: spot, SpotOptions: {MaxPrice: "1.4"}}
  Node:
    Type: AWS::EC2::Instance
    Properties:
      LaunchTemplate: {LaunchTemplateId: !Ref Spot, Version: "1"}
"""


def _failed(findings: list[Finding], policy: str) -> list[Finding]:
    return [f for f in findings if f.policy_id == policy and f.status.value == "FAIL"]


def _cfn(tmp_path: Path, text: str, region: str | None, policies: list[str]) -> list[Finding]:
    from scanner.sources.cloudformation.reader import load_template

    path = tmp_path / "stack.yaml"
    path.write_text(text)
    return evaluate(load_template(path, region=region).resources, policy_ids=policies)


def test_asg_money_in_eu_west_1_is_booked_at_the_eu_west_1_price(tmp_path: Path) -> None:
    eu = _failed(_cfn(tmp_path, ASG_TEMPLATE.replace("INSTANCE_TYPE", "g5.xlarge"), EU,
                      ["ASG-001"]), "ASG-001")
    base = _failed(_cfn(tmp_path, ASG_TEMPLATE.replace("INSTANCE_TYPE", "g5.xlarge"), BASE,
                        ["ASG-001"]), "ASG-001")
    assert len(eu) == len(base) == 1
    assert eu[0].savings is not None and base[0].savings is not None
    assert eu[0].savings.usd_month == pytest.approx(base[0].savings.usd_month * 1.123 / 1.006)
    basis = eu[0].savings.basis
    assert f"on-demand g5.xlarge {EU} (price of {REGIONAL_DATE})" in basis
    assert "us-east-1" not in basis and "1.006" not in basis
    assert f"on-demand g5.xlarge {BASE} (price of {KARPENTER_DATE})" in base[0].savings.basis


def test_terraform_provider_region_books_asg_money_at_the_eu_west_1_price(
        tmp_path: Path) -> None:
    from scanner.sources.terraform.hcl.reader import load_terraform_dir

    (tmp_path / "main.tf").write_text('''
provider "aws" { region = "eu-west-1" }
resource "aws_launch_template" "gpu" { instance_type = "g5.xlarge" }
resource "aws_autoscaling_group" "gpu" {
  min_size            = 4
  max_size            = 4
  desired_capacity    = 4
  vpc_zone_identifier = ["subnet-0123456789abcdef0"]
  launch_template { id = aws_launch_template.gpu.id }
}
''')
    found = _failed(evaluate(load_terraform_dir([tmp_path]).resources, policy_ids=["ASG-001"]),
                    "ASG-001")
    assert len(found) == 1 and found[0].savings is not None
    assert f"on-demand g5.xlarge {EU} (price of {REGIONAL_DATE})" in found[0].savings.basis
    assert "us-east-1" not in found[0].savings.basis


def test_spot_cap_in_eu_west_1_is_a_share_of_the_eu_west_1_price(tmp_path: Path) -> None:
    (eu,) = _failed(_cfn(tmp_path, SPOT_TEMPLATE, EU, ["SPOT-001"]), "SPOT-001")
    assert eu.savings is not None
    assert eu.savings.usd_month == pytest.approx((1.4 - 0.7 * 1.123) * 730)
    assert f"on-demand g5.xlarge {EU} (price of {REGIONAL_DATE})" in eu.savings.basis
    assert "us-east-1" not in eu.savings.basis
    assert eu.evidence["offers"][0]["on_demand_usd_hour"] == 1.123


def test_rightsizing_money_in_eu_west_1_is_booked_at_the_eu_west_1_price(
        tmp_path: Path) -> None:
    from scanner.sources.cloudformation.reader import load_template
    from scanner.telemetry.history import attach, load_utilization
    from tests.rightsizing_seed import END_TEXT, history

    doc = history({"Trainer": "p3.8xlarge", "Idle": "g5.2xlarge"})
    doc["end"] = END_TEXT
    path = tmp_path / "history.json"
    path.write_text(json.dumps(doc))

    def rs(region: str) -> dict[str, Finding]:
        result = load_template(FIXTURES / "cfn" / "rightsizing" / "gpu-fleet.yaml",
                               region=region)
        attach(result, load_utilization([str(path)], 14))
        found = evaluate(result.resources, policy_ids=["RS-001", "RS-002"])
        return {f"{f.policy_id} {f.resource['id']}": f for f in found
                if f.status.value == "FAIL"}

    eu, base = rs(EU), rs(BASE)
    assert sorted(eu) == sorted(base) == ["RS-001 Trainer", "RS-002 Idle"]
    cat = default_catalog()
    idle_eu, idle_base = eu["RS-002 Idle"].savings, base["RS-002 Idle"].savings
    assert idle_eu is not None and idle_base is not None
    eu_price = cat.regional_price("g5.2xlarge", EU)
    assert eu_price is not None and eu_price != cat.regional_price("g5.2xlarge", BASE)
    assert idle_eu.usd_month == pytest.approx(eu_price * 730)
    assert f"{EU} (price of {REGIONAL_DATE})" in idle_eu.basis
    assert "us-east-1" not in idle_eu.basis
    trainer = eu["RS-001 Trainer"].savings
    assert trainer is not None and f"{EU} (price of {REGIONAL_DATE})" in trainer.basis
    assert "us-east-1" not in trainer.basis
    assert trainer.usd_month != base["RS-001 Trainer"].savings.usd_month  # type: ignore[union-attr]


def test_a_type_without_an_eu_west_1_price_falls_back_to_us_east_1_said_so(
        tmp_path: Path) -> None:
    cat = default_catalog()
    assert cat.regional_price("g6.xlarge", EU) is None  # the regional source has none there
    fallback = price("g6.xlarge", EU, catalog=cat)
    assert fallback.usd_hour == cat.regional_price("g6.xlarge", BASE) and fallback.estimated
    assert f"us-east-1 (price of {KARPENTER_DATE}); the catalogue has no {EU} price" \
        in fallback.basis
    (found,) = _failed(_cfn(tmp_path, ASG_TEMPLATE.replace("INSTANCE_TYPE", "g6.xlarge"), EU,
                            ["ASG-001"]), "ASG-001")
    assert found.savings is not None
    assert f"the catalogue has no {EU} price" in found.savings.basis
    assert f"on-demand g6.xlarge {EU} (price" not in found.savings.basis
