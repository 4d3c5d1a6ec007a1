"""The target type must be offered where the capacity runs: in its region, and in its zone
where both the zone (by ID) and the zone offerings are known. No offering data for the region
(or no region) is not a safe move: a notice, never a saving."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from scanner.catalog import Offerings
from tests.model_builders import res
from tests.rs_builders import coverage, gpu, member, usage
from tests.rs_builders import evaluate as run
from tests.rs_catalog import facts_catalog, with_facts

# one V100 of a p3.8xlarge's four lightly used: g4dn.4xlarge, then g6.4xlarge
LIGHT = [gpu(0, 25, 25, 5000), gpu(1, 0, 0, 0), gpu(2, 0, 0, 0), gpu(3, 0, 0, 0)]


def _p3(**attrs: object) -> list:
    return [res("ec2.instance", "i", InstanceType="p3.8xlarge", **attrs), coverage(),
            usage("i", member("i", LIGHT))]


def test_the_cheapest_fit_is_taken_where_offered() -> None:
    found, _ = run(*_p3(), policies=("RS-001",))
    assert found[("RS-001", "i")].evidence["recommended"] == "g4dn.4xlarge"


def test_a_type_not_offered_in_the_region_is_never_the_move() -> None:
    catalog = with_facts(facts_catalog(), {"g4dn.4xlarge": {"offered_regions": ("us-west-2",)}})
    found, _ = run(*_p3(), policies=("RS-001",), catalog=catalog)
    f = found[("RS-001", "i")]
    assert "g4dn.4xlarge" not in {c["instance_type"] for c in f.evidence["candidates"]}
    assert f.evidence["recommended"] == "g6.4xlarge" and f.status.value == "FAIL"


def test_a_type_not_offered_in_the_zone_is_never_the_move(tmp_path: Path) -> None:
    zones = tmp_path / "az.json"
    zones.write_text(json.dumps({"zones": {"use1-az6": ["g6.4xlarge", "p3.8xlarge"]}}))
    offerings = Offerings("tests", frozenset({"us-east-1"}), zones)
    catalog = facts_catalog()
    catalog = dataclasses.replace(catalog, instances={
        n: dataclasses.replace(s, offerings=offerings) for n, s in catalog.instances.items()})
    found, _ = run(*_p3(Placement={"AvailabilityZoneId": "use1-az6"}), policies=("RS-001",),
                   catalog=catalog)
    f = found[("RS-001", "i")]
    assert "g4dn.4xlarge" not in {c["instance_type"] for c in f.evidence["candidates"]}
    assert f.evidence["recommended"] == "g6.4xlarge"
    assert f.evidence["demand"]["zones"] == ["use1-az6"]


def test_no_offering_data_for_the_region_is_a_notice_not_a_saving() -> None:
    found, notices = run(*_p3(), policies=("RS-001",), region="ca-central-1")
    f = found[("RS-001", "i")]
    assert f.status.value == "UNKNOWN" and f.savings is None
    assert "recommended" not in f.evidence
    assert f.evidence["performance_risk"]["level"] == 3
    assert any("offered in ca-central-1 is not known" in r
               for r in f.evidence["performance_risk"]["reasons"])
    assert any(n.startswith("RS-001 i:") and "no saving booked" in n for n in notices)


def test_no_region_is_a_notice_not_a_saving() -> None:
    found, _ = run(*_p3(), policies=("RS-001",), region=None)
    f = found[("RS-001", "i")]
    assert f.status.value == "UNKNOWN" and f.savings is None
    assert any("a region not known" in r for r in f.evidence["performance_risk"]["reasons"])
