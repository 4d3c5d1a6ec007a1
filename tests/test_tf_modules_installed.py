"""Remote modules that `terraform init` installed in `.terraform/modules` (modules.json): nested
registry modules (keys `eks.eks_managed_node_group`), for_each / count on the calls, `//subdir`
sources; and a remote call not installed is a TF-001 UNKNOWN at the call, never a silent pass.

The fixture tests/fixtures/tf_modules_init is cut the way terraform init lays it out (the keys,
the `Dir` of a `//subdir` source, a local source inside a registry module)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from scanner.cli.main import cli
from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.scan import scan_paths

FIXTURE = Path(__file__).parent / "fixtures" / "tf_modules_init"
NODE_LT = 'module.eks.module.eks_managed_node_group["{}"].aws_launch_template.this'


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    target = tmp_path / "platform"
    shutil.copytree(FIXTURE, target)
    return target


def _findings(path: Path) -> dict[tuple[str, str], object]:
    result = scan_paths([path])
    return {(f.policy_id, f.resource["id"]): f for f in evaluate(result.resources,
                                                                  gaps=result.gaps)}


def test_nested_registry_modules_for_each_count_and_subdir_are_read(root: Path) -> None:
    result = scan_paths([root])
    ids = {r.id for r in result.resources}
    # for_each over a nested registry module (key eks.eks_managed_node_group)
    assert NODE_LT.format("gpu") in ids and NODE_LT.format("system") in ids
    assert 'module.eks.module.eks_managed_node_group["gpu"].aws_eks_node_group.this' in ids
    # count over a git module with a //subdir
    assert {"module.scratch[0].aws_ebs_volume.this",
            "module.scratch[1].aws_ebs_volume.this"} <= ids
    node = next(r for r in result.resources if r.id ==
                'module.eks.module.eks_managed_node_group["gpu"].aws_eks_node_group.this')
    assert node.attrs["InstanceTypes"] == ["p4d.24xlarge"]
    assert node.provenance.file.endswith(
        ".terraform/modules/eks.eks_managed_node_group/modules/eks-managed-node-group/main.tf")
    assert result.errors == [] and result.gaps == []
    found = _findings(root)
    assert found[("EBS-001", NODE_LT.format("gpu"))].status is Status.FAIL
    assert found[("EBS-001", NODE_LT.format("system"))].status is Status.PASS  # the negative
    assert found[("EBS-001", "module.scratch[1].aws_ebs_volume.this")].status is Status.FAIL


def test_a_remote_call_not_installed_is_unknown_at_the_call(root: Path) -> None:
    found = _findings(root)
    vpc = found[("TF-001", "module.vpc")]
    assert vpc.status is Status.UNKNOWN
    assert vpc.location["file"].endswith("main.tf") and vpc.location["start_line"] == 31
    assert "terraform-aws-modules/vpc/aws" in vpc.message and "5.8.1" in vpc.message
    assert "terraform init" in vpc.message and "--fetch-modules" in vpc.message
    # the installed calls are not reported as unread
    assert [k for k in found if k[0] == "TF-001"] == [("TF-001", "module.vpc")]


def test_without_modules_json_every_remote_call_is_unknown(root: Path) -> None:
    shutil.rmtree(root / ".terraform")
    result = scan_paths([root])
    assert [r.id for r in result.resources] == ["module.eks", "module.scratch", "module.vpc"]
    found = _findings(root)
    assert {k for k, f in found.items() if f.status is Status.UNKNOWN} == {
        ("TF-001", "module.eks"), ("TF-001", "module.scratch"), ("TF-001", "module.vpc")}
    assert not [f for f in found.values() if f.status in (Status.PASS, Status.FAIL)]
    scratch = found[("TF-001", "module.scratch")]
    assert "volumes/scratch?ref=v1.4.0" in scratch.message


def test_a_nested_call_not_installed_is_unknown_at_its_own_call(root: Path) -> None:
    doc = json.loads((root / ".terraform/modules/modules.json").read_text())
    doc["Modules"] = [m for m in doc["Modules"] if not m["Key"].startswith("eks.")]
    (root / ".terraform/modules/modules.json").write_text(json.dumps(doc))
    found = _findings(root)
    call = found[("TF-001", "module.eks.module.eks_managed_node_group")]  # once, not per key
    assert call.status is Status.UNKNOWN
    assert call.location["file"].endswith(".terraform/modules/eks/main.tf")
    assert call.location["start_line"] == 18
    assert ("EBS-001", NODE_LT.format("gpu")) not in found


def test_strict_makes_an_unread_module_fail_the_scan(root: Path) -> None:
    shutil.rmtree(root / ".terraform")
    runner = CliRunner()
    plain = runner.invoke(cli, ["scan", str(root), "-q"])
    assert plain.exit_code == 0, plain.output
    for flag in ("--strict", "--fail-on-unknown"):
        strict = runner.invoke(cli, ["scan", str(root), "-q", flag])
        assert strict.exit_code == 1, (flag, strict.output)


def test_a_credential_in_a_source_never_reaches_the_report(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'module "m" {\n  source = "git::https://deploy:s3cr3tTOKEN@git.example.com/m.git'
        '?ref=v1"\n}\n'
        'module "n" {\n  source = "git::https://ghp_abcdefABCDEF0123@github.com/o/n.git"\n}\n')
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["scan", str(tmp_path), "-q", "--format", "json", "-o",
                                   str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert "s3cr3tTOKEN" not in text and "deploy:" not in text and "ghp_abc" not in text
    assert "git.example.com/m.git?ref=v1" in text and "REDACTED@" in text


@pytest.mark.parametrize(("old", "new", "address", "says"), [
    ('version = "~> 20.0"', 'version = "~> 21.0"', "module.eks", "at version 20.8.5"),
    ("?ref=v1.4.0", "?ref=v1.5.0", "module.scratch", "from another source"),
])
def test_a_module_installed_for_another_source_or_version_is_not_read(
        root: Path, old: str, new: str, address: str, says: str) -> None:
    """terraform refuses to plan until init runs again: the old module is not judged as the
    new one."""
    main = root / "main.tf"
    main.write_text(main.read_text().replace(old, new))
    found = _findings(root)
    call = found[("TF-001", address)]
    assert call.status is Status.UNKNOWN
    assert says in call.message and "terraform init again" in call.message
    assert not [k for k, f in found.items() if k[1].startswith(address + ".") or
                k[1].startswith(address + "[")]
    # the other installed calls are still read
    others = {"module.eks": "module.scratch[0].aws_ebs_volume.this",
              "module.scratch": NODE_LT.format("gpu")}
    assert found[("EBS-001", others[address])].status is Status.FAIL
