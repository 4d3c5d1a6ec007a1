"""The Terraform HCL source end to end: root modules, variables, modules, count / for_each,
dynamic blocks, references, suppressions and bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from scanner.model import Ref, Resource, SourceKind, Unknown
from scanner.sources.terraform.hcl import reader as terraform_hcl
from scanner.sources.terraform.hcl.reader import instance_values, load_terraform_dir


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
    return root


def values(*paths: Path, **kw: Any) -> dict[str, dict[str, Any]]:
    out, result = instance_values(list(paths), **kw)
    assert result.errors == [], result.errors
    return {addr: v for addr, (_, v) in out.items()}


def by_id(resources: list[Resource]) -> dict[str, Resource]:
    return {r.id: r for r in resources}


# -- root modules -------------------------------------------------------------------------------


def test_modules_used_by_examples_are_not_roots(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": 'variable "size" {}\nresource "aws_ebs_volume" "v" { size = var.size }\n',
            "examples/a/main.tf": 'module "m" {\n  source = "../../"\n  size = 10\n}\n',
            "examples/b/main.tf": 'module "m" {\n  source = "../.."\n  size = 20\n}\n',
            "examples/b/.terraform/modules/x/main.tf": 'resource "aws_ebs_volume" "no" {}\n',
            ".hidden/main.tf": 'resource "aws_ebs_volume" "no" {}\n',
            "node_modules/x/main.tf": 'resource "aws_ebs_volume" "no" {}\n',
        },
    )
    result = load_terraform_dir([tmp_path])
    assert result.errors == []
    got = {(r.scope, r.id, r.attrs.get("Size")) for r in result.resources}
    assert got == {
        (str(tmp_path / "examples/a"), "module.m.aws_ebs_volume.v", 10),
        (str(tmp_path / "examples/b"), "module.m.aws_ebs_volume.v", 20),
    }


def test_a_file_given_alone_stands_for_its_directory(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": 'resource "aws_ebs_volume" "a" { size = var.size }\n',
            "variables.tf": 'variable "size" { default = 5 }\n',
            "other.tf": 'resource "aws_ebs_volume" "b" { size = 1 }\n',
            "sub/main.tf": 'resource "aws_ebs_volume" "sub" { size = 1 }\n',
        },
    )
    result = load_terraform_dir([tmp_path / "main.tf", tmp_path / "other.tf"])
    assert result.errors == []
    assert sorted((r.id, r.attrs["Size"]) for r in result.resources) == [
        ("aws_ebs_volume.a", 5),
        ("aws_ebs_volume.b", 1),
    ]
    assert {r.scope for r in result.resources} == {str(tmp_path)}


def test_the_same_root_given_twice_is_scanned_once(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": 'resource "aws_vpc" "v" { cidr_block = "10.0.0.0/16" }\n'})
    result = load_terraform_dir([tmp_path, tmp_path / "main.tf", Path(str(tmp_path) + "/")])
    assert [r.id for r in result.resources] == ["aws_vpc.v"]


def test_modules_calling_each_other_in_a_cycle_are_still_scanned(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a/main.tf": 'module "b" { source = "../b" }\nresource "aws_vpc" "a" {}\n',
            "b/main.tf": 'module "a" { source = "../a" }\nresource "aws_vpc" "b" {}\n',
        },
    )
    result = load_terraform_dir([tmp_path])  # must end: module depth is bounded
    assert "aws_vpc.a" in {r.id for r in result.resources}
    assert any("nested too deeply" in e.reason for e in result.errors)


def test_missing_paths_and_non_terraform_files(tmp_path: Path) -> None:
    write(tmp_path, {"x.txt": "hello"})
    result = load_terraform_dir([tmp_path / "nope", tmp_path / "x.txt"])
    assert sorted(e.reason.split(":")[0] for e in result.errors) == [
        "cannot read",
        "not a Terraform file (.tf or .tf.json)",
    ]


# -- provenance, addresses, references ----------------------------------------------------------

NETWORK = """
variable "azs" {
  type    = list(string)
  default = ["us-east-1a", "us-east-1b"]
}

resource "aws_vpc" "main" {
  cidr_block = "10.0.0.0/16"
}

resource "aws_subnet" "a" {
  count             = length(var.azs)
  vpc_id            = aws_vpc.main.id
  availability_zone = var.azs[count.index]
  cidr_block        = cidrsubnet(aws_vpc.main.cidr_block, 8, count.index)
}

resource "aws_subnet" "named" {
  for_each   = { x = 1, y = 2 }
  vpc_id     = aws_vpc.main.id
  cidr_block = "10.0.${each.value}.0/24"
  tags       = { Name = "s-${each.key}" }
}

resource "aws_launch_template" "gpu" {
  name          = "gpu-lt"
  instance_type = "g5.xlarge"
}

resource "aws_autoscaling_group" "g" {
  min_size            = 1
  max_size            = 2
  vpc_zone_identifier = aws_subnet.a[*].id
  launch_template {
    name    = aws_launch_template.gpu.name
    id      = aws_launch_template.gpu.id
    version = aws_launch_template.gpu.latest_version
  }
}

resource "aws_vpc_endpoint" "s3" {
  vpc_id          = aws_vpc.main.id
  service_name    = "com.amazonaws.us-east-1.s3"
  route_table_ids = [aws_vpc.main.default_route_table_id]
}

resource "aws_instance" "first" {
  subnet_id = aws_subnet.a[0].id
}

resource "aws_instance" "for" {
  subnet_id = [for s in aws_subnet.a : s.id][1]
}

locals {
  named_ids = [for s in aws_subnet.named : s.id]
  first_az  = aws_subnet.a[0].availability_zone
}

resource "aws_instance" "named" {
  subnet_id         = local.named_ids
  availability_zone = local.first_az
}
"""


def test_addresses_and_references(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": NETWORK})
    v = values(tmp_path)
    assert list(v) == [
        "aws_vpc.main",
        "aws_subnet.a[0]",
        "aws_subnet.a[1]",
        'aws_subnet.named["x"]',
        'aws_subnet.named["y"]',
        "aws_launch_template.gpu",
        "aws_autoscaling_group.g",
        "aws_vpc_endpoint.s3",
        "aws_instance.first",
        "aws_instance.for",
        "aws_instance.named",
    ]
    assert v["aws_subnet.a[1]"] == {
        "vpc_id": Ref("aws_vpc.main"),
        "availability_zone": "us-east-1b",
        "cidr_block": "10.0.1.0/24",  # a known attribute of another resource is used as such
    }
    assert v['aws_subnet.named["y"]']["cidr_block"] == "10.0.2.0/24"
    asg = v["aws_autoscaling_group.g"]
    assert asg["vpc_zone_identifier"] == Ref("aws_subnet.a")  # a splat names every instance
    assert asg["launch_template"] == [
        {
            "name": "gpu-lt",
            "id": Ref("aws_launch_template.gpu"),
            "version": Ref("aws_launch_template.gpu", "latest_version"),
        }
    ]
    assert v["aws_vpc_endpoint.s3"]["route_table_ids"] == [
        Ref("aws_vpc.main", "default_route_table_id")
    ]
    assert v["aws_instance.first"]["subnet_id"] == Ref("aws_subnet.a[0]")
    assert v["aws_instance.for"]["subnet_id"] == Ref("aws_subnet.a[1]")
    assert v["aws_instance.named"] == {
        "subnet_id": Ref("aws_subnet.named"),
        "availability_zone": "us-east-1a",
    }


def test_translated_resources_carry_provenance(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": NETWORK})
    result = load_terraform_dir([tmp_path])
    assert result.errors == [] and result.notices == []
    res = by_id(result.resources)
    sub = res["aws_subnet.a[0]"]
    assert sub.kind == "ec2.subnet"
    assert sub.provenance.source is SourceKind.TERRAFORM_HCL
    assert sub.provenance.file == str(tmp_path / "main.tf")
    assert (sub.provenance.start_line, sub.provenance.end_line) == (11, 16)
    assert sub.provenance.module == ""
    assert sub.scope == str(tmp_path)
    assert res['aws_subnet.named["x"]'].tags == {"Name": "s-x"}
    assert res["aws_autoscaling_group.g"].attrs["VPCZoneIdentifier"] == [Ref("aws_subnet.a")]


def test_unknown_count_scans_one_representative(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
variable "n" {
  type = number
}
resource "aws_ebs_volume" "v" {
  count = var.n
  size  = 10
  tags  = { Index = "i-${count.index}" }
}
resource "aws_ebs_volume" "none" {
  count = 0
}
"""
        },
    )
    out, result = instance_values([tmp_path])
    assert list(out) == ["aws_ebs_volume.v"]
    vals = out["aws_ebs_volume.v"][1]
    assert vals["size"] == 10
    assert isinstance(vals["tags"]["Index"], Unknown)
    assert [n.line for n in result.notices] == [5]
    assert "var.n has no value" in result.notices[0].message


def test_for_each_over_a_list_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": 'resource "aws_ebs_volume" "v" {\n  for_each = ["a"]\n}\n'})
    _, result = instance_values([tmp_path])
    assert [(e.line, e.reason.split(":")[0]) for e in result.errors] == [
        (
            2,
            "for_each of aws_ebs_volume.v must be a map or a set of strings, not a list or other "
            "value (use toset())",
        )
    ]


# -- variables ----------------------------------------------------------------------------------


def test_variable_precedence(tmp_path: Path) -> None:
    names = ["d", "t", "tj", "a1", "a2", "f1", "f2", "cli"]
    decls = "".join(f'variable "{n}" {{ default = "default" }}\n' for n in names)
    tags = ", ".join(f"{n} = var.{n}" for n in names)
    write(
        tmp_path,
        {
            "main.tf": decls + f'resource "aws_vpc" "v" {{\n  tags = {{ {tags} }}\n}}\n',
            "terraform.tfvars": "\n".join(f'{n} = "tfvars"' for n in names[1:]) + "\n",
            "terraform.tfvars.json": json.dumps({n: "tfvars.json" for n in names[2:]}),
            "a.auto.tfvars": "\n".join(f'{n} = "a.auto"' for n in names[3:]) + "\n",
            "b.auto.tfvars.json": json.dumps({n: "b.auto.json" for n in names[4:]}),
            "other.tfvars": 'd = "never loaded"\n',
            "f1.tfvars": "\n".join(f'{n} = "f1"' for n in names[5:]) + "\n",
            "f2.tfvars.json": json.dumps({n: "f2" for n in names[6:]}),
        },
    )
    v = values(
        tmp_path,
        var_files=[tmp_path / "f1.tfvars", tmp_path / "f2.tfvars.json"],
        variables={"cli": "cli"},  # an undeclared one: tests/test_tf_var_inputs.py
    )
    assert v["aws_vpc.v"]["tags"] == {
        "d": "default",
        "t": "tfvars",
        "tj": "tfvars.json",
        "a1": "a.auto",
        "a2": "b.auto.json",
        "f1": "f1",
        "f2": "f2",
        "cli": "cli",
    }


def test_variable_types_and_cli_values(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
variable "count_s" { type = number }
variable "sizes" { type = list(number) }
variable "spec" {
  type = object({ size = number, type = optional(string, "gp3") })
  default = { size = "8" }
}
variable "strict" {
  type     = string
  default  = "dflt"
  nullable = false
}
variable "missing" {}
resource "aws_ebs_volume" "v" {
  count = var.count_s
  size  = var.sizes[count.index] + var.spec.size
  type  = var.spec.type
  tags  = { strict = var.strict, missing = var.missing }
}
""",
            "terraform.tfvars": "strict = null\n",
        },
    )
    out, result = instance_values([tmp_path], variables={"count_s": "2", "sizes": "[1, 2]"})
    assert result.errors == []
    assert [out[a][1]["size"] for a in ("aws_ebs_volume.v[0]", "aws_ebs_volume.v[1]")] == [9, 10]
    v0 = out["aws_ebs_volume.v[0]"][1]
    assert v0["type"] == "gp3"
    assert v0["tags"]["strict"] == "dflt"
    assert isinstance(v0["tags"]["missing"], Unknown)


def test_bad_var_files_are_errors(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": 'variable "x" {}\n',
            "terraform.tfvars": "x = [\n",
            "bad.tfvars.json": "{nope",
            "refs.tfvars": "x = var.y\n",
        },
    )
    _, result = instance_values(
        [tmp_path], var_files=[tmp_path / "bad.tfvars.json", tmp_path / "refs.tfvars"]
    )
    assert sorted(Path(e.path).name for e in result.errors) == [
        "bad.tfvars.json",
        "refs.tfvars",
        "terraform.tfvars",
    ]
    assert all(e.line for e in result.errors)


# -- modules ------------------------------------------------------------------------------------

MODULES = {
    "main.tf": """
locals {
  envs = { dev = 1, prod = 3 }
}

module "net" {
  source = "./modules/net"
  cidr   = "10.1.0.0/16"
}

module "gpu" {
  source     = "./modules/gpu"
  for_each   = local.envs
  name       = "gpu-${each.key}"
  desired    = each.value
  subnet_ids = module.net.subnet_ids
}

module "scratch" {
  source = "./modules/gpu"
  count  = 2
  name   = "scratch-${count.index}"
  desired = 0
  subnet_ids = []
}

module "remote" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "5.0.0"
}

resource "aws_instance" "uses_remote" {
  subnet_id = module.remote.private_subnets[0]
}
""",
    "modules/net/main.tf": """
variable "cidr" {}
resource "aws_vpc" "this" {
  cidr_block = var.cidr
}
resource "aws_subnet" "this" {
  count      = 2
  vpc_id     = aws_vpc.this.id
  cidr_block = cidrsubnet(var.cidr, 8, count.index)
}
output "subnet_ids" {
  value = aws_subnet.this[*].id
}
""",
    "modules/gpu/main.tf": """
variable "name" { type = string }
variable "desired" { type = number }
variable "subnet_ids" { type = list(string) }
module "disk" {
  source = "../disk"
  name   = var.name
}
resource "aws_autoscaling_group" "this" {
  name                = var.name
  min_size            = 0
  max_size            = 4
  desired_capacity    = var.desired
  vpc_zone_identifier = var.subnet_ids
}
""",
    "modules/disk/main.tf": """
variable "name" {}
resource "aws_ebs_volume" "d" {
  size = 10
  tags = { Name = "${var.name}-disk" }
}
""",
}


def test_local_modules_with_count_and_for_each(tmp_path: Path) -> None:
    write(tmp_path, MODULES)
    result = load_terraform_dir([tmp_path])
    assert result.errors == []
    res = by_id(result.resources)
    assert sorted(res) == [
        "aws_instance.uses_remote",
        'module.gpu["dev"].aws_autoscaling_group.this',
        'module.gpu["dev"].module.disk.aws_ebs_volume.d',
        'module.gpu["prod"].aws_autoscaling_group.this',
        'module.gpu["prod"].module.disk.aws_ebs_volume.d',
        "module.net.aws_subnet.this[0]",
        "module.net.aws_subnet.this[1]",
        "module.net.aws_vpc.this",
        "module.remote",  # the call not read (terraform.module_call, TF-001)
        "module.scratch[0].aws_autoscaling_group.this",
        "module.scratch[0].module.disk.aws_ebs_volume.d",
        "module.scratch[1].aws_autoscaling_group.this",
        "module.scratch[1].module.disk.aws_ebs_volume.d",
    ]
    prod = res['module.gpu["prod"].aws_autoscaling_group.this']
    assert prod.attrs["DesiredCapacity"] == 3
    assert prod.attrs["AutoScalingGroupName"] == "gpu-prod"
    assert prod.attrs["VPCZoneIdentifier"] == [Ref("module.net.aws_subnet.this")]
    assert prod.provenance.module == 'module.gpu["prod"]'
    assert prod.provenance.file == str(tmp_path / "modules/gpu/main.tf")
    assert prod.scope == str(tmp_path)  # child module resources share the root's scope
    disk = res['module.gpu["dev"].module.disk.aws_ebs_volume.d']
    assert disk.tags == {"Name": "gpu-dev-disk"}
    assert disk.provenance.module == 'module.gpu["dev"].module.disk'
    assert res["module.net.aws_subnet.this[1]"].attrs["CidrBlock"] == "10.1.1.0/24"
    subnet = res["aws_instance.uses_remote"].attrs["SubnetId"]
    assert isinstance(subnet, Unknown) and "remote module module.remote" in subnet.reason
    assert result.notices == []  # the call not read is a resource, judged UNKNOWN (TF-001)
    unread = [r for r in result.resources if r.kind == "terraform.module_call"]
    assert [(r.id, Path(r.provenance.file or "").name, r.provenance.start_line)
            for r in unread] == [("module.remote", "main.tf", 27)]
    assert "terraform init" in unread[0].attrs["Fix"]


def test_installed_remote_modules_are_scanned(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": 'module "vpc" {\n  source = "terraform-aws-modules/vpc/aws"\n}\n',
            ".terraform/modules/modules.json": json.dumps(
                {
                    "Modules": [
                        {"Key": "", "Dir": "."},
                        {"Key": "vpc", "Dir": ".terraform/modules/vpc"},
                    ]
                }
            ),
            ".terraform/modules/vpc/main.tf": 'resource "aws_vpc" "this" {}\n',
        },
    )
    result = load_terraform_dir([tmp_path])
    assert [r.id for r in result.resources] == ["module.vpc.aws_vpc.this"]
    assert result.notices == []


def test_workspace_and_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TF_WORKSPACE", raising=False)
    write(
        tmp_path,
        {
            "main.tf": 'module "m" {\n  source = "./mod"\n}\n',
            "mod/main.tf": (
                'resource "aws_vpc" "v" {\n  tags = {\n'
                "    ws = terraform.workspace\n    mod = path.module\n    root = path.root\n"
                "    cwd = basename(path.cwd)\n  }\n}\n"
            ),
            ".terraform/environment": "prod\n",
        },
    )
    tags = values(tmp_path)["module.m.aws_vpc.v"]["tags"]
    assert tags == {  # as terraform gives them, run in the root module
        "ws": "prod",
        "mod": "mod",
        "root": ".",
        "cwd": tmp_path.name,
    }


def test_tf_workspace_selects_the_workspace_as_in_terraform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI selects a workspace with TF_WORKSPACE (it overrides .terraform/environment): the prod
    # resources of `count = terraform.workspace == "prod" ? 1 : 0` exist and are judged
    write(tmp_path, {
        "main.tf": 'resource "aws_vpc" "prod" {\n  count = terraform.workspace == "prod" ? 1 : 0\n'
                   '  tags = { ws = terraform.workspace }\n}\n',
        ".terraform/environment": "staging\n",
    })
    monkeypatch.setenv("TF_WORKSPACE", "prod")
    assert values(tmp_path)["aws_vpc.prod[0]"]["tags"] == {"ws": "prod"}


def test_missing_local_module_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": 'module "m" {\n  source = "./nowhere"\n}\n'})
    result = load_terraform_dir([tmp_path])
    assert [(e.line, "not a directory" in e.reason) for e in result.errors] == [(1, True)]


# -- dynamic blocks -----------------------------------------------------------------------------


def test_dynamic_blocks(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
variable "disks" {
  default = [
    { dev = "/dev/sdf", size = 100, enc = true },
    { dev = "/dev/sdg", size = 200, enc = false },
  ]
}
variable "unknown_list" { type = list(string) }
resource "aws_launch_template" "lt" {
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs { encrypted = true }
  }
  dynamic "block_device_mappings" {
    for_each = var.disks
    iterator = d
    content {
      device_name = d.value.dev
      dynamic "ebs" {
        for_each = d.value.size > 150 ? [d.value] : []
        content {
          volume_size = ebs.value.size
          encrypted   = ebs.value.enc
        }
      }
    }
  }
  dynamic "tag_specifications" {
    for_each = var.unknown_list
    content {
      resource_type = tag_specifications.value
    }
  }
}
"""
        },
    )
    v = values(tmp_path)["aws_launch_template.lt"]
    assert v["block_device_mappings"] == [
        {"device_name": "/dev/xvda", "ebs": [{"encrypted": True}]},
        {"device_name": "/dev/sdf", "ebs": []},
        {"device_name": "/dev/sdg", "ebs": [{"volume_size": 200, "encrypted": False}]},
    ]
    assert isinstance(v["tag_specifications"], Unknown)


# -- suppressions ---------------------------------------------------------------------------------

SKIPS = """# gpuaudit:skip=EBS-001:scratch data, wiped nightly
# a second comment line
resource "aws_ebs_volume" "above" {
  size = 1
}

resource "aws_ebs_volume" "inside" {
  size = 1 // gpuaudit:skip=EBS-001:inside the block
  /* gpuaudit:skip=EBS-003:uses the default key on purpose */
}

# gpuaudit:skip=EBS-001:not adjacent

resource "aws_ebs_volume" "gap" {
  size = 1
}

resource "aws_ebs_volume" "no_reason" {
  # gpuaudit:skip=EBS-001
  size = 1
}
"""


def test_inline_suppressions(tmp_path: Path) -> None:
    write(tmp_path, {"main.tf": SKIPS})
    result = load_terraform_dir([tmp_path])
    res = by_id(result.resources)
    f = str(tmp_path / "main.tf")
    above = res["aws_ebs_volume.above"].skips
    assert [(s.policy_id, s.reason, s.by) for s in above] == [
        ("EBS-001", "scratch data, wiped nightly", f"comment at {f}:1")
    ]
    inside = res["aws_ebs_volume.inside"].skips
    assert [(s.policy_id, s.reason) for s in inside] == [
        ("EBS-001", "inside the block"),
        ("EBS-003", "uses the default key on purpose"),
    ]
    assert res["aws_ebs_volume.gap"].skips == ()
    assert res["aws_ebs_volume.no_reason"].skips == ()
    assert [(n.line, "has no reason" in n.message) for n in result.notices] == [(19, True)]


def test_suppressions_in_modules_apply_to_every_instance(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": 'module "m" {\n  source = "./m"\n  count  = 2\n}\n',
            "m/main.tf": '# gpuaudit:skip=EBS-001:test disks\nresource "aws_ebs_volume" "v" {}\n',
        },
    )
    result = load_terraform_dir([tmp_path])
    assert [[s.policy_id for s in r.skips] for r in result.resources] == [["EBS-001"], ["EBS-001"]]


# -- bad input ----------------------------------------------------------------------------------


def test_bad_files_are_errors_and_the_rest_is_scanned(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "good.tf": 'resource "aws_vpc" "ok" {\n  cidr_block = "10.0.0.0/16"\n}\n',
            "syntax.tf": 'resource "aws_vpc" "bad" {\n  cidr_block = \n}\n',
            "binary.tf": b"\x7fELF\x00\x01\x02",
            "latin1.tf": b'# ok\n# caf\xe9\nresource "aws_vpc" "x" {}\n',
            "broken.tf.json": '{"resource": ',
            "zdup.tf": 'resource "aws_vpc" "ok" {}\n',
            "loop.tf": "",
        },
    )
    (tmp_path / "loop.tf").unlink()
    os.symlink(tmp_path / "loop.tf", tmp_path / "loop.tf")
    big = tmp_path / "huge.tf"
    with big.open("wb") as fh:
        fh.write(b"# padding\n" * (600 * 1024))
    result = load_terraform_dir([tmp_path])
    assert [r.id for r in result.resources] == ["aws_vpc.ok"]
    errors = {Path(e.path).name: (e.line, e.reason) for e in result.errors}
    assert set(errors) == {
        "syntax.tf",
        "binary.tf",
        "latin1.tf",
        "broken.tf.json",
        "zdup.tf",
        "loop.tf",
        "huge.tf",
    }
    assert errors["syntax.tf"][0] == 2 and "syntax error" in errors["syntax.tf"][1]
    assert errors["latin1.tf"] == (2, "not valid UTF-8")
    assert errors["binary.tf"][1].startswith("binary file")
    assert errors["zdup.tf"] == (1, "duplicate resource aws_vpc.ok")
    assert "too large" in errors["huge.tf"][1]
    assert errors["loop.tf"][1].startswith("cannot read")


def test_runtime_errors_become_unknown_with_a_notice(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
locals {
  m = { a = 1 }
}
resource "aws_ebs_volume" "v" {
  size = local.m.missing
  iops = local.nope
}
"""
        },
    )
    out, result = instance_values([tmp_path])
    v = out["aws_ebs_volume.v"][1]
    assert isinstance(v["size"], Unknown) and isinstance(v["iops"], Unknown)
    assert sorted(n.line for n in result.notices) == [6, 7]


# -- other syntax -------------------------------------------------------------------------------


INSTANCE = 'resource "aws_instance" "i" {{\n  root_block_device {{ encrypted = {encrypted} }}\n}}\n'


def test_tf_json_and_override_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf.json": json.dumps(
                {
                    "variable": {"size": {"default": 20}},
                    "resource": {
                        "aws_ebs_volume": {
                            "v": {"size": "${var.size * 2}", "encrypted": False, "tags": {"a": "b"}}
                        }
                    },
                }
            ),
            "main.tf": INSTANCE.format(encrypted="false"),
            "override.tf": INSTANCE.format(encrypted="true"),
        },
    )
    v = values(tmp_path)
    assert v["aws_ebs_volume.v"] == {"size": 40, "encrypted": False, "tags": {"a": "b"}}
    assert v["aws_instance.i"]["root_block_device"] == [{"encrypted": True}]


def test_policy_documents_are_rendered(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": """
data "aws_iam_policy_document" "p" {
  statement {
    actions   = ["s3:GetObject"]
    resources = ["arn:aws:s3:::b/*", "arn:aws:s3:::b"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:PrincipalAccount"
      values   = ["123456789012"]
    }
  }
}
resource "aws_vpc_endpoint" "s3" {
  vpc_id       = "vpc-1"
  service_name = "com.amazonaws.us-east-1.s3"
  policy       = data.aws_iam_policy_document.p.json
}
"""
        },
    )
    res = by_id(load_terraform_dir([tmp_path]).resources)
    assert res["aws_vpc_endpoint.s3"].attrs["PolicyDocument"] == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": ["arn:aws:s3:::b/*", "arn:aws:s3:::b"],
                "Principal": "*",
                "Condition": {"StringEquals": {"aws:PrincipalAccount": "123456789012"}},
            }
        ],
    }


def test_ebs_default_encryption_scope_is_the_root_module(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tf": (
                'resource "aws_ebs_encryption_by_default" "on" {}\n'
                'module "m" {\n  source = "./m"\n}\n'
            ),
            "m/main.tf": 'resource "aws_ebs_volume" "v" { size = 1 }\n',
        },
    )
    res = load_terraform_dir([tmp_path]).resources
    assert {(r.kind, r.scope) for r in res} == {
        ("ec2.ebs_defaults", str(tmp_path)),
        ("ec2.volume", str(tmp_path)),
    }


# -- determinism and the parallel path --------------------------------------------------------


def test_parallel_workers_give_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(6):
        write(tmp_path / f"s{i}", {"main.tf": NETWORK, "x.tf": f'resource "aws_vpc" "x{i}" {{}}\n'})
    write(tmp_path / "s9", {"main.tf": "resource {\n"})
    serial = load_terraform_dir([tmp_path])
    monkeypatch.setenv("GPUAUDIT_WORKERS", "2")
    monkeypatch.setattr(terraform_hcl, "PARALLEL_MIN_ROOTS", 1)
    parallel = load_terraform_dir([tmp_path])
    assert [(r.id, r.scope, r.attrs) for r in parallel.resources] == [
        (r.id, r.scope, r.attrs) for r in serial.resources
    ]
    assert parallel.errors == serial.errors and len(serial.errors) == 1
    assert parallel.notices == serial.notices


def test_runaway_expressions_stop(tmp_path: Path) -> None:
    doubling = "\n".join(f"  l{i} = [local.l{i + 1}, local.l{i + 1}]" for i in range(60))
    write(
        tmp_path,
        {
            "main.tf": f"""
locals {{
{doubling}
  l60 = "x"
  s0 = "${{local.s1}}${{local.s1}}"
  s1 = "${{local.s2}}${{local.s2}}"
  s2 = join("", [for i in range(100000) : "abcdefghij"])
  nested = [for a in range(50000) : [for b in range(50000) : a * b]]
}}
resource "aws_vpc" "a" {{
  tags = {{ a = local.l0 }}
}}
resource "aws_vpc" "b" {{
  tags = {{ s = local.s0, n = length(local.nested) }}
}}
resource "aws_vpc" "c" {{
  cidr_block = "10.0.0.0/16"
}}
"""
        },
    )
    import time

    start = time.perf_counter()
    result = load_terraform_dir([tmp_path])
    assert time.perf_counter() - start < 20
    assert [r.id for r in result.resources] == ["aws_vpc.a", "aws_vpc.b", "aws_vpc.c"]
    assert any("too much work" in e.reason for e in result.errors)
