"""A live answer's pages: each resource once, and only resources of the asked region.

An HTTP proxy (tests/fault_proxy.py) in front of a moto server rewrites real answers the way a
misbehaving paginator, cache or endpoint would: a first page that says there is a second one
(moto then answers the whole list again: every volume on two pages), a second page whose copy
of a volume disagrees with the first, an answer whose Availability Zone or ARN is of us-west-2
to a us-east-1 request. The rules: identical copies are one resource (one verdict, not a PASS
and a FAIL, not counted twice); copies that disagree, and answers about another region, are no
answer: ERROR for every policy that reads the kind in that region, naming the call and why,
never data; the other kinds keep their verdicts."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner

from scanner.aws.pages import ForeignAnswer, InconsistentAnswer, check_region, one_copy_each
from scanner.cli.main import cli
from tests.aws_helpers import AMI
from tests.fault_proxy import FaultProxy
from tests.live_server import MotoProcess, clean_aws_env

pytestmark = pytest.mark.slow

EAST, WEST = "us-east-1", "us-west-2"
POLICIES = ("EBS-001", "ASG-001", "SPOT-001")


# -- the rules, on answers as boto3 returns them --------------------------------------------------


def test_identical_copies_are_one_and_different_ones_are_no_answer() -> None:
    a = {"VolumeId": "vol-1", "Encrypted": False, "AvailabilityZone": "us-east-1a"}
    b = {"VolumeId": "vol-2", "Encrypted": True, "AvailabilityZone": "us-east-1b"}
    assert one_copy_each("Volumes", [a, b, dict(a), dict(b)]) == [a, b]
    with pytest.raises(InconsistentAnswer, match="vol-1 is in the answer twice"):
        one_copy_each("Volumes", [a, b, {**a, "Encrypted": True}])
    assert one_copy_each("clusters", ["ml", "ml", "cv"]) == ["ml", "cv"]
    inst = {"InstanceId": "i-1", "InstanceType": "g5.xlarge"}
    twice = [{"ReservationId": "r-1", "Instances": [inst]},
             {"ReservationId": "r-2", "Instances": [dict(inst)]}]
    assert [len(r["Instances"]) for r in one_copy_each("Reservations", twice)] == [1, 0]
    twice[1]["Instances"][0]["InstanceType"] = "p5.48xlarge"
    with pytest.raises(InconsistentAnswer, match="i-1"):
        one_copy_each("Reservations", twice)
    points = [{"Id": "m1", "Values": [1.0]}, {"Id": "m1", "Values": [1.0]}]
    assert one_copy_each("MetricDataResults", points) == points  # no identity: left as it is


@pytest.mark.parametrize("item", [
    {"AvailabilityZone": "us-east-1a"}, {"AvailabilityZone": "us-east-1-bos-1a"},
    {"Placement": {"AvailabilityZone": "us-east-1f"}}, {"AvailabilityZones": ["us-east-1b"]},
    {"AutoScalingGroupARN": "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:x"},
    {"IamInstanceProfile": {"Arn": "arn:aws:iam::123456789012:instance-profile/gpu"}},
    {"ServiceLinkedRoleARN": "arn:aws:iam::123456789012:role/aws-service-role/x"},
    {"KmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/1234"}, {"KmsKeyId": "alias/aws/ebs"},
    {"ServiceName": "com.amazonaws.us-west-2.s3"},  # a name, not where the resource is
])
def test_what_is_of_the_asked_region(item: dict[str, Any]) -> None:
    check_region(item, EAST)


@pytest.mark.parametrize("item", [
    {"AvailabilityZone": "us-west-2a"}, {"AvailabilityZone": "us-east-2a"},
    {"Placement": {"AvailabilityZone": "us-west-2b"}},
    {"AvailabilityZones": ["us-east-1a", "eu-west-1a"]},
    {"AutoScalingGroupARN": "arn:aws:autoscaling:us-west-2:123456789012:autoScalingGroup:x"},
    {"nodegroupArn": "arn:aws:eks:us-west-2:123456789012:nodegroup/ml/gpu/1"},
    {"BlockDeviceMappings": [{"Ebs": {"KmsKeyId": "arn:aws:kms:eu-west-1:1:key/1"}}]},
    {"TargetGroupARNs": ["arn:aws:elasticloadbalancing:us-west-2:1:targetgroup/x/1"]},
])
def test_what_is_of_another_region(item: dict[str, Any]) -> None:
    with pytest.raises(ForeignAnswer, match="not an answer about us-east-1"):
        check_region(item, EAST)


# -- end to end, through the proxy -----------------------------------------------------------------


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    home = tmp_path_factory.mktemp("home")
    environ = clean_aws_env(home=home, extra={"AWS_MAX_ATTEMPTS": "1"})
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("AWS_")]:
            mp.delenv(key)
        for key, value in environ.items():
            if key.startswith(("AWS_", "GPUAUDIT_")):
                mp.setenv(key, value)
        yield environ


@pytest.fixture(scope="module")
def estate(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with MotoProcess(log) as moto, FaultProxy(moto.url) as proxy:
        ec2 = boto3.client("ec2", endpoint_url=moto.url, region_name=EAST)
        asg = boto3.client("autoscaling", endpoint_url=moto.url, region_name=EAST)
        plain = ec2.create_volume(Size=10, AvailabilityZone="us-east-1a")["VolumeId"]
        sealed = ec2.create_volume(Size=10, AvailabilityZone="us-east-1b",
                                   Encrypted=True)["VolumeId"]
        asg.create_launch_configuration(LaunchConfigurationName="gpu-lc", ImageId=AMI,
                                        InstanceType="g5.xlarge", SpotPrice="0.50")
        asg.create_auto_scaling_group(AutoScalingGroupName="gpu-group", MinSize=0, MaxSize=2,
                                      LaunchConfigurationName="gpu-lc",
                                      AvailabilityZones=["us-east-1a"])
        template = ec2.create_launch_template(LaunchTemplateName="gpu-spot", LaunchTemplateData={
            "ImageId": AMI, "InstanceType": "g5.xlarge",
            "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "9"}},
        })["LaunchTemplate"]["LaunchTemplateId"]
        yield proxy, {"plain": plain, "sealed": sealed, "template": template}


@pytest.fixture()
def proxy(estate: Any) -> Iterator[FaultProxy]:
    proxy = estate[0]
    proxy.clear()
    yield proxy
    proxy.clear()


def audit(url: str, where: Path, regions: str = EAST) -> Any:
    out = where / "report.json"
    args = ["audit", "--endpoint-url", url, "--regions", regions, "--format", "json",
            "--output", str(out), "--deterministic", "--include-passed", "-q",
            *(a for p in POLICIES for a in ("--policy", p))]
    cwd = Path.cwd()
    os.chdir(where)
    try:
        res = CliRunner().invoke(cli, args)
    finally:
        os.chdir(cwd)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return json.loads(out.read_text())


def verdicts(doc: Any, policy: str) -> Counter[tuple[str, str]]:
    return Counter((f["resource"]["id"], f["status"]) for f in doc["findings"]
                   if f["policy_id"] == policy)


def second_page(answer: bytes) -> bytes:
    """The first page of a DescribeVolumes answer, saying there is a second one."""
    return answer.replace(b"</DescribeVolumesResponse>",
                          b"<nextToken>page-2</nextToken></DescribeVolumesResponse>")


def is_second(request: bytes) -> bool:
    return b"NextToken=page-2" in request


@pytest.fixture(scope="module")
def baseline(estate: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    proxy, ids = estate
    proxy.clear()
    doc = audit(proxy.url, tmp_path_factory.mktemp("baseline"))
    assert doc["errors"] == []
    assert verdicts(doc, "EBS-001") == Counter({(ids["plain"], "FAIL"): 1,
                                                (ids["sealed"], "PASS"): 1})
    return doc


def test_the_same_volumes_on_two_pages_are_judged_once(
    proxy: FaultProxy, estate: Any, baseline: Any, tmp_path: Path
) -> None:
    proxy.rewrite("DescribeVolumes",
                  lambda req, ans: ans if is_second(req) else second_page(ans))
    doc = audit(proxy.url, tmp_path)
    assert sum(n for (_, _, op), n in proxy.seen.items() if op == "DescribeVolumes") >= 2
    assert doc["errors"] == []
    assert verdicts(doc, "EBS-001") == verdicts(baseline, "EBS-001")  # each once, as before
    assert doc["summary"]["resources"] == baseline["summary"]["resources"]


def test_copies_that_disagree_are_no_answer(
    proxy: FaultProxy, estate: Any, baseline: Any, tmp_path: Path
) -> None:
    ids = estate[1]

    def edit(req: bytes, ans: bytes) -> bytes:
        if not is_second(req):
            return second_page(ans)
        # page 2 says the unencrypted volume is encrypted
        return ans.replace(b"<encrypted>false</encrypted>", b"<encrypted>true</encrypted>")

    proxy.rewrite("DescribeVolumes", edit)
    doc = audit(proxy.url, tmp_path)
    errors = [e for e in doc["errors"] if e["path"].endswith("/ec2:DescribeVolumes")]
    assert errors and ids["plain"] in errors[0]["reason"] and "disagree" in errors[0]["reason"]
    ebs = verdicts(doc, "EBS-001")
    assert ebs and {s for _, s in ebs} == {"ERROR"}  # neither copy was picked
    assert not {(ids["plain"], "PASS"), (ids["plain"], "FAIL")} & set(ebs)
    assert verdicts(doc, "ASG-001") == verdicts(baseline, "ASG-001")  # other kinds: unchanged


def test_a_zone_of_another_region_is_no_answer(
    proxy: FaultProxy, estate: Any, baseline: Any, tmp_path: Path
) -> None:
    ids = estate[1]
    proxy.rewrite("DescribeVolumes",
                  lambda req, ans: ans.replace(b"us-east-1a", b"us-west-2a"))
    doc = audit(proxy.url, tmp_path)
    errors = [e for e in doc["errors"] if e["path"].endswith("/ec2:DescribeVolumes")]
    assert errors and "us-west-2a" in errors[0]["reason"]
    assert "not an answer about us-east-1" in errors[0]["reason"]
    ebs = verdicts(doc, "EBS-001")
    assert ebs and {s for _, s in ebs} == {"ERROR"}
    assert not any(rid in (ids["plain"], ids["sealed"]) for rid, _ in ebs)  # no volume is data
    assert all(f["resource"]["region"] in (EAST, None) for f in doc["findings"])
    assert verdicts(doc, "ASG-001") == verdicts(baseline, "ASG-001")


def test_an_arn_of_another_region_is_no_answer(
    proxy: FaultProxy, baseline: Any, tmp_path: Path
) -> None:
    proxy.rewrite("DescribeAutoScalingGroups", lambda req, ans: re.sub(
        rb"arn:aws:autoscaling:us-east-1:", b"arn:aws:autoscaling:us-west-2:", ans))
    doc = audit(proxy.url, tmp_path)
    errors = [e for e in doc["errors"]
              if e["path"].endswith("/autoscaling:DescribeAutoScalingGroups")]
    assert errors and "us-west-2" in errors[0]["reason"]
    asg = verdicts(doc, "ASG-001")
    assert asg and {s for _, s in asg} == {"ERROR"}
    assert ("gpu-group", "PASS") not in asg and ("gpu-group", "FAIL") not in asg
    assert verdicts(doc, "EBS-001") == verdicts(baseline, "EBS-001")


def test_one_answer_for_two_regions_is_no_answer(
    proxy: FaultProxy, estate: Any, tmp_path: Path
) -> None:
    # a launch template has neither a zone nor an ARN: the same EC2 id in the answers of two
    # regions tells that one answered for the other
    template = estate[1]["template"]
    east: list[bytes] = []

    def keep_east(req: bytes, ans: bytes) -> bytes:
        if template.encode() in ans:
            east.append(ans)
        return ans

    proxy.rewrite("DescribeLaunchTemplates", keep_east)
    (tmp_path / "clean").mkdir()
    clean = audit(proxy.url, tmp_path / "clean", regions=f"{EAST},{WEST}")
    spot = {(f["resource"]["region"], f["status"]) for f in clean["findings"]
            if f["resource"]["id"] == template and f["policy_id"] == "SPOT-001"}
    assert spot and {r for r, _ in spot} == {EAST}  # judged once, in its region
    assert east

    def same_answer(req: bytes, ans: bytes) -> bytes:
        return east[0]  # us-east-1's answer, to both regions

    proxy.rewrite("DescribeLaunchTemplates", same_answer)
    (tmp_path / "doubled").mkdir()
    doc = audit(proxy.url, tmp_path / "doubled", regions=f"{EAST},{WEST}")
    errors = {e["path"]: e["reason"] for e in doc["errors"]}
    for region in (EAST, WEST):
        reason = errors.get(f"123456789012/{region}/ec2.launch_template", "")
        assert template in reason and "answered for another region" in reason, errors
    judged = [f for f in doc["findings"] if f["resource"]["id"] == template]
    assert judged == []  # neither copy is data
    assert {f["status"] for f in doc["findings"]
            if f["policy_id"] == "SPOT-001" and f["resource"]["region"] == EAST} == {"ERROR"}
