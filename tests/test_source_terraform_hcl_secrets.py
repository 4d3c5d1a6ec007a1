"""No secret from Terraform HCL reaches a report (issue 11, section 4): sensitive variables,
``sensitive()`` values and sensitive module outputs are recorded in SourceResult.sensitive
(the report redacts every string containing one), and symlinks that leave the scanned tree
are not followed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.sources.terraform.hcl.reader import instance_values, load_terraform_dir


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


MAIN = """
variable "db_password" {
  type      = string
  sensitive = true
  default   = "default-Secret-1"
}
variable "api_token" {
  sensitive = true
}
variable "plain" {
  default = "not-secret"
}
locals {
  derived = upper(var.api_token)
  hidden  = sensitive("inline-Secret-3")
}
module "creds" {
  source = "./creds"
}
resource "aws_instance" "gpu" {
  instance_type = "p4d.24xlarge"
  user_data     = base64encode("pw=${var.db_password}")
  tags = {
    Name    = "db-${var.db_password}"
    Token   = local.derived
    Inline  = local.hidden
    FromMod = module.creds.key
    Plain   = var.plain
    Merged  = merge({ a = var.plain }, { b = "x" })["a"]
  }
}
"""
CREDS = """
output "key" {
  value     = "module-Secret-4"
  sensitive = true
}
output "open" {
  value = "module-open"
}
"""


def test_sensitive_values_are_recorded(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": MAIN, "creds/main.tf": CREDS,
                     "terraform.tfvars": 'db_password = "tfvars-Secret-2"\n'})
    result = load_terraform_dir([tmp_path], variables={"api_token": "cli-Secret-5"})
    assert result.errors == []
    sens = result.sensitive
    # the variable's default and its tfvars value (which wins), a --var value, sensitive(),
    # a sensitive module output, and strings functions made from them
    for secret in ("default-Secret-1", "tfvars-Secret-2", "inline-Secret-3", "module-Secret-4",
                   "cli-Secret-5", "CLI-SECRET-5"):
        assert secret in sens, secret
    gpu = next(r for r in result.resources if r.id == "aws_instance.gpu")
    out, _ = instance_values([tmp_path], variables={"api_token": "cli-Secret-5"})
    assert out["aws_instance.gpu"][1]["user_data"] in sens  # base64 of a string with a secret
    for tag in ("Name", "Token", "Inline", "FromMod"):
        assert any(s in gpu.tags[tag] for s in sens), tag
    for value in ("not-secret", "module-open", "x", "p4d.24xlarge"):
        assert value not in sens  # passed through, never marked
    assert not any(s in "not-secret" for s in sens)


def test_sensitive_var_file_and_module_variables(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": 'variable "pw" {\n  sensitive = true\n}\n'
            'module "m" {\n  source = "./m"\n  secret = "passed-Secret-7"\n}\n',
            "m/main.tf": 'variable "secret" {\n  sensitive = true\n}\n'
            'resource "aws_ebs_volume" "v" {\n  tags = { k = var.secret }\n}\n',
            "prod.tfvars": 'pw = "varfile-Secret-6"\n',
        },
    )
    result = load_terraform_dir([tmp_path], var_files=[tmp_path / "prod.tfvars"])
    assert {"varfile-Secret-6", "passed-Secret-7"} <= result.sensitive


def test_no_secret_in_any_json_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, {"main.tf": MAIN, "creds/main.tf": CREDS,
                     "terraform.tfvars": 'db_password = "tfvars-Secret-2"\n'})
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["scan", ".", "--var", "api_token=cli-Secret-5", "--format",
                                   "json", "-o", "out.json", "--include-passed", "-q"])
    assert res.exit_code in (0, 1), res.output
    text = Path("out.json").read_text()
    json.loads(text)
    assert "(sensitive)" in text
    for secret in ("Secret-1", "Secret-2", "Secret-3", "Secret-4", "Secret-5", "SECRET-5"):
        assert secret not in text, secret


# -- symlinks that leave the tree --------------------------------------------------------


def test_symlinks_out_of_the_tree_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "home"
    write(outside, {
        "credentials.tfrc.json": '{"credentials": {"app.terraform.io": {"token": "TOKEN-Secret"}}}',
        "secret.tfvars": 'x = "tfvars-Outside-Secret"\n',
        "evil.tf": 'resource "aws_ebs_volume" "outside" {\n  tags = { t = "TOKEN-Secret" }\n}\n'
                   'this is { not HCL "TOKEN-Secret"\n',
    })
    tree = write(tmp_path / "repo", {
        "main.tf": 'variable "credentials" {\n  default = null\n}\n'
                   'variable "x" {\n  default = "ok"\n}\n'
                   'resource "aws_ebs_volume" "v" {\n  tags = { c = jsonencode(var.credentials),'
                   " x = var.x }\n}\n",
        "inside.tf.txt": 'resource "aws_ebs_volume" "linked_inside" {}\n',
    })
    os.symlink(outside / "credentials.tfrc.json", tree / "creds.auto.tfvars.json")
    os.symlink(outside / "secret.tfvars", tree / "terraform.tfvars")
    os.symlink(outside / "evil.tf", tree / "evil.tf")
    os.symlink(tree / "inside.tf.txt", tree / "inside.tf")  # stays in the tree: followed
    result = load_terraform_dir([tree])
    everything = repr(result)
    assert "Secret" not in everything
    ids = {r.id for r in result.resources}
    assert ids == {"aws_ebs_volume.v", "aws_ebs_volume.linked_inside"}
    refused = {Path(e.path).name: e.reason for e in result.errors}
    assert set(refused) == {"creds.auto.tfvars.json", "terraform.tfvars", "evil.tf"}
    assert all("outside the scanned tree" in r for r in refused.values())
    v = next(r for r in result.resources if r.id == "aws_ebs_volume.v")
    assert v.tags == {"c": "null", "x": "ok"}


def test_errors_never_quote_files_outside_the_tree(tmp_path: Path) -> None:
    """A module outside the scanned directory is read (terraform reads it), but a syntax error
    in it is reported without its text."""
    write(tmp_path, {
        "shared/bad/main.tf": 'resource "aws_vpc" "x" {}\nthis is { not HCL "SECRET-LINE-TEXT"\n',
        "repo/main.tf": 'module "b" {\n  source = "../shared/bad"\n}\n',
    })
    result = load_terraform_dir([tmp_path / "repo"])
    assert [Path(e.path).parent.name for e in result.errors] == ["bad"]
    assert "SECRET" not in repr(result.errors)
    # inside the tree, the error may quote the text (it helps to find it)
    inside = load_terraform_dir([tmp_path])
    assert "SECRET-LINE-TEXT" in repr(inside.errors)


def test_keys_of_a_sensitive_map_are_secret(tmp_path: Path) -> None:
    # terraform marks a sensitive map whole: its keys name instances and tags, never shown
    write(tmp_path, {
        "main.tf": 'variable "creds" {\n  type = map(string)\n  sensitive = true\n}\n'
                   'variable "ids" {\n  sensitive = true\n  default = { "Key-Secret-9" = 1 }\n}\n'
                   'resource "aws_ebs_volume" "w" {\n  for_each = var.creds\n'
                   '  availability_zone = "us-east-1a"\n  size = 10\n'
                   '  tags = { K = each.key, N = join(",", keys(var.ids)) }\n}\n',
        "terraform.tfvars": 'creds = { "Keyname-Secret-8" = "val-Secret-8" }\n',
    })
    result = load_terraform_dir([tmp_path])
    assert {"Keyname-Secret-8", "val-Secret-8", "Key-Secret-9"} <= result.sensitive
    out = tmp_path / "out.json"
    res = CliRunner().invoke(cli, ["scan", str(tmp_path), "--format", "json", "-o", str(out),
                                   "-q", "--include-passed"])
    assert res.exit_code in (0, 1), res.output
    text = out.read_text()
    assert "aws_ebs_volume.w" in text
    assert "Secret-8" not in text and "Secret-9" not in text


def test_a_module_source_without_terraform_files_does_not_open_a_directory(
        tmp_path: Path) -> None:
    # source = "../../home/aws" made ~/.aws a "module tree": file() in any root module then read
    # the credentials into a tag. A directory with no .tf files is no module: it stays outside.
    write(tmp_path, {
        "home/aws/credentials": "[default]\nnote = Home-Secret-10\n",
        "scan/a/main.tf": 'module "grab" {\n  source = "../../home/aws"\n}\n',
        "scan/b/main.tf": 'resource "aws_ebs_volume" "v" {\n  availability_zone = "us-east-1a"\n'
                          '  size = 1\n  tags = { a = file("../../home/aws/credentials") }\n}\n',
        "scan/b/local.txt": "inside-the-tree",
        "scan/c/main.tf": 'module "m" {\n  source = "../../mods/m"\n}\n',
        "mods/m/main.tf": 'resource "aws_ebs_volume" "w" {\n  availability_zone = "us-east-1a"\n'
                          '  size = 1\n  tags = { t = file("${path.module}/t.txt") }\n}\n',
        "mods/m/t.txt": "module-file",
    })
    result = load_terraform_dir([tmp_path / "scan"])
    tags = {r.id: r.tags for r in result.resources}
    assert "Home-Secret-10" not in json.dumps(tags)
    assert "a" not in tags["aws_ebs_volume.v"] or "Secret" not in tags["aws_ebs_volume.v"]["a"]
    # a module reached by ../ is read as terraform reads it, its own files too
    assert tags["module.m.aws_ebs_volume.w"] == {"t": "module-file"}
