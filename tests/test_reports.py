"""Renderers and the findings JSON Schema, on the sample documents of tests/report_samples.py."""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from reports import FORMATS, default_filename, render
from reports.common import reveal
from reports.csv_report import COLUMNS
from reports.html import CSP
from reports.sarif import artifact_uri
from reports.table import text_width
from scanner.findings.schema import load_schema, validate_report
from tests.report_samples import (
    HOSTILE,
    SAMPLES,
    HtmlInspector,
    document,
    finding,
    inline_scripts,
    sample,
)
from tests.sarif_rules import github_upload_problems

ROOT = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = ROOT / "tests" / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
HIDDEN = ("\x1b", "\x07", "\u202e")


# --- schema ---------------------------------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    import jsonschema

    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", SAMPLES)
def test_samples_validate(name: str) -> None:
    assert validate_report(sample(name)) == []


def _break(doc: dict[str, Any], how: str) -> None:
    f0 = doc["findings"][0]
    if how == "severity":
        f0["severity"] = "urgent"
    elif how == "status":
        f0["status"] = "MAYBE"
    elif how == "missing-summary":
        del doc["summary"]
    elif how == "finding-extra":
        f0["extra"] = 1
    elif how == "top-extra":
        doc["surprise"] = True
    elif how == "negative-saving":
        f0["savings"] = {"usd_month": -1, "basis": "x", "kind": "idle"}
    elif how == "suppressed-without-suppression":
        f0["status"], f0["suppression"] = "SUPPRESSED", None
    elif how == "error-kind":
        doc["errors"][0]["kind"] = "oops"
    elif how == "line-zero":
        f0["location"] = {"file": "main.tf", "start_line": 0, "end_line": 1}
    elif how == "schema-version":
        doc["schema_version"] = 2


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("severity", "$.findings[0].severity: 'urgent' is not one of"),
        ("status", "$.findings[0].status: 'MAYBE' is not one of"),
        ("missing-summary", "$: 'summary' is a required property"),
        ("finding-extra", "$.findings[0]: Additional properties are not allowed ('extra'"),
        ("top-extra", "$: Additional properties are not allowed ('surprise'"),
        ("negative-saving", "$.findings[0].savings.usd_month: -1 is less than the minimum of 0"),
        ("suppressed-without-suppression", "$.findings[0].suppression: None is not of type"),
        ("error-kind", "$.errors[0].kind: 'oops' is not one of"),
        ("line-zero", "$.findings[0].location.start_line: 0 is less than the minimum of 1"),
        ("schema-version", "$.schema_version: 1 was expected"),
    ],
)
def test_invalid_document_is_rejected_with_a_json_path(how: str, expected: str) -> None:
    doc = sample("iac")
    _break(doc, how)
    errors = validate_report(doc)
    assert any(e.startswith(expected) for e in errors), errors


def test_engine_report_validates_and_renders() -> None:
    """Contract with the lead's engine: a real evaluation's document fits the schema."""
    pytest.importorskip("scanner.engine.evaluate")
    from scanner.catalog import default_catalog
    from scanner.engine.evaluate import run
    from scanner.findings.report import build_report
    from scanner.model import Gap, Provenance, Resource, Skip, SourceKind, Unknown

    def vol(rid: str, encrypted: Any, **kw: Any) -> Resource:
        prov = Provenance(SourceKind.TERRAFORM_HCL, file="infra/main.tf", start_line=3, end_line=9)
        return Resource(
            "ec2.volume", rid, {"Encrypted": encrypted, "Size": 100}, prov, scope="infra", **kw
        )

    live = Resource(
        "ec2.volume",
        "vol-1",
        {"Encrypted": False},
        Provenance(
            SourceKind.AWS,
            account="123456789012",
            region="us-east-1",
            arn="arn:aws:ec2:us-east-1:123456789012:volume/vol-1",
        ),
        scope="123456789012/us-east-1",
        declared=False,
        tags={"Name": HOSTILE["script"]},
    )
    resources = [
        vol("aws_ebs_volume.a", False),
        vol("aws_ebs_volume.b", True),
        vol("aws_ebs_volume.c", Unknown("var.enc has no default")),
        vol("aws_ebs_volume.d", False, skips=(Skip("EBS-001", "scratch only", "comment"),)),
        live,
    ]
    gap = Gap(
        "123456789012/eu-west-1", ("ec2.volume",), "AccessDenied", "123456789012", "eu-west-1"
    )
    evaluation = run(resources, gaps=[gap])
    doc = build_report(
        evaluation.findings,
        errors=[],
        notices=evaluation.notices,
        inputs={"paths": ["infra"]},
        catalog=default_catalog(),
        resources=len(resources),
    )
    assert validate_report(doc) == []
    statuses = {f["status"] for f in doc["findings"]}
    assert {"FAIL", "PASS", "SUPPRESSED", "ERROR"} <= statuses
    for fmt in FORMATS:
        assert render(fmt, doc).strip()


# --- dispatch -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_renderer_on_every_sample(fmt: str, name: str) -> None:
    doc = sample(name)
    before = copy.deepcopy(doc)
    out = render(fmt, doc)
    assert isinstance(out, str) and out.endswith("\n") and out.strip()
    assert doc == before, "renderers must not mutate the document"


def test_formats_and_filenames() -> None:
    assert FORMATS == ("table", "json", "html", "sarif", "junit", "markdown", "csv", "asff",
                       "ocsf")
    assert [default_filename(f) for f in FORMATS] == [
        "report.txt",
        "report.json",
        "report.html",
        "report.sarif",
        "report.junit.xml",
        "report.md",
        "report.csv",
        "report.asff.json",
        "report.ocsf.json",
    ]
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        render("pdf", sample("empty"))
    with pytest.raises(ValueError):
        default_filename("pdf")


def test_table_does_not_import_jinja2() -> None:
    code = (
        "import sys\nfrom reports import render\nfrom tests.report_samples import sample\n"
        "render('table', sample('iac'))\nassert 'jinja2' not in sys.modules, 'jinja2 imported'\n"
        "assert 'jsonschema' not in sys.modules\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr


# --- table ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("color", [False, True])
def test_table_fits_100_columns(name: str, color: bool) -> None:
    out = render("table", sample(name), color=color)
    for line in ANSI.sub("", out).splitlines():
        assert len(line) <= 100 and text_width(line) <= 100, repr(line)
    assert ("\x1b[" in out) == (color and name != "empty")


def test_table_content_and_order() -> None:
    out = render("table", sample("iac"))
    severity = re.compile(r"^(critical|high|medium|low|info) ")
    rows = [line for line in out.splitlines() if severity.match(line)]
    assert [r.split()[0] for r in rows] == ["high", "high", "medium", "medium", "medium", "low"]
    assert rows[1].split()[1:4] == ["FAIL", "EBS-001", "infra/gpu/main.tf:12-20"]
    assert "All block device mappings are encrypted" not in out  # PASS is not listed
    assert "$21,535" in out  # saving column, compact
    assert "suppressed by comment at infra/gpu/modules/train/main.tf:49" in out
    assert "[input] infra/gpu/broken.tf:3: Invalid block definition" in out
    assert 'module "vpc" from the registry was not fetched' in out
    summary = out[out.index("Summary:") :]
    assert "4 FAIL, 1 UNKNOWN, 1 SUPPRESSED, 1 PASS" in summary
    assert "$21,534.60/month" in summary and "2025-06-01" in summary


def test_table_live_shows_account_region_and_error() -> None:
    out = render("table", sample("live"))
    assert "123456789012/us-east-1" in out
    assert re.search(r"^medium\s+ERROR\s+SPOT-002", out, re.M)
    assert "[aws] 123456789012/eu-west-1/ec2: AccessDenied" in out
    assert "Note: prices are us-east-1 on-demand prices, used for eu-west-1 too." in out


def test_table_says_a_notice_of_many_paths_once() -> None:
    skipped = [{"path": f"k8s/app{i}.yaml", "message": "not scanned: not Terraform"}
               for i in range(7)]
    others = [{"path": "a.yaml", "message": "not scanned: not Terraform", "line": 3},
              {"path": "b.tf", "message": "module not fetched"},
              {"path": "c.tf", "message": "module not fetched"}]
    doc = document([], inputs={"paths": ["."]}, notices=[*skipped, *others])
    assert validate_report(doc) == []
    out = render("table", doc)
    assert "Notices (10):" in out
    block = " ".join(out[out.index("Notices (10):"):out.index("Summary:")].split())
    assert ("7 paths: not scanned: not Terraform: k8s/app0.yaml, k8s/app1.yaml, k8s/app2.yaml, "
            "k8s/app3.yaml, k8s/app4.yaml (+2 more)") in block
    assert block.count("k8s/app") == 5
    assert "a.yaml:3: not scanned: not Terraform" in block  # a notice with a line stays its own
    assert "b.tf: module not fetched c.tf: module not fetched" in block  # two: not grouped
    # every other format keeps one notice a path
    assert len(json.loads(render("json", doc))["notices"]) == 10


def test_table_neutralises_terminal_escapes() -> None:
    out = render("table", sample("hostile"))
    assert not any(ch in out for ch in HIDDEN)
    assert "invoice<U+202E>exe.pdf" in out and "<U+001B>[2J" in out
    assert "No failing" in render("table", sample("empty"))


# --- json -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_json_is_byte_identical_and_round_trips(name: str) -> None:
    a, b = render("json", sample(name)), render("json", sample(name))
    assert a == b
    reordered = json.loads(a, object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    assert render("json", reordered) == a
    assert json.loads(a) == sample(name)
    assert validate_report(json.loads(a)) == []
    if name == "hostile":
        assert HOSTILE["rtl"] in a  # JSON is data: kept verbatim, not neutralised


# --- sarif ----------------------------------------------------------------------------------


def _sarif(name: str) -> dict[str, Any]:
    return json.loads(render("sarif", sample(name)))


def sarif_schema_errors(log: dict[str, Any]) -> list[str]:
    import jsonschema

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    return [
        f"{list(e.absolute_path)}: {e.message}"
        for e in jsonschema.Draft4Validator(schema).iter_errors(log)
    ]


@pytest.mark.parametrize("name", SAMPLES)
def test_sarif_validates_against_the_official_schema(name: str) -> None:
    assert sarif_schema_errors(_sarif(name)) == []


@pytest.mark.parametrize("name", SAMPLES)
def test_sarif_meets_githubs_upload_rules(name: str) -> None:
    text = render("sarif", sample(name))
    assert github_upload_problems(json.loads(text), text) == []


def test_the_schema_and_the_upload_check_can_fail() -> None:
    log = _sarif("iac")
    run = log["runs"][0]
    result = run["results"][0]
    result["locations"] = [{"logicalLocations": [{"name": "x"}]}]
    run["results"].append(copy.deepcopy(run["results"][1]))
    run["results"][-1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = (
        "file:///abs/main.tf")
    run["results"].append(copy.deepcopy(run["results"][1]))
    run["results"][-1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = (
        "../gpuaudit/main.tf")
    run["results"].append(copy.deepcopy(run["results"][1]))
    run["results"][-1]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    run["results"].append(copy.deepcopy(run["results"][1]))
    del run["results"][-1]["partialFingerprints"]
    run["results"].append(copy.deepcopy(run["results"][1]))
    run["results"][-1]["ruleId"] = "NOPE-1"
    cost = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "SPOT-001")
    cost["properties"]["security-severity"] = "5.5"
    ebs = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "EBS-001")
    ebs["properties"]["security-severity"] = 8.0
    problems = " | ".join(github_upload_problems(log))
    for expected in ("results[0].locations[0]: no physicalLocation", "has a scheme",
                     "climbs out of the repository", "startLine 0", "no partialFingerprints",
                     "ruleId 'NOPE-1' names no rule",
                     "'SPOT-001': security-severity on a rule not tagged security",
                     "'EBS-001': security-severity is not a string"):
        assert expected in problems, expected
    log["version"] = "2.0.0"
    assert any("not 2.1.0" in e for e in sarif_schema_errors(log) + github_upload_problems(log))
    assert sarif_schema_errors({"version": "2.1.0", "runs": [{"tool": {}}]})


def test_sarif_rules_results_and_locations() -> None:
    doc, log = sample("iac"), _sarif("iac")
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    undecided = {f["policy_id"] for f in doc["findings"]
                 if f["status"] in ("UNKNOWN", "ERROR") and (f["location"] or {}).get("file")}
    assert [r["id"] for r in rules] == sorted(
        {f["policy_id"] for f in doc["findings"]} | {f"{p}/undecided" for p in undecided})
    assert undecided  # the sample has UNKNOWN results in files
    by_id = {r["id"]: r for r in rules}
    assert by_id["EBS-001"]["properties"]["security-severity"] == "8.0"
    assert "security" in by_id["EBS-001"]["properties"]["tags"]
    assert by_id["VPC-004"]["properties"]["security-severity"] == "8.0"
    for cost in ("SPOT-001", "ASG-001", "ASG-002"):
        props = by_id[cost]["properties"]
        assert "security-severity" not in props and "security" not in props["tags"], cost
        assert "cost" in props["tags"]
    assert by_id["ASG-002"]["defaultConfiguration"]["level"] == "note"
    assert by_id["EBS-001"]["help"]["text"].startswith("EBS volumes and the block device")
    assert "Encrypt the volume" in by_id["EBS-001"]["help"]["text"]
    assert "```hcl" in by_id["EBS-001"]["help"]["markdown"]
    for rule in rules:
        pid = rule["id"].split("/")[0]
        assert rule["helpUri"].endswith(f"/docs/policies/{pid}.md")
        if rule["id"].endswith("/undecided"):  # UNKNOWN and ERROR: never a security alert
            assert "security-severity" not in rule["properties"]
            assert rule["defaultConfiguration"]["level"] == "note"
        full, short = rule["fullDescription"]["text"], rule["shortDescription"]["text"]
        assert len(full) > len(short) + 20 and full != short
    results = run["results"]
    expected = {f["id"] for f in doc["findings"]
                if f["status"] in ("FAIL", "SUPPRESSED", "UNKNOWN", "ERROR")
                and (f["location"] or {}).get("file")}
    assert {r["partialFingerprints"]["gpuaudit/v1"] for r in results} == expected
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        fid = r["partialFingerprints"]["gpuaudit/v1"]
        assert r["partialFingerprints"]["primaryLocationLineHash"] == f"{fid}:1"
    ebs = next(r for r in results if r["ruleId"] == "EBS-001")
    assert ebs["level"] == "error"
    phys = ebs["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"] == {"uri": "infra/gpu/main.tf", "uriBaseId": "%SRCROOT%"}
    assert phys["region"] == {"startLine": 12, "endLine": 20}
    spot = next(r for r in results if r["ruleId"] == "SPOT-001")
    assert spot["level"] == "warning" and "$21,534.60/month" in spot["message"]["text"]
    unknown = next(r for r in results if r["ruleId"] == "ASG-001/undecided")
    assert unknown["level"] == "note" and unknown["properties"]["status"] == "UNKNOWN"
    assert "var.workers has no default" in unknown["message"]["text"]
    assert unknown["message"]["text"].startswith("UNKNOWN")
    sup = next(r for r in results if r["ruleId"] == "ASG-002")
    assert sup["suppressions"][0]["kind"] == "inSource"
    assert sup["suppressions"][0]["justification"] == "p4d is the only type with EFA in this AZ"
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False  # broken.tf could not be read
    assert any("broken.tf" in n["message"]["text"] for n in inv["toolExecutionNotifications"])


def test_sarif_leaves_live_findings_out_with_a_notice() -> None:
    run = _sarif("live")["runs"][0]
    assert run["results"] == []  # every finding of the live sample is of a live resource
    notes = run["invocations"][0]["toolExecutionNotifications"]
    left = [n for n in notes if n["descriptor"]["id"] == "sarif/live-findings-left-out"]
    assert len(left) == 1 and left[0]["level"] == "note"
    # the ERROR is a notification of its own too
    assert "6 finding(s) of live AWS resources (1 ERROR, 4 FAIL, 1 SUPPRESSED)" \
        in left[0]["message"]["text"]
    spot_error = [n for n in notes if n["descriptor"]["id"] == "SPOT-002"]
    assert spot_error and spot_error[0]["level"] == "error"
    assert "train-workers" in spot_error[0]["message"]["text"]
    assert "locations" not in spot_error[0]  # no file to point at
    # the rules are still there: a mixed (merged) report keeps its IaC results
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"RS-002", "EBS-001"}


def test_sarif_clean_run_is_successful() -> None:
    run = _sarif("empty")["runs"][0]
    assert run["results"] == [] and run["invocations"][0]["executionSuccessful"] is True


@pytest.mark.parametrize(
    ("path", "uri"),
    [
        ("infra\\gpu\\main.tf", "infra/gpu/main.tf"),
        ("./a/b c.tf", "a/b%20c.tf"),
        ("a b/c|d`e.tf", "a%20b/c%7Cd%60e.tf"),
        ("javascript:x.tf", "javascript%3Ax.tf"),
        ("a/../b/main.tf", "b/main.tf"),
        ("../elsewhere/main.tf", None),
        ("/abs/main.tf", None),
        ("C:\\repo\\main.tf", None),
    ],
)
def test_sarif_artifact_uri_without_a_root(path: str, uri: str | None) -> None:
    got = artifact_uri(path)
    assert got == (None if uri is None else (uri, "%SRCROOT%"))


def test_sarif_artifact_uri_under_a_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "infra").mkdir(parents=True)
    elsewhere = tmp_path / "ci"
    elsewhere.mkdir()
    assert artifact_uri("../repo/infra/main.tf", root=repo, base=elsewhere) == (
        "infra/main.tf", "%SRCROOT%")
    assert artifact_uri(str(repo / "infra" / "main.tf"), root=repo, base=elsewhere) == (
        "infra/main.tf", "%SRCROOT%")
    assert artifact_uri("main.tf", root=repo, base=elsewhere) is None  # ci/main.tf: outside
    (repo / "link").symlink_to(repo / "infra")
    assert artifact_uri("link/x.tf", root=repo, base=repo) == ("infra/x.tf", "%SRCROOT%")


# --- junit ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_junit_parses_and_counts_add_up(name: str) -> None:
    root = ET.fromstring(render("junit", sample(name)).encode("utf-8"))
    assert root.tag == "testsuites"
    for key in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(key)) == sum(int(s.get(key)) for s in root.iter("testsuite"))
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)


def test_junit_structure() -> None:
    root = ET.fromstring(render("junit", sample("iac")).encode("utf-8"))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {
        "ASG-001",
        "ASG-002",
        "EBS-001",
        "SPOT-001",
        "VPC-001",
        "VPC-004",
        "inputs",
    }
    ebs = {c.get("name"): c for c in suites["EBS-001"].findall("testcase")}
    assert ebs["aws_ebs_volume.scratch"].find("failure").get("type") == "FAIL high"
    assert len(list(ebs["module.train.aws_launch_template.gpu"])) == 0  # PASS
    assert suites["ASG-001"].find("testcase/skipped") is not None  # UNKNOWN
    skipped = suites["ASG-002"].find("testcase/skipped")
    assert skipped.get("message").startswith("suppressed by comment at")
    assert suites["inputs"].find("testcase/error").get("message").startswith("Invalid block")
    live = ET.fromstring(render("junit", sample("live")).encode("utf-8"))
    spot = next(s for s in live.iter("testsuite") if s.get("name") == "SPOT-002")
    assert spot.get("errors") == "1" and spot.find("testcase/error") is not None


def test_junit_one_case_per_policy_and_resource() -> None:
    res = {
        "kind": "ec2.launch_template",
        "id": "aws_launch_template.lt",
        "address": "aws_launch_template.lt",
    }
    loc = {"file": "main.tf", "start_line": 1, "end_line": 9}
    doc = document(
        [
            finding("EBS-001", "t", "high", "PASS", "root ok", res, location=loc, path="root"),
            finding(
                "EBS-001",
                "t",
                "high",
                "FAIL",
                "/dev/sdf unencrypted",
                res,
                location=loc,
                path="sdf",
            ),
        ],
        inputs={"paths": ["."]},
    )
    root = ET.fromstring(render("junit", doc).encode("utf-8"))
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 1 and cases[0].find("failure").get("message") == "/dev/sdf unencrypted"


def test_junit_hostile_is_valid_xml_without_control_characters() -> None:
    text = render("junit", sample("hostile"))
    ET.fromstring(text.encode("utf-8"))
    assert not any(ch in text for ch in HIDDEN)
    assert "&lt;script&gt;" in text and "<script" not in text


# --- csv ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_csv_round_trips(name: str) -> None:
    doc = sample(name)
    rows = list(csv.DictReader(io.StringIO(render("csv", doc), newline="")))
    assert len(rows) == len(doc["findings"])
    by_id = {f["id"]: f for f in doc["findings"]}
    for row in rows:
        assert tuple(row) == COLUMNS
        f = by_id[row["id"]]
        for col, value in (
            ("status", f["status"]),
            ("policy_id", f["policy_id"]),
            ("account", f["resource"]["account"] or ""),
        ):
            assert row[col] == value
        msg = f["message"]
        # one line: newlines become spaces, control characters visible (reveal), formulas guarded
        shown = reveal(msg, keep_newlines=False)
        assert row["message"] == ("'" + shown if shown.startswith("=") else shown)
        assert json.loads(row["evidence"] or "{}") == f["evidence"]
        sav = f["savings"]
        assert row["savings_usd_month"] == ("" if sav is None else str(sav["usd_month"]))
        loc = f["location"] or {}
        assert row["start_line"] == str(loc.get("start_line") or "")


def test_csv_guards_spreadsheet_formulas() -> None:
    rows = list(csv.DictReader(io.StringIO(render("csv", sample("hostile")), newline="")))
    cells = [v for row in rows for v in row.values()]
    assert not any(v.startswith(("=", "+", "@")) for v in cells)
    assert "'" + HOSTILE["formula"] in cells


# --- markdown -------------------------------------------------------------------------------


def _unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_escapes_table_cells() -> None:
    out = render("markdown", sample("hostile"))
    table_lines = [line for line in out.splitlines() if line.startswith("|")]
    assert table_lines
    blocks: list[list[str]] = []
    for line in out.splitlines():
        if line.startswith("|"):
            if not blocks or not blocks[-1]:
                blocks.append([])
            blocks[-1].append(line)
        elif blocks and blocks[-1]:
            blocks.append([])
    for block in filter(None, blocks):
        columns = _unescaped_pipes(block[0])
        assert all(_unescaped_pipes(line) == columns for line in block), block
        assert not any(re.search(r"(?<!\\)`", line) for line in block)
    body = out[: out.rindex("<sub>")]
    assert not re.search(r"(?<!\\)<", body) and "\\<script\\>" in body
    assert not any(ch in out for ch in HIDDEN)
    assert "a\\|b \\`code\\` \\*\\*bold\\*\\*" in out


def test_markdown_summary_and_savings() -> None:
    out = render("markdown", sample("live"))
    assert "| FAIL | 4 |" in out and "| ERROR | 1 |" in out
    assert "**$20,683.89/month**" in out
    savings = out[out.index("### Savings") :]
    assert savings.index("$16,548.44") < savings.index("$4,135.45")  # largest first
    assert "### Failing findings (4)" in out and "### Input errors (1)" in out
    assert "Note: prices are us-east-1 on-demand prices, used for eu-west-1 too" in out


# --- html (static checks; tests/test_html_chromium.py renders it in a real browser) ---------


@pytest.mark.parametrize("name", SAMPLES)
def test_html_is_self_contained(name: str) -> None:
    out = render("html", sample(name))
    page = HtmlInspector(out)
    assert page.problems() == []
    assert CSP.startswith("default-src 'none'; style-src 'unsafe-inline';")
    assert "url(" not in out and "@import" not in out
    assert [a.get("content") for t, a in page.tags if t == "meta" and "http-equiv" in a] == [CSP]


def test_html_escapes_hostile_strings() -> None:
    out = render("html", sample("hostile"))
    assert "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in out
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in out
    assert "<img" not in out and "onerror=alert(1)>" not in out
    page = HtmlInspector(out)
    assert page.problems() == []
    for text in (HOSTILE["script"], HOSTILE["img"], HOSTILE["js_url"], HOSTILE["formula"]):
        assert text in page.text
    assert not any(ch in out for ch in HIDDEN)
    assert "invoice&lt;U+202E&gt;exe.pdf" in out


def test_html_shows_everything_a_reader_needs() -> None:
    doc = sample("iac")
    out = render("html", doc)
    for f in doc["findings"]:
        assert f'id="f-{f["id"]}"' in out
    assert out.count('<tbody class="finding st-PASS') == 1
    assert "$21,534.60" in out and "(98.32 - 68.82) $/h x 730 h, per instance" in out
    assert "<pre>resource &#34;aws_ebs_volume&#34; &#34;x&#34; {" in out
    assert "Suppressed by comment at infra/gpu/modules/train/main.tf:49" in out
    assert "infra/gpu/broken.tf:3" in out and "was not fetched" in out
    assert "2025-06-01" in out
    live = render("html", sample("live"))
    assert "Coverage gaps (1 of 2)" in live and "used for eu-west-1 too" in live
    assert "arn:aws:ec2:us-east-1:123456789012:instance/i-0123456789abcdef0" in live


def test_html_groups_findings_by_policy_with_count_and_saving() -> None:
    from reports.html import context

    doc = sample("live")
    ctx = context(doc)
    groups = {g["policy_id"]: g for g in ctx["groups"]}
    assert set(groups) == {f["policy_id"] for f in doc["findings"]}
    assert groups["EBS-001"]["counts"] == [("FAIL", 1), ("PASS", 1)]
    assert groups["RS-001"]["saving"] == "$16,548.44" and groups["RS-002"]["saving"] == "$4,135.45"
    assert groups["EBS-001"]["saving"] == ""
    assert [g["policy_id"] for g in ctx["groups"]][:2] == ["RS-002", "EBS-001"]  # high, by saving
    out = render("html", doc)
    assert out.count('<details class="group') == len(groups)
    assert "$4,135.45 / mo" in out and "1 FAIL · 1 PASS" in out
    # the chart: one bar per policy with a saving, largest first, all inline
    chart = out[out.index('<svg class="chart"'):out.index("</svg>")]
    assert chart.count("<rect") == 2 and chart.index("RS-001") < chart.index("RS-002")
    assert "href" not in chart and "url(" not in chart


def test_html_remediation_is_said_once_a_group() -> None:
    doc = sample("iac")
    out = render("html", doc)
    snippet = "<pre>resource &#34;aws_ebs_volume&#34; &#34;x&#34; {"
    assert out.count(snippet) == 1  # EBS-001 has two findings (FAIL, PASS): one remediation


def test_html_evidence_renders_as_tables() -> None:
    from reports.html import evidence_html

    html = str(evidence_html({
        "attachments": [{"InstanceId": "i-1", "Device": "/dev/sdf"}, {"InstanceId": "i-2"}],
        "types": ["p4d.24xlarge", "p5.48xlarge"],
        "Encrypted": False,
        "nested": {"k": None},
        "hostile": HOSTILE["script"],
    }))
    page = HtmlInspector(html)
    assert page.problems() == []
    assert "<th>InstanceId</th><th>Device</th>" in html
    assert "<td><span class=\"mono\">i-2</span></td><td></td>" in html  # a missing cell
    assert "<li><span class=\"mono\">p4d.24xlarge</span></li>" in html
    assert ">false<" in html and ">null<" in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "{&#34;" not in html  # no raw JSON object for a list of objects or a dict
    long = str(evidence_html({"volumes": [{"id": i} for i in range(60)]}))
    assert long.count("<tr>") == 1 + 1 + 50 and "… and 10 more" in long  # row, header, 50


def test_html_all_filter_label_does_not_claim_missing_passes() -> None:
    doc = sample("iac")  # lists its one PASS
    assert ">All incl. passing (7)<" in render("html", doc)
    unlisted = copy.deepcopy(doc)
    unlisted["findings"] = [f for f in unlisted["findings"] if f["status"] != "PASS"]
    out = render("html", unlisted)  # the summary still counts the PASS
    assert "incl. passing" not in out and ">All listed (6)<" in out
    assert "1 passing result(s) are counted in the summary but not listed here" in out


def test_html_csp_is_strict_and_allows_only_the_shipped_script() -> None:
    from reports.html import script, script_hash

    out = render("html", sample("iac"))
    scripts = inline_scripts(out)
    assert scripts == [script()]
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert script_hash() == f"sha256-{digest}" and f"'sha256-{digest}'" in CSP
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == f"'sha256-{digest}'"
    assert "http" not in CSP and "*" not in CSP


def test_html_data_rows_cannot_break_out(tmp_path: Path) -> None:
    from reports.html import STATIC_ROWS

    res = {"kind": "ec2.volume", "id": "v", "account": "1", "region": "r"}
    findings = [finding("EBS-001", "t", "high", "FAIL",
                        f"m{i} </script><script>alert(1)</script> <!-- \u2028 {HOSTILE['rtl']}",
                        res | {"id": f"v{i}"}, evidence={"k": "</SCRIPT>"}, path=str(i))
                for i in range(STATIC_ROWS + 5)]
    out = render("html", document(findings, inputs={"paths": ["."]}))
    page = HtmlInspector(out)
    assert page.problems() == []
    assert len(inline_scripts(out)) == 1  # the data block is not an executable script
    data = out[out.index('<script type="application/json" class="rows">'):]
    data = data[data.index(">") + 1:data.index("</script>")]
    rows = json.loads(data)
    assert len(rows) == 5 and "</script>" in rows[0][12] and "<U+202E>" in rows[0][12]
    assert "<" not in data and "\u202e" not in data


def test_html_links_files_under_the_root_only(tmp_path: Path) -> None:
    from reports import RenderContext

    repo, out_dir = tmp_path / "repo", tmp_path / "repo" / "reports"
    out_dir.mkdir(parents=True)
    doc = sample("iac")
    cfn = next(f for f in doc["findings"] if f["location"]["file"] == "cfn/inference.yaml")
    cfn["location"] = {"file": str(tmp_path / "elsewhere.tf"), "start_line": 1, "end_line": 1}
    html = render("html", doc, context=RenderContext(root=repo, base=repo, report_dir=out_dir))
    page = HtmlInspector(html)
    assert page.problems() == []
    hrefs = [a.get("href") for t, a in page.tags if t == "a"]
    assert "../infra/gpu/main.tf" in hrefs and "../infra/gpu/modules/train/main.tf" in hrefs
    assert len(hrefs) == len(doc["findings"]) - 1  # every finding but the one outside
    assert not any("elsewhere" in (h or "") for h in hrefs)
    assert all(not (h or "").startswith(("/", "file:", "..%2F")) for h in hrefs)
    assert "<a" not in render("html", doc)  # no report file, no links
