"""The checkov adapters without checkov: checkov's resource configurations (in the shapes its
parsers give, as seen from checkov 3.3) → gpuaudit's resources and verdicts."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from scanner.integrations.checkov import exports
from scanner.integrations.checkov.conf import (
    ConfError,
    cloudformation_resource,
    terraform_resource,
    terraform_values,
)
from scanner.model import Ref, Status, Unknown

ROOT = Path(__file__).resolve().parents[1]
CHECKOV_DOC = ROOT / "docs" / "checkov.md"


@pytest.fixture(autouse=True)
def _no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """No gpuaudit config unless a test writes one (the cwd is where checkov runs)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(exports.CONFIG_ENV, raising=False)
    exports.config.cache_clear()
    yield
    exports.config.cache_clear()


def tf(policy: str, tf_type: str, conf: dict[str, Any]) -> tuple[Status, str]:
    v = exports.decide(exports.EXPORTS[policy], "terraform", tf_type,
                       {"__start_line__": 1, "__end_line__": 9,
                        "__address__": f"{tf_type}.x", **conf}, file="main.tf")
    return v.status, v.message


_TEMPLATES = itertools.count()


def cfn(policy: str, cfn_type: str, props: dict[str, Any],
        template: dict[str, Any] | None = None) -> tuple[Status, str]:
    """checkov's configuration of resource Res of a template file in the cwd (as checkov gives it);
    ``template``: the file's other sections and the resource's keys beside its Properties."""
    template = template or {}
    body = {"Type": cfn_type, "Properties": props, **template.get("Res", {})}
    name = f"t{next(_TEMPLATES)}.yaml"  # a new file each time: a stat cache cannot mix them
    Path(name).write_text(json.dumps({**{k: v for k, v in template.items() if k != "Res"},
                                          "Resources": {"Res": body}}))
    conf = {"Type": cfn_type, "Properties": {**props, "__file__": name,
                                             "__startline__": 3, "__endline__": 9,
                                             "resource_type": cfn_type}}
    v = exports.decide(exports.EXPORTS[policy], "cloudformation", cfn_type, conf,
                       file=name, name="Res")
    return v.status, v.message


# -- conversion ------------------------------------------------------------------------------


def test_values_unwrap_attributes_and_keep_blocks() -> None:
    conf = {"__start_line__": 12, "__address__": "aws_launch_template.lt",
            "instance_type": ["p4d.24xlarge"], "vpc_security_group_ids": [["sg-1"]],
            "tags": [{"Name": "x"}],
            "block_device_mappings": [
                {"device_name": ["/dev/sda1"], "ebs": [{"encrypted": [True]}]},
                {"device_name": ["/dev/sdb"], "ebs": [{"encrypted": ["var.nodef"]}]}]}
    v = terraform_values(conf)
    assert v["instance_type"] == "p4d.24xlarge"
    assert v["vpc_security_group_ids"] == ["sg-1"]
    assert v["tags"] == {"Name": "x"}
    assert "__address__" not in v and "__start_line__" not in v
    first, second = v["block_device_mappings"]
    assert first == {"device_name": "/dev/sda1", "ebs": {"encrypted": True}}
    assert isinstance(second["ebs"]["encrypted"], Unknown)


@pytest.mark.parametrize(("text", "expected"), [
    ("aws_kms_key.k.arn", Ref("aws_kms_key.k", "arn")),
    ("${aws_vpc.main.id}", Ref("aws_vpc.main", "id")),
    ("module.net.aws_subnet.a.id", Ref("module.net.aws_subnet.a", "id")),
    ("p4d.24xlarge", "p4d.24xlarge"),
    ("price-capacity-optimized", "price-capacity-optimized"),
    ("com.amazonaws.us-east-1.s3", "com.amazonaws.us-east-1.s3"),
    ("arn:aws:kms:us-east-1:1:key/abc", "arn:aws:kms:us-east-1:1:key/abc"),
])
def test_expression_text_becomes_a_reference_or_stays_literal(text: str, expected: Any) -> None:
    assert terraform_values({"a": [text]})["a"] == expected


@pytest.mark.parametrize("text", [
    "var.nodef", "local.types", "data.aws_ami.x.id", "each.value", "count.index",
    "${var.a}-x", "lookup(var.m, \"k\")", "var.on ? \"spot\" : null", "[for t in var.x : t]",
    # dynamic block iterators and other providers' resources (seen in terraform-aws-modules)
    "instances_distribution.value.spot_allocation_strategy", "ebs.value.encrypted",
    "override.value[\"instance_type\"]", "random_id.suffix.hex",
])
def test_unrendered_expressions_are_unknown(text: str) -> None:
    assert isinstance(terraform_values({"a": [text]})["a"], Unknown)


def test_an_unrendered_dynamic_block_never_passes() -> None:
    """terraform-aws-autoscaling: a dynamic distribution checkov could not expand leaves its
    iterator's text; the strategy must not be read as a strategy (ASG-002 would pass)."""
    conf = _asg(30, spot_allocation_strategy=[
        "instances_distribution.value.spot_allocation_strategy"])
    assert tf("ASG-002", "aws_autoscaling_group", conf)[0] is Status.UNKNOWN
    conf = _asg(30)
    conf["mixed_instances_policy"][0]["instances_distribution"][0][
        "on_demand_percentage_above_base_capacity"] = [
        "instances_distribution.value.on_demand_percentage_above_base_capacity"]
    assert tf("ASG-001", "aws_autoscaling_group", conf)[0] is Status.UNKNOWN


def test_hostile_configurations_are_unknown_not_errors() -> None:
    deep: Any = ["x"]
    for _ in range(500):
        deep = [{"a": deep}]
    assert tf("EBS-001", "aws_ebs_volume", {"encrypted": deep})[0] is Status.UNKNOWN
    for conf in ({"encrypted": [["a", "b"]]}, {"encrypted": [{"x": 1}]}, {"encrypted": [3.5]},
                 {"encrypted": []}, {"size": [None]}):
        assert tf("EBS-001", "aws_ebs_volume", conf)[0] is Status.UNKNOWN, conf
    with pytest.raises(ConfError):
        terraform_values(["not", "a", "mapping"])  # type: ignore[arg-type]
    v = exports.decide(exports.EXPORTS["EBS-001"], "cloudformation", "AWS::EC2::Volume",
                       {"Properties": "nonsense"})
    assert v.status is Status.UNKNOWN and "Type" in v.message


def test_terraform_resource_keeps_address_and_lines() -> None:
    r = terraform_resource("aws_ebs_volume", {"__start_line__": 5, "__end_line__": 11,
                                              "__address__": "module.m.aws_ebs_volume.v",
                                              "encrypted": [False]}, file="m.tf")
    assert r is not None
    assert (r.kind, r.id, r.attrs["Encrypted"]) == ("ec2.volume", "module.m.aws_ebs_volume.v",
                                                    False)
    assert (r.provenance.file, r.provenance.start_line, r.provenance.end_line) == ("m.tf", 5, 11)
    assert terraform_resource("aws_sqs_queue", {"name": ["q"]}) is None


def test_cloudformation_markers_are_dropped_and_values_coerced() -> None:
    conf = {"Type": "AWS::EC2::LaunchTemplate", "Properties": {
        "LaunchTemplateData": {"InstanceType": "g5.xlarge", "BlockDeviceMappings": [
            {"DeviceName": "/dev/xvda", "Ebs": {"Encrypted": "true", "__startline__": 20,
                                                "__endline__": 20, "__file__": "t.yaml"},
             "__file__": "t.yaml", "__startline__": 19, "__endline__": 21}],
            "__file__": "t.yaml", "__startline__": 17, "__endline__": 21},
        "__file__": "t.yaml", "__startline__": 14, "__endline__": 21,
        "resource_type": "AWS::EC2::LaunchTemplate"}}
    r = cloudformation_resource(conf, logical_id="LT", file="t.yaml")
    assert r is not None and r.id == "LT" and r.kind == "ec2.launch_template"
    assert r.attrs == {"LaunchTemplateData": {"InstanceType": "g5.xlarge", "BlockDeviceMappings": [
        {"DeviceName": "/dev/xvda", "Ebs": {"Encrypted": True}}]}}
    assert (r.provenance.start_line, r.provenance.end_line) == (14, 21)


# -- verdicts --------------------------------------------------------------------------------


def test_ebs_001_decided_by_the_resource_alone() -> None:
    assert tf("EBS-001", "aws_ebs_volume", {"encrypted": [False]})[0] is Status.FAIL
    assert tf("EBS-001", "aws_ebs_volume", {"encrypted": ["false"]})[0] is Status.FAIL
    assert tf("EBS-001", "aws_ebs_volume", {"encrypted": [True]})[0] is Status.PASS
    assert cfn("EBS-001", "AWS::EC2::Volume", {"Encrypted": "false"})[0] is Status.FAIL
    assert cfn("EBS-001", "AWS::EC2::Volume", {"Encrypted": True})[0] is Status.PASS
    assert tf("EBS-001", "aws_instance", {"instance_type": ["g5.xlarge"], "root_block_device": [
        {"encrypted": [False]}]})[0] is Status.FAIL


def test_ebs_001_absent_encrypted_is_unknown_default_encryption_is_unseen() -> None:
    status, message = tf("EBS-001", "aws_ebs_volume", {"size": [10]})
    assert status is Status.UNKNOWN and "one resource at a time" in message
    assert cfn("EBS-001", "AWS::EC2::Volume", {"Size": 10})[0] is Status.UNKNOWN
    # an instance without block devices: its root volume comes from the AMI, unencrypted unless
    # the account encrypts by default
    assert tf("EBS-001", "aws_instance", {"instance_type": ["g5.xlarge"]})[0] is Status.UNKNOWN
    # an instance whose template carries the mappings: decided on the template
    assert tf("EBS-001", "aws_instance", {"launch_template": [{"id": ["lt-1"]}]})[0] \
        is Status.UNKNOWN
    assert tf("EBS-001", "aws_ebs_volume", {"encrypted": ["var.enc"]})[0] is Status.UNKNOWN
    # one explicit false fails even when another device is not known
    assert tf("EBS-001", "aws_launch_template", {"block_device_mappings": [
        {"ebs": [{"encrypted": [False]}]}, {"ebs": [{}]}]})[0] is Status.FAIL


def test_ebs_002_on_the_account_setting() -> None:
    assert tf("EBS-002", "aws_ebs_encryption_by_default", {"enabled": [False]})[0] is Status.FAIL
    assert tf("EBS-002", "aws_ebs_encryption_by_default", {"enabled": [True]})[0] is Status.PASS
    assert tf("EBS-002", "aws_ebs_encryption_by_default", {})[0] is Status.PASS  # default true
    assert tf("EBS-002", "aws_ebs_encryption_by_default", {"enabled": ["var.x"]})[0] \
        is Status.UNKNOWN


SPOT_LT = {"instance_type": ["p4d.24xlarge"], "instance_market_options": [
    {"market_type": ["spot"], "spot_options": [{"max_price": ["30"]}]}]}


def test_spot_policies_with_the_gpuaudit_message() -> None:
    status, message = tf("SPOT-001", "aws_launch_template", SPOT_LT)
    assert status is Status.FAIL and "above the cap" in message and "p4d.24xlarge" in message
    assert tf("SPOT-002", "aws_launch_template", SPOT_LT)[0] is Status.PASS
    low = {**SPOT_LT, "instance_market_options": [
        {"market_type": ["spot"], "spot_options": [{"max_price": ["1"]}]}]}
    assert tf("SPOT-002", "aws_launch_template", low)[0] is Status.FAIL
    assert cfn("SPOT-001", "AWS::EC2::LaunchTemplate", {"LaunchTemplateData": {
        "InstanceType": "p4d.24xlarge", "InstanceMarketOptions": {
            "MarketType": "spot", "SpotOptions": {"MaxPrice": "30"}}}})[0] is Status.FAIL


def test_spot_policies_unknown_without_the_resources_own_type_or_price() -> None:
    # a template without its own type: its groups' types decide
    no_type = {"instance_market_options": SPOT_LT["instance_market_options"]}
    assert tf("SPOT-001", "aws_launch_template", no_type)[0] is Status.UNKNOWN
    unrendered = {**SPOT_LT, "instance_market_options": [
        {"market_type": ["spot"], "spot_options": [{"max_price": ["var.price"]}]}]}
    assert tf("SPOT-001", "aws_launch_template", unrendered)[0] is Status.UNKNOWN
    # not spot: the policy does not apply; checkov gets no verdict
    assert tf("SPOT-001", "aws_launch_template", {"instance_type": ["g5.xlarge"]})[0] \
        is Status.UNKNOWN


def _asg(pct: int, **extra: Any) -> dict[str, Any]:
    dist = {"on_demand_base_capacity": [0], "on_demand_percentage_above_base_capacity": [pct],
            **extra}
    return {"min_size": [0], "max_size": [20], "desired_capacity": [10],
            "mixed_instances_policy": [{"instances_distribution": [dist], "launch_template": [{
                "launch_template_specification": [{"launch_template_id": ["aws_launch_template"
                                                                          ".lt.id"]}],
                "override": [{"instance_type": ["g5.xlarge"]},
                             {"instance_type": ["g5.2xlarge"]}]}]}]}


def test_asg_policies_on_a_group_with_an_inline_mix() -> None:
    assert tf("ASG-001", "aws_autoscaling_group", _asg(100))[0] is Status.FAIL
    assert tf("ASG-001", "aws_autoscaling_group", _asg(30))[0] is Status.PASS
    assert tf("ASG-002", "aws_autoscaling_group", _asg(30))[0] is Status.FAIL  # lowest-price
    good = _asg(30, spot_allocation_strategy=["price-capacity-optimized"])
    assert tf("ASG-002", "aws_autoscaling_group", good)[0] is Status.PASS
    # no spot max price: with require_explicit_cap it counts as on-demand
    assert tf("SPOT-001", "aws_autoscaling_group", good)[0] is Status.FAIL


def test_a_group_without_an_inline_mix_is_unknown() -> None:
    """Its purchase option is its launch template's: gpuaudit with the template says 0 %
    on-demand (spot template), the group alone would say 100 %."""
    conf = {"min_size": [0], "max_size": [4], "desired_capacity": [2],
            "launch_template": [{"id": ["aws_launch_template.spot.id"]}]}
    for policy in ("ASG-001", "ASG-002", "SPOT-001", "SPOT-002"):
        status, _message = tf(policy, "aws_autoscaling_group", conf)
        assert status is Status.UNKNOWN, policy
    assert "launch template" in tf("ASG-001", "aws_autoscaling_group", conf)[1]


def test_parameters_and_switches_come_from_the_gpuaudit_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert tf("SPOT-001", "aws_launch_template", SPOT_LT)[0] is Status.FAIL
    cfg = tmp_path / "elsewhere.yaml"
    cfg.write_text("policies:\n  SPOT-001:\n    max_price_ratio: 1.5\n  EBS-003:\n"
                   "    enabled: true\n  ASG-002:\n    enabled: false\n")
    monkeypatch.setenv(exports.CONFIG_ENV, str(cfg))
    exports.config.cache_clear()
    assert tf("SPOT-001", "aws_launch_template", SPOT_LT)[0] is Status.PASS
    ids = {e.policy_id for e in exports.enabled_exports()}
    assert "EBS-003" in ids and "ASG-002" not in ids


def test_default_exports_leave_off_by_default_policies_off() -> None:
    ids = {e.policy_id for e in exports.enabled_exports()}
    assert ids == {"EBS-001", "EBS-002", "SPOT-001", "SPOT-002", "ASG-001", "ASG-002"}


def test_ebs_003_with_a_customer_key_or_the_unseen_default_key() -> None:
    key = "arn:aws:kms:us-east-1:123456789012:key/abc"
    assert tf("EBS-003", "aws_ebs_volume", {"encrypted": [True], "kms_key_id": [key]})[0] \
        is Status.PASS
    assert tf("EBS-003", "aws_ebs_volume", {"encrypted": [True],
                                            "kms_key_id": ["alias/aws/ebs"]})[0] is Status.FAIL
    assert tf("EBS-003", "aws_ebs_volume", {"encrypted": [True]})[0] is Status.UNKNOWN


def test_check_ids_and_names() -> None:
    for pid, export in exports.EXPORTS.items():
        assert export.check_id == "CKV_GPUAUDIT_" + pid.replace("-", "_")
        assert exports.check_name(export).startswith(pid + ": ")
        assert not export.check_id.startswith(("CKV_AWS_", "CKV2_AWS_"))


def test_readme_lists_what_is_exported_and_what_is_not() -> None:
    from policies import all_policies

    text = CHECKOV_DOC.read_text(encoding="utf-8")
    section = text[text.index("## In short"):]
    section = section[:section.find("\n## ", 5) if "\n## " in section[5:] else None]
    for pid in all_policies():
        row = next((line for line in section.splitlines() if line.startswith(f"| {pid} ")), None)
        assert row is not None, f"{pid} is not in docs/checkov.md's table"
        if pid in exports.EXPORTS:
            assert exports.EXPORTS[pid].check_id in row, pid
        else:
            assert "not exported" in row, pid


def test_the_checks_directory_is_a_package_that_only_checkov_imports() -> None:
    from scanner.integrations.checkov import checks

    folder = Path(checks.__file__).parent
    assert (folder / "__init__.py").is_file()
    modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
    assert modules == ["gpuaudit_checkov_checks.py"]
    assert "checkov" not in sys.modules


def test_a_resource_that_may_not_be_created_gets_no_verdict() -> None:
    """checkov hands a check a resource whose count or for_each it could not expand, and a
    CloudFormation resource without its Condition: the verdict would be on something that
    may not exist (gpuaudit's scan says UNKNOWN there too)."""
    off = {"encrypted": [False]}
    assert tf("EBS-001", "aws_ebs_volume", off)[0] is Status.FAIL
    for key, text in (("count", "var.create ? 1 : 0"), ("for_each", "set()")):
        status, message = tf("EBS-001", "aws_ebs_volume", {**off, key: [text]})
        assert status is Status.UNKNOWN and f"did not expand its {key}" in message, message
    vol = ("EBS-001", "AWS::EC2::Volume", {"Encrypted": False})
    assert cfn(*vol)[0] is Status.FAIL
    undecided = {"Parameters": {"Env": {"Type": "String"}},
                 "Conditions": {"IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]}},
                 "Res": {"Condition": "IsProd"}}
    status, message = cfn(*vol, template=undecided)
    assert status is Status.UNKNOWN and "IsProd" in message, message
    decided = {**undecided, "Conditions": {"IsProd": {"Fn::Equals": ["a", "a"]}}}
    assert cfn(*vol, template=decided)[0] is Status.FAIL  # created: judged
    never = {**undecided, "Conditions": {"IsProd": {"Fn::Equals": ["a", "b"]}}}
    assert cfn(*vol, template=never)[0] is Status.UNKNOWN  # not created: no verdict
