"""The coverage line of every report: what the run judged (GPU resources, files), what it could
not read (Terraform module calls, by kind of source) and how many results are UNKNOWN. A scan
that judged no GPU resource because its modules were not read says so: never a silent green."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.findings.schema import validate_report

UNREAD = '''module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"
}

module "gpu_nodes" {
  source = "git::https://github.com/example/gpu-nodes.git?ref=v1.2.0"
}
'''
GPU = '''resource "aws_instance" "train" {
  ami           = "ami-0123456789abcdef0"
  instance_type = "g5.xlarge"
  root_block_device { encrypted = true }
}

resource "aws_instance" "web" {
  ami           = "ami-0123456789abcdef0"
  instance_type = "t3.micro"
}
'''


def _scan(tmp_path: Path, tf: str, *args: str) -> tuple[int, dict, dict[str, str]]:
    (tmp_path / "main.tf").write_text(tf)
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, [
        "scan", str(tmp_path), "--output-dir", str(out), "--fail-on", "none",
        *(x for fmt in ("json", "table", "markdown", "sarif", "junit", "html")
          for x in ("--format", fmt)), *args])
    assert res.exit_code == 0, res.output
    files = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    doc = json.loads(next(v for k, v in files.items() if k.endswith(".json")
                          and not k.endswith(".sarif.json") and '"schema_version"' in v))
    return res.exit_code, doc, {"stdout": res.output, **files}


def _file(files: dict[str, str], suffix: str) -> str:
    return next(v for k, v in files.items() if k.endswith(suffix))


def test_unread_modules_and_no_gpu_judged_is_said_in_every_format(tmp_path: Path) -> None:
    _, doc, files = _scan(tmp_path, UNREAD)
    assert validate_report(doc) == []
    assert doc["summary"]["coverage"] == {
        "gpu_resources": 0, "maybe_gpu_resources": 0, "files": 1, "places": 0,
        "unread_module_calls": 2, "unread_module_sources": {"git": 1, "registry": 1},
        "unknown": 2}
    line = ("judged 0 GPU resources in 1 file; 2 module calls not read (sources: 1 git, "
            "1 registry); 2 unknown - nothing judged is not a pass")
    table = " ".join(files["stdout"].split())
    assert f"Coverage: {line}" in table
    assert line in " ".join(_file(files, ".md").split())
    sarif = json.loads(_file(files, ".sarif"))
    props = sarif["runs"][0]["properties"]["coverage"]
    assert props["text"].startswith(line) and props["unread_module_calls"] == 2
    suite = next(s for s in ET.fromstring(_file(files, ".xml")).iter("testsuite")
                 if s.get("name") == "coverage")
    case = suite.find("testcase")
    assert case is not None and case.find("skipped") is not None  # not a green pass
    assert line in (case.findtext("system-out") or "")
    html = _file(files, ".html")
    assert 'class="coverage box err"' in html and line in " ".join(html.split())


def test_gpu_resources_judged_are_counted_and_no_false_alarm(tmp_path: Path) -> None:
    _, doc, files = _scan(tmp_path, GPU)
    cov = doc["summary"]["coverage"]
    assert cov["gpu_resources"] == 1  # the g5, not the t3
    assert cov["unread_module_calls"] == 0 and cov["files"] == 1
    table = " ".join(files["stdout"].split())
    assert "Coverage: judged 1 GPU resource in 1 file; 0 module calls not read" in table
    assert "nothing judged" not in table
    suite = next(s for s in ET.fromstring(_file(files, ".xml")).iter("testsuite")
                 if s.get("name") == "coverage")
    assert suite.get("skipped") == "0"
    assert 'class="coverage"' in _file(files, ".html")


def test_a_report_without_coverage_renders_without_the_line() -> None:
    from reports import render
    from tests.report_samples import sample

    doc = sample("iac")
    assert "coverage" not in doc["summary"]
    for fmt in ("table", "markdown", "html"):
        assert "judged" not in render(fmt, doc)


@pytest.mark.parametrize("bad", [{"gpu_resources": -1}, {"gpu_resources": "3"}])
def test_a_coverage_of_the_wrong_shape_is_refused_by_the_schema(bad: dict) -> None:
    from tests.report_samples import sample

    doc = sample("iac")
    doc["summary"]["coverage"] = {"gpu_resources": 0, "files": 0, "unread_module_calls": 0,
                                  "unknown": 0, **bad}
    assert validate_report(doc) != []


def test_live_resources_are_counted_by_account_and_region() -> None:
    """A live audit reads no file: its coverage names the account/regions it judged."""
    from reports.common import coverage_line
    from scanner.findings.report import coverage_summary
    from scanner.model import Provenance, Resource, SourceKind

    def live(i: str, region: str) -> Resource:
        prov = Provenance(SourceKind.AWS, account="123456789012", region=region)
        return Resource(kind="ec2.instance", id=i, attrs={"InstanceType": "g5.xlarge"},
                        provenance=prov, scope=f"123456789012/{region}", declared=False)

    from scanner.compute.census import gpu_census
    from scanner.compute.index import Views
    from scanner.model.graph import ResourceIndex

    gpu = [live("i-1", "us-east-1"), live("i-2", "us-east-1"), live("i-3", "eu-west-1")]
    census = gpu_census(gpu, Views(ResourceIndex(gpu)))
    cov = coverage_summary(census, [{"status": "FAIL"}])
    assert cov["files"] == 0 and cov["places"] == 2 and cov["gpu_resources"] == 3
    line = coverage_line({"summary": {"coverage": cov}})
    assert line == ("judged 3 GPU resources in 2 account/regions; 0 module calls not read; "
                    "0 unknown")
