"""tools/build_catalog.py reads regional prices from AWS Price List files in their real shapes:
the bulk offer file (JSON and CSV) and a saved pricing:GetProducts answer. Only the on-demand
Linux shared-tenancy box usage counts (not Windows, a reservation, dedicated tenancy or a reserved
term); each region's price names its file and publication date, and the catalogue's as_of is the
oldest date it rests on."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from scanner.catalog import catalog_from_doc

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "catalog"
_CSV = """instance_type,vcpu,mem_gib,arch,gpu_model,gpu_count,gpu_mem_gib,network_gbps,efa,\
price_usd_hour_us_east_1,fp16_dense_tflops_per_gpu,source
p5.48xlarge,192,2048,x86_64,H100,8,80.0,3200,true,55.04,989.4,spec:test row; price:test row
g5.xlarge,4,16,x86_64,A10G,1,22.35,10,false,1.006,,spec:test row; price:test row
"""


def _tool():
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


def test_each_offer_shape_gives_the_linux_on_demand_price_only() -> None:
    tool = _tool()
    types = {"p5.48xlarge", "g5.xlarge"}
    bulk, published = tool.read_offers(FIXTURES / "offer_AmazonEC2_eu-west-1.json", types)
    assert bulk == {"eu-west-1": {"p5.48xlarge": 61.6448, "g5.xlarge": 1.123}}  # not Windows
    assert published == "2026-12-01"
    rows, published = tool.read_offers(FIXTURES / "offer_AmazonEC2_ap-northeast-1.csv", types)
    assert rows == {"ap-northeast-1": {"g5.xlarge": 1.459}}  # not reserved, not dedicated
    assert published == "2026-11-28"
    api, published = tool.read_offers(FIXTURES / "get_products_ap-south-1.json", types)
    assert api == {"ap-south-1": {"p5.48xlarge": 58.016}} and published == "2026-11-25"
    # a type not asked for is not read
    assert tool.read_offers(FIXTURES / "offer_AmazonEC2_eu-west-1.json", {"g6.xlarge"})[0] == {}


def test_build_prices_each_region_from_its_file_and_dates_it(reference: Path) -> None:
    tool = _tool()
    doc, _zones = tool.build(reference, FIXTURES / "karpenter_pricing_aws_gpu.go", offers=[
        FIXTURES / "offer_AmazonEC2_eu-west-1.json",
        FIXTURES / "offer_AmazonEC2_ap-northeast-1.csv",
        FIXTURES / "get_products_ap-south-1.json"])
    cat = catalog_from_doc(json.loads(json.dumps(doc)), "built")
    assert cat.regions == ("ap-northeast-1", "ap-south-1", "eu-west-1", "us-east-1")
    p5 = cat.spec("p5.48xlarge")
    assert p5 is not None
    assert p5.prices == {"us-east-1": 55.04, "eu-west-1": 61.6448, "ap-south-1": 58.016}
    assert cat.regional_price("g5.xlarge", "ap-northeast-1") == 1.459
    assert cat.regional_price("p5.48xlarge", "ap-northeast-1") is None  # the file has none
    text = p5.figure_sources["price"]
    assert "eu-west-1: AWS Price List offer_AmazonEC2_eu-west-1.json (published 2026-12-01)" \
        in text
    assert "us-east-1: aws/karpenter-provider-aws" in text and "2026-07-20" in text
    assert cat.as_of == "2026-07-20"  # the oldest price it rests on
    # the new types come in too, from moto's dump, with a dated source
    assert cat.spec("trn2.48xlarge") is not None


def test_an_offer_file_without_a_publication_date_is_refused(reference: Path,
                                                              tmp_path: Path) -> None:
    tool = _tool()
    doc = json.loads((FIXTURES / "offer_AmazonEC2_eu-west-1.json").read_text())
    del doc["publicationDate"]
    undated = tmp_path / "undated.json"
    undated.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"undated\.json: no publication date"):
        tool.build(reference, None, offers=[undated])
