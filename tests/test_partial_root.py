"""A Terraform root module that was not read whole gives no verdict.

A file of it that does not parse, a local module it calls that is missing or broken, a
terraform.tfvars that does not parse, instances past the budget: what was not read may be what a
verdict leans on (the account's encryption default, the S3 endpoint, a variable's value), and
terraform itself would refuse to plan the configuration. Every result on the root's resources is
ERROR naming what was not read; other root modules of the same scan are judged as usual; a remote
module that is not fetched is a documented limit (its outputs are UNKNOWN), not a broken root.
"""

from __future__ import annotations

from pathlib import Path

from scanner.engine.evaluate import evaluate
from scanner.model import Gap, Provenance, Resource, SourceKind, Status
from scanner.sources.scan import scan_paths

VOLUME = ('resource "aws_ebs_volume" "data" {\n  availability_zone = "us-east-1a"\n'
          "  size              = 100\n}\n")


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _verdicts(*paths: Path) -> dict[tuple[str, str], object]:
    result = scan_paths(list(paths))
    return {(f.policy_id, f.resource["id"]): f
            for f in evaluate(result.resources, gaps=result.gaps)}


def test_a_file_that_does_not_parse_leaves_no_verdict_in_its_root(tmp_path: Path) -> None:
    """The encryption default is in the broken file: EBS-001 FAILed the volume before."""
    root = _write(tmp_path / "prod", {
        "main.tf": VOLUME,
        "defaults.tf": 'resource "aws_ebs_encryption_by_default" "on" {\n  enabled = true\n',
    })
    found = _verdicts(root)[("EBS-001", "aws_ebs_volume.data")]
    assert found.status is Status.ERROR, found.message
    assert "was not read whole" in found.message and "defaults.tf:3" in found.message
    assert found.evidence["unread"]


def test_the_other_roots_of_the_scan_are_judged(tmp_path: Path) -> None:
    broken = _write(tmp_path / "broken", {"main.tf": VOLUME, "bad.tf": "resource {\n"})
    healthy = _write(tmp_path / "healthy", {"main.tf": VOLUME})
    result = scan_paths([broken, healthy])
    by_root = {(f.resource["root"].rsplit("/", 1)[-1], f.policy_id): f.status
               for f in evaluate(result.resources, gaps=result.gaps)}
    assert by_root[("broken", "EBS-001")] is Status.ERROR
    assert by_root[("healthy", "EBS-001")] is Status.FAIL  # no default here: a true FAIL
    assert [g.scope.rsplit("/", 1)[-1] for g in result.gaps] == ["broken"]


def test_a_local_module_that_is_missing_or_broken(tmp_path: Path) -> None:
    call = 'module "defaults" {\n  source = "./modules/defaults"\n}\n'
    missing = _write(tmp_path / "missing", {"main.tf": VOLUME + call})
    broken = _write(tmp_path / "broken", {"main.tf": VOLUME + call,
                                          "modules/defaults/main.tf": "resource \"x\" {\n"})
    for root in (missing, broken):
        found = _verdicts(root)[("EBS-001", "aws_ebs_volume.data")]
        assert found.status is Status.ERROR, (root.name, found.message)


def test_a_tfvars_file_that_does_not_parse(tmp_path: Path) -> None:
    """The variable keeps its default (encrypted) where the file would have said false."""
    root = _write(tmp_path / "vars", {
        "main.tf": 'variable "encrypted" {\n  default = true\n}\n'
                   'resource "aws_ebs_volume" "data" {\n  availability_zone = "us-east-1a"\n'
                   "  encrypted         = var.encrypted\n}\n",
        "terraform.tfvars": "encrypted = false\n}\n",
    })
    found = _verdicts(root)[("EBS-001", "aws_ebs_volume.data")]
    assert found.status is Status.ERROR and "terraform.tfvars" in found.message


def test_instances_past_the_budget(tmp_path: Path) -> None:
    many = "".join(f'resource "aws_ebs_volume" "many{i}" {{\n  count = 10000\n'
                   '  availability_zone = "us-east-1a"\n  encrypted = true\n}\n'
                   for i in range(6))  # 60,000 instances: past the root's 50,000
    root = _write(tmp_path / "big", {"main.tf": VOLUME + many})
    found = _verdicts(root)[("EBS-001", "aws_ebs_volume.data")]
    assert found.status is Status.ERROR and "not expanded" in found.message


def test_negatives_a_whole_root_and_an_unfetched_remote_module_keep_their_verdicts(
        tmp_path: Path) -> None:
    whole = _write(tmp_path / "whole", {"main.tf": VOLUME})
    assert _verdicts(whole)[("EBS-001", "aws_ebs_volume.data")].status is Status.FAIL
    remote = _write(tmp_path / "remote", {"main.tf": VOLUME + (
        'module "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n}\n')})
    result = scan_paths([remote])
    assert result.gaps == []
    found = {(f.policy_id, f.resource["id"]): f for f in evaluate(result.resources)}
    assert found[("TF-001", "module.vpc")].status is Status.UNKNOWN  # "run terraform init"
    assert found[("EBS-001", "aws_ebs_volume.data")].status is Status.FAIL


def test_a_root_module_gap_never_reaches_live_resources_or_other_roots() -> None:
    def volume(source: SourceKind, scope: str) -> Resource:
        return Resource(kind="ec2.volume", id=f"v-{scope}", attrs={"Encrypted": False},
                        provenance=Provenance(source, file="main.tf"), scope=scope)

    gap = Gap(scope="123456789012/us-east-1", kinds=("*",), reason="the root module ... was "
              "not read whole", iac=True)
    live = volume(SourceKind.AWS, "123456789012/us-east-1")
    other = volume(SourceKind.TERRAFORM_HCL, "other")
    same = volume(SourceKind.TERRAFORM_HCL, "123456789012/us-east-1")
    statuses = [f.status for f in evaluate([live], gaps=[gap], policy_ids=["EBS-001"])]
    assert statuses == [Status.FAIL]  # the live volume: not in a root module's hole
    statuses = [f.status for f in evaluate([same], gaps=[gap], policy_ids=["EBS-001"])]
    assert statuses == [Status.ERROR]
    assert [f.status for f in evaluate([other], gaps=[gap], policy_ids=["EBS-001"])] == [
        Status.FAIL]
