# ruff: noqa: F811 - pytest fixtures are imported from tests.aws_helpers
"""Targets: profiles, regions (list / all), --role-arn, --org --role-name, --shard K/N."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.aws.clients import ClientFactory
from scanner.aws.collect import collect, inputs_of, plan
from scanner.aws.targets import (
    Target,
    TargetSpec,
    TargetSpecError,
    check_endpoint_url,
    parse_regions,
    parse_shard,
    shard,
)
from tests.aws_helpers import (  # noqa: F401 - fixtures
    ACCOUNT,
    RECORDER,
    REGION,
    Fault,
    aws,
    aws_env,
    by_kind,
    client,
    declared_only,
    http_response,
    query_error,
    session_maker,
)

# -- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"role_arn": "arn:aws:iam::12:user/x"}, "not an IAM role ARN"),
        ({"org": True}, "--org needs --role-name"),
        ({"role_name": "Audit"}, "only used with --org"),
        ({"regions": ("us-east-1", "mars")}, "'mars' is not a region name"),
        ({"regions": ("all", "us-east-1")}, "cannot be combined"),
        ({"shard": (3, 2)}, "K must be between 1 and N"),
        ({"shard": (0, 2)}, "K must be between 1 and N"),
    ],
)
def test_bad_target_options_are_usage_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TargetSpecError, match=message):
        TargetSpec(**kwargs)


def test_option_parsing() -> None:
    assert parse_shard("2/8") == (2, 8)
    assert parse_shard(" 1 / 1 ") == (1, 1)
    with pytest.raises(TargetSpecError):
        parse_shard("2of8")
    assert parse_regions(["us-east-1,eu-west-1", " us-east-1 ", "ap-south-1"]) == (
        "us-east-1",
        "eu-west-1",
        "ap-south-1",
    )
    assert parse_regions([]) == ()  # not given: the profile's region
    for empty in ([","], [" "], ["", ","]):
        with pytest.raises(TargetSpecError, match="names no region"):
            parse_regions(empty)
    assert check_endpoint_url("http://127.0.0.1:5000") == "http://127.0.0.1:5000"
    assert check_endpoint_url("https://localstack.internal") == "https://localstack.internal"
    for bad in ("notaurl", "127.0.0.1:5000", "ftp://host", "http://", "http:///path"):
        with pytest.raises(TargetSpecError, match="not an http"):
            check_endpoint_url(bad)


def test_shards_partition_the_sorted_pairs_deterministically() -> None:
    pairs = [
        Target(a, r)
        for a in ("222222222222", "111111111111")
        for r in ("us-west-2", "eu-west-1", "us-east-1")
    ]
    everything = shard(pairs, None)
    assert [t.sort_key() for t in everything] == sorted(t.sort_key() for t in pairs)
    parts = [shard(list(reversed(pairs)), (k, 4)) for k in (1, 2, 3, 4)]
    assert [len(p) for p in parts] == [2, 2, 1, 1]
    flat = [t.sort_key() for p in parts for t in p]
    assert sorted(flat) == [t.sort_key() for t in everything] and len(set(flat)) == 6
    assert parts == [shard(pairs, (k, 4)) for k in (1, 2, 3, 4)]  # input order does not matter


# -- regions and profiles ------------------------------------------------------------------------


def test_regions_all_are_the_enabled_regions(aws: None) -> None:
    factory = ClientFactory()
    targets = plan(TargetSpec(regions=("all",)), factory)
    regions = [t.region for t in targets]
    assert regions == sorted(regions) and len(regions) > 10
    assert {"us-east-1", "eu-west-1", "ap-northeast-1"} <= set(regions)
    opted_out = {
        r["RegionName"]
        for r in client("ec2").describe_regions(AllRegions=True)["Regions"]
        if r.get("OptInStatus") == "not-opted-in"
    }
    assert opted_out and not (opted_out & set(regions))
    assert {t.account for t in targets} == {ACCOUNT}
    assert factory.calls["ec2:DescribeRegions"] == 1


def test_profiles_default_region_and_duplicate_accounts(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    config.write_text("[profile ml]\nregion = eu-west-1\n[profile other]\nregion = us-west-2\n")
    creds = tmp_path / "credentials"
    creds.write_text(
        "[ml]\naws_access_key_id = testing\naws_secret_access_key = testing\n"
        "[other]\naws_access_key_id = testing\naws_secret_access_key = testing\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(creds))
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_DEFAULT_REGION",
    ):
        monkeypatch.delenv(name)
    targets = plan(TargetSpec(profiles=("ml",)), ClientFactory())
    assert [(t.account, t.region) for t in targets] == [(ACCOUNT, "eu-west-1")]
    # the same account through two profiles is audited once per region
    targets = plan(TargetSpec(profiles=("ml", "other"), regions=("us-east-1",)), ClientFactory())
    assert [(t.account, t.region) for t in targets] == [(ACCOUNT, "us-east-1")]
    # an unknown profile is a failed target, reported, not a crash
    result = collect(
        TargetSpec(profiles=("missing",), regions=("us-east-1",)), kinds={"ec2.volume"}
    )
    assert [e.path for e in result.errors] == ["profile:missing/us-east-1/sts:GetCallerIdentity"]
    assert "could not be found" in result.errors[0].reason


def test_inputs_name_accounts_and_regions() -> None:
    targets = [Target("2", "us-east-1"), Target("1", "eu-west-1"), Target("1", "us-east-1")]
    assert inputs_of(targets) == {"accounts": ["1", "2"], "regions": ["eu-west-1", "us-east-1"]}


# -- roles and organizations ---------------------------------------------------------------------


def assumed_client(service: str, account: str) -> Any:
    import boto3

    creds = client("sts").assume_role(
        RoleArn=f"arn:aws:iam::{account}:role/seed", RoleSessionName="seed"
    )["Credentials"]
    return boto3.client(
        service,
        region_name=REGION,
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
    )


def test_role_arn_audits_the_role_account(aws: None) -> None:
    other = "111122223333"
    vol = assumed_client("ec2", other).create_volume(Size=3, AvailabilityZone="us-east-1a")[
        "VolumeId"
    ]
    client("ec2").create_volume(Size=4, AvailabilityZone="us-east-1a")  # the caller's own
    mark = RECORDER.mark()
    result = collect(
        TargetSpec(
            regions=(REGION,), role_arn=f"arn:aws:iam::{other}:role/Audit", external_id="ext-1"
        ),
        kinds={"ec2.volume"},
    )
    assert result.errors == []
    assert [(r.id, r.scope, r.provenance.account) for r in result.resources] == [
        (vol, f"{other}/{REGION}", other)
    ]
    assert ("sts", "AssumeRole") in RECORDER.since(mark)


def org_with_members() -> tuple[str, str]:
    org = client("organizations")
    org.create_organization(FeatureSet="ALL")
    ids = []
    for name in ("gpu-a", "gpu-b"):
        status = org.create_account(AccountName=name, Email=f"{name}@example.com")
        ids.append(status["CreateAccountStatus"]["AccountId"])
    return ids[0], ids[1]


def test_org_audits_every_active_account(aws: None) -> None:
    a, b = org_with_members()
    va = assumed_client("ec2", a).create_volume(Size=1, AvailabilityZone="us-east-1a")["VolumeId"]
    vb = assumed_client("ec2", b).create_volume(Size=2, AvailabilityZone="us-east-1a")["VolumeId"]
    result = collect(
        TargetSpec(regions=(REGION, "eu-west-1"), org=True, role_name="Audit"), kinds={"ec2.volume"}
    )
    assert result.errors == []
    pairs = {(c["account"], c["region"]) for c in result.coverage}
    assert pairs == {(acct, r) for acct in (ACCOUNT, a, b) for r in (REGION, "eu-west-1")}
    vols = {(r.provenance.account, r.id) for r in result.resources}
    assert vols == {(a, va), (b, vb)}


def test_org_denied_role_in_one_account_is_reported_for_that_account_only(aws: None) -> None:
    a, b = org_with_members()
    vb = assumed_client("ec2", b).create_volume(Size=2, AvailabilityZone="us-east-1a")["VolumeId"]

    def deny_a(request: Any = None, **_: Any) -> Any:
        body = request.body.decode() if isinstance(request.body, bytes) else str(request.body)
        if f"{a}%3Arole" in body:
            return http_response(403, query_error("AccessDenied", "not authorized to assume"))
        return None

    result = collect(
        TargetSpec(regions=(REGION, "eu-west-1"), org=True, role_name="Audit"),
        kinds={"ec2.volume"},
        session_maker=session_maker({"before-send.sts.AssumeRole": deny_a}),
    )
    assert [e.path for e in result.errors] == [
        f"{a}/eu-west-1/sts:AssumeRole",
        f"{a}/{REGION}/sts:AssumeRole",
    ]
    assert all("access denied (AccessDenied)" in e.reason for e in result.errors)
    assert sorted((g.scope, g.kinds) for g in result.gaps) == [
        (f"{a}/eu-west-1", ("ec2.volume",)),
        (f"{a}/{REGION}", ("ec2.volume",)),
    ]
    assert [r.id for r in result.resources] == [vb]


def test_org_older_status_field_and_inactive_accounts(aws: None) -> None:
    body = json.dumps(
        {
            "Accounts": [
                {"Id": ACCOUNT, "Status": "ACTIVE"},
                {"Id": "210987654321", "Status": "SUSPENDED"},
                {"Id": "333333333333", "State": "PENDING_CLOSURE", "Status": "ACTIVE"},
                {"Id": "444444444444", "Status": "ACTIVE"},
            ]
        }
    )
    fault = Fault(200, body, "application/x-amz-json-1.1")
    targets = plan(
        TargetSpec(regions=(REGION,), org=True, role_name="Audit"),
        ClientFactory(),
        session_maker=session_maker({"before-send.organizations.ListAccounts": fault}),
    )
    assert [t.account for t in targets] == [ACCOUNT, "444444444444"]
    assert all(t.failure is None for t in targets)


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-30T23:12:47.000Z",
        "2026-11-30T23:12:47Z",
        "2026-11-30T23:12:47.123456789Z",
        "2026-11-30T23:12:47+02:00",
        "2026-11-30T23:12:47",  # no zone: botocore's own rule
        "Mon, 30 Nov 2026 23:12:47 GMT",
        1764544367,
        "1764544367.5",
    ],
)
def test_fast_timestamp_parses_like_botocore(value: Any) -> None:
    from botocore.utils import parse_timestamp

    from scanner.aws.targets import fast_timestamp

    got, want = fast_timestamp(value), parse_timestamp(value)
    assert got == want and got.utcoffset() == want.utcoffset()


def test_collected_timestamps_skip_dateutil(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Volumes' CreateTime comes through the fast path: botocore's dateutil parser is not used."""
    import botocore.parsers

    import scanner.aws.targets as targets

    slow: list[Any] = []

    def counting(value: Any) -> Any:
        slow.append(value)
        return parse_timestamp(value)

    from botocore.utils import parse_timestamp

    client("ec2").create_volume(Size=8, AvailabilityZone=f"{REGION}a")
    monkeypatch.setattr(targets, "parse_timestamp", counting)
    monkeypatch.setattr(botocore.parsers, "DEFAULT_TIMESTAMP_PARSER", counting)
    result = collect(TargetSpec(regions=(REGION,)), kinds={"ec2.volume"})
    [vol] = [r for r in result.resources if r.kind == "ec2.volume"]
    assert str(vol.attrs["CreateTime"]).endswith("+00:00")
    assert slow == []
