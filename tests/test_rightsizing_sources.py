"""RS-001, RS-002 and RS-003 from each IaC source with `--utilization` (Terraform HCL, a plan
planned by the real terraform, CloudFormation): a failing and a passing case of each policy per
source, and nothing judged without utilization."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import SourceResult
from scanner.sources.cloudformation.reader import load_template
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from scanner.sources.terraform.plan.reader import load_plan
from scanner.telemetry.history import attach, load_utilization
from tests.rightsizing_seed import END_TEXT, history

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TF = FIXTURES / "terraform" / "rightsizing"
CFN = FIXTURES / "cfn" / "rightsizing" / "gpu-fleet.yaml"
UTILIZATION_POLICIES = ("RS-001", "RS-002", "RS-003")  # their per-source cases live here

# (policy, name) -> status, whatever the source spells the names as
EXPECTED = {
    ("RS-001", "trainer"): "FAIL", ("RS-002", "trainer"): "PASS", ("RS-003", "trainer"): "PASS",
    ("RS-002", "idle"): "FAIL", ("RS-003", "idle"): "PASS",
    ("RS-003", "dark"): "FAIL",
    ("RS-001", "busy"): "PASS", ("RS-002", "busy"): "PASS", ("RS-003", "busy"): "PASS",
}


def _busy() -> dict[str, Any]:
    samples = [[f"2026-01-14T{h % 24:02d}:30:00Z".replace("14T", f"{12 + h // 24}T"),
                80.0 + h % 15, 14000.0] for h in range(72)]
    return {"gpus": [{"index": 0, "memory_total_mib": 15360, "samples": samples}]}


def _history(tmp_path: Path, names: dict[str, str]) -> Path:
    doc = history({names[k]: t for k, t in (("trainer", "p3.8xlarge"), ("idle", "g5.2xlarge"))})
    doc["resources"][names["busy"]] = _busy()
    doc["end"] = END_TEXT
    path = tmp_path / "history.json"
    path.write_text(json.dumps(doc))
    return path


SOURCES: dict[str, tuple[Callable[[], SourceResult], Callable[[str], str]]] = {
    "H": (lambda: load_terraform_dir([TF]), lambda n: f"aws_instance.{n}"),
    "P": (lambda: load_plan(TF / "plan.json"), lambda n: f"aws_instance.{n}"),
    "C": (lambda: load_template(CFN, region="us-east-1"), lambda n: n.capitalize()),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_rs_policy_fails_and_passes_from_each_source(source: str,
                                                          tmp_path: Path) -> None:
    load, spell = SOURCES[source]
    result = load()
    assert result.errors == []
    names = {n: spell(n) for n in ("trainer", "idle", "dark", "busy")}
    attach(result, load_utilization([str(_history(tmp_path, names))], 14))
    assert result.errors == [] and result.notices == []
    back = {v: k for k, v in names.items()}
    found = {(f.policy_id, back.get(f.resource["id"], f.resource["id"])): f.status.value
             for f in evaluate(result.resources, policy_ids=UTILIZATION_POLICIES)}
    assert found == EXPECTED
    for pid in UTILIZATION_POLICIES:
        assert {s for (p, _), s in found.items() if p == pid} == {"PASS", "FAIL"}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_nothing_is_judged_without_utilization(source: str) -> None:
    result = SOURCES[source][0]()
    assert evaluate(result.resources, policy_ids=UTILIZATION_POLICIES) == []


def test_scan_without_utilization_never_imports_the_telemetry_readers(tmp_path: Path) -> None:
    """The pre-commit path stays light: no history, file or CloudWatch reader, no
    ijson, and RS-* left out of the report."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "r.json"
    code = (
        "import sys\n"
        f"sys.argv = ['gpuaudit', 'scan', {str(TF)!r}, '--format', 'json', '-o', {str(out)!r},"
        " '--quiet']\n"
        "from scanner.cli.main import cli\n"
        "try:\n    cli()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('scanner.telemetry.', "
        "'ijson', 'scanner.aws', 'boto3'))))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=root, timeout=120)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert not [f for f in doc["findings"] if f["policy_id"].startswith("RS-")]
    assert not [p for p in doc["summary"]["by_policy"] if p.startswith("RS-")]
