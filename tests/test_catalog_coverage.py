"""The catalogue covers every current accelerated family: each accelerated type in moto's
DescribeInstanceTypes dump (AWS's own answer, as moto recorded it) is catalogued or its family is
in tools/catalog_exclusions.json with a reason; each GPU-family type karpenter's generated price
list prices is catalogued at that price or excluded the same way."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import moto

from scanner.catalog import default_catalog, family_of, is_gpu_type

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "catalog"


def _tool():  # tools/build_catalog.py, imported by path (tools/ is not a package)
    spec = importlib.util.spec_from_file_location("build_catalog",
                                                  ROOT / "tools" / "build_catalog.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _exclusions() -> tuple[dict[str, str], dict[str, str]]:
    doc = json.loads((ROOT / "tools" / "catalog_exclusions.json").read_text())
    return doc["not_gpu"], doc["retired"]


def _moto_accelerated() -> dict[str, dict]:
    path = Path(moto.__file__).parent / "ec2" / "resources" / "instance_types.json.gz"
    with gzip.open(path, "rt") as fh:
        types = json.load(fh)
    keys = ("GpuInfo", "NeuronInfo", "InferenceAcceleratorInfo", "FpgaInfo",
            "MediaAcceleratorInfo")
    return {n: i for n, i in types.items() if any(k in i for k in keys)}


def test_every_accelerated_type_moto_lists_is_catalogued_or_excluded_with_a_reason() -> None:
    cat = default_catalog()
    not_gpu, retired = _exclusions()
    accelerated = _moto_accelerated()
    assert len(accelerated) > 80  # the dump was read (it holds ~90)
    missing = sorted(n for n in accelerated
                     if cat.spec(n) is None and family_of(n) not in not_gpu)
    assert missing == []
    # what is left out is not GPU compute, says why, and is not half catalogued
    for family, why in not_gpu.items():
        assert len(why) > 20
        assert not any(family_of(n) == family for n in cat.instances)
        assert not is_gpu_type(f"{family}.2xlarge")
    # a retired family is GPU compute (so a scan names it as lacking), never in moto's dump
    for family, why in retired.items():
        assert len(why) > 20 and is_gpu_type(f"{family}.xlarge")
        assert not any(family_of(n) == family for n in accelerated)


def test_the_catalogue_agrees_with_moto_where_both_describe_a_type() -> None:
    tool = _tool()
    cat = default_catalog()
    for name, info in _moto_accelerated().items():
        spec = cat.spec(name)
        if spec is None:
            continue
        vcpu, mem_gib, count, _dev_gib, efa, model = tool.moto_spec(info)
        assert (spec.vcpu, spec.mem_gib, spec.gpu_count, spec.efa, spec.gpu_model) == (
            vcpu, mem_gib, count, efa, model), name
        if spec.offered_regions is not None:
            assert "moto" in spec.figure_sources["offerings"]


def test_every_gpu_type_karpenter_prices_is_catalogued_at_that_price() -> None:
    tool = _tool()
    prices = tool.parse_karpenter((FIXTURES / "karpenter_pricing_aws_gpu.go").read_text())
    assert list(prices) == ["us-east-1"]  # karpenter publishes us-east-1 alone
    cat = default_catalog()
    not_gpu, retired = _exclusions()
    priced = 0
    for name, usd in prices["us-east-1"].items():
        if family_of(name) in {**not_gpu, **retired}:
            assert cat.spec(name) is None
            continue
        spec = cat.spec(name)
        assert spec is not None, f"{name} is priced by karpenter but not catalogued"
        assert cat.regional_price(name, "us-east-1") == usd, name
        assert "karpenter-provider-aws@1d927085" in spec.figure_sources["price"]
        priced += 1
    assert priced >= 80
    # the catalogued types karpenter does not price have no karpenter price: none at all, said
    # so, or only the regional source's (dl2q: eu-central-1 and us-west-2)
    for name, spec in cat.instances.items():
        if name not in prices["us-east-1"]:
            text = spec.figure_sources["price"]
            if spec.prices:
                assert "tsaol/aws-gpu@" in text and "karpenter" not in text, name
            else:
                assert text.startswith(f"none: no price for {name} in "), name


def test_the_new_families_are_there_with_their_facts() -> None:
    cat = default_catalog()
    expect = {
        "g4ad.16xlarge": ("Radeon Pro V520", "amd", 4, "pcie", 512),
        "dl1.24xlarge": ("Gaudi HL-205", "habana", 8, "roce", 1000),
        "dl2q.24xlarge": ("Qualcomm AI100", "qualcomm", 8, "pcie", 137),
        "inf1.24xlarge": ("Inferentia", "aws-neuron", 16, "neuronlink", 50),
        "trn2.48xlarge": ("Trainium2", "aws-neuron", 16, "neuronlink", 2900),
        "g7.48xlarge": ("RTX PRO 4500", "nvidia", 8, "pcie", 800),
        "p5e.48xlarge": ("H200", "nvidia", 8, "nvswitch", 4800),
    }
    for name, (model, vendor, count, link, bandwidth) in expect.items():
        spec = cat.spec(name)
        assert spec is not None, name
        assert (spec.gpu_model, spec.gpu_vendor, spec.gpu_count, spec.interconnect,
                spec.gpu_mem_bandwidth_gbs) == (model, vendor, count, link, bandwidth), name
    # Trainium2's device memory is the Neuron documentation's (moto's dump says 512 GiB a chip)
    trn2 = cat.spec("trn2.48xlarge")
    assert trn2 is not None and trn2.gpu_mem_gib == 96
    assert "device memory 96 GiB from AWS Neuron documentation" in trn2.figure_sources["spec"]
