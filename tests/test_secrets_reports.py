# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""No credential reaches any report format, from any source: every token kind of
tests/secret_tokens.py, written the way real inputs write it (an env line, an export, YAML,
JSON, a CLI flag, base64 user data), in Terraform HCL, a plan's JSON, CloudFormation and a live
account (moto), in tags, names and user data. Each report is rendered in every format; neither
a token nor a 10-character piece of its secret part appears anywhere, the tags that hold one
are shown redacted, and the harmless tag next to them is shown as it is."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.audit import audit
from scanner.cli.main import cli
from scanner.inputs.credentials import REDACTED
from tests.aws_helpers import AMI, REGION, aws, aws_env, client, declared_only  # noqa: F401
from tests.secret_tokens import TOKENS, secret_parts

ROOT = Path(__file__).resolve().parents[1]
PLAN_A = ROOT / "tests" / "fixtures" / "terraform" / "gpu_estate_a" / "plan.json"
FORMATS = ("json", "html", "sarif", "junit", "markdown", "csv", "table")
MARKER = "harmless-visible-marker"
FORMS = ("{t}", "export HF_HOME=/data NAME={t}", "NAME: {t}", '{{"NAME": "{t}"}}',
         "--token={t}", "b64")


def tag_values() -> dict[str, str]:
    """One tag per token kind, each written in one of the ways scripts write it."""
    out = {}
    for i, (kind, token) in enumerate(sorted(TOKENS.items())):
        form = FORMS[i % len(FORMS)]
        if form == "b64":
            script = f"#!/bin/bash\nexport SETTING={token}\n"
            out[f"t_{kind}"] = base64.b64encode(script.encode()).decode()
        else:
            out[f"t_{kind}"] = form.format(t=token).replace("NAME", "SETTING")
    return out


USER_DATA = "#!/bin/bash\n" + "".join(
    f"export {kind.upper()}='{token}'\n" for kind, token in sorted(TOKENS.items())
    if "\n" not in token) + "aws configure set aws_secret_access_key " + \
    TOKENS["aws_secret_access_key"] + "\n"


def assert_nothing_leaks(texts: dict[str, str]) -> None:
    for name, text in texts.items():
        for kind, token in TOKENS.items():
            for part in secret_parts(token):
                assert part not in text, f"{kind} ({part!r}) leaked into {name}"
        assert base64.b64encode(USER_DATA.encode()).decode()[:24] not in text, name


def all_formats(tmp_path: Path, command: list[str]) -> dict[str, str]:
    out = tmp_path / "out"
    cmd = [*command, "--output-dir", str(out), "--deterministic"]
    for fmt in FORMATS:
        cmd += ["--format", fmt]
    res = CliRunner().invoke(cli, cmd)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    texts = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    assert len(texts) == len(FORMATS), sorted(texts)
    texts["stdout"] = res.output
    return texts


def assert_tags_redacted(report: dict, resource_id: str) -> None:
    tags = next(f["resource"]["tags"] for f in report["findings"]
                if f["resource"]["id"] == resource_id)
    assert tags["marker"] == MARKER  # tags are in the report: a leak would show
    for key in tag_values():
        assert tags[key] == REDACTED, key


def _hcl_string(value: str) -> str:
    return json.dumps(value).replace("${", "$${").replace("%{", "%%{")


def test_terraform_hcl(tmp_path: Path) -> None:
    tags = {**tag_values(), "marker": MARKER}
    body = "\n".join(f"    {k} = {_hcl_string(v)}" for k, v in tags.items())
    (tmp_path / "main.tf").write_text(f"""
resource "aws_launch_template" "gpu" {{
  name          = "gpu-lt"
  image_id      = "{AMI}"
  instance_type = "p4d.24xlarge"
  user_data     = base64encode({_hcl_string(USER_DATA)})
  tags = {{
{body}
  }}
}}
resource "aws_instance" "trainer" {{
  ami           = "{AMI}"
  instance_type = "p4d.24xlarge"
  user_data     = {_hcl_string(USER_DATA)}
  tags = {{
{body}
  }}
}}
""")
    texts = all_formats(tmp_path, ["scan", str(tmp_path), "--include-passed",
                                   "--fail-on", "none"])
    report = json.loads(texts["report.json"])
    assert_tags_redacted(report, "aws_launch_template.gpu")
    assert_tags_redacted(report, "aws_instance.trainer")
    assert_nothing_leaks(texts)


def test_terraform_plan(tmp_path: Path) -> None:
    plan = json.loads(PLAN_A.read_text())
    trainer = next(r for r in plan["planned_values"]["root_module"]["resources"]
                   if r["address"] == "aws_instance.trainer")
    tags = {**tag_values(), "marker": MARKER}
    trainer["values"].update(tags=dict(tags), tags_all=dict(tags), user_data=USER_DATA,
                             user_data_base64=base64.b64encode(USER_DATA.encode()).decode())
    for rc in plan["resource_changes"]:
        if rc["address"] == "aws_instance.trainer":
            rc["change"]["after"] = dict(trainer["values"])
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    texts = all_formats(tmp_path, ["scan", str(path), "--include-passed", "--fail-on", "none"])
    assert_tags_redacted(json.loads(texts["report.json"]), "aws_instance.trainer")
    assert_nothing_leaks(texts)


def test_cloudformation(tmp_path: Path) -> None:
    tags = {**tag_values(), "marker": MARKER}
    template = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {
            "Template": {"Type": "AWS::EC2::LaunchTemplate", "Properties": {
                "LaunchTemplateName": "gpu-" + TOKENS["huggingface"],
                "LaunchTemplateData": {
                    "InstanceType": "p4d.24xlarge", "ImageId": AMI,
                    "UserData": {"Fn::Base64": USER_DATA},
                    "TagSpecifications": [{"ResourceType": "instance", "Tags": [
                        {"Key": k, "Value": v} for k, v in tags.items()]}]}}},
            "Trainer": {"Type": "AWS::EC2::Instance", "Properties": {
                "InstanceType": "p4d.24xlarge", "ImageId": AMI,
                "UserData": base64.b64encode(USER_DATA.encode()).decode(),
                "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}},
        },
    }
    path = tmp_path / "stack.json"
    path.write_text(json.dumps(template))
    texts = all_formats(tmp_path, ["scan", str(path), "--include-passed", "--fail-on", "none"])
    report = json.loads(texts["report.json"])
    assert_tags_redacted(report, "Trainer")
    names = {f["resource"]["id"]: f["resource"]["name"] for f in report["findings"]}
    assert names["Template"] == REDACTED  # the name holds a token
    assert_nothing_leaks(texts)


def test_live(aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ec2 = client("ec2")
    tags = [{"Key": k, "Value": v} for k, v in {**tag_values(), "marker": MARKER}.items()]
    b64 = base64.b64encode(USER_DATA.encode()).decode()
    ec2.create_launch_template(
        LaunchTemplateName="gpu-lt",
        # a spot template, so that SPOT-001 reports it (and its tags) whatever else changes
        LaunchTemplateData={"InstanceType": "g5.xlarge", "ImageId": AMI, "UserData": b64,
                            "InstanceMarketOptions": {"MarketType": "spot",
                                                      "SpotOptions": {"MaxPrice": "0.5"}},
                            "TagSpecifications": [{"ResourceType": "instance", "Tags": tags}]},
        TagSpecifications=[{"ResourceType": "launch-template", "Tags": tags}])
    ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType="g5.xlarge",
                      UserData=USER_DATA,
                      TagSpecifications=[{"ResourceType": "instance", "Tags": tags},
                                         {"ResourceType": "volume", "Tags": tags}])
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    args = ["--regions", REGION, "--output-dir", str(out), "--deterministic",
            "--include-passed"]
    for fmt in FORMATS:
        args += ["--format", fmt]
    res = CliRunner().invoke(audit, args)
    assert res.exit_code in (0, 1, 2), res.output
    texts = {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()}
    texts["stdout"] = res.output
    report = json.loads(texts["report.json"])
    kinds = {f["resource"]["kind"] for f in report["findings"]}
    assert {"ec2.instance", "ec2.launch_template"} <= kinds
    instance = next(f["resource"]["id"] for f in report["findings"]
                    if f["resource"]["kind"] == "ec2.instance")
    assert_tags_redacted(report, instance)
    assert_nothing_leaks(texts)
