"""Terraform as public repositories write it (issue 11, section 2): each case is valid
Terraform that once gave an input error or a wrong verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.engine.evaluate import evaluate
from scanner.model import Status, Unknown
from scanner.sources.terraform.hcl.reader import instance_values, load_terraform_dir


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def results(path: Path, *policies: str) -> set[tuple[str, str, Status]]:
    result = load_terraform_dir([path])
    assert result.errors == [], result.errors
    findings = evaluate(result.resources, policy_ids=policies)
    return {(f.policy_id, f.resource["id"], f.status) for f in findings}


# -- for_each over a conditional: terraform unifies both results' types ---------------------


def test_conditional_set_or_empty_tuple_is_a_set(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
variable "on" { default = false }
variable "off" { default = true }
resource "aws_ebs_volume" "none" {
  for_each = var.on ? toset(["a"]) : []
  size     = 1
}
resource "aws_ebs_volume" "one" {
  for_each  = var.off ? toset(["a"]) : []
  size      = 1
  encrypted = true
}
resource "aws_ebs_volume" "flipped" {
  for_each = var.on ? [] : toset(["b"])
  size     = 1
}
module "m" {
  source   = "./m"
  for_each = var.on ? toset(["x"]) : []
}
resource "aws_ebs_volume" "mixed" {
  size = var.off ? 1 : "2"
  tags = { Name = var.off ? 7 : "seven" }
}
""",
            "m/main.tf": 'resource "aws_ebs_volume" "inner" { size = 1 }\n',
        },
    )
    out, result = instance_values([tmp_path])
    assert result.errors == []
    assert sorted(out) == ['aws_ebs_volume.flipped["b"]', "aws_ebs_volume.mixed",
                           'aws_ebs_volume.one["a"]']
    assert out["aws_ebs_volume.mixed"][1]["tags"] == {"Name": "7"}
    assert results(tmp_path, "EBS-001") == {
        ("EBS-001", 'aws_ebs_volume.one["a"]', Status.PASS),
        ("EBS-001", 'aws_ebs_volume.flipped["b"]', Status.FAIL),
        ("EBS-001", "aws_ebs_volume.mixed", Status.FAIL),
    }


def test_conditional_tuples_stay_lists_and_for_each_over_them_is_an_error(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {"main.tf": 'resource "aws_ebs_volume" "v" {\n  for_each = true ? ["a"] : []\n}\n'},
    )
    _, result = instance_values([tmp_path])
    assert [e.line for e in result.errors] == [2]
    assert "must be a map or a set of strings" in result.errors[0].reason


# -- number literals with an exponent ------------------------------------------------------


def test_exponent_literals(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
resource "aws_ebs_volume" "a" {
  size = 1e3
  iops = 2E+1
  tags = { x = "1e3 ${1e3}", y = jsonencode([1.5e-1, -1e2]) }
}
resource "aws_ebs_volume" "b" {
  count = 1E0
  size  = 10
}
""",
        },
    )
    out, result = instance_values([tmp_path])
    assert result.errors == []
    a = out["aws_ebs_volume.a"][1]
    assert (a["size"], a["iops"]) == (1000, 20)
    assert a["tags"] == {"x": "1e3 1000", "y": "[0.15,-100]"}
    assert out["aws_ebs_volume.b[0]"][1]["size"] == 10


# -- resource.<type>.<name> ----------------------------------------------------------------


def test_explicit_resource_prefix(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
resource "aws_vpc" "main" { cidr_block = "10.0.0.0/16" }
resource "aws_subnet" "s" {
  vpc_id     = resource.aws_vpc.main.id
  cidr_block = cidrsubnet(resource.aws_vpc.main.cidr_block, 8, 1)
}
resource "aws_vpc_endpoint" "s3" {
  vpc_id            = resource.aws_vpc.main.id
  service_name      = "com.amazonaws.us-east-1.s3"
  vpc_endpoint_type = "Gateway"
}
resource "aws_instance" "gpu" {
  instance_type = "p4d.24xlarge"
  subnet_id     = resource.aws_subnet.s.id
}
""",
        },
    )
    out, result = instance_values([tmp_path])
    assert result.errors == []
    assert result.notices == []
    assert out["aws_subnet.s"][1]["cidr_block"] == "10.0.1.0/24"
    assert results(tmp_path, "VPC-001") == {("VPC-001", "aws_vpc.main", Status.PASS)}


# -- unknown count / for_each: existence is unknown ------------------------------------------


def test_unknown_count_makes_existence_unknown(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
variable "enable" { type = bool }
resource "aws_ebs_encryption_by_default" "on" {
  count   = var.enable ? 1 : 0
  enabled = true
}
resource "aws_ebs_volume" "leans_on_default" {
  size = 10
}
resource "aws_ebs_volume" "maybe" {
  for_each  = var.enable ? toset(["a"]) : toset([])
  size      = 10
  encrypted = false
}
module "m" {
  source = "./m"
  count  = var.enable ? 1 : 0
}
""",
            "m/main.tf": 'resource "aws_ebs_volume" "inner" {\n  encrypted = true\n}\n',
        },
    )
    result = load_terraform_dir([tmp_path])
    exists = {r.id: r.exists for r in result.resources}
    assert exists["aws_ebs_volume.leans_on_default"] is True
    for maybe in ("aws_ebs_encryption_by_default.on", "aws_ebs_volume.maybe",
                  "module.m.aws_ebs_volume.inner"):
        assert isinstance(exists[maybe], Unknown), maybe
        assert "var.enable" in exists[maybe].reason
    findings = evaluate(result.resources, policy_ids=("EBS-001", "EBS-002"))
    got = {(f.policy_id, f.resource["id"]): f.status for f in findings}
    assert got == {
        ("EBS-002", "aws_ebs_encryption_by_default.on"): Status.UNKNOWN,
        ("EBS-001", "aws_ebs_volume.leans_on_default"): Status.UNKNOWN,
        ("EBS-001", "aws_ebs_volume.maybe"): Status.UNKNOWN,
        ("EBS-001", "module.m.aws_ebs_volume.inner"): Status.UNKNOWN,
    }


def test_known_count_keeps_existence_known(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
resource "aws_ebs_encryption_by_default" "on" {
  count   = 1
  enabled = true
}
resource "aws_ebs_volume" "leans_on_default" { size = 10 }
""",
        },
    )
    assert results(tmp_path, "EBS-001", "EBS-002") == {
        ("EBS-002", "aws_ebs_encryption_by_default.on[0]", Status.PASS),
        ("EBS-001", "aws_ebs_volume.leans_on_default", Status.PASS),
    }


# -- one module under two root modules ----------------------------------------------------


def test_a_module_under_two_roots_gives_two_findings_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from click.testing import CliRunner

    from scanner.cli.main import cli
    from scanner.findings.schema import validate_report

    write(
        tmp_path,
        {
            "modules/disk/main.tf": 'resource "aws_ebs_volume" "d" {\n  size = 1\n}\n',
            "envs/prod/main.tf": 'module "disk" {\n  source = "../../modules/disk"\n}\n',
            "envs/dev/main.tf": 'module "disk" {\n  source = "../../modules/disk"\n}\n',
        },
    )
    monkeypatch.chdir(tmp_path)

    def gpuaudit(*args: str) -> None:
        res = CliRunner().invoke(cli, [*args, "--deterministic", "-q"])
        assert res.exit_code == 1, res.output  # EBS-001 is high

    gpuaudit("scan", "envs/prod", "--format", "json", "-o", "prod.json", "--policy", "EBS-001")
    gpuaudit("scan", "envs/dev", "--format", "json", "-o", "dev.json", "--policy", "EBS-001")
    gpuaudit("scan", "envs", "--format", "json", "--format", "sarif", "--output-dir", "both",
             "--policy", "EBS-001")
    both = json.loads(Path("both/report.json").read_text())
    assert validate_report(both) == []
    fails = both["findings"]
    assert sorted(
        (f["resource"]["address"], f["resource"]["root"], f["location"]) for f in fails
    ) == [
        ("module.disk.aws_ebs_volume.d", "envs/dev",
         {"file": "modules/disk/main.tf", "start_line": 1, "end_line": 3, "root": "envs/dev"}),
        ("module.disk.aws_ebs_volume.d", "envs/prod",
         {"file": "modules/disk/main.tf", "start_line": 1, "end_line": 3, "root": "envs/prod"}),
    ]
    assert len({f["id"] for f in fails}) == 2
    sarif = json.loads(Path("both/report.sarif").read_text())
    prints = [r["partialFingerprints"] for r in sarif["runs"][0]["results"]]
    assert len(prints) == 2 and prints[0] != prints[1]
    res = CliRunner().invoke(cli, ["report", "merge", "prod.json", "dev.json", "--format", "json",
                                   "-o", "merged.json", "--deterministic", "-q"])
    assert res.exit_code == 1, res.output
    merged = json.loads(Path("merged.json").read_text())
    assert sorted(f["id"] for f in merged["findings"]) == sorted(f["id"] for f in fails)
    assert not [n for n in merged.get("notices", []) if "appear in both" in n["message"]]


def test_a_finding_keeps_its_id_however_its_root_is_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the root module enters the fingerprint: relative to the repository, not to the working
    # directory, or a baseline made with `scan envs/prod` at the top matches nothing of
    # `scan .` in envs/prod or of a CI job's absolute path
    import json

    from click.testing import CliRunner

    from scanner.cli.main import cli

    repo = tmp_path / "repo"
    write(repo, {
        "modules/disk/main.tf": 'resource "aws_ebs_volume" "d" {\n  size = 1\n}\n',
        "envs/prod/main.tf": 'module "disk" {\n  source = "../../modules/disk"\n}\n'
                             'resource "aws_ebs_volume" "own" {\n  size = 1\n}\n',
    })
    (repo / ".git").mkdir()
    (tmp_path / "elsewhere").mkdir()

    def ids(cwd: Path, path: str) -> list[str]:
        monkeypatch.chdir(cwd)
        out = tmp_path / "out.json"
        res = CliRunner().invoke(cli, ["scan", path, "--format", "json", "-o", str(out),
                                       "--deterministic", "-q", "--policy", "EBS-001"])
        assert res.exit_code == 1, res.output
        return sorted(f["id"] for f in json.loads(out.read_text())["findings"])

    at_top = ids(repo, "envs/prod")
    assert len(at_top) == 2
    assert ids(repo / "envs" / "prod", ".") == at_top
    assert ids(tmp_path / "elsewhere", str(repo / "envs" / "prod")) == at_top


def test_live_fingerprints_do_not_change() -> None:
    from scanner.engine.evaluate import fingerprint

    ident = {"kind": "ec2.volume", "id": "vol-1", "account": "123456789012",
             "region": "us-east-1", "root": None}
    # the value before root modules entered the fingerprint (live resources have none)
    assert fingerprint("EBS-001", ident, "") == "076dc72868b372f48d29"


# -- file(), templatefile(), yamldecode(file()), jsondecode(file()) --------------------------


def test_files_inside_the_tree_are_read(tmp_path: Path) -> None:
    import os

    write(tmp_path / "outside", {"secret.txt": "OUTSIDE-SECRET"})
    repo = write(
        tmp_path / "repo",
        {
            "envs/prod/main.tf": """
module "gpu" {
  source = "../../modules/gpu"
}
resource "aws_ebs_volume" "root_file" {
  size = tonumber(trimspace(file("size.txt")))  # terraform: tonumber("42\\n") fails
  tags = {
    escape  = file("../../../outside/secret.txt")
    link    = file("${path.module}/link.txt")
    absent  = file("${path.root}/nope.txt")
    exists  = fileexists("size.txt") ? "yes" : "no"
    missing = fileexists("nope.txt") ? "yes" : "no"
  }
}
""",
            "envs/prod/size.txt": "42\n",
            "modules/gpu/main.tf": """
locals {
  cfg  = yamldecode(file("${path.module}/cfg.yaml"))
  pol  = jsondecode(file("${path.module}/policy.json"))
}
resource "aws_launch_template" "gpu" {
  instance_type = local.cfg.type
  user_data = base64encode(templatefile("${path.module}/init.sh.tpl", { gpus = local.cfg.gpus }))
  tags          = { Effect = local.pol.Statement[0].Effect, Mod = path.module }
}
""",
            "modules/gpu/cfg.yaml": "type: p4d.24xlarge\ngpus: [0, 1]\n",
            "modules/gpu/policy.json": '{"Statement": [{"Effect": "Allow"}]}',
            "modules/gpu/init.sh.tpl": "%{ for g in gpus ~}\nnvidia-smi -i ${g}\n%{ endfor ~}\n",
        },
    )
    os.symlink(tmp_path / "outside" / "secret.txt", repo / "envs/prod/link.txt")
    out, result = instance_values([repo])
    assert result.errors == []
    lt = out["module.gpu.aws_launch_template.gpu"][1]
    assert lt["instance_type"] == "p4d.24xlarge"
    import base64

    assert base64.b64decode(lt["user_data"]).decode() == "nvidia-smi -i 0\nnvidia-smi -i 1\n"
    assert lt["tags"] == {"Effect": "Allow", "Mod": "../../modules/gpu"}
    vol = out["aws_ebs_volume.root_file"][1]
    assert vol["size"] == 42
    tags = vol["tags"]
    assert (tags["exists"], tags["missing"]) == ("yes", "no")
    for key, why in (("escape", "outside the scanned tree"), ("link", "outside the scanned tree"),
                     ("absent", "does not exist")):
        assert isinstance(tags[key], Unknown) and why in tags[key].reason, key
    assert "OUTSIDE-SECRET" not in repr((out, result))


def test_templatefile_limits(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
resource "aws_ebs_volume" "self" {
  tags = { t = templatefile("self.tpl", {}) }
}
resource "aws_ebs_volume" "big" {
  tags = { t = templatefile("big.tpl", { s = "0123456789" }) }
}
""",
            "self.tpl": '${templatefile("self.tpl", {})}',
            "big.tpl": "%{ for i in range(100000) }${s}${s}${s}${s}${s}${s}${s}${s}"
            "${s}${s}${s}${s}${s}${s}${s}${s}${s}${s}${s}${s}%{ endfor }",
        },
    )
    out, result = instance_values([tmp_path])
    assert isinstance(out["aws_ebs_volume.self"][1]["tags"], Unknown)
    assert [(e.line, "string too long" in e.reason) for e in result.errors] == [(6, True)]


def test_no_file_is_read_outside_a_scan(tmp_path: Path) -> None:
    from scanner.sources.terraform.hcl.expressions import evaluate
    from scanner.sources.terraform.hcl.parse import parse_expression
    from scanner.sources.terraform.hcl.values import literal_scope

    write(tmp_path, {"main.tf": 'resource "aws_vpc" "v" {}\n', "x.txt": "x"})
    load_terraform_dir([tmp_path])  # a scan leaves no reader behind
    v = evaluate(parse_expression(f'file("{tmp_path}/x.txt")'), literal_scope())
    assert isinstance(v, Unknown)
