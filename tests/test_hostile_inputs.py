"""Hostile input is bounded and nothing next to it is lost (issue 11, section 3; non-HCL inputs).

FIFOs and other non-regular files, amplifying CloudFormation, malformed plans, absurd numbers,
deep and aliased config files, non-UTF-8 file names, duplicate keys, UTF-16, a K8s ConfigMap that
mentions ``Type: AWS::``, a directory that cannot be listed, an inverted ASG-001 band."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reports import render
from scanner.engine.config import ConfigError, load_config
from scanner.findings.schema import validate_report
from scanner.model import SourceResult, Unknown
from scanner.sources.cloudformation.reader import MAX_STRING, load_template
from scanner.sources.scan import scan_paths
from scanner.sources.terraform.plan.reader import load_plan

ROOT = Path(__file__).resolve().parents[1]
CFN_EXAMPLE = ROOT / "scanner" / "cli" / "demo" / "examples" / "cloudformation" / "gpu-training.yaml"
PLAN_A = ROOT / "tests" / "fixtures" / "terraform" / "gpu_estate_a" / "plan.json"


def gpuaudit(*args: str, cwd: Path | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode != 1 or "error" not in proc.stderr.lower(), proc.stderr


def strict_json(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


# ------------------------------------------------------------------------- non-regular files


def test_fifos_are_reported_not_read_and_their_neighbours_are_scanned(tmp_path: Path) -> None:
    (tmp_path / "template.yaml").write_text(CFN_EXAMPLE.read_text())
    os.mkfifo(tmp_path / "plan.json")
    os.mkfifo(tmp_path / "stack.yaml")
    proc = gpuaudit("scan", str(tmp_path), "--format", "json", "--fail-on", "none",
                    timeout=60)
    no_traceback(proc)
    assert proc.returncode == 2
    doc = strict_json(proc.stdout)
    reasons = {Path(e["path"]).name: e["reason"] for e in doc["errors"]}
    assert reasons == {
        "plan.json": "cannot read: a named pipe (FIFO), not a regular file",
        "stack.yaml": "cannot read: a named pipe (FIFO), not a regular file",
    }
    assert {f["resource"]["id"] for f in doc["findings"]} >= {"ScratchVolume", "TrainingGroup"}


def test_a_fifo_named_on_the_command_line_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "plan.json")
    proc = gpuaudit("scan", str(tmp_path / "plan.json"), str(CFN_EXAMPLE), "--format", "json",
                    "--fail-on", "none", timeout=60)
    no_traceback(proc)
    assert proc.returncode == 2
    doc = strict_json(proc.stdout)
    assert [e["reason"] for e in doc["errors"]] == [
        "cannot read: a named pipe (FIFO), not a regular file"]
    assert doc["findings"]


@pytest.mark.parametrize("option", ["--config", "--baseline"])
def test_a_fifo_as_config_or_baseline_is_a_usage_error(tmp_path: Path, option: str) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    proc = gpuaudit("scan", str(CFN_EXAMPLE), option, str(fifo), timeout=60)
    no_traceback(proc)
    assert proc.returncode == 2
    assert "a named pipe (FIFO), not a regular file" in proc.stderr
    assert str(fifo) in proc.stderr


def test_terraform_init_records_that_are_not_regular_files_do_not_hang(tmp_path: Path) -> None:
    # .terraform/environment and .terraform/modules/modules.json were open()ed as they were: a
    # FIFO there (or a committed link to /dev/zero) hung the scan or filled memory
    main = 'resource "aws_ebs_volume" "v" {\n  availability_zone = "us-east-1a"\n  size = 1\n}\n'
    for name in ("fifo", "zero"):
        (tmp_path / name / ".terraform" / "modules").mkdir(parents=True)
        (tmp_path / name / "main.tf").write_text(main)
    os.mkfifo(tmp_path / "fifo" / ".terraform" / "environment")
    os.mkfifo(tmp_path / "fifo" / ".terraform" / "modules" / "modules.json")
    os.symlink("/dev/zero", tmp_path / "zero" / ".terraform" / "modules" / "modules.json")
    os.symlink("/dev/zero", tmp_path / "zero" / ".terraform" / "environment")
    plan = tmp_path / "plan"
    (plan / ".terraform" / "modules").mkdir(parents=True)
    (plan / "plan.json").write_text(PLAN_A.read_text())
    os.mkfifo(plan / "main.tf")
    os.mkfifo(plan / ".terraform" / "modules" / "modules.json")
    proc = gpuaudit("scan", str(tmp_path / "fifo"), str(tmp_path / "zero"),
                    str(plan / "plan.json"), "--format", "json", "--fail-on", "none",
                    timeout=60)
    no_traceback(proc)
    doc = strict_json(proc.stdout)
    ids = [f["resource"]["id"] for f in doc["findings"]]
    assert ids.count("aws_ebs_volume.v") == 2 and "aws_ebs_volume.legacy" in ids


@pytest.mark.parametrize("option", ["--catalog", "--utilization", "--utilization KEY="])
def test_a_fifo_as_catalog_or_utilization_does_not_hang(tmp_path: Path, option: str) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    name, _, key = option.partition(" ")
    proc = gpuaudit("scan", str(CFN_EXAMPLE), name, key + str(fifo), "--format", "json",
                    timeout=60)
    no_traceback(proc)
    assert proc.returncode == 2
    assert "a named pipe (FIFO), not a regular file" in proc.stderr + proc.stdout


@pytest.mark.parametrize("price", ["Infinity", "NaN", "0", "-1", "1e300"])
def test_a_catalogue_price_must_be_positive_and_finite(tmp_path: Path, price: str) -> None:
    from scanner.catalog import CATALOG_FILE, CatalogError, load_catalog

    doc = json.loads(CATALOG_FILE.read_text())
    doc["instances"]["g5.xlarge"]["prices"] = {"us-east-1": "PRICE"}
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(doc).replace('"PRICE"', price))
    with pytest.raises(CatalogError, match=r"g5\.xlarge"):
        load_catalog(path)
    assert load_catalog(CATALOG_FILE).regional_price("g5.xlarge", "us-east-1")


def test_report_merge_and_render_of_a_fifo(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    proc = gpuaudit("scan", str(CFN_EXAMPLE), "--format", "json", "-o", str(good),
                    "--deterministic")
    assert proc.returncode == 1, proc.stderr
    fifo = tmp_path / "shard.json"
    os.mkfifo(fifo)
    merged = tmp_path / "merged.json"
    proc = gpuaudit("report", "merge", str(good), str(fifo), "--format", "json", "-o",
                    str(merged), timeout=60)
    no_traceback(proc)
    assert proc.returncode == 2
    doc = strict_json(merged.read_text())
    assert doc["errors"] == [{"kind": "input", "path": str(fifo),
                              "reason": "cannot read: a named pipe (FIFO), not a regular file"}]
    assert doc["findings"]
    proc = gpuaudit("report", "render", str(fifo), "--format", "markdown", timeout=60)
    no_traceback(proc)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr


def test_a_report_with_nan_is_not_read_back(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": 1, "findings": [], "x": NaN}')
    proc = gpuaudit("report", "render", str(bad), "--format", "json")
    no_traceback(proc)
    assert proc.returncode == 2 and "NaN is not JSON" in proc.stderr


# ------------------------------------------------------------------- CloudFormation amplification


def _amplifying_template(copies: int, param_len: int) -> str:
    refs = ", ".join(["!Ref Big"] * copies)
    return (
        "AWSTemplateFormatVersion: '2010-09-09'\n"
        f"Parameters:\n  Big: {{Type: String, Default: {'x' * param_len}}}\n"
        "Resources:\n"
        "  Vol:\n    Type: AWS::EC2::Volume\n    Properties:\n"
        "      Size: 10\n      AvailabilityZone: us-east-1a\n"
        f"      Tags: [{{Key: Name, Value: !Join ['', [{refs}]]}}]\n"
        "  Sub:\n    Type: AWS::EC2::Volume\n    Properties:\n"
        f"      Description: !Sub ['{'${B}' * copies}', {{B: !Ref Big}}]\n"
        "  Fine:\n    Type: AWS::EC2::Volume\n    Properties:\n"
        "      Size: 10\n      Encrypted: true\n"
    )


def test_join_and_sub_amplification_is_an_input_error_naming_the_key(tmp_path: Path) -> None:
    # 8 KB of template would build two strings of 10 MB each
    p = tmp_path / "amp.yaml"
    p.write_text(_amplifying_template(copies=2_500, param_len=4_096))
    assert p.stat().st_size < 40_000
    result = load_template(p)
    reasons = sorted((e.line, e.reason) for e in result.errors)
    assert reasons == [
        (5, "resource Vol, property Tags: Fn::Join builds a string of 10,240,000 characters, "
            f"more than the {MAX_STRING // 1024} KiB limit"),
        (11, "resource Sub, property Description: Fn::Sub builds a string of more than "
             f"266,240 characters, more than the {MAX_STRING // 1024} KiB limit"),
    ]
    res = {r.id: r for r in result.resources}
    assert set(res) == {"Vol", "Sub", "Fine"}  # the rest is still read
    assert isinstance(res["Vol"].attrs["Tags"], Unknown)
    assert res["Vol"].attrs["Size"] == 10
    assert res["Fine"].attrs["Encrypted"] is True
    assert sum(len(repr(r.attrs)) for r in result.resources) < 10_000


def test_mapping_lookups_that_fan_out_exhaust_the_work_budget(tmp_path: Path) -> None:
    """Mappings whose values look each other up: 10 levels of 10 lookups = 10^10 values."""
    lines = ["Mappings:"]
    for level in range(10):
        inner = ", ".join([f"!FindInMap [M{level + 1}, a, b]"] * 10) if level < 9 else "x"
        lines.append(f"  M{level}: {{a: {{b: [{inner}]}}}}")
    lines += ["Resources:",
              "  Vol:\n    Type: AWS::EC2::Volume\n    Properties:\n      Size: 10",
              "  Lt:\n    Type: AWS::EC2::LaunchTemplate\n    Properties:\n"
              "      LaunchTemplateData: !FindInMap [M0, a, b]",
              "  After:\n    Type: AWS::EC2::Volume\n    Properties:\n      Size: 20"]
    p = tmp_path / "fan.yaml"
    p.write_text("\n".join(lines) + "\n")
    result = load_template(p)
    assert len(result.errors) == 1
    err = result.errors[0]
    assert err.path == str(p) and err.line == 17
    assert err.reason.startswith("resource Lt: evaluating the template takes more than")
    assert err.reason.endswith("it and the resources after it are not read")
    assert [r.id for r in result.resources] == ["Vol"]


def test_the_rest_of_the_directory_is_reported_past_a_budget(tmp_path: Path) -> None:
    (tmp_path / "amp.yaml").write_text(_amplifying_template(copies=2_500, param_len=4_096))
    (tmp_path / "ok.yaml").write_text(CFN_EXAMPLE.read_text())
    result = scan_paths([tmp_path])
    assert {Path(e.path).name for e in result.errors} == {"amp.yaml"}
    assert {r.id for r in result.resources} >= {"ScratchVolume", "TrainingGroup", "Fine"}


# ----------------------------------------------------------------------------- plan structure


def _plan(tmp_path: Path, mutate: Any) -> SourceResult:
    plan = json.loads(PLAN_A.read_text())
    mutate(plan)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    return load_plan(path)


@pytest.mark.parametrize(("mutate", "reason"), [
    (lambda p: p.__setitem__("planned_values", []),
     "planned_values is a list, not an object"),
    (lambda p: p["planned_values"].__setitem__("root_module", None),
     "planned_values.root_module is null, not an object"),
    (lambda p: p["planned_values"].pop("root_module"),
     "planned_values has no root_module"),
    (lambda p: p["planned_values"]["root_module"].__setitem__("resources", None),
     "planned_values.root_module.resources is null, not a list"),
    (lambda p: p["planned_values"]["root_module"].__setitem__("child_modules", {}),
     "planned_values.root_module.child_modules is an object, not a list"),
    (lambda p: (p.pop("planned_values"), p.__setitem__("resource_changes", None)),
     "resource_changes is null, not a list"),
    (lambda p: p.__setitem__("configuration", []),
     "configuration is a list, not an object"),
])
def test_a_plan_of_the_wrong_shape_is_an_input_error(tmp_path: Path, mutate: Any,
                                                      reason: str) -> None:
    result = _plan(tmp_path, mutate)
    assert [(e.path, e.reason) for e in result.errors] == [
        (str(tmp_path / "plan.json"), f"malformed Terraform plan: {reason}")]


def test_modules_nested_more_than_100_deep_are_an_input_error(tmp_path: Path) -> None:
    def nest(plan: dict[str, Any]) -> None:
        root = plan["planned_values"]["root_module"]
        leaf = {"address": "module.deep", "resources": [
            {"address": "module.deep.aws_ebs_volume.v", "mode": "managed",
             "type": "aws_ebs_volume", "name": "v", "values": {"encrypted": False}}]}
        for _ in range(101):
            leaf = {"address": "module.deep", "child_modules": [leaf]}
        root.setdefault("child_modules", []).append(leaf)

    result = _plan(tmp_path, nest)
    assert len(result.errors) == 1
    reason = result.errors[0].reason
    assert reason.startswith("malformed Terraform plan: planned_values.root_module.child_modules[")
    assert reason.endswith("modules nested more than 100 deep are not read")
    assert result.resources  # the rest of the plan is read


# ----------------------------------------------------------------------------------- numbers


ABSURD_CFN = """\
Resources:
  Big:
    Type: AWS::EC2::Volume
    Properties:
      Size: 1e308
      Iops: .nan
      Throughput: .inf
      AvailabilityZone: us-east-1a
      Tags: [{Key: n, Value: 123456789012345678901234567890}]
  Group:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      MinSize: "99999999999999999999999999"
      MaxSize: 5
      DesiredCapacity: 1e400
      MixedInstancesPolicy:
        InstancesDistribution:
          OnDemandPercentageAboveBaseCapacity: -.inf
          SpotMaxPrice: "1e308"
        LaunchTemplate:
          LaunchTemplateSpecification: {LaunchTemplateName: lt, Version: "1"}
          Overrides: [{InstanceType: g5.xlarge, WeightedCapacity: "1e999"}]
"""


def test_absurd_numbers_in_templates_become_unknown(tmp_path: Path) -> None:
    p = tmp_path / "absurd.yaml"
    p.write_text(ABSURD_CFN)
    result = load_template(p)
    assert result.errors == []
    res = {r.id: r for r in result.resources}
    for key in ("Size", "Iops", "Throughput"):
        assert isinstance(res["Big"].attrs[key], Unknown), key
    group = res["Group"].attrs
    for value in (group["MinSize"], group["DesiredCapacity"],
                  group["MixedInstancesPolicy"]["InstancesDistribution"][
                      "OnDemandPercentageAboveBaseCapacity"],
                  group["MixedInstancesPolicy"]["InstancesDistribution"]["SpotMaxPrice"],
                  group["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"][0][
                      "WeightedCapacity"]):
        assert isinstance(value, Unknown), value
    assert group["MaxSize"] == 5


def test_absurd_numbers_in_json_templates_and_plans(tmp_path: Path) -> None:
    p = tmp_path / "absurd.json"
    p.write_text('{"Resources": {"V": {"Type": "AWS::EC2::Volume", "Properties": '
                 '{"Size": NaN, "Iops": Infinity, "Throughput": 1e999, "MultiAttachEnabled": '
                 f'false, "AvailabilityZone": "us-east-1a", "X": {"9" * 5000}}}}}}}}}')
    result = load_template(p)
    assert result.errors == []
    attrs = result.resources[0].attrs
    assert all(isinstance(attrs[k], Unknown) for k in ("Size", "Iops", "Throughput", "X"))

    plan = json.loads(PLAN_A.read_text())
    vol = next(r for r in plan["planned_values"]["root_module"]["resources"]
               if r["type"] == "aws_ebs_volume")
    text = json.dumps(plan).replace(json.dumps(vol["address"]), json.dumps(vol["address"]), 1)
    vol_json = json.dumps(vol)
    patched = dict(vol, values={**vol["values"], "size": "__SIZE__", "iops": "__IOPS__"})
    text = text.replace(vol_json, json.dumps(patched)).replace('"__SIZE__"', "NaN") \
        .replace('"__IOPS__"', "1" + "0" * 400)
    path = tmp_path / "plan.json"
    path.write_text(text)
    planned = load_plan(path)
    assert planned.errors == []
    got = next(r for r in planned.resources if r.id == vol["address"])
    assert isinstance(got.attrs.get("Size"), Unknown) or "Size" not in got.attrs
    assert isinstance(got.attrs.get("Iops"), Unknown)


def test_absurd_numbers_never_reach_json_or_sarif_as_infinity(tmp_path: Path) -> None:
    (tmp_path / "absurd.yaml").write_text(ABSURD_CFN + """\
  Lt:
    Type: AWS::EC2::LaunchTemplate
    Properties:
      LaunchTemplateName: lt
      LaunchTemplateData:
        InstanceType: g5.xlarge
        InstanceMarketOptions: {MarketType: spot, SpotOptions: {MaxPrice: "1e308"}}
        BlockDeviceMappings: [{DeviceName: /dev/sda1, Ebs: {VolumeSize: .inf}}]
""")
    for fmt in ("json", "sarif"):
        proc = gpuaudit("scan", str(tmp_path), "--format", fmt, "--fail-on", "none")
        no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        doc = strict_json(proc.stdout)
        if fmt == "json":
            assert validate_report(doc) == []
            assert doc["findings"]


# ------------------------------------------------------------------------------ crashes, exit 1


def test_a_non_utf8_file_name_is_written_not_a_crash(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.yaml")
    (tmp_path / name).write_text(CFN_EXAMPLE.read_text())
    out = tmp_path / os.fsdecode(b"r\xff.json")
    proc = gpuaudit("scan", name, "--format", "json", "-o", str(out), "--fail-on", "none",
                    cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(out.read_text(encoding="utf-8"))
    assert doc["inputs"]["paths"] == ["caf\\xe9.yaml"]
    assert {f["location"]["file"] for f in doc["findings"]} == {"caf\\xe9.yaml"}
    for fmt in ("table", "sarif", "markdown", "html", "csv", "junit"):
        proc = gpuaudit("scan", name, "--format", fmt, "--fail-on", "none", cwd=tmp_path)
        no_traceback(proc)
        assert proc.returncode == 0, (fmt, proc.stderr)


def test_a_deep_config_file_is_a_config_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("policies: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n")
    proc = gpuaudit("scan", str(CFN_EXAMPLE), "--config", str(deep))
    no_traceback(proc)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"gpuaudit: error: {deep}: line 1: nested deeper than 32 levels"


@pytest.mark.parametrize("value", ["{a = " * 5_000 + "1" + "}" * 5_000,
                                   "[" * 5_000 + "]" * 5_000, "{a = " * 40 + "1" + "}" * 40])
def test_a_deep_pyproject_config_is_a_config_error(tmp_path: Path, value: str) -> None:
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text(f"[tool.gpuaudit]\npolicies = {value}\n")
    with pytest.raises(ConfigError, match="nested"):
        load_config(cfg)


def test_numbers_are_sane_in_translate_model_and_policies() -> None:
    from policies.common import to_int, to_price
    from scanner.model import Provenance, SourceKind, jsonable
    from scanner.sources.terraform.translate import translate

    prov = Provenance(SourceKind.TERRAFORM_PLAN, "p.json", 1, 1)
    (vol,) = translate("aws_ebs_volume", "aws_ebs_volume.v",
                       {"size": float("inf"), "iops": 10**400, "throughput": "1e308",
                        "availability_zone": "us-east-1a"}, provenance=prov, scope="s")
    assert all(isinstance(vol.attrs[k], Unknown) for k in ("Size", "Iops", "Throughput"))
    (req,) = translate("aws_spot_instance_request", "aws_spot_instance_request.r",
                       {"spot_price": "nan", "instance_type": "g5.xlarge"}, provenance=prov,
                       scope="s")
    assert isinstance(req.attrs["SpotPrice"], Unknown)
    assert jsonable({"a": float("nan"), "b": [float("-inf")]}) == {
        "a": "UNKNOWN (not a finite number)", "b": ["UNKNOWN (not a finite number)"]}
    for bad in ("inf", "nan", 1e308, 10**400, "1e999"):
        assert isinstance(to_int(bad), Unknown), bad
        assert isinstance(to_price(bad), Unknown), bad
    assert to_int("3") == 3 and to_price("0.5") == 0.5


def test_a_plan_number_of_thousands_of_digits_is_an_input_error(tmp_path: Path) -> None:
    text = PLAN_A.read_text().replace('"format_version"', f'"x": {"9" * 5000}, "format_version"',
                                      1)
    path = tmp_path / "plan.json"
    path.write_text(text)
    result = load_plan(path)
    assert [e.reason.split(":")[0] for e in result.errors] == ["invalid JSON"]
    assert "4300 digits" in result.errors[0].reason


def test_an_internal_error_exits_2_with_one_line() -> None:
    code = ("import scanner.cli.main as c\n"
            "def boom(**_kw):\n    raise ZeroDivisionError('division by zero')\n"
            "c.cli.main = boom\nc.main()\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert proc.stderr == ("gpuaudit: internal error: ZeroDivisionError: division by zero; "
                           "please report\n")


# ----------------------------------------------------------------------------------- config


def test_config_alias_bomb_is_refused_naming_the_line(tmp_path: Path) -> None:
    lines = ["a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for n, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[n]
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as exc:
        load_config(bomb)
    assert str(exc.value) == (f"{bomb}: line 5: the document expands to more than 100,000 "
                              "values (YAML aliases?)")


def test_config_small_aliases_still_work(tmp_path: Path) -> None:
    cfg = tmp_path / "ok.yaml"
    cfg.write_text("mutes:\n  - &m {policy: EBS-001, resource: 'a*', reason: lab}\n"
                   "  - {<<: *m, resource: 'b*'}\n")
    assert [m["resource"] for m in load_config(cfg).mutes] == ["a*", "b*"]


def test_config_duplicate_keys_are_an_error_naming_the_line(tmp_path: Path) -> None:
    cfg = tmp_path / "dup.yaml"
    cfg.write_text("fail_on: high\npolicies:\n  SPOT-001: {enabled: true}\n"
                   "  SPOT-001: {enabled: false}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(cfg)
    assert str(exc.value) == (f"{cfg}: line 4: not valid YAML: duplicate key 'SPOT-001' (each "
                              "key may appear once)")


@pytest.mark.parametrize(("band", "message"), [
    ("{min: 60, max: 30}", "min 60 is greater than max 30"),
    ("{min: 50}", "min 50 is greater than max 40 (with the default of the other)"),
    ("{min: 10, max: 400}", None),
])
def test_inverted_asg_band_is_a_config_error(tmp_path: Path, band: str,
                                             message: str | None) -> None:
    cfg = tmp_path / "band.yaml"
    cfg.write_text(f"policies:\n  ASG-001:\n    on_demand_percent: {band}\n")
    with pytest.raises(ConfigError) as exc:
        load_config(cfg)
    key = "policies.ASG-001.on_demand_percent"
    if message is None:
        assert str(exc.value) == (f"{cfg}: key '{key}.max': a percentage is at most 100, "
                                  "got 400")
    else:
        assert str(exc.value) == f"{cfg}: key '{key}': {message}"


def test_a_valid_band_and_finite_numbers(tmp_path: Path) -> None:
    cfg = tmp_path / "ok.yaml"
    cfg.write_text("policies:\n  ASG-001:\n    on_demand_percent: {min: 30, max: 30}\n")
    assert load_config(cfg).policies["ASG-001"]["on_demand_percent"] == {"min": 30, "max": 30}
    cfg.write_text("policies:\n  SPOT-001:\n    max_price_ratio: .inf\n")
    with pytest.raises(ConfigError, match="max_price_ratio"):
        load_config(cfg)


# ------------------------------------------------------------------------------ smaller ones


CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfn-snippets
data:
  template.yaml: |
    Resources:
      Vol:
        Type: AWS::EC2::Volume
---
apiVersion: v1
kind: Service
metadata: {name: x}
"""


def test_a_configmap_that_mentions_a_resource_type_is_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "configmap.yaml").write_text(CONFIGMAP)
    (tmp_path / "single.yaml").write_text(CONFIGMAP.split("---")[0])
    (tmp_path / "helm.yaml").write_text("{{- if .Values.x }}\nkind: X\ndata:\n"
                                        "  t: 'Type: AWS::EC2::Volume'\n{{- end }}\n")
    (tmp_path / "real.yaml").write_text(CFN_EXAMPLE.read_text())
    result = scan_paths([tmp_path])
    assert result.errors == []
    assert {r.scope for r in result.resources} == {str(tmp_path / "real.yaml")}


def test_an_unparseable_template_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("AWSTemplateFormatVersion: '2010-09-09'\n"
                                          "Resources:\n  V: [\n")
    (tmp_path / "broken.json").write_text('{"Resources": {"V": {"Type": "AWS::EC2::Volume"}')
    result = scan_paths([tmp_path])
    assert sorted(Path(e.path).name for e in result.errors) == ["broken.json", "broken.yaml"]


@pytest.mark.parametrize(("name", "text", "line", "key"), [
    ("dup.yaml", "Resources:\n  V:\n    Type: AWS::EC2::Volume\n    Properties:\n"
                 "      Encrypted: true\n      Encrypted: false\n", 6, "Encrypted"),
    ("dup.json", '{\n "Resources": {\n  "V": {"Type": "AWS::EC2::Volume"},\n'
                 '  "V": {"Type": "AWS::EC2::Instance"}\n }\n}\n', 4, "V"),
])
def test_duplicate_keys_in_templates_are_input_errors(tmp_path: Path, name: str, text: str,
                                                      line: int, key: str) -> None:
    p = tmp_path / name
    p.write_text(text)
    result = load_template(p)
    assert [(e.line, e.reason) for e in result.errors] == [
        (line, f"duplicate key {key!r} (CloudFormation rejects a key written twice)")]
    assert result.resources == []


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_templates_are_read(tmp_path: Path, encoding: str) -> None:
    text = CFN_EXAMPLE.read_text()
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):
        bom = codecs.BOM_UTF16_LE if encoding.endswith("le") else codecs.BOM_UTF16_BE
        data = bom + data
    (tmp_path / "t.yaml").write_bytes(data)
    result = scan_paths([tmp_path])
    assert result.errors == []
    assert {r.id for r in result.resources} == {r.id for r in load_template(CFN_EXAMPLE).resources}


def test_a_utf16_plan_without_bom_is_read(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_bytes(PLAN_A.read_text().encode("utf-16-le"))
    result = scan_paths([tmp_path / "plan.json"])
    assert result.errors == []
    assert len(result.resources) == len(load_plan(PLAN_A).resources)


def test_a_directory_that_cannot_be_listed_is_reported_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (tmp_path / "main.tf").write_text('resource "aws_ebs_volume" "v" {\n  size = 1\n}\n')
    (tmp_path / "t.yaml").write_text(CFN_EXAMPLE.read_text())
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = scan_paths([tmp_path])
    assert [(e.path, e.reason) for e in result.errors] == [
        (str(locked), "cannot read directory: Permission denied")]
    assert result.resources


def test_no_input_crashes_a_renderer() -> None:
    """Every renderer takes a document with hostile strings (the redaction step cleans it)."""
    from scanner.findings.report import assemble

    doc = assemble(findings=[], errors=[{"kind": "input", "path": "\udcff\n=1+1",
                                         "reason": "@team \x1b[31m"}],
                   notices=[], inputs={"paths": ["\udcfe"]},
                   catalog={"source": "x", "as_of": "2026-01-01"}, coverage=[], passed=None,
                   resources=0, deterministic=True)
    for fmt in ("table", "json", "html", "sarif", "junit", "markdown", "csv"):
        render(fmt, doc).encode("utf-8")


# Python's int() and float() also read "1_000", Unicode digits and blanks; AWS, CloudFormation
# and terraform do not: such a "number" is not one (a price of "1_000" was judged as $1000/h).
PYTHON_ONLY_NUMBERS = ("1_000", "\u0661\u0662", "\uff11", "1_0.5")


@pytest.mark.parametrize("text", PYTHON_ONLY_NUMBERS)
def test_python_only_number_spellings_are_not_numbers(tmp_path: Path, text: str) -> None:
    from scanner.compute.values import to_int, to_price
    from scanner.sources.terraform.hcl.values import EvalError, to_number

    assert isinstance(to_price(text), Unknown)
    assert isinstance(to_int(text), Unknown)
    with pytest.raises(EvalError):
        to_number(text)
    p = tmp_path / "t.yaml"
    p.write_text("Resources:\n  V:\n    Type: AWS::EC2::Volume\n    Properties:\n"
                 f"      Size: '{text}'\n      AvailabilityZone: us-east-1a\n"
                 "  Spot:\n    Type: AWS::EC2::LaunchTemplate\n    Properties:\n"
                 "      LaunchTemplateData:\n        InstanceType: g5.xlarge\n"
                 "        InstanceMarketOptions:\n          MarketType: spot\n"
                 f"          SpotOptions: {{MaxPrice: '{text}'}}\n", encoding="utf-8")
    res = {r.id: r for r in load_template(p).resources}
    assert not isinstance(res["V"].attrs.get("Size"), int | float)
    doc = json.loads(gpuaudit("scan", str(p), "--format", "json", "--policy", "SPOT-001",
                              "--include-passed", "-q").stdout)
    assert [f["status"] for f in doc["findings"]] == ["UNKNOWN"]


def test_plain_number_spellings_still_are(tmp_path: Path) -> None:
    from scanner.compute.values import to_int, to_price

    assert to_price("0.50") == 0.5 and to_price(" 1e-1 ") == 0.1 and to_int("12") == 12
