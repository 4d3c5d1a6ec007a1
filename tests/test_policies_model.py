"""Policies on hand-built normalized resources: the semantics of the catalogue, source-free."""

from __future__ import annotations

import datetime as dt

import pytest

from scanner.engine.config import Config
from scanner.engine.evaluate import evaluate, select_policies
from scanner.model import UNKNOWN, Gap, Provenance, Ref, Severity, Skip, SourceKind, Status, Unknown
from tests.model_builders import res


def results(resources, **kw):
    return {(f.policy_id, f.resource["id"]): f for f in evaluate(resources, **kw)}


def status(resources, policy, rid, **kw):
    found = results(resources, policy_ids=[policy], **kw)
    return found[(policy, rid)].status if (policy, rid) in found else None


def network(public: bool = False, endpoint: bool = False, covered: bool = True):
    rs = [
        res("ec2.vpc", "vpc"),
        res("ec2.subnet", "sub", VpcId=Ref("vpc"), MapPublicIpOnLaunch=public),
        res("ec2.internet_gateway", "igw", VpcId=Ref("vpc")),
        res("ec2.route_table", "rt", VpcId=Ref("vpc"),
            Routes=[{"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": Ref("igw")}]),
        res("ec2.route_table_association", "assoc", SubnetId=Ref("sub"), RouteTableId=Ref("rt")),
        res("ec2.route_table", "other", VpcId=Ref("vpc")),
    ]
    if endpoint:
        rs.append(res("ec2.vpc_endpoint", "s3", VpcId=Ref("vpc"),
                      ServiceName="com.amazonaws.us-east-1.s3",
                      RouteTableIds=[Ref("rt") if covered else Ref("other")]))
    return rs


def gpu_instance(rid="gpu", itype="g5.xlarge", **attrs):
    return res("ec2.instance", rid, InstanceType=itype, SubnetId=Ref("sub"),
               BlockDeviceMappings=[{"DeviceName": "root", "Ebs": {"Encrypted": True}}], **attrs)


# -- EBS -------------------------------------------------------------------------------------


@pytest.mark.parametrize("encrypted,expected", [(True, Status.PASS), (False, Status.FAIL),
                                                (None, Status.FAIL), (UNKNOWN, Status.UNKNOWN)])
def test_ebs001_volume(encrypted, expected):
    assert status([res("ec2.volume", "v", Encrypted=encrypted)], "EBS-001", "v") is expected


def test_ebs001_absent_passes_only_with_default_encryption_in_same_scope():
    vol = res("ec2.volume", "v", Size=10)
    on_here = res("ec2.ebs_defaults", "d", EbsEncryptionByDefault=True)
    on_elsewhere = res("ec2.ebs_defaults", "d2", scope="other", EbsEncryptionByDefault=True)
    assert status([vol, on_here], "EBS-001", "v") is Status.PASS
    assert status([vol, on_elsewhere], "EBS-001", "v") is Status.FAIL
    explicit_off = res("ec2.volume", "w", Encrypted=False)
    assert status([explicit_off, on_here], "EBS-001", "w") is Status.FAIL


@pytest.mark.parametrize("snapshot", ["snap-0123456789abcdef0", Unknown("var.snap has no value"),
                                      Ref("aws_ebs_snapshot.s", "id")])
@pytest.mark.parametrize("encrypted,expected", [(True, Status.PASS), (False, Status.UNKNOWN),
                                                (None, Status.UNKNOWN)])
def test_ebs001_volume_from_a_snapshot(snapshot, encrypted, expected):
    # a volume from an encrypted snapshot is encrypted whatever Encrypted says (false too), and
    # the model carries no snapshot's encryption: without Encrypted = true, not known
    vol = res("ec2.volume", "v", SnapshotId=snapshot, Encrypted=encrypted)
    found = results([vol], policy_ids=["EBS-001"])[("EBS-001", "v")]
    assert found.status is expected
    if expected is Status.UNKNOWN:
        assert "(SnapshotId)" in found.message
    # encryption by default encrypts it all the same (Encrypted unset)
    on = res("ec2.ebs_defaults", "d", EbsEncryptionByDefault=True)
    if encrypted is None:
        assert status([vol, on], "EBS-001", "v") is Status.PASS


@pytest.mark.parametrize("encrypted,expected", [(True, Status.PASS), (False, Status.FAIL)])
def test_ebs001_a_live_volume_from_a_snapshot_is_judged_on_its_own_state(encrypted, expected):
    # observed, a volume's Encrypted is the state: the snapshot it came from decides nothing
    vol = res("ec2.volume", "v", declared=False, SnapshotId="snap-0123456789abcdef0",
              Encrypted=encrypted)
    assert status([vol], "EBS-001", "v") is expected


def test_ebs001_a_mapping_from_a_snapshot():
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"BlockDeviceMappings": [
        {"DeviceName": "/dev/xvda", "Ebs": {"Encrypted": True}},
        {"DeviceName": "/dev/xvdb", "Ebs": {"SnapshotId": "snap-1"}},
        {"DeviceName": "/dev/xvdc", "Ebs": {"SnapshotId": "", "Encrypted": False}}]})
    found = results([lt], policy_ids=["EBS-001"])[("EBS-001", "lt")]
    # the empty snapshot id is none: /dev/xvdc is unencrypted, whatever /dev/xvdb is
    assert found.status is Status.FAIL and found.message.endswith(": /dev/xvdc")
    lt.attrs["LaunchTemplateData"]["BlockDeviceMappings"].pop()
    found = results([lt], policy_ids=["EBS-001"])[("EBS-001", "lt")]
    assert found.status is Status.UNKNOWN and found.message.startswith(
        "cannot tell whether /dev/xvdb is encrypted: it is created from the snapshot snap-1 "
        "(LaunchTemplateData.BlockDeviceMappings[1].Ebs.SnapshotId)")


def test_ebs001_launch_template_and_instance_root_device():
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"BlockDeviceMappings": [
        {"DeviceName": "/dev/sda1", "Ebs": {"Encrypted": True}},
        {"DeviceName": "/dev/sdb", "Ebs": {"Encrypted": False}}]})
    found = results([lt], policy_ids=["EBS-001"])[("EBS-001", "lt")]
    assert found.status is Status.FAIL and "/dev/sdb" in found.message
    bare = res("ec2.instance", "i", InstanceType="t3.micro")
    assert status([bare], "EBS-001", "i") is Status.FAIL  # AMI root volume, Encrypted unset


def test_ebs001_live_only_volumes_count():
    lt = res("ec2.launch_template", "lt", declared=False, LaunchTemplateData={
        "BlockDeviceMappings": [{"DeviceName": "/dev/sdb", "Ebs": {"Encrypted": False}}]})
    assert status([lt], "EBS-001", "lt") is None


@pytest.mark.parametrize("value,expected", [(True, Status.PASS), (False, Status.FAIL),
                                            (Unknown("var"), Status.UNKNOWN)])
def test_ebs002(value, expected):
    assert status([res("ec2.ebs_defaults", "d", EbsEncryptionByDefault=value)], "EBS-002",
                  "d") is expected


def test_ebs003_off_by_default_and_customer_key():
    assert "EBS-003" not in {p.id for p in select_policies()}
    aws_key = res("ec2.volume", "a", Encrypted=True, KmsKeyId="alias/aws/ebs")
    cmk = res("ec2.volume", "c", Encrypted=True, KmsKeyId=Ref("aws_kms_key.k", "arn"))
    assert status([aws_key], "EBS-003", "a") is Status.FAIL
    assert status([cmk], "EBS-003", "c") is Status.PASS
    enabled = Config(policies={"EBS-003": {"enabled": True}})
    assert ("EBS-003", "a") in results([aws_key], config=enabled)


def test_ebs003_no_key_named_is_the_account_default_key() -> None:
    """A volume that names no key uses the account's default EBS key: UNKNOWN unless the
    account's default key is read (a CMK passes, aws/ebs fails), never FAIL by assumption."""
    bare = res("ec2.volume", "b", Encrypted=True)
    assert status([bare], "EBS-003", "b") is Status.UNKNOWN
    for key, expected in (("arn:aws:kms:us-east-1:1:key/abc", Status.PASS),
                          ("arn:aws:kms:us-east-1:1:alias/aws/ebs", Status.FAIL)):
        defaults = res("ec2.ebs_defaults", "d", EbsEncryptionByDefault=True, KmsKeyId=key)
        assert status([bare, defaults], "EBS-003", "b") is expected, key


# -- VPC -------------------------------------------------------------------------------------


def test_vpc001_needs_gpu_compute_and_s3_gateway():
    assert status(network() + [gpu_instance()], "VPC-001", "vpc") is Status.FAIL
    assert status(network(endpoint=True) + [gpu_instance()], "VPC-001", "vpc") is Status.PASS
    cpu = gpu_instance(itype="m5.large")
    assert status(network() + [cpu], "VPC-001", "vpc") is None  # not applicable


def test_vpc001_interface_endpoint_does_not_count():
    rs = network() + [gpu_instance(), res("ec2.vpc_endpoint", "ifc", VpcId=Ref("vpc"),
                                          ServiceName="com.amazonaws.eu-west-1.s3",
                                          VpcEndpointType="Interface")]
    assert status(rs, "VPC-001", "vpc") is Status.FAIL


def test_vpc002_route_table_coverage_and_main_table():
    assert status(network(endpoint=True) + [gpu_instance()], "VPC-002", "sub") is Status.PASS
    uncovered = network(endpoint=True, covered=False) + [gpu_instance()]
    assert status(uncovered, "VPC-002", "sub") is Status.FAIL
    # no explicit association: the main table; endpoint covers the VPC's default table
    rs = [r for r in network() if r.id != "assoc"] + [gpu_instance(), res(
        "ec2.vpc_endpoint", "s3", VpcId=Ref("vpc"), ServiceName="com.amazonaws.x.s3",
        RouteTableIds=[Ref("vpc", "default_route_table_id")])]
    assert status(rs, "VPC-002", "sub") is Status.PASS
    assert status(network() + [gpu_instance()], "VPC-002", "sub") is None  # VPC-001 says it


@pytest.mark.parametrize("doc,expected", [
    (None, Status.FAIL),
    ({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*"}]},
     Status.FAIL),
    ({"Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": ["s3:*"]}]},
     Status.FAIL),
    ({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:*",
                     "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-1"}}}]},
     Status.PASS),
    ({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"}]},
     Status.PASS),
    (UNKNOWN, Status.UNKNOWN),
])
def test_vpc003_endpoint_policy(doc, expected):
    rs = network() + [gpu_instance(), res("ec2.vpc_endpoint", "ep", VpcId=Ref("vpc"),
                                          ServiceName="com.amazonaws.x.s3", PolicyDocument=doc)]
    assert status(rs, "VPC-003", "ep") is expected


def test_vpc004_explicit_flag_and_public_subnet():
    assert status(network() + [gpu_instance(AssociatePublicIpAddress=True)], "VPC-004",
                  "gpu") is Status.FAIL
    assert status(network(public=True) + [gpu_instance()], "VPC-004", "gpu") is Status.FAIL
    assert status(network(public=False) + [gpu_instance()], "VPC-004", "gpu") is Status.PASS
    explicit_off = gpu_instance(AssociatePublicIpAddress=False)
    assert status(network(public=True) + [explicit_off], "VPC-004", "gpu") is Status.PASS
    # MapPublicIpOnLaunch without a route to an internet gateway is not public
    no_igw = [r for r in network(public=True) if r.id != "rt"] + [
        res("ec2.route_table", "rt", VpcId=Ref("vpc"), Routes=[])]
    assert status(no_igw + [gpu_instance()], "VPC-004", "gpu") is Status.PASS


def test_vpc004_unknown_type_only_matters_when_it_would_fail():
    rs = network(public=True) + [gpu_instance(itype=Unknown("var.type has no default"))]
    assert status(rs, "VPC-004", "gpu") is Status.UNKNOWN
    rs = network(public=False) + [gpu_instance(itype=Unknown("var.type"))]
    assert status(rs, "VPC-004", "gpu") is None


def test_vpc004_live_public_ip():
    live = res("ec2.instance", "i-1", declared=False, InstanceType="p3.2xlarge",
               PublicIpAddress="3.3.3.3", State="running")
    assert status([live], "VPC-004", "i-1") is Status.FAIL


# -- SPOT ------------------------------------------------------------------------------------


def spot_lt(price):
    opts = {"MarketType": "spot"}
    if price is not None:
        opts["SpotOptions"] = {"MaxPrice": price}
    return res("ec2.launch_template", "lt", LaunchTemplateData={
        "InstanceType": "g5.xlarge", "InstanceMarketOptions": opts})


@pytest.mark.parametrize("price,s1,s2", [
    ("0.70", Status.PASS, Status.PASS),   # 0.70 <= 0.7 x 1.006
    ("0.90", Status.FAIL, Status.PASS),
    (None, Status.FAIL, Status.PASS),     # no cap counts as on-demand
    ("", Status.FAIL, Status.PASS),
    ("0.10", Status.PASS, Status.FAIL),   # below 0.25 x 1.006
])
def test_spot_caps(price, s1, s2):
    assert status([spot_lt(price)], "SPOT-001", "lt") is s1
    assert status([spot_lt(price)], "SPOT-002", "lt") is s2


def test_spot001_savings_basis_is_checkable():
    node = res("ec2.instance", "node", LaunchTemplate={"LaunchTemplateId": "lt"})
    f = results([spot_lt("0.90"), node], policy_ids=["SPOT-001"])[("SPOT-001", "lt")]
    assert f.savings is not None
    assert f.savings.usd_month == pytest.approx((0.90 - 0.7 * 1.006) * 730)
    assert "(0.9 - 0.7042) $/h x 730 h x 1 instance" in f.savings.basis
    assert "capacity: node: 1 instance" in f.savings.basis and "list price" in f.savings.basis
    # a consumer whose size is not known: per instance, and the basis says whose
    group = res("autoscaling.group", "g", DesiredCapacity=Unknown("var.nodes"), MinSize=0,
                MaxSize=4, LaunchTemplate={"LaunchTemplateId": "lt"})
    f = results([spot_lt("0.90"), group], policy_ids=["SPOT-001"])[("SPOT-001", "lt")]
    assert "x 730 h per instance" in f.savings.basis
    assert "g: capacity not known (var.nodes)" in f.savings.basis


def test_spot001_not_explicit_cap_param():
    cfg = Config(policies={"SPOT-001": {"require_explicit_cap": False}})
    assert status([spot_lt(None)], "SPOT-001", "lt", config=cfg) is Status.PASS


def test_spot_not_applicable_to_on_demand():
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceType": "g5.xlarge"})
    assert status([lt], "SPOT-001", "lt") is None


def test_spot_unknown_catalogue_price():
    lt = spot_lt("1.0")
    lt.attrs["LaunchTemplateData"]["InstanceType"] = "g99.huge"
    assert status([lt], "SPOT-001", "lt") is Status.UNKNOWN


# -- ASG -------------------------------------------------------------------------------------


def asg(desired=10, base=0, pct=30, types=("g5.xlarge", "g6.xlarge"), strategy=None, **extra):
    dist = {"OnDemandBaseCapacity": base, "OnDemandPercentageAboveBaseCapacity": pct}
    if strategy:
        dist["SpotAllocationStrategy"] = strategy
    return res("autoscaling.group", "asg", DesiredCapacity=desired, MinSize=0, MaxSize=20,
               MixedInstancesPolicy={"LaunchTemplate": {"Overrides": [
                   {"InstanceType": t} for t in types]}, "InstancesDistribution": dist}, **extra)


@pytest.mark.parametrize("desired,base,pct,expected", [
    (10, 0, 30, Status.PASS),
    (10, 0, 20, Status.PASS),   # bounds inclusive
    (10, 0, 40, Status.PASS),
    (10, 0, 10, Status.FAIL),
    (10, 0, 50, Status.FAIL),
    (3, 0, 30, Status.PASS),    # ceil(0.9) = 1 of 3 = 33.3%
    (10, 5, 0, Status.FAIL),    # base 5 of 10 = 50%
])
def test_asg001_share(desired, base, pct, expected):
    assert status([asg(desired, base, pct)], "ASG-001", "asg") is expected


def test_asg001_rounding_favours_on_demand():
    # 7 instances, 30% -> ceil(2.1) = 3 on-demand = 42.9% > 40
    f = results([asg(7, 0, 30)], policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert f.status is Status.FAIL and f.evidence["on_demand"] == 3


def test_asg001_no_mixed_policy_is_all_on_demand_with_saving():
    group = res("autoscaling.group", "asg", DesiredCapacity=4, MinSize=1, MaxSize=4,
                LaunchTemplate={"LaunchTemplateId": Ref("lt")})
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceType": "p3.8xlarge"})
    f = results([group, lt], policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert f.status is Status.FAIL
    # 4 on-demand, 1 allowed at 40% -> 3 moved, (12.24 - 0.35 x 12.24) x 730 x 3
    assert f.savings.usd_month == pytest.approx(12.24 * 0.65 * 730 * 3)
    spot_lt_ = res("ec2.launch_template", "lt", LaunchTemplateData={
        "InstanceType": "p3.8xlarge", "InstanceMarketOptions": {"MarketType": "spot"}})
    f = results([group, spot_lt_], policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert f.status is Status.FAIL and f.evidence["on_demand"] == 0 and f.savings is None


def test_asg001_desired_fallbacks():
    g = res("autoscaling.group", "asg", MinSize=0, MaxSize=0)
    assert status([g], "ASG-001", "asg") is None
    g = res("autoscaling.group", "asg", DesiredCapacity=Unknown("var.n"), MinSize=1, MaxSize=2)
    assert status([g], "ASG-001", "asg") is Status.UNKNOWN


def test_asg002_diversification():
    assert status([asg(strategy="price-capacity-optimized")], "ASG-002", "asg") is Status.PASS
    assert status([asg()], "ASG-002", "asg") is Status.FAIL  # lowest-price by default
    one = asg(types=("g5.xlarge",), strategy="capacity-optimized")
    assert status([one], "ASG-002", "asg") is Status.FAIL
    all_od = asg(pct=100, strategy="lowest-price")
    assert status([all_od], "ASG-002", "asg") is None  # no spot: not applicable


# -- engine ----------------------------------------------------------------------------------


def test_inline_skip_suppresses_with_reason():
    vol = res("ec2.volume", "v", Encrypted=False)
    vol.skips = (Skip("EBS-001", "scratch data", by="comment"),)
    f = results([vol], policy_ids=["EBS-001"])[("EBS-001", "v")]
    assert f.status is Status.SUPPRESSED and f.suppression["reason"] == "scratch data"


def test_mutes_expiry_and_missing_reason():
    vol = res("ec2.volume", "aws_ebs_volume.scratch", Encrypted=False)
    today = dt.date(2026, 6, 1)
    live = Config(mutes=[{"policy": "EBS-001", "resource": "aws_ebs_volume.*",
                          "reason": "r", "expires": "2026-12-31"}])
    expired = Config(mutes=[{"policy": "EBS-001", "resource": "*", "reason": "r",
                             "expires": "2026-01-01"}])
    no_reason = Config(mutes=[{"policy": "EBS-001", "resource": "*"}])
    assert status([vol], "EBS-001", vol.id, config=live, today=today) is Status.SUPPRESSED
    f = results([vol], policy_ids=["EBS-001"], config=expired, today=today)[("EBS-001", vol.id)]
    assert f.status is Status.FAIL and "mute expired" in f.message
    assert status([vol], "EBS-001", vol.id, config=no_reason, today=today) is Status.FAIL


def test_baseline_and_stable_fingerprint():
    vol = res("ec2.volume", "v", Encrypted=False)
    first = results([vol], policy_ids=["EBS-001"])[("EBS-001", "v")]
    again = results([vol], policy_ids=["EBS-001"])[("EBS-001", "v")]
    assert first.id == again.id
    based = results([vol], policy_ids=["EBS-001"], baseline={first.id})[("EBS-001", "v")]
    assert based.status is Status.SUPPRESSED


def test_gap_becomes_error_for_policies_that_need_it():
    gap = Gap("123/us-east-1", ("ec2.volume",), "AccessDenied", "123", "us-east-1")
    found = evaluate([], gaps=[gap])
    assert {(f.policy_id, f.status) for f in found} == {("EBS-001", Status.ERROR)}


def test_gap_in_what_live_policies_do_not_read_is_no_error():
    """EBS-001 judges observed volumes, not the block devices of instances: a denied
    DescribeInstances is an ERROR for the GPU placement policies, not for EBS-001."""
    gap = Gap("123/us-east-1", ("ec2.instance",), "AccessDenied", "123", "us-east-1")
    errors = {f.policy_id for f in evaluate([], gaps=[gap]) if f.status is Status.ERROR}
    assert {"VPC-001", "VPC-002", "VPC-004"} <= errors
    assert "EBS-001" not in errors


def test_observed_needs_must_be_among_what_a_policy_reads():
    from policies.base import REGISTRY, Remediation, policy

    with pytest.raises(ValueError, match="TEST-1: observed_needs"):
        policy(id="TEST-1", title="t", severity=Severity.LOW, kinds=("ec2.volume",),
               description="", remediation=Remediation(text="", terraform="",
                                                       cloudformation=""),
               observed_needs=("ec2.instance",), category="security")(lambda r, c: [])
    assert "TEST-1" not in REGISTRY


def test_a_policy_declares_its_category_and_its_fixes_per_kind():
    from policies.base import REGISTRY, Remediation, policy

    with pytest.raises(ValueError, match="TEST-2: category must be one of"):
        policy(id="TEST-2", title="t", severity=Severity.LOW, kinds=("ec2.volume",),
               description="", remediation=Remediation(text="x"), category="money")
    assert "TEST-2" not in REGISTRY
    from policies import all_policies

    pol = all_policies()["EBS-001"]
    assert pol.category == "security" and all_policies()["ASG-002"].category == "cost"
    assert "volumeEncrypted" in pol.remediation.for_kind("eksctl.node_group").text
    assert pol.remediation.for_kind("no.such_kind") is pol.remediation


def test_unknown_policy_id_is_reported():
    with pytest.raises(KeyError, match="unknown policy id NOPE-1"):
        select_policies(policy_ids=["NOPE-1"])


def test_asg001_gpu_only_parameter():
    """GPU groups only by default (35 of 41 ASG-001 FAILs on real repositories were on CPU
    groups, issue 11); a group whose types are not known is judged, never skipped."""
    cpu = asg(pct=100, types=("m5.large", "m6i.large"))
    assert status([cpu], "ASG-001", "asg") is None
    everything = Config(policies={"ASG-001": {"gpu_only": False}})
    assert status([cpu], "ASG-001", "asg", config=everything) is Status.FAIL
    assert status([asg(pct=100)], "ASG-001", "asg") is Status.FAIL
    maybe = asg(pct=100, types=(Unknown("var.instance_type has no value"),))
    f = results([maybe], policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert f.status is Status.UNKNOWN and "whether it is GPU compute is not known" in f.message
    assert "var.instance_type has no value" in f.message
    assert status([maybe], "ASG-001", "asg", config=everything) is Status.FAIL
    assert status([asg(pct=30, types=(Unknown("var.t"),))], "ASG-001", "asg") is Status.PASS


def test_vpc003_separate_endpoint_policy_resource():
    ep = res("ec2.vpc_endpoint", "ep", VpcId=Ref("vpc"), ServiceName="com.amazonaws.x.s3")
    narrow = res("ec2.vpc_endpoint_policy", "pol", VpcEndpointId=Ref("ep"), PolicyDocument={
        "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject"}]})
    assert status(network() + [gpu_instance(), ep], "VPC-003", "ep") is Status.FAIL
    assert status(network() + [gpu_instance(), ep, narrow], "VPC-003", "ep") is Status.PASS


def test_a_resource_that_may_not_exist_gets_no_pass_or_fail() -> None:
    from scanner.engine.evaluate import evaluate
    from scanner.model import Provenance, Resource, SourceKind, Status, Unknown

    def volume(name: str, encrypted: bool, exists: object) -> Resource:
        return Resource("ec2.volume", name, {"Encrypted": encrypted},
                        Provenance(SourceKind.TERRAFORM_HCL, "main.tf", 1, 3), "root",
                        exists=exists)  # type: ignore[arg-type]

    maybe = Unknown("count is var.n, which has no value")
    findings = evaluate([volume("aws_ebs_volume.a", False, maybe),
                         volume("aws_ebs_volume.b", True, maybe),
                         volume("aws_ebs_volume.c", False, True)], policy_ids=["EBS-001"])
    by_id = {f.resource["id"]: f for f in findings}
    assert by_id["aws_ebs_volume.a"].status is Status.UNKNOWN
    assert "count is var.n" in by_id["aws_ebs_volume.a"].message
    assert "would fail" in by_id["aws_ebs_volume.a"].message
    assert by_id["aws_ebs_volume.b"].status is Status.UNKNOWN
    assert by_id["aws_ebs_volume.c"].status is Status.FAIL


# -- issue 11 regressions ----------------------------------------------------------------------


def main_table_network(target: str = "igw", public: bool = True):
    """A VPC whose subnet has no explicit association (it uses the main table), with the
    default route declared on aws_vpc.vpc.main_route_table_id."""
    route = {"DestinationCidrBlock": "0.0.0.0/0"}
    route["GatewayId" if target == "igw" else "NatGatewayId"] = Ref(target)
    return [res("ec2.vpc", "vpc"),
            res("ec2.subnet", "sub", VpcId=Ref("vpc"), MapPublicIpOnLaunch=public),
            res("ec2.internet_gateway", "igw", VpcId=Ref("vpc")),
            res("ec2.route", "default", RouteTableId=Ref("vpc", "main_route_table_id"), **route)]


def test_vpc004_a_route_on_the_vpcs_main_table_is_a_route_of_that_table():
    assert status(main_table_network() + [gpu_instance()], "VPC-004", "gpu") is Status.FAIL
    assert status(main_table_network(target="nat") + [gpu_instance()], "VPC-004",
                  "gpu") is Status.PASS
    assert status(main_table_network(public=False) + [gpu_instance()], "VPC-004",
                  "gpu") is Status.PASS


def test_vpc004_no_subnet_is_the_default_vpc_whose_subnets_assign_public_ips():
    bare = res("ec2.instance", "gpu", InstanceType="g5.xlarge")
    found = results(network() + [bare], policy_ids=["VPC-004"])[("VPC-004", "gpu")]
    assert found.status is Status.UNKNOWN
    assert "default VPC, whose default subnets assign public IPs" in found.message
    explicit_off = res("ec2.instance", "gpu", InstanceType="g5.xlarge",
                       AssociatePublicIpAddress=False)
    assert status([explicit_off], "VPC-004", "gpu") is Status.PASS
    zones_only = res("autoscaling.group", "asg", MinSize=1, MaxSize=4, DesiredCapacity=1,
                     AvailabilityZones=["us-east-1a"], LaunchTemplate={"LaunchTemplateId": "lt"})
    template = res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceType": "p4d.24xlarge"})
    found = results([zones_only, template], policy_ids=["VPC-004"])[("VPC-004", "asg")]
    assert found.status is Status.UNKNOWN and "default VPC" in found.message
    attached_eni = res("ec2.instance", "gpu", InstanceType="g5.xlarge", NetworkInterfaces=[
        {"DeviceIndex": 0, "NetworkInterfaceId": "eni-0123"}])
    assert status([attached_eni], "VPC-004", "gpu") is Status.PASS


def test_vpc004_observed_default_subnets_decide_a_group_with_zones_only():
    """Live, the default VPC is observed: its default subnet in the group's zone is public."""
    live = dict(declared=False, scope="123/us-east-1")
    rs = [res("ec2.vpc", "vpc-d", IsDefault=True, **live),
          res("ec2.subnet", "subnet-d", VpcId="vpc-d", MapPublicIpOnLaunch=True,
              DefaultForAz=True, AvailabilityZone="us-east-1a", **live),
          res("ec2.internet_gateway", "igw-d", VpcId="vpc-d", **live),
          res("ec2.route_table", "rtb-d", VpcId="vpc-d", Main=True, **live,
              Routes=[{"DestinationCidrBlock": "0.0.0.0/0", "GatewayId": "igw-d"}]),
          res("autoscaling.group", "asg", MinSize=1, MaxSize=4, DesiredCapacity=1,
              AvailabilityZones=["us-east-1a"], VPCZoneIdentifier=[],
              MixedInstancesPolicy={"LaunchTemplate": {"Overrides": [
                  {"InstanceType": "g5.xlarge"}]}}, **live)]
    found = results(rs, policy_ids=["VPC-004"])[("VPC-004", "asg")]
    assert found.status is Status.FAIL and "subnet-d" in found.message


@pytest.mark.parametrize("subnet, reason", [
    (Unknown("var.subnet_id has no value"), "var.subnet_id has no value"),
    ("subnet-0123456789abcdef0", "subnet subnet-0123456789abcdef0 is not in the scan"),
])
def test_vpc004_a_subnet_it_cannot_see_is_unknown_not_pass(subnet, reason):
    inst = res("ec2.instance", "gpu", InstanceType="g5.xlarge", SubnetId=subnet)
    found = results([inst], policy_ids=["VPC-004"])[("VPC-004", "gpu")]
    assert found.status is Status.UNKNOWN and reason in found.message


def spot_template(itype, price=None, rid="lt"):
    opts = {"MarketType": "spot"}
    if price is not None:
        opts["SpotOptions"] = {"MaxPrice": price}
    return res("ec2.launch_template", rid, LaunchTemplateData={
        "InstanceType": itype, "InstanceMarketOptions": opts})


@pytest.mark.parametrize("itype", ["trn2.48xlarge", "dl2q.24xlarge", "p5e.48xlarge",
                                   "g3.4xlarge", "p2.xlarge", "p6e-gb200.36xlarge"])
def test_spot001_no_max_price_fails_by_its_rule_without_a_catalogue_price(itype):
    f = results([spot_template(itype)], policy_ids=["SPOT-001"])[("SPOT-001", "lt")]
    assert f.status is Status.FAIL
    assert f"{itype}: no max price" in f.message and "not in the catalogue" in f.message
    assert f.savings is None  # only the saving needed the price
    assert f.evidence["offers"][0]["on_demand_usd_hour"] is None


def test_spot001_an_explicit_max_price_without_a_catalogue_price_stays_unknown():
    f = results([spot_template("trn2.48xlarge", "20.0")], policy_ids=["SPOT-001"])[
        ("SPOT-001", "lt")]
    assert f.status is Status.UNKNOWN and "no catalogue price for trn2.48xlarge" in f.message


def test_spot001_no_max_price_of_an_unknown_type_fails_too():
    lt = spot_template(Unknown("var.instance_type has no value"))
    f = results([lt], policy_ids=["SPOT-001"])[("SPOT-001", "lt")]
    assert f.status is Status.FAIL and "var.instance_type has no value" in f.message
    relaxed = Config(policies={"SPOT-001": {"require_explicit_cap": False}})
    assert status([lt], "SPOT-001", "lt", config=relaxed) is Status.PASS
    above_one = Config(policies={"SPOT-001": {"max_price_ratio": 1.0}})
    assert status([spot_template("trn2.48xlarge")], "SPOT-001", "lt",
                  config=above_one) is Status.PASS


def test_spot001_a_definite_failure_is_not_hidden_by_an_unknown_type():
    group = res("autoscaling.group", "asg", DesiredCapacity=4, MinSize=0, MaxSize=8,
                MixedInstancesPolicy={
                    "InstancesDistribution": {"OnDemandPercentageAboveBaseCapacity": 25,
                                              "SpotMaxPrice": "5.0"},
                    "LaunchTemplate": {"Overrides": [{"InstanceType": "g5.xlarge"},
                                                     {"InstanceType": Unknown("var.t")}]}})
    f = results([group], policy_ids=["SPOT-001"])[("SPOT-001", "asg")]
    assert f.status is Status.FAIL and f.message.startswith("g5.xlarge: max price 5 $/h")


def test_spot002_no_max_price_is_never_too_low_whatever_the_type():
    lt = spot_template(Unknown("var.instance_type has no value"))
    assert status([lt], "SPOT-002", "lt") is Status.PASS
    assert status([spot_template("trn2.48xlarge", "0.01")], "SPOT-002", "lt") is Status.UNKNOWN


def test_ebs001_a_device_without_a_name_is_named_by_its_position_in_words():
    lt = res("ec2.launch_template", "lt", LaunchTemplateData={"BlockDeviceMappings": [
        {"Ebs": {"Encrypted": True}}, {"Ebs": {"Encrypted": False}}]})
    f = results([lt], policy_ids=["EBS-001"])[("EBS-001", "lt")]
    assert f.message == "EBS storage not encrypted: the second block device mapping"
    fleet = res("ec2.spot_fleet", "sf", SpotFleetRequestConfig={"LaunchSpecifications": [
        {"InstanceType": "g5.xlarge", "BlockDeviceMappings": [{"Ebs": {"Encrypted": True}}]},
        {"InstanceType": "g5.xlarge", "BlockDeviceMappings": [{"Ebs": {"Encrypted": False}}]}]})
    f = results([fleet], policy_ids=["EBS-001"])[("EBS-001", "sf")]
    assert f.message == ("EBS storage not encrypted: the first block device mapping of the "
                         "second launch specification")


def test_vpc001_says_where_s3_traffic_goes_without_an_endpoint():
    def message(rs):
        return results(rs, policy_ids=["VPC-001"])[("VPC-001", "vpc")].message

    assert message(network() + [gpu_instance()]).endswith(
        "subnet sub routes 0.0.0.0/0 to internet gateway igw: S3 traffic goes out over the "
        "internet gateway")
    nat = main_table_network(target="nat", public=False) + [gpu_instance()]
    assert message(nat).endswith(
        "subnet sub routes 0.0.0.0/0 through NAT gateway nat: S3 traffic pays NAT processing")
    assert "no 0.0.0.0/0 route" not in message(nat) and "no route" not in message(nat)
    isolated = [r for r in main_table_network(public=False) if r.kind != "ec2.route"]
    assert "uses the VPC's main route table, which has no 0.0.0.0/0 route" in \
        message(isolated + [gpu_instance()])
    assert "NAT" not in message(isolated + [gpu_instance()])


def test_vpc001_says_what_each_gpu_subnet_was_found_to_do():
    """Each variant of the message is what the evidence holds, subnet by subnet: one subnet
    behind NAT and one without a default route are both said, neither for the other."""
    rs = main_table_network(target="nat", public=False) + [
        res("ec2.subnet", "isolated", VpcId=Ref("vpc")),
        res("ec2.route_table", "rt-isolated", VpcId=Ref("vpc"), Routes=[]),
        res("ec2.route_table_association", "assoc", SubnetId=Ref("isolated"),
            RouteTableId=Ref("rt-isolated")),
        gpu_instance(), res("ec2.instance", "gpu2", InstanceType="g5.xlarge",
                            SubnetId=Ref("isolated"))]
    found = results(rs, policy_ids=["VPC-001"])[("VPC-001", "vpc")]
    assert "subnet sub routes 0.0.0.0/0 through NAT gateway nat" in found.message
    assert "subnet isolated uses rt-isolated, which has no 0.0.0.0/0 route" in found.message
    rows = {r["subnet"]: (r["egress"], r["target"]) for r in found.evidence["egress"]}
    assert rows == {"sub": ("NAT", "NAT gateway nat"), "isolated": ("none", None)}
    assert found.evidence["default_routes"] == ["NAT", "none"]


def test_vpc001_a_route_whose_destination_is_not_known_is_not_no_route():
    rs = [res("ec2.vpc", "vpc"), res("ec2.subnet", "sub", VpcId=Ref("vpc")),
          res("ec2.route", "r", RouteTableId=Ref("vpc", "main_route_table_id"),
              DestinationCidrBlock=Unknown("var.egress_cidr"), NatGatewayId=Ref("nat")),
          gpu_instance()]
    found = results(rs, policy_ids=["VPC-001"])[("VPC-001", "vpc")]
    assert "no 0.0.0.0/0 route" not in found.message
    assert "a route's destination is not known (var.egress_cidr)" in found.message
    assert found.evidence["default_routes"] == ["not known"]


@pytest.mark.parametrize("resource, terraform, cloudformation", [
    (res("ec2.volume", "r", Encrypted=False), 'resource "aws_ebs_volume"', "Encrypted: true"),
    (res("ec2.instance", "r", InstanceType="t3.micro", SubnetId="subnet-1"),
     "root_block_device {", "BlockDeviceMappings:"),
    (res("ec2.launch_template", "r", LaunchTemplateData={}),
     "block_device_mappings {", "LaunchTemplateData:"),
    (res("autoscaling.launch_configuration", "r", InstanceType="t3.micro"),
     'resource "aws_launch_configuration"', "BlockDeviceMappings:"),
    (res("ec2.spot_request", "r", LaunchSpecification={"InstanceType": "t3.micro"}),
     'resource "aws_spot_instance_request"', ""),
    (res("ec2.spot_fleet", "r", SpotFleetRequestConfig={"LaunchSpecifications": [
        {"InstanceType": "t3.micro"}]}), "launch_specification {", "LaunchSpecifications:"),
])
def test_ebs001_remediation_matches_the_resource_it_is_on(resource, terraform, cloudformation):
    f = results([resource], policy_ids=["EBS-001"])[("EBS-001", "r")]
    assert f.status is Status.FAIL
    assert terraform in f.remediation["terraform"]
    assert cloudformation in f.remediation["cloudformation"]
    if resource.kind != "ec2.volume":
        assert "aws_ebs_volume" not in f.remediation["terraform"]


def test_ebs001_the_amis_root_is_reported_once_where_it_is_decided():
    metadata_only = res("ec2.launch_template", "lt", LaunchTemplateData={
        "MetadataOptions": {"HttpTokens": "required"}})
    own_root = res("ec2.instance", "i", InstanceType="g5.xlarge", SubnetId="subnet-1",
                   LaunchTemplate={"LaunchTemplateId": Ref("lt")},
                   BlockDeviceMappings=[{"DeviceName": "root", "Ebs": {"Encrypted": False}}])
    found = results([metadata_only, own_root], policy_ids=["EBS-001"])
    assert ("EBS-001", "lt") not in found  # its only consumer sets its own root device
    assert found[("EBS-001", "i")].status is Status.FAIL
    # no consumer in the scan: the template decides the root (it may be used elsewhere)
    assert status([metadata_only], "EBS-001", "lt") is Status.FAIL
    # a group cannot set devices: the template decides for it
    group = res("autoscaling.group", "g", MinSize=1, MaxSize=1,
                LaunchTemplate={"LaunchTemplateId": Ref("lt")})
    assert status([metadata_only, own_root, group], "EBS-001", "lt") is Status.FAIL
    # a consumer that maps only a data volume still launches the AMI's root from the template
    data_only = res("ec2.instance", "i", InstanceType="g5.xlarge", SubnetId="subnet-1",
                    LaunchTemplate={"LaunchTemplateId": Ref("lt")},
                    BlockDeviceMappings=[{"DeviceName": "/dev/sdf", "Ebs": {"Encrypted": True}}])
    assert status([metadata_only, data_only], "EBS-001", "lt") is Status.FAIL


def small_group(max_size, desired=1, **extra):
    return res("autoscaling.group", "head", MinSize=1, MaxSize=max_size, DesiredCapacity=desired,
               LaunchTemplate={"LaunchTemplateId": Ref("lt")}, **extra)


def test_asg001_a_group_too_small_for_any_split_in_the_band_gets_a_notice_not_a_fail():
    from scanner.engine.evaluate import run

    template = res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceType": "p5.48xlarge"})
    for max_size, desired in ((1, 1), (2, 1), (2, 2)):
        out = run([small_group(max_size, desired), template], policy_ids=["ASG-001"])
        assert [f for f in out.findings if f.policy_id == "ASG-001"] == []
        [notice] = [n for n in out.notices if "ASG-001" in n.message]
        assert f"MaxSize {max_size}" in notice.message and "20-40%" in notice.message
        assert notice.path == "main.tf" and notice.line == 1
    # a group that can grow past two instances is judged on its configured split
    f = results([small_group(4), template], policy_ids=["ASG-001"])[("ASG-001", "head")]
    assert f.status is Status.FAIL and f.evidence["on_demand_share_percent"] == 100
    # a band two instances can hold (0-50 %) is judged as before
    wide = Config(policies={"ASG-001": {"on_demand_percent": {"min": 0, "max": 50}}})
    mixed = small_group(2, 2, MixedInstancesPolicy={"InstancesDistribution": {
        "OnDemandPercentageAboveBaseCapacity": 50}})
    assert status([mixed, template], "ASG-001", "head", config=wide) is Status.PASS


def test_a_notice_from_a_policy_counts_only_for_the_files_a_precommit_scan_reports():
    from scanner.engine.evaluate import run

    template = res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceType": "p5.48xlarge"})
    group = small_group(1)
    group.provenance = Provenance(SourceKind.TERRAFORM_HCL, "/x/main.tf", 3, 9)
    out = run([group, template], policy_ids=["ASG-001"], only_files=["/x/other.tf"])
    assert out.notices == []
    out = run([group, template], policy_ids=["ASG-001"], only_files=["/x/main.tf"])
    assert len(out.notices) == 1


def on_demand_group(desired, max_size=20, itype="p3.8xlarge", **extra):
    """An all-on-demand group (no mixed instances policy) of ``desired`` instances."""
    group = res("autoscaling.group", "asg", DesiredCapacity=desired, MinSize=0,
                MaxSize=max_size, LaunchTemplate={"LaunchTemplateId": Ref("lt")}, **extra)
    return [group, res("ec2.launch_template", "lt", LaunchTemplateData={"InstanceType": itype})]


@pytest.mark.parametrize("desired,target,share", [
    (3, 1, 33.33),   # 1 of 3 = 33 %: inside 20-40 %
    (4, 1, 25.0),
    (5, 2, 40.0),    # 2 of 5 = 40 % exactly: the band's upper edge is inside
    (7, 2, 28.57),
    (10, 4, 40.0),
])
def test_asg001_saving_is_priced_at_an_on_demand_count_the_verdict_passes(desired, target, share):
    from policies.asg import in_band
    from scanner.compute.purchase import on_demand_count

    f = results(on_demand_group(desired), policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert f.status is Status.FAIL and f.evidence["target_on_demand"] == target
    assert f.evidence["target_share_percent"] == share and in_band(target, desired, 20, 40)
    # the setting the evidence gives yields the target by AWS's rounding (ceil above base)
    setting = f.evidence["target_setting"]
    assert on_demand_count(desired, setting["on_demand_base_capacity"],
                           setting["on_demand_percentage_above_base_capacity"]) == target
    moved = desired - target
    assert f.savings.usd_month == pytest.approx(12.24 * 0.65 * 730 * moved)
    assert f"x {moved} instance" in f.savings.basis
    assert f"{target} of {desired} = {share:.0f}%, inside the band" in f.savings.basis
    # the same split, configured, passes: the saving is for a compliant target
    pct = setting["on_demand_percentage_above_base_capacity"]
    assert status([asg(desired, setting["on_demand_base_capacity"], pct, types=("p3.8xlarge",))],
                  "ASG-001", "asg") is Status.PASS


@pytest.mark.parametrize("desired", [1, 2])
def test_asg001_no_split_of_the_size_inside_the_band_is_a_fail_with_no_saving(desired):
    """0, 50 or 100 % of two instances (0 or 100 % of one): none is inside 20-40 %, so moving
    on-demand units to spot cannot reach a split the policy passes and books nothing."""
    f = results(on_demand_group(desired), policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert f.status is Status.FAIL and f.savings is None
    assert f.evidence["target_on_demand"] is None and "saving_why_none" in f.evidence
    unit = "instance" if desired == 1 else "instances"
    assert f"no split of {desired} {unit} is inside the band" in f.message
    assert "no saving is counted" in f.message
    assert "a desired capacity of 3 holds one (1 on-demand, 33%), or widen the band" in f.message
    # all spot, the other side: below the band, no split either, and never a saving
    spot = asg(desired, 0, 0, types=("p3.8xlarge",))
    f = results([spot], policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert f.status is Status.FAIL and f.savings is None and "below the" in f.message
    assert f"no split of {desired} {unit} is inside the band" in f.message
    assert "saving_why_none" not in f.evidence  # there is no saving to explain below the band


def test_asg001_the_suggested_size_stays_within_the_groups_bounds():
    # MaxSize 2 cannot hold a split at all: a notice (as before); MaxSize 3 can, at 3
    f = results(on_demand_group(2, max_size=3), policy_ids=["ASG-001"])[("ASG-001", "asg")]
    assert "a desired capacity of 3 holds one" in f.message and f.savings is None
    # a narrow band: 4 instances are 0/25/50/75/100 %, none inside 30-35 %; 3 (33 %) is
    narrow = Config(policies={"ASG-001": {"on_demand_percent": {"min": 30, "max": 35}}})
    f = results(on_demand_group(4), policy_ids=["ASG-001"], config=narrow)[("ASG-001", "asg")]
    assert f.status is Status.FAIL and f.savings is None  # the old target, 1 of 4, is 25 %
    assert "no split of 4 instances is inside the band" in f.message
    assert "a desired capacity of 3 holds one (1 on-demand, 33%)" in f.message
    f = results(on_demand_group(6), policy_ids=["ASG-001"], config=narrow)[("ASG-001", "asg")]
    assert f.evidence["target_on_demand"] == 2 and f.savings is not None  # 2 of 6 = 33 %


def test_asg001_target_is_the_in_band_count_closest_to_the_current_one():
    from policies.asg import compliant_on_demand, in_band

    for lo, hi in ((20, 40), (30, 35), (0, 0), (100, 100), (40, 40), (12.5, 12.5), (50, 60)):
        for desired in range(1, 41):
            inside = [k for k in range(desired + 1) if in_band(k, desired, lo, hi)]
            for od in range(desired + 1):
                want = min(inside, key=lambda k: (abs(k - od), -k)) if inside else None
                assert compliant_on_demand(desired, od, lo, hi) == want, (lo, hi, desired, od)
    assert compliant_on_demand(10**12, 10**12, 20, 40) == 4 * 10**11  # bisection, not a scan
