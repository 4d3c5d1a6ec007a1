"""The compliance mappings: data files valid by their shipped schema, every mapped policy
registered, controls_for() merging a policy's own mapping, and the `gpuaudit compliance`
commands."""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from policies import all_policies
from scanner.compliance import (
    FrameworkError,
    UnknownFramework,
    controls_for,
    framework,
    frameworks,
    parse_framework,
    schema,
)

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORK_FILES = sorted((ROOT / "scanner" / "compliance" / "frameworks").glob("*.yaml"))
EXPECTED = {"cis-aws-foundations-3.0", "nist-800-53-r5", "soc2", "iso-27001-2022",
            "pci-dss-4.0", "finops"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False)


def test_every_framework_file_is_valid_by_the_shipped_schema() -> None:
    import jsonschema

    assert {p.stem for p in FRAMEWORK_FILES} == EXPECTED
    validator = jsonschema.Draft202012Validator(schema())
    for path in FRAMEWORK_FILES:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert [e.message for e in validator.iter_errors(data)] == [], path.name
        assert data["id"] == path.stem
    assert set(frameworks()) == EXPECTED
    assert frameworks(validate=True) == frameworks()  # as a scan reads them, unvalidated


def test_every_mapped_policy_exists_and_every_mapping_says_why() -> None:
    known = set(all_policies())
    for fw in frameworks().values():
        ids = [c.id for c in fw.controls]
        assert len(ids) == len(set(ids)), fw.id
        for control in fw.controls:
            for m in control.mappings:
                assert m.policy in known, f"{fw.id} {control.id}: unknown policy {m.policy}"
                assert len(m.why) >= 20 and m.coverage in ("full", "partial")


def test_the_mappings_an_auditor_expects() -> None:
    cis = framework("cis-aws-foundations-3.0")
    control = cis.control("2.2.1")
    assert control is not None
    assert control.title == "Ensure EBS Volume Encryption is Enabled in all Regions"
    assert set(control.policies) == {"EBS-001", "EBS-002"}
    assert len(cis.controls) == 62 and [c.id for c in cis.covered] == ["2.2.1"]
    assert controls_for("EBS-002")["cis-aws-foundations-3.0"] == ["2.2.1"]
    assert "SC-28" in controls_for("EBS-001")["nist-800-53-r5"]
    assert "SC-7" in controls_for("VPC-004")["nist-800-53-r5"]
    assert "CC6.6" in controls_for("VPC-004")["soc2"]
    assert "8.24" in controls_for("EBS-001")["iso-27001-2022"]
    assert "3.5.1" in controls_for("EBS-001")["pci-dss-4.0"]
    assert controls_for("RS-001")["finops"] == ["workload-optimization"]
    assert "rate-optimization" in controls_for("SPOT-001")["finops"]
    # negatives: nothing claimed that is not checked
    assert "cis-aws-foundations-3.0" not in controls_for("VPC-004")
    assert "finops" not in controls_for("EBS-001")
    assert controls_for("ASG-004") == {}  # AWS rejects that configuration: no control
    budgeting = framework("finops").control("budgeting")
    assert budgeting is not None and budgeting.policies == ()


def test_controls_for_merges_a_policys_own_mapping() -> None:
    merged = controls_for("EBS-002", {"nist-800-53-r5": ["AC-3", "SC-28"], "Internal-Std": "X.1",
                                      "soc2": [None, 3, True], 7: ["bad"]})
    assert merged["nist-800-53-r5"][:1] == ["AC-3"]  # in the framework's order
    assert merged["nist-800-53-r5"].count("SC-28") == 1
    assert merged["internal-std"] == ["X.1"]
    assert "3" in merged["soc2"] and "True" not in merged["soc2"]
    assert list(merged) == sorted(merged)
    assert controls_for("NO-SUCH-1", {"soc2": ["CC6.1"]}) == {"soc2": ["CC6.1"]}
    assert controls_for("NO-SUCH-1", "not a mapping") == {}


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda d: d["controls"][0].pop("title"), "controls/0"),
    (lambda d: d["controls"][0].update(policies=[{"policy": "EBS-001", "coverage": "most",
                                                  "why": "x" * 30}]), "controls/0/policies/0"),
    (lambda d: d["controls"].append(dict(d["controls"][0])), "listed twice"),
])
def test_a_bad_framework_file_is_an_error_naming_the_file_and_key(mutate, where) -> None:
    data = yaml.safe_load(FRAMEWORK_FILES[0].read_text(encoding="utf-8"))
    mutate(data)
    with pytest.raises(FrameworkError, match=rf"x\.yaml: .*{where}"):
        parse_framework(data, "x.yaml")


def test_the_framework_files_ship_in_the_wheel() -> None:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = data["tool"]["setuptools"]["package-data"]["scanner"]
    for path in [*FRAMEWORK_FILES, ROOT / "scanner" / "compliance" / "framework.schema.json"]:
        rel = path.relative_to(ROOT / "scanner").as_posix()
        assert any(fnmatch.fnmatch(rel, g) for g in globs), rel


def test_a_file_that_is_not_a_framework_is_an_error_even_unvalidated() -> None:
    with pytest.raises(FrameworkError, match=r"^y\.yaml: not a framework file"):
        parse_framework({"id": "y", "controls": [{"title": "no id"}]}, "y.yaml", validate=False)


def test_unknown_framework() -> None:
    with pytest.raises(UnknownFramework, match=r"known: cis-aws-foundations-3\.0"):
        framework("cis-9")


def test_compliance_list_and_show() -> None:
    listed = _cli("compliance", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    rows = {r["id"]: r for r in json.loads(listed.stdout)}
    assert set(rows) == EXPECTED
    assert (rows["cis-aws-foundations-3.0"]["covered"], rows["cis-aws-foundations-3.0"]
            ["controls"]) == (1, 62)
    table = _cli("compliance", "list")
    assert "cis-aws-foundations-3.0" in table.stdout and "1/62" in table.stdout
    shown = _cli("compliance", "show", "cis-aws-foundations-3.0")
    assert shown.returncode == 0
    line = next(ln for ln in shown.stdout.splitlines() if ln.startswith("2.2.1"))
    assert "Ensure EBS Volume Encryption" in line
    assert "EBS-002 (full), EBS-001 (partial)" in shown.stdout
    one = json.loads(_cli("compliance", "show", "soc2", "--format", "json").stdout)
    cc62 = next(c for c in one["controls"] if c["id"] == "CC6.2")
    assert cc62["coverage"] == "none" and cc62["policies"] == []
    bad = _cli("compliance", "show", "nope")
    assert bad.returncode == 2 and "unknown compliance framework 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_merging_reports_keeps_the_controls_a_finding_carried() -> None:
    from scanner.compliance import with_controls

    carried = [{"policy_id": "USR-9", "compliance": {"soc2": ["CC6.3"]}},
               {"policy_id": "EBS-002", "compliance": {"internal": ["K-1"]}},
               {"policy_id": "EBS-002"}]
    out = with_controls(carried)
    assert out[0]["compliance"] == {"soc2": ["CC6.3"]}
    assert out[1]["compliance"]["internal"] == ["K-1"]
    assert out[1]["compliance"]["cis-aws-foundations-3.0"] == ["2.2.1"]
    assert "internal" not in out[2]["compliance"]
