"""The shipped GPU catalogue: every entry's figures name a source and date, the per-model facts
(memory bandwidth, BF16/FP8, Tensor Core generation) and the derived interconnect are right for
known types, and offerings answer True / False / None (not known) as they should."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scanner.catalog import (
    CATALOG_FILE,
    FIGURE_GROUPS,
    INTERCONNECTS,
    CatalogError,
    catalog_from_doc,
    default_catalog,
    load_catalog,
)

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def test_every_entry_names_a_source_and_date_for_each_figure_group() -> None:
    cat = default_catalog()
    assert len(cat.instances) >= 69
    for name, spec in cat.instances.items():
        assert set(spec.figure_sources) == set(FIGURE_GROUPS), name
        for group, text in spec.figure_sources.items():
            if text.startswith("none: "):  # a figure the sources lack says so, and is None
                continue
            assert _DATE.search(text), (name, group, text)
        if spec.figure_sources["price"].startswith("none: "):
            assert not spec.prices and spec.price_usd_hour is None, name
        else:
            assert spec.prices, name
        if spec.figure_sources["model"].startswith("none: "):
            assert spec.gpu_mem_bandwidth_gbs is None and spec.bf16 is None, name
        assert spec.interconnect in INTERCONNECTS, name


@pytest.mark.parametrize(("name", "link", "bandwidth", "bf16", "fp8", "gen"), [
    ("p5.48xlarge", "nvswitch", 3350, True, True, 4),
    ("p5.4xlarge", "none", 3350, True, True, 4),
    ("p4d.24xlarge", "nvswitch", 1555, True, False, 3),  # A100 40 GB
    ("p4de.24xlarge", "nvswitch", 2039, True, False, 3),  # A100 80 GB
    ("p3.8xlarge", "nvlink", 900, False, False, 1),
    ("p3.2xlarge", "none", 900, False, False, 1),
    ("g5.48xlarge", "pcie", 600, True, False, 3),
    ("g4dn.12xlarge", "pcie", 320, False, False, 2),
    ("g6f.large", "none", 300, True, True, 4),  # a fraction of an L4
    ("trn1.32xlarge", "neuronlink", 820, True, True, None),
    ("inf2.xlarge", "none", 820, True, True, None),
])
def test_model_facts_and_interconnect(name: str, link: str, bandwidth: float, bf16: bool,
                                      fp8: bool, gen: int | None) -> None:
    spec = default_catalog().spec(name)
    assert spec is not None
    assert (spec.interconnect, spec.gpu_mem_bandwidth_gbs, spec.bf16, spec.fp8,
            spec.tensor_core_gen) == (link, bandwidth, bf16, fp8, gen)


def test_offered_is_true_false_or_not_known() -> None:
    cat = default_catalog()
    assert cat.offered("p5.48xlarge", "us-east-1") is True
    assert cat.offered("g5.xlarge", "us-east-1", "use1-az1") is True  # by zone ID
    # a zone name maps to a different zone in each account: not known, never a guess
    assert cat.offered("g5.xlarge", "us-east-1", "us-east-1a") is None
    # a region the offerings source does not cover, and a type the catalogue lacks
    assert cat.offered("g5.xlarge", "xx-nowhere-1") is None
    assert cat.offered("x9.huge", "us-east-1") is None
    # offered nowhere in a covered region: False (p4de is us-east-1 / us-west-2 only)
    spec = cat.spec("p4de.24xlarge")
    assert spec is not None and spec.offered_regions
    missing = sorted(spec.offerings.regions - set(spec.offered_regions))  # type: ignore[union-attr]
    assert missing and cat.offered("p4de.24xlarge", missing[0]) is False
    # a zone ID of a covered region where the type is not offered is False, not None
    zones = spec.offerings.zones()  # type: ignore[union-attr]
    not_there = next(z for z, types in zones.items()
                     if z.startswith("use1-") and "p4de.24xlarge" not in types)
    assert cat.offered("p4de.24xlarge", "us-east-1", not_there) is False


def test_round_trip_keeps_the_new_fields(tmp_path: Path) -> None:
    cat = default_catalog()
    again = catalog_from_doc(json.loads(json.dumps(cat.to_doc())), "x")
    for name, spec in cat.instances.items():
        other = again.instances[name]
        assert (other.interconnect, other.gpu_mem_bandwidth_gbs, other.bf16, other.fp8,
                other.tensor_core_gen, other.figure_sources, other.offered_regions) == (
            spec.interconnect, spec.gpu_mem_bandwidth_gbs, spec.bf16, spec.fp8,
            spec.tensor_core_gen, spec.figure_sources, spec.offered_regions)
    # region-level offerings survive a written catalogue; zones (not written) are not known
    assert again.offered("p5.48xlarge", "us-east-1") is True
    assert again.offered("p5.48xlarge", "us-east-1", "use1-az1") is None


@pytest.mark.parametrize(("entry", "message"), [
    ({"interconnect": "infiniband"}, "'interconnect' must be one of"),
    ({"bf16": "yes"}, "'bf16' must be true, false or null"),
    ({"offered_regions": "us-east-1"}, "'offered_regions' must be a list"),
])
def test_bad_new_fields_name_the_key(entry: dict[str, object], message: str) -> None:
    doc = json.loads(CATALOG_FILE.read_text())
    doc["instances"]["g5.xlarge"].update(entry)
    with pytest.raises(CatalogError, match=rf"instances\.g5\.xlarge.*{message}"):
        catalog_from_doc(doc, "cat.json")


def test_the_shipped_file_loads_quickly() -> None:
    import time

    start = time.perf_counter()
    load_catalog()
    assert time.perf_counter() - start < 0.05


# -- a type the catalogue lacks is a notice naming it (never a silent pass) --------------------

_TF = """
provider "aws" {
  region = "us-east-1"
}

resource "aws_launch_template" "gpu" {
  name_prefix   = "gpu-"
  image_id      = "ami-0abcdef1234567890"
  instance_type = "%s"
}

resource "aws_autoscaling_group" "gpu" {
  min_size            = 1
  max_size            = 2
  vpc_zone_identifier = ["subnet-0123456789abcdef0"]
  launch_template {
    id      = aws_launch_template.gpu.id
    version = "$Latest"
  }
}

resource "aws_instance" "known" {
  ami           = "ami-0abcdef1234567890"
  instance_type = "g5.xlarge"
}
"""


def _scan_notices(tmp_path: Path, instance_type: str) -> list[str]:
    from scanner.engine.evaluate import run
    from scanner.sources.scan import scan_paths

    (tmp_path / "main.tf").write_text(_TF % instance_type)
    source = scan_paths([tmp_path])
    return [n.message for n in run(source.resources).notices]


def test_a_type_the_catalogue_lacks_is_a_notice_naming_it(tmp_path: Path) -> None:
    lacking = "p6e-gb200.36xlarge"  # an UltraServer type no offline source lists
    assert default_catalog().spec(lacking) is None
    notes = [m for m in _scan_notices(tmp_path, lacking) if "not in the gpuaudit catalogue" in m]
    assert len(notes) == 1, notes  # once per type and file, though two resources launch it
    assert lacking in notes[0] and "prices as of" in notes[0]
    # the catalogued type beside it gets no such notice
    assert not any("g5.xlarge" in m for m in notes)


def test_a_catalogued_type_gives_no_lacking_notice(tmp_path: Path) -> None:
    assert not [m for m in _scan_notices(tmp_path, "p5.48xlarge")
                if "not in the gpuaudit catalogue" in m]
