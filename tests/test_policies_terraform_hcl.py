"""Each policy on Terraform HCL, through the engine.

One failing and one passing root module per policy (tests/fixtures/hcl/policies/<case>/); the
exact (policy, resource, status) results are asserted, so a resource a policy should not look
at (no GPU, no spot) must give no result at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from policies import all_policies
from scanner.engine.config import Config
from scanner.engine.evaluate import evaluate
from scanner.model import Status
from scanner.sources.terraform.hcl.reader import load_terraform_dir
from tests.test_rightsizing_sources import UTILIZATION_POLICIES

POLICIES = Path(__file__).resolve().parent / "fixtures" / "hcl" / "policies"

F, P, U, S = Status.FAIL, Status.PASS, Status.UNKNOWN, Status.SUPPRESSED

CASES: list[tuple[str, tuple[str, ...], list[tuple[str, str, Status]]]] = [
    (
        "ebs001_fail",
        ("EBS-001",),
        [
            ("EBS-001", "aws_ebs_volume.plain", F),
            ("EBS-001", "aws_ebs_volume.absent", F),  # no default encryption in this root
            ("EBS-001", "aws_ebs_volume.from_var", U),  # variable with no value
            ("EBS-001", "aws_ebs_volume.skipped", S),  # comment above, with a reason
            ("EBS-001", "aws_ebs_volume.no_reason", F),  # a skip without a reason does not mute
            ("EBS-001", "aws_instance.gpu", F),  # ebs_block_device without encrypted
            ("EBS-001", "aws_launch_template.gpu", F),  # dynamic block, "false" as a string
            ("EBS-001", "aws_launch_configuration.lc", F),  # the AMI's root volume
            ("EBS-001", "module.disks[0].aws_ebs_volume.d", P),  # count.index == 0
            ("EBS-001", "module.disks[1].aws_ebs_volume.d", F),
        ],
    ),
    (
        "ebs001_pass",
        ("EBS-001",),
        [
            ("EBS-001", "aws_ebs_volume.explicit", P),
            ("EBS-001", "aws_ebs_volume.absent", P),  # default encryption on in this root
            ("EBS-001", "aws_ebs_volume.from_snapshot", P),  # the default encrypts it anyway
            ("EBS-001", 'aws_ebs_volume.each["a"]', P),  # optional(bool, true) default
            ("EBS-001", 'aws_ebs_volume.each["b"]', P),
            ("EBS-001", "aws_instance.gpu", P),
            ("EBS-001", "aws_launch_template.gpu", P),  # "true" as a string
            ("EBS-001", "module.disk.aws_ebs_volume.d", P),  # child module: same root scope
        ],
    ),
    (
        # created from a snapshot (tests/fixtures/hcl/policies/ebs001_snapshot/main.tf): a volume
        # from an encrypted snapshot is encrypted, and no snapshot's encryption is known here, so
        # without encrypted = true it is UNKNOWN (explicit false too); no snapshot still FAILs
        "ebs001_snapshot",
        ("EBS-001",),
        [
            ("EBS-001", "aws_ebs_volume.from_var", U),
            ("EBS-001", "aws_ebs_volume.from_data", U),  # nonsensitive(data.aws_ssm_parameter…)
            ("EBS-001", "aws_ebs_volume.literal", U),  # an id the scan cannot look into
            ("EBS-001", "aws_ebs_volume.explicit_false", U),  # false is ignored if it is encrypted
            ("EBS-001", "aws_ebs_volume.encrypted", P),
            ("EBS-001", "aws_ebs_volume.no_snapshot", F),
            ("EBS-001", "aws_ebs_volume.empty_snapshot", F),  # snapshot_id = "": none
            ("EBS-001", "aws_ebs_volume.null_snapshot", F),
            ("EBS-001", "aws_launch_template.cache", U),  # ml-container-cache's /dev/xvdb
            ("EBS-001", "aws_launch_template.cache_encrypted", P),
            ("EBS-001", "aws_launch_template.data_volume", F),
            ("EBS-001", "aws_instance.from_snapshot", U),  # ebs_block_device.snapshot_id
            ("EBS-001", "aws_instance.from_snapshot_encrypted", P),
            ("EBS-001", "aws_instance.no_snapshot", F),
            ("EBS-001", "aws_launch_configuration.from_snapshot", U),
        ],
    ),
    ("ebs002_fail", ("EBS-002",), [("EBS-002", "aws_ebs_encryption_by_default.off", F)]),
    ("ebs002_pass", ("EBS-002",), [("EBS-002", "aws_ebs_encryption_by_default.on", P)]),
    (
        "ebs003_fail",
        ("EBS-003",),
        [("EBS-003", "aws_ebs_volume.aws_managed", F), ("EBS-003", "aws_launch_template.gpu", F),
         ("EBS-003", "aws_ebs_volume.default_key", U)],  # the account's default key: not named
    ),
    (
        "ebs003_default_key",
        ("EBS-003",),
        [("EBS-003", "aws_ebs_volume.no_own_key", P), ("EBS-003", "aws_launch_template.gpu", P)],
    ),
    (
        "ebs003_pass",
        ("EBS-003",),
        [("EBS-003", "aws_ebs_volume.cmk", P), ("EBS-003", "aws_launch_template.gpu", P)],
    ),
    ("vpc001_fail", ("VPC-001",), [("VPC-001", "aws_vpc.gpu", F)]),  # interface endpoint only
    ("vpc001_pass", ("VPC-001",), [("VPC-001", "aws_vpc.gpu", P)]),
    (
        # GPU compute whose VPC cannot be told: UNKNOWN on the compute; no PASS on the VPC with
        # the endpoint, no FAIL on the one without (only the known part of "inference" places
        # it there); no VPC-002 result (no subnet of the scan to judge); VPC-003 UNKNOWN on the
        # endpoint, whose VPC may host the compute
        "vpc001_unknown",
        ("VPC-001", "VPC-002", "VPC-003"),
        [
            ("VPC-001", "aws_eks_node_group.gpu", U),  # var.private_subnets, no value
            ("VPC-001", "aws_autoscaling_group.trainers", U),  # terraform_remote_state output
            ("VPC-001", "aws_batch_compute_environment.gpu", U),  # ids no file declares
            ("VPC-001", "aws_instance.notebook", U),  # its subnet's vpc_id = var.vpc_id
            ("VPC-001", "aws_autoscaling_group.inference", U),  # one subnet of two unknown
            ("VPC-001", "aws_vpc.other", F),  # inference's known subnet is there
            ("VPC-003", "aws_vpc_endpoint.s3", U),  # no policy: fails if GPU compute is there
        ],
    ),
    (
        "vpc002_fail",
        ("VPC-002",),
        [("VPC-002", "aws_subnet.explicit", F), ("VPC-002", "aws_subnet.main_table", F)],
    ),
    (
        "vpc002_pass",
        ("VPC-002",),
        [("VPC-002", "aws_subnet.gpu[0]", P), ("VPC-002", "aws_subnet.gpu[1]", P)],
    ),
    (
        "vpc003_fail",
        ("VPC-003",),
        [("VPC-003", "aws_vpc_endpoint.no_policy", F), ("VPC-003", "aws_vpc_endpoint.open", F)],
    ),
    (
        "vpc003_pass",
        ("VPC-003",),
        [
            ("VPC-003", "aws_vpc_endpoint.restricted", P),  # jsonencode + for expression
            ("VPC-003", "aws_vpc_endpoint.conditional", P),  # data.aws_iam_policy_document
        ],
    ),
    (
        "vpc004_fail",
        ("VPC-004",),
        [
            ("VPC-004", "aws_instance.explicit", F),
            ("VPC-004", "aws_launch_template.eni", F),
            # aws_launch_template.plain sets no public IP itself: no result; the verdict is its
            # group's, which lands in the public subnet
            ("VPC-004", "aws_autoscaling_group.workers", F),  # public subnet routes to the IGW
            ("VPC-004", "aws_launch_configuration.public", F),
        ],
    ),
    (
        "vpc004_pass",
        ("VPC-004",),
        [
            ("VPC-004", "aws_instance.explicit", P),
            ("VPC-004", "aws_autoscaling_group.workers", P),  # maps public IPs, routes to NAT
            # the template and configuration set no public IP: judged on the groups
        ],
    ),
    (
        "spot_fail",
        ("SPOT-001", "SPOT-002"),
        [
            ("SPOT-001", "aws_spot_instance_request.too_high", F),
            ("SPOT-002", "aws_spot_instance_request.too_high", P),
            ("SPOT-001", "aws_spot_instance_request.no_cap", F),  # no max price = on-demand
            ("SPOT-002", "aws_spot_instance_request.no_cap", P),
            ("SPOT-001", "aws_spot_instance_request.too_low", P),
            ("SPOT-002", "aws_spot_instance_request.too_low", F),
            ("SPOT-001", "aws_launch_template.low", P),  # format() of arithmetic: "0.20"
            ("SPOT-002", "aws_launch_template.low", F),
            ("SPOT-001", "aws_autoscaling_group.mixed", F),  # 1.00 over both types' caps
            ("SPOT-002", "aws_autoscaling_group.mixed", P),
        ],
    ),
    (
        "spot_pass",
        ("SPOT-001", "SPOT-002"),
        [
            ("SPOT-001", "aws_spot_instance_request.capped", P),
            ("SPOT-002", "aws_spot_instance_request.capped", P),
            ("SPOT-001", "aws_launch_template.capped", P),
            ("SPOT-002", "aws_launch_template.capped", P),
            ("SPOT-001", "aws_spot_fleet_request.fleet", P),
            ("SPOT-002", "aws_spot_fleet_request.fleet", P),
        ],
    ),
    (
        "asg_fail",
        ("ASG-001", "ASG-002"),
        [
            ("ASG-001", "aws_autoscaling_group.all_on_demand", F),  # no spot: no ASG-002
            ("ASG-001", "aws_autoscaling_group.all_spot", F),  # desired absent: MinSize 4
            ("ASG-002", "aws_autoscaling_group.all_spot", F),
            ("ASG-001", "aws_autoscaling_group.lowest_price", F),
            ("ASG-002", "aws_autoscaling_group.lowest_price", F),
        ],
    ),
    (
        "asg004",  # a spot template inside a mixed instances policy: AWS rejects the group
        ("ASG-001", "ASG-002", "ASG-004"),
        [
            ("ASG-004", "aws_autoscaling_group.rejected", F),  # and nothing else is judged
            ("ASG-001", "aws_autoscaling_group.accepted", P),
            ("ASG-002", "aws_autoscaling_group.accepted", P),
            ("ASG-004", "aws_autoscaling_group.accepted", P),
        ],
    ),
    (
        "asg_pass",
        ("ASG-001", "ASG-002"),
        [
            ("ASG-001", "aws_autoscaling_group.workers", P),
            ("ASG-002", "aws_autoscaling_group.workers", P),
        ],
    ),
    # -- ASG-003 / SPOT-003 ------------------------------------------------------------------
    (
        "asg003_fail",
        ("ASG-003",),
        [
            ("ASG-003", "aws_autoscaling_group.cpu_tracking", F),
            ("ASG-003", "aws_autoscaling_group.cpu_alarm", F),  # simple policy, CPU alarm
            ("ASG-003", "aws_autoscaling_group.unknown_metric", U),  # var without a value
            ("ASG-003", "aws_autoscaling_group.orphan_step", U),  # no alarm triggers it
            # cpu_workers (m6i): not GPU; fixed: no scaling policy -- no result
        ],
    ),
    (
        "asg003_nodegroup",  # a CPU policy whose group is known only after apply
        ("ASG-003",),
        [("ASG-003", "aws_eks_node_group.gpu", U), ("ASG-003", "aws_autoscaling_group.fixed", U)],
    ),
    (
        "asg003_pass",
        ("ASG-003",),
        [
            ("ASG-003", "aws_autoscaling_group.gpu_tracking", P),
            ("ASG-003", "aws_autoscaling_group.queue", P),
            ("ASG-003", "aws_autoscaling_group.dcgm", P),  # the CPU policy is disabled
        ],
    ),
    (
        "spot003_fail",
        ("SPOT-003",),
        [
            ("SPOT-003", "aws_autoscaling_group.spot_mixed", F),  # a launch hook only
            ("SPOT-003", "aws_spot_instance_request.notebook", F),
            # on_demand: no spot; cpu_spot: not GPU -- no result
        ],
    ),
    (
        "spot003_pass",
        ("SPOT-003",),
        [
            ("SPOT-003", "aws_autoscaling_group.rebalance", P),
            ("SPOT-003", "aws_autoscaling_group.hooked", P),
            ("SPOT-003", "aws_autoscaling_group.hook_resource", P),
            ("SPOT-003", "aws_spot_fleet_request.rebalance", P),  # replacement_strategy
        ],
    ),
    ("spot003_rule", ("SPOT-003",), [("SPOT-003", "aws_spot_instance_request.worker", P)]),
    ("spot003_unknown", ("SPOT-003",), [("SPOT-003", "aws_instance.spot", U)]),
    # NET-001 and S3-001: every case in tests/test_net_s3_iac.py
    # COST-002 never FAILs in IaC (a budget may exist elsewhere in the account): every case in
    # tests/test_cost_budgets.py
    ("../../cost/tf_covered", ("COST-002",), [("COST-002", "aws_budgets_budget.ec2", P)]),
    ("../../cost/tf_other", ("COST-002",), []),
    ("../../net_s3/terraform_net", ("NET-001",), [
        ("NET-001", "aws_autoscaling_group.good", P),
        ("NET-001", "aws_autoscaling_group.no_efa", F),
        ("NET-001", "aws_autoscaling_group.single", P),
        ("NET-001", "aws_autoscaling_group.unknown_size", U),
        ("NET-001", "aws_autoscaling_group.spread", F)]),
    ("../../net_s3/terraform_s3_orphan", ("S3-001",), [("S3-001", "aws_s3_bucket.ckpt", U)]),
    ("../../net_s3/terraform_s3", ("S3-001",), [
        ("S3-001", "aws_s3_bucket.ckpt", P), ("S3-001", "aws_s3_bucket.models", F),
        ("S3-001", "aws_s3_bucket.old", P), ("S3-001", "aws_s3_bucket.archive_tiered", P),
        ("S3-001", "aws_s3_bucket.disabled", F), ("S3-001", "aws_s3_bucket.prefixed", F),
        ("S3-001", "aws_s3_bucket.named_by_address_ckpt", U)]),
]


def _results(name: str, policy_ids: tuple[str, ...]) -> list[tuple[str, str, Status]]:
    source = load_terraform_dir([POLICIES / name])
    assert source.errors == []
    config = Config(policies={"EBS-003": {"enabled": True}})
    findings = evaluate(source.resources, config=config, policy_ids=policy_ids)
    return [(f.policy_id, f.resource["id"], f.status) for f in findings]


@pytest.mark.parametrize(("name", "policy_ids", "expected"), CASES, ids=[c[0] for c in CASES])
def test_policy_results(
    name: str, policy_ids: tuple[str, ...], expected: list[tuple[str, str, Status]]
) -> None:
    assert sorted(_results(name, policy_ids)) == sorted(expected)


def test_every_policy_has_a_failing_and_a_passing_case() -> None:
    supported = {pid for pid, pol in all_policies().items() if "H" in pol.sources
                 and pid not in UTILIZATION_POLICIES  # tests/test_rightsizing_sources.py
                 and pid != "TF-001"}  # only ever UNKNOWN: tests/test_tf_modules_*.py
    failing = {pid for _, _, exp in CASES for pid, _, status in exp if status is F}
    passing = {pid for _, _, exp in CASES for pid, _, status in exp if status is P}
    assert supported - NO_IAC_FAIL <= failing and supported <= passing


# Policies that never FAIL in IaC by design: COST-002 cannot know that no budget exists
NO_IAC_FAIL = {"COST-002"}


def test_findings_point_at_the_source_lines() -> None:
    source = load_terraform_dir([POLICIES / "ebs001_fail"])
    findings = evaluate(source.resources, policy_ids=["EBS-001"])
    by_id = {f.resource["id"]: f for f in findings}
    loc = by_id["aws_ebs_volume.plain"].location
    assert loc is not None and (loc["start_line"], loc["end_line"]) == (8, 12)
    assert loc["file"].endswith("ebs001_fail/main.tf")
    child = by_id["module.disks[1].aws_ebs_volume.d"].location
    assert child is not None and child["file"].endswith("ebs001_fail/modules/disk/main.tf")
    skipped = by_id["aws_ebs_volume.skipped"]
    assert skipped.suppression is not None
    assert skipped.suppression["reason"] == "scratch volume, wiped by the nightly job"
    assert skipped.suppression["by"].endswith("ebs001_fail/main.tf:25")
    assert [(n.line, "no reason" in n.message) for n in source.notices] == [(32, True)]


def test_ebs001_unknown_from_a_snapshot_names_the_snapshot_attribute() -> None:
    source = load_terraform_dir([POLICIES / "ebs001_snapshot"])
    by_id = {f.resource["id"]: f for f in evaluate(source.resources, policy_ids=["EBS-001"])}
    cache = by_id["aws_launch_template.cache"]
    assert cache.message.startswith("cannot tell whether /dev/xvdb is encrypted: its snapshot "
                                    "(LaunchTemplateData.BlockDeviceMappings[1].Ebs.SnapshotId)"
                                    " is not known: data.aws_ssm_parameter.snapshot_id")
    literal = by_id["aws_ebs_volume.literal"].message
    assert "snap-0123456789abcdef0 (SnapshotId)" in literal
    assert "encrypted exactly when the snapshot is" in literal
    assert "does not decrypt" in by_id["aws_ebs_volume.explicit_false"].message


def test_ebs003_is_off_unless_enabled() -> None:
    source = load_terraform_dir([POLICIES / "ebs003_fail"])
    assert not [f for f in evaluate(source.resources) if f.policy_id == "EBS-003"]


def _judged(directory: Path, policy: str) -> list[tuple[str, Status]]:
    """(resource id, status) of each result of ``policy`` on the Terraform in ``directory``."""
    source = load_terraform_dir([directory])
    return [(f.resource["id"], f.status) for f in evaluate(source.resources, policy_ids=[policy])]


def test_asg_001_with_an_unknown_max_size_is_unknown_not_fail(tmp_path: Path) -> None:
    # a group fixed at one or two instances is not judged; with MaxSize not known, the group
    # may be one of those: its out-of-band split is UNKNOWN, never a FAIL
    (tmp_path / "main.tf").write_text("""
variable "max" {}
resource "aws_launch_template" "gpu" {
  instance_type = "p4d.24xlarge"
}
resource "aws_autoscaling_group" "unknown_max" {
  min_size            = 1
  max_size            = var.max
  vpc_zone_identifier = ["subnet-1"]
  launch_template { id = aws_launch_template.gpu.id }
}
resource "aws_autoscaling_group" "grows" {
  min_size            = 1
  max_size            = 4
  vpc_zone_identifier = ["subnet-1"]
  launch_template { id = aws_launch_template.gpu.id }
}
""")
    got = set(_judged(tmp_path, "ASG-001"))
    assert got == {("aws_autoscaling_group.unknown_max", Status.UNKNOWN),
                   ("aws_autoscaling_group.grows", Status.FAIL)}


def test_bools_are_read_as_terraform_converts_them(tmp_path: Path) -> None:
    # terraform: "true"/"1" and "false"/"0" are bools; a number, "TRUE" or " true" is refused
    # (verified with terraform 1.11 console: tobool(1), tobool("TRUE") fail; tobool("1") = true)
    cases = {"one": "1", "num": 1, "upper": '"TRUE"', "blank": '" true"', "zero": '"0"',
             "yes": '"true"'}
    (tmp_path / "main.tf").write_text("".join(
        f'resource "aws_ebs_volume" "{name}" {{\n  availability_zone = "us-east-1a"\n'
        f'  size = 1\n  encrypted = {value if name != "one" else chr(34) + "1" + chr(34)}\n}}\n'
        for name, value in cases.items()))
    got = {rid.split(".")[1]: status for rid, status in _judged(tmp_path, "EBS-001")}
    assert got == {"one": Status.PASS, "num": Status.UNKNOWN, "upper": Status.UNKNOWN,
                   "blank": Status.UNKNOWN, "zero": Status.FAIL, "yes": Status.PASS}


def test_encryption_by_default_covers_only_its_own_provider_configuration(
        tmp_path: Path) -> None:
    # EBS encryption by default is per account and region: enabled through the default
    # provider (us-east-1), it says nothing of a volume created through aws.west (us-west-2)
    (tmp_path / "main.tf").write_text("""
provider "aws" { region = "us-east-1" }
provider "aws" {
  alias  = "west"
  region = "us-west-2"
}
resource "aws_ebs_encryption_by_default" "east" { enabled = true }
resource "aws_ebs_volume" "east" {
  availability_zone = "us-east-1a"
  size              = 1
}
resource "aws_ebs_volume" "west" {
  provider          = aws.west
  availability_zone = "us-west-2a"
  size              = 1
}
resource "aws_ebs_encryption_by_default" "west" {
  provider = aws.west
  enabled  = false
}
""")
    got = dict(_judged(tmp_path, "EBS-001"))
    assert got == {"aws_ebs_volume.east": Status.PASS, "aws_ebs_volume.west": Status.FAIL}
    (tmp_path / "main.tf").write_text((tmp_path / "main.tf").read_text().replace(
        'resource "aws_ebs_encryption_by_default" "west" {\n  provider = aws.west\n'
        '  enabled  = false\n}\n', ""))
    got = dict(_judged(tmp_path, "EBS-001"))
    assert got == {"aws_ebs_volume.east": Status.PASS, "aws_ebs_volume.west": Status.UNKNOWN}


def test_a_module_given_the_default_provider_keeps_it(tmp_path: Path) -> None:
    # providers = { aws = aws } passes the default provider on: its volumes lean on the root's
    # encryption by default; providers = { aws = aws.west } does not
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "main.tf").write_text(
        'resource "aws_ebs_volume" "v" {\n  availability_zone = "a"\n  size = 1\n}\n')
    (tmp_path / "main.tf").write_text("""
provider "aws" { region = "us-east-1" }
provider "aws" {
  alias  = "west"
  region = "us-west-2"
}
resource "aws_ebs_encryption_by_default" "on" { enabled = true }
module "same" {
  source    = "./m"
  providers = { aws = aws }
}
module "west" {
  source    = "./m"
  providers = { aws = aws.west }
}
module "plain" { source = "./m" }
""")
    got = dict(_judged(tmp_path, "EBS-001"))
    assert got == {"module.same.aws_ebs_volume.v": Status.PASS,
                   "module.plain.aws_ebs_volume.v": Status.PASS,
                   "module.west.aws_ebs_volume.v": Status.UNKNOWN}


def test_vpc_002_with_the_endpoint_route_tables_not_known_is_unknown(tmp_path: Path) -> None:
    # route_table_ids = var.rts (no value): which tables the endpoint covers is not known, so
    # "does not cover the subnet's table" is no FAIL
    (tmp_path / "main.tf").write_text("""
variable "rts" { type = list(string) }
resource "aws_vpc" "v" { cidr_block = "10.1.0.0/16" }
resource "aws_subnet" "s" {
  vpc_id     = aws_vpc.v.id
  cidr_block = "10.1.1.0/24"
}
resource "aws_vpc_endpoint" "s3" {
  vpc_id          = aws_vpc.v.id
  service_name    = "com.amazonaws.us-east-1.s3"
  route_table_ids = var.rts
}
resource "aws_instance" "gpu" {
  ami           = "ami-12c6146b"
  instance_type = "p4d.24xlarge"
  subnet_id     = aws_subnet.s.id
}
""")
    got = _judged(tmp_path, "VPC-002")
    assert got == [("aws_subnet.s", Status.UNKNOWN)]


def test_vpc_004_with_the_routes_not_known_is_unknown_not_pass(tmp_path: Path) -> None:
    # a subnet that maps public IPs, whose table's routes come from dynamic "route" blocks
    # over a variable with no value: it may route 0.0.0.0/0 to the internet gateway
    (tmp_path / "main.tf").write_text("""
variable "routes" { type = list(object({ cidr = string, gw = string })) }
resource "aws_vpc" "main" { cidr_block = "10.0.0.0/16" }
resource "aws_internet_gateway" "igw" { vpc_id = aws_vpc.main.id }
resource "aws_route_table" "rt" {
  vpc_id = aws_vpc.main.id
  dynamic "route" {
    for_each = var.routes
    content {
      cidr_block = route.value.cidr
      gateway_id = route.value.gw
    }
  }
}
resource "aws_subnet" "s" {
  vpc_id                  = aws_vpc.main.id
  cidr_block              = "10.0.1.0/24"
  map_public_ip_on_launch = true
}
resource "aws_route_table_association" "a" {
  subnet_id      = aws_subnet.s.id
  route_table_id = aws_route_table.rt.id
}
resource "aws_instance" "gpu" {
  ami           = "ami-12c6146b"
  instance_type = "p4d.24xlarge"
  subnet_id     = aws_subnet.s.id
}
""")
    got = _judged(tmp_path, "VPC-004")
    assert got == [("aws_instance.gpu", Status.UNKNOWN)]


def test_vpc_004_with_network_interfaces_not_known_is_unknown_not_pass(tmp_path: Path) -> None:
    # dynamic "network_interfaces" over a variable with no value: any of them may set
    # associate_public_ip_address = true
    (tmp_path / "main.tf").write_text("""
variable "nis" { type = list(object({ pub = bool })) }
resource "aws_launch_template" "lt" {
  instance_type = "g5.xlarge"
  dynamic "network_interfaces" {
    for_each = var.nis
    content {
      associate_public_ip_address = network_interfaces.value.pub
    }
  }
}
""")
    got = _judged(tmp_path, "VPC-004")
    assert got == [("aws_launch_template.lt", Status.UNKNOWN)]


def test_vpc_001_names_what_did_not_resolve_on_the_compute() -> None:
    source = load_terraform_dir([POLICIES / "vpc001_unknown"])
    findings = evaluate(source.resources, policy_ids=["VPC-001", "VPC-002", "VPC-003"])
    by = {(f.policy_id, f.resource["id"]): f for f in findings}
    group = by[("VPC-001", "aws_eks_node_group.gpu")]
    assert "var.private_subnets has no value" in group.message
    assert "it may run in one of aws_vpc.shared, aws_vpc.other, or in a VPC outside the scan" \
        in group.message
    loc = group.location
    assert loc is not None and loc["file"].endswith("vpc001_unknown/main.tf")
    assert loc["start_line"] == 54
    assert "data.terraform_remote_state.net" in by[("VPC-001", "aws_autoscaling_group.trainers")] \
        .message
    assert "subnets subnet-0a1b2c3d4e5f60718, subnet-0a1b2c3d4e5f60719 are not in the scan" in \
        by[("VPC-001", "aws_batch_compute_environment.gpu")].message
    assert "var.vpc_id has no value" in by[("VPC-001", "aws_instance.notebook")].message
    partial = by[("VPC-001", "aws_autoscaling_group.inference")]
    assert partial.message.startswith("part of this GPU compute may run in a VPC that is not known")
    assert partial.evidence["vpcs_it_runs_in"] == ["aws_vpc.other"]
    assert "--var-file" in group.remediation["text"]
    endpoint = by[("VPC-003", "aws_vpc_endpoint.s3")]
    assert endpoint.message.startswith("whether its VPC hosts GPU compute is not known")
    assert "it would fail: endpoint has no policy" in endpoint.message


def test_gpu_compute_with_no_vpc_in_the_scan_gets_one_unknown_each(tmp_path: Path) -> None:
    # a repository holding only the GPU node groups; the network is another repository's
    (tmp_path / "main.tf").write_text("""
variable "private_subnets" { type = list(string) }
data "terraform_remote_state" "net" {
  backend = "s3"
  config  = { bucket = "b", key = "net.tfstate", region = "us-east-1" }
}
resource "aws_eks_node_group" "gpu" {
  cluster_name   = "ml"
  node_role_arn  = "arn:aws:iam::123456789012:role/node"
  subnet_ids     = var.private_subnets
  instance_types = ["p5.48xlarge"]
  scaling_config {
    desired_size = 1
    max_size     = 2
    min_size     = 0
  }
}
resource "aws_eks_node_group" "gpu_b" {
  cluster_name   = "ml"
  node_role_arn  = "arn:aws:iam::123456789012:role/node"
  subnet_ids     = concat(data.terraform_remote_state.net.outputs.subnets, var.private_subnets)
  instance_types = ["g6e.xlarge"]
  scaling_config {
    desired_size = 1
    max_size     = 2
    min_size     = 0
  }
}
resource "aws_eks_node_group" "cpu" {
  cluster_name   = "ml"
  node_role_arn  = "arn:aws:iam::123456789012:role/node"
  subnet_ids     = var.private_subnets
  instance_types = ["m6i.large"]
  scaling_config {
    desired_size = 1
    max_size     = 2
    min_size     = 0
  }
}
""")
    source = load_terraform_dir([tmp_path])
    findings = evaluate(source.resources, policy_ids=["VPC-001", "VPC-002", "VPC-003"])
    got = sorted((f.policy_id, f.resource["id"], f.status) for f in findings)
    assert got == [("VPC-001", "aws_eks_node_group.gpu", U),
                   ("VPC-001", "aws_eks_node_group.gpu_b", U)]  # not the CPU group
    for f in findings:
        assert f.message.endswith("no VPC beside it is in the scan"), f.message


def test_placed_gpu_compute_gets_no_result_of_its_own() -> None:
    # its VPC is known: VPC-001 judges the VPC, never the compute too
    source = load_terraform_dir([POLICIES / "vpc001_fail"])
    ids = [f.resource["id"] for f in evaluate(source.resources, policy_ids=["VPC-001"])]
    assert ids == ["aws_vpc.gpu"]


def test_vpc_003_doubts_only_endpoints_beside_the_compute_of_unknown_vpc(tmp_path: Path) -> None:
    # two root modules: the GPU root takes its subnets from a variable; the endpoint of the
    # other root is judged as before (no GPU compute known there: no result), the one beside
    # the compute is UNKNOWN (it applies if the compute runs in its VPC)
    gpu, net = tmp_path / "gpu", tmp_path / "net"
    gpu.mkdir()
    net.mkdir()
    endpoint = """
resource "aws_vpc" "v" { cidr_block = "10.0.0.0/16" }
resource "aws_vpc_endpoint" "s3" {
  vpc_id       = aws_vpc.v.id
  service_name = "com.amazonaws.us-east-1.s3"
}
"""
    (net / "main.tf").write_text(endpoint)
    (gpu / "main.tf").write_text(endpoint + """
variable "subnet_id" { type = string }
resource "aws_instance" "gpu" {
  ami           = "ami-12c6146b"
  instance_type = "g5.xlarge"
  subnet_id     = var.subnet_id
}
""")
    source = load_terraform_dir([gpu, net])
    findings = evaluate(source.resources, policy_ids=["VPC-001", "VPC-003"])
    got = sorted((f.policy_id, f.resource["id"], f.location["file"].split("/")[-2], f.status)
                 for f in findings if f.location)
    assert got == [("VPC-001", "aws_instance.gpu", "gpu", U),
                   ("VPC-003", "aws_vpc_endpoint.s3", "gpu", U)]


def test_asg_001_saving_only_at_a_split_inside_the_band(tmp_path: Path) -> None:
    """Terraform, as CloudFormation: no split of 2 instances is inside 20-40 % (0, 50, 100 %),
    so an all-on-demand group of 2 FAILs with no saving (it was priced at 0 of 2, a split the
    policy FAILs); 5 instances save down to 2 on-demand (40 %, the edge, inside)."""
    groups = "".join(f"""
resource "aws_autoscaling_group" "{name}" {{
  min_size            = 0
  max_size            = 64
  desired_capacity    = {desired}
  vpc_zone_identifier = ["subnet-1"]
  launch_template {{ id = aws_launch_template.gpu.id }}
}}
""" for name, desired in (("one", 1), ("two", 2), ("five", 5)))
    (tmp_path / "main.tf").write_text("""
resource "aws_launch_template" "gpu" {
  instance_type = "p4d.24xlarge"
}
resource "aws_autoscaling_group" "two_spot" {
  min_size            = 0
  max_size            = 64
  desired_capacity    = 2
  vpc_zone_identifier = ["subnet-1"]
  mixed_instances_policy {
    instances_distribution {
      on_demand_base_capacity                  = 0
      on_demand_percentage_above_base_capacity = 0
    }
    launch_template {
      launch_template_specification { launch_template_id = aws_launch_template.gpu.id }
      override { instance_type = "p4d.24xlarge" }
      override { instance_type = "p4de.24xlarge" }
    }
  }
}
""" + groups)
    source = load_terraform_dir([tmp_path])
    found = {f.resource["id"].split(".")[1]: f
             for f in evaluate(source.resources, policy_ids=["ASG-001"])}
    assert {rid: f.status for rid, f in found.items()} == dict.fromkeys(
        ("one", "two", "five", "two_spot"), Status.FAIL)
    for rid, size in (("one", "1 instance"), ("two", "2 instances"), ("two_spot", "2 instances")):
        f = found[rid]
        assert f.savings is None and f.evidence["target_on_demand"] is None
        assert f"no split of {size} is inside the band" in f.message
    assert "saving_why_none" in found["two"].evidence
    five = found["five"]
    assert five.evidence["target_on_demand"] == 2 and five.savings is not None
    assert "x 3 instances" in five.savings.basis and "2 of 5 = 40%" in five.savings.basis
