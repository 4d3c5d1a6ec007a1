"""The engine's gap rule: in an (account, region) where a kind a policy reads could not be read,
that policy gives no PASS, FAIL or UNKNOWN there; its results are ERROR naming the failed call,
and the policies that do not read the kind keep theirs."""

from __future__ import annotations

from typing import Any

from scanner.engine.evaluate import run
from scanner.model import Finding, Gap, Provenance, Resource, Skip, SourceKind, Status

ACCOUNT = "123456789012"
EAST, WEST = "us-east-1", "us-west-2"


def live(kind: str, rid: str, region: str = EAST, skips: tuple[Skip, ...] = (),
         **attrs: Any) -> Resource:
    return Resource(kind=kind, id=rid, attrs=attrs,
                    provenance=Provenance(SourceKind.AWS, account=ACCOUNT, region=region),
                    scope=f"{ACCOUNT}/{region}", declared=False, aliases=(rid,), skips=skips)


def estate(region: str) -> list[Resource]:
    """A GPU instance with a public IP in a VPC without an S3 endpoint; an unencrypted volume."""
    return [
        live("ec2.vpc", f"vpc-{region}", region, VpcId=f"vpc-{region}"),
        live("ec2.subnet", f"subnet-{region}", region, SubnetId=f"subnet-{region}",
             VpcId=f"vpc-{region}", MapPublicIpOnLaunch=False),
        live("ec2.instance", f"i-{region}", region, InstanceType="g5.xlarge",
             SubnetId=f"subnet-{region}", State="running", PublicIpAddress="203.0.113.7"),
        live("ec2.volume", f"vol-{region}", region, Encrypted=False, Size=10),
        live("ec2.ebs_defaults", f"{ACCOUNT}/{region}", region, EbsEncryptionByDefault=True),
    ]


def gap(kinds: tuple[str, ...], call: str, region: str = EAST) -> Gap:
    return Gap(scope=f"{ACCOUNT}/{region}", kinds=kinds, reason=f"{call}: access denied (test)",
               account=ACCOUNT, region=region)


def verdicts(resources: list[Resource], gaps: list[Gap], *policies: str,
             include_passed: bool = True) -> dict[tuple[str, str], Finding]:
    found = run(resources, policy_ids=policies, gaps=gaps, include_passed=include_passed)
    return {(f.policy_id, f.resource["id"]): f for f in found.findings}


def status(found: dict[tuple[str, str], Finding]) -> dict[tuple[str, str], str]:
    return {k: f.status.value for k, f in found.items()}


def test_without_gaps_the_estate_has_verdicts() -> None:
    found = status(verdicts(estate(EAST), [], "VPC-001", "VPC-004", "EBS-001", "EBS-002"))
    assert found == {("VPC-001", f"vpc-{EAST}"): "FAIL", ("VPC-004", f"i-{EAST}"): "FAIL",
                     ("EBS-001", f"vol-{EAST}"): "FAIL",
                     ("EBS-002", f"{ACCOUNT}/{EAST}"): "PASS"}


def test_a_verdict_made_without_data_the_policy_reads_is_an_error_naming_the_call() -> None:
    endpoints = gap(("ec2.vpc_endpoint",), "ec2:DescribeVpcEndpoints")
    found = verdicts(estate(EAST) + estate(WEST), [endpoints], "VPC-001", "VPC-004")
    error = found[("VPC-001", f"vpc-{EAST}")]
    assert error.status is Status.ERROR
    assert error.message == ("could not evaluate: ec2.vpc_endpoint not readable here: "
                             "ec2:DescribeVpcEndpoints: access denied (test)")
    assert error.evidence == {"missing_kinds": ["ec2.vpc_endpoint"],
                              "unread": ["ec2:DescribeVpcEndpoints: access denied (test)"]}
    assert error.savings is None
    # the resource keeps its identity (and fingerprint) so a diff shows it changed status
    plain = verdicts(estate(EAST), [], "VPC-001")[("VPC-001", f"vpc-{EAST}")]
    assert error.id == plain.id and error.resource == plain.resource
    # the VPC carries the error: no scope-level ERROR beside it
    assert ("VPC-001", f"{ACCOUNT}/{EAST}") not in found
    # another region, and a policy that does not read endpoints, keep their verdicts
    assert found[("VPC-001", f"vpc-{WEST}")].status is Status.FAIL
    assert found[("VPC-004", f"i-{EAST}")].status is Status.FAIL
    assert {k for k, f in found.items() if f.status is Status.ERROR} == {
        ("VPC-001", f"vpc-{EAST}")}


def test_pass_and_unknown_are_errors_too_and_not_counted_as_passed() -> None:
    resources = estate(EAST)
    resources[2] = live("ec2.instance", f"i-{EAST}", InstanceType="g5.xlarge",
                        SubnetId=f"subnet-{EAST}", State="running")  # no public IP: PASS
    subnets = gap(("ec2.subnet",), "ec2:DescribeSubnets")
    plain = verdicts(resources, [], "VPC-004", include_passed=False)
    assert plain == {}  # a PASS is only counted
    found = verdicts(resources, [subnets], "VPC-004", include_passed=False)
    assert status(found) == {("VPC-004", f"i-{EAST}"): "ERROR"}
    evaluation = run(resources, policy_ids=["VPC-004"], gaps=[subnets], include_passed=False)
    assert evaluation.passed["VPC-004"] == 0
    unknown = live("ec2.launch_template", "lt-1",
                   LaunchTemplateData={"InstanceType": "g5.xlarge",
                                       "NetworkInterfaces": [{"AssociatePublicIpAddress": False}]})
    assert status(verdicts([unknown], [subnets], "VPC-004")) == {("VPC-004", "lt-1"): "ERROR"}


def test_a_policy_with_no_result_in_the_region_gets_one_scope_error() -> None:
    volumes = gap(("ec2.volume",), "ec2:DescribeVolumes")
    resources = [r for r in estate(EAST) if r.kind != "ec2.volume"] + estate(WEST)
    found = verdicts(resources, [volumes], "EBS-001", "EBS-002")
    error = found[("EBS-001", f"{ACCOUNT}/{EAST}")]
    assert error.status is Status.ERROR and error.resource["kind"] == "scope"
    assert error.resource["account"] == ACCOUNT and error.resource["region"] == EAST
    assert "ec2:DescribeVolumes" in error.message
    assert found[("EBS-001", f"vol-{WEST}")].status is Status.FAIL
    assert found[("EBS-002", f"{ACCOUNT}/{EAST}")].status is Status.PASS  # reads no volumes


def test_a_missing_kind_the_policy_judges_gets_the_scope_error_beside_its_other_results() -> None:
    """VPC-004 judges instances and launch templates (that set a public IP flag): when the
    instances could not be read, its verdict on a template is an ERROR, and the scope ERROR
    says the instances are not there to be judged."""
    template = live("ec2.launch_template", "lt-1", LaunchTemplateData={
        "InstanceType": "g5.xlarge", "NetworkInterfaces": [{"AssociatePublicIpAddress": False}]})
    instances = gap(("ec2.instance",), "ec2:DescribeInstances")
    found = status(verdicts([template], [instances], "VPC-004"))
    assert found == {("VPC-004", "lt-1"): "ERROR", ("VPC-004", f"{ACCOUNT}/{EAST}"): "ERROR"}


def test_several_failed_calls_in_a_region_are_named_in_one_error() -> None:
    gaps = [gap(("ec2.vpc_endpoint",), "ec2:DescribeVpcEndpoints"),
            gap(("ec2.subnet",), "ec2:DescribeSubnets")]
    resources = [r for r in estate(EAST) if r.kind != "ec2.subnet"]
    found = verdicts(resources, gaps, "VPC-001")
    (error,) = found.values()
    assert error.message == (
        "could not evaluate: ec2.subnet, ec2.vpc_endpoint not readable here: "
        "ec2:DescribeVpcEndpoints: access denied (test); ec2:DescribeSubnets: access denied "
        "(test)")
    # without its subnet the GPU instance's VPC is not known: its VPC-001 verdict (UNKNOWN)
    # leans on what could not be read, and is that ERROR, on the instance (no scope ERROR
    # beside it: the instance carries it)
    assert error.resource["id"] == f"i-{EAST}"


def test_a_suppressed_fail_is_no_verdict_either() -> None:
    resources = estate(EAST)
    resources[3] = live("ec2.volume", f"vol-{EAST}", Encrypted=False,
                        skips=(Skip("EBS-001", "scratch", "tag gpuaudit:skip"),))
    assert status(verdicts(resources, [], "EBS-001")) == {("EBS-001", f"vol-{EAST}"): "SUPPRESSED"}
    defaults = gap(("ec2.ebs_defaults",), "ec2:GetEbsEncryptionByDefault")
    found = verdicts(resources, [defaults], "EBS-001")
    assert status(found) == {("EBS-001", f"vol-{EAST}"): "ERROR"}
    assert found[("EBS-001", f"vol-{EAST}")].suppression is None


def test_an_account_whose_regions_could_not_be_listed_has_no_verdict_anywhere() -> None:
    regions = Gap(scope=f"{ACCOUNT}/*", kinds=("ec2.volume",),
                  reason="ec2:DescribeRegions: access denied (test)", account=ACCOUNT, region="*")
    found = status(verdicts(estate(EAST) + estate(WEST), [regions], "EBS-001"))
    assert found == {("EBS-001", f"vol-{EAST}"): "ERROR", ("EBS-001", f"vol-{WEST}"): "ERROR",
                     ("EBS-001", f"{ACCOUNT}/*"): "ERROR"}


def test_iac_resources_are_never_in_a_live_gap() -> None:
    """An IaC scope is a directory: one named like ACCOUNT/REGION is still not the account."""
    iac = Resource(kind="ec2.volume", id="aws_ebs_volume.a", attrs={"Encrypted": False},
                   provenance=Provenance(SourceKind.TERRAFORM_PLAN, file="main.tf"),
                   scope=f"{ACCOUNT}/{EAST}")
    volumes = gap(("ec2.volume",), "ec2:DescribeVolumes")
    found = status(verdicts([iac], [volumes], "EBS-001"))
    assert found == {("EBS-001", "aws_ebs_volume.a"): "FAIL",
                     ("EBS-001", f"{ACCOUNT}/{EAST}"): "ERROR"}
