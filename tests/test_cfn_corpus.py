"""Every CloudFormation template of the aws-cloudformation-templates corpus loads without a crash.

The corpus is vendored in tests/fixtures/corpora (Apache-2.0, see its README for the commit).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from scanner.sources.cloudformation.reader import load_template, looks_like_cloudformation

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpora" / "aws-cloudformation-templates"
SUFFIXES = {".yaml", ".yml", ".json", ".template"}

# Templates that are expected to give input errors, and why (checked by eye):
# rain (github.com/aws-cloudformation/rain) sources with !Rain::Embed / !Rain::Module / !Rain::S3
# tags or `Type: {Rain::Module: ...}`, which CloudFormation itself cannot deploy before `rain pkg`.
EXPECTED_ERRORS = {
    "APIGateway/apigateway_lambda_integration.yaml": "!Rain::Embed",
    "CloudFormation/CustomResources/getfromjson/src/getfromjson.yml": "!Rain::Embed",
    "CloudFormation/MacrosExamples/DateFunctions/date.yaml": "!Rain::Embed",
    "CloudFormation/MacrosExamples/PyPlate/python.yaml": "!Rain::Embed",
    "CloudFormation/MacrosExamples/StringFunctions/string.yaml": "!Rain::Embed",
    "CloudFormation/StackSets/common-resources-stackset.yaml": "!Rain::Embed",
    "CloudFormation/StackSets/common-resources.json": "rain module",
    "CloudFormation/StackSets/common-resources.yaml": "!Rain::Module",
    "CloudFormation/StackSets/log-setup-management.yaml": "!Rain::Embed",
    "ElastiCache/Elasticache-snapshot.yaml": "!Rain::Embed",
    "IoT/amzn2-greengrass-cfn.yaml": "!Rain::Embed",
    "RainModules/api-resource.yml": "!Rain::S3",
    "RainModules/bucket.yml": "!Rain::Module",
    "RainModules/static-site.yml": "!Rain::Module",
    "Solutions/GitLab/GitLabServer.json": "rain module",
    "Solutions/GitLab/GitLabServer.yaml": "!Rain::Module",
    "Solutions/GitLabAndVSCode/GitLabAndVSCode.json": "rain module",
    "Solutions/GitLabAndVSCode/GitLabAndVSCode.yaml": "!Rain::Module",
    "Solutions/Gitea/Gitea.json": "rain module",
    "Solutions/Gitea/Gitea.yaml": "!Rain::Module",
    "Solutions/VSCode/VSCodeServer.json": "rain module",
    "Solutions/VSCode/VSCodeServer.yaml": "!Rain::Module",
}


def _templates() -> list[Path]:
    out = []
    for p in sorted(CORPUS.rglob("*")):
        if p.suffix in SUFFIXES and p.is_file():
            head = p.read_bytes()[:16384].decode("utf-8", "replace")
            if looks_like_cloudformation(head):
                out.append(p)
    return out


TEMPLATES = _templates()


def test_corpus_is_substantial() -> None:
    assert len(TEMPLATES) > 250


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus_template_loads(path: Path) -> None:
    started = time.perf_counter()
    result = load_template(path)
    # a hang guard, not a speed budget (a corpus template loads in milliseconds; `make bench`
    # measures speed): a bound a busy CI machine cannot reach by accident
    assert time.perf_counter() - started <= 60.0
    rel = str(path.relative_to(CORPUS))
    for err in result.errors:
        assert err.path == str(path) and err.reason
        assert not err.reason.startswith("internal error"), err
    expected = EXPECTED_ERRORS.get(rel)
    if expected is None:
        assert result.errors == []
    else:
        assert result.errors and all(expected in e.reason for e in result.errors)
        assert all(e.line is not None for e in result.errors)
    for r in result.resources:
        assert r.provenance.start_line is not None and r.provenance.end_line is not None
        assert r.provenance.start_line <= r.provenance.end_line


def test_corpus_finds_the_network_and_compute_kinds() -> None:
    kinds: dict[str, int] = {}
    for path in TEMPLATES:
        for r in load_template(path).resources:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
    for kind in (
        "ec2.vpc",
        "ec2.subnet",
        "ec2.route_table",
        "ec2.route",
        "ec2.instance",
        "autoscaling.group",
        "ec2.launch_template",
        "ec2.vpc_endpoint",
    ):
        assert kinds.get(kind, 0) > 0, kind


def test_corpus_yaml_and_json_twins_agree() -> None:
    """Most corpus templates ship as YAML and JSON twins; both must give the same resources."""
    compared = 0
    differ = []
    for y in TEMPLATES:
        j = y.with_suffix(".json")
        if y.suffix != ".yaml" or j not in TEMPLATES:
            continue
        a, b = load_template(y), load_template(j)
        if a.errors or b.errors:
            continue
        compared += 1
        key_a = [(r.id, r.kind, r.attrs, r.tags, r.name) for r in a.resources]
        key_b = [(r.id, r.kind, r.attrs, r.tags, r.name) for r in b.resources]
        if key_a != key_b:
            differ.append(str(y.relative_to(CORPUS)))
    assert compared > 100
    # These twins really differ in the corpus (the YAML was updated, the JSON was not):
    assert sorted(differ) == [
        "AutoScaling/AutoScalingRollingUpdates.yaml",
        "AutoScaling/AutoScalingScheduledAction.yaml",
        "EC2/EC2_Instance_With_Ephemeral_Drives.yaml",
        "EC2/EIP_With_Association.yaml",
        "ECS/EC2LaunchType/clusters/private-vpc.yaml",
        "ECS/EC2LaunchType/clusters/public-vpc.yaml",
    ]
