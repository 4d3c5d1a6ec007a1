"""Which (account, region) pairs to audit, and with which credentials.

Principals come from profiles (the standard boto3 chain when none is given), optionally through
``--role-arn``, optionally fanned out over an Organization (``--org --role-name``). Regions are a
list or ``all`` (the account's enabled regions). Credentials are shared per account, refreshed by
botocore when they near expiry, and never written anywhere. A principal that cannot be reached
becomes failed pairs, so that its error is reported by exactly one shard.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import boto3
import botocore.session
from botocore.credentials import (
    CredentialProvider,
    Credentials,
    DeferredRefreshableCredentials,
)
from botocore.loaders import Loader, create_loader
from botocore.utils import parse_timestamp

from scanner.aws import faults
from scanner.aws.clients import ClientFactory
from scanner.aws.collectors.base import Call
from scanner.aws.normalize import partition

# cast(...Client, factory.client(...)) below: ClientFactory.client answers a BaseClient; these
# are the service's client as the boto3 stubs type it (test extras; not needed at run time)
if TYPE_CHECKING:
    from types_boto3_ec2.client import EC2Client
    from types_boto3_sts.client import STSClient

DEFAULT_REGION = "us-east-1"
SESSION_NAME = "gpuaudit"

# Operations used to discover targets (declared like a collector's, for the IAM policy).
DISCOVERY_CALLS: tuple[Call, ...] = (
    Call("ec2", "DescribeRegions", ()),
    Call("organizations", "ListAccounts", ()),
)
_ROLE_ARN = re.compile(r"^arn:(aws[a-z-]*):iam::(\d{12}):role/.+$")
_REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d+$")


class TargetSpecError(ValueError):
    """A malformed target option (a usage error, exit code 2)."""


@dataclass(frozen=True)
class TargetSpec:
    profiles: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()  # empty: the profile's region; ("all",): enabled regions
    role_arn: str | None = None
    external_id: str | None = None
    org: bool = False
    role_name: str | None = None
    shard: tuple[int, int] | None = None  # (K, N), 1 <= K <= N

    def __post_init__(self) -> None:
        if self.role_arn and not _ROLE_ARN.match(self.role_arn):
            raise TargetSpecError(f"--role-arn {self.role_arn!r} is not an IAM role ARN")
        if self.org and not self.role_name:
            raise TargetSpecError("--org needs --role-name (the role to assume in each account)")
        if self.role_name and not self.org:
            raise TargetSpecError("--role-name is only used with --org")
        for region in self.regions:
            if region != "all" and not _REGION.match(region):
                raise TargetSpecError(f"{region!r} is not a region name (e.g. us-east-1)")
        if "all" in self.regions and len(self.regions) > 1:
            raise TargetSpecError("--regions all cannot be combined with region names")
        if self.shard is not None:
            k, n = self.shard
            if not (n >= 1 and 1 <= k <= n):
                raise TargetSpecError(f"--shard {k}/{n}: K must be between 1 and N")


def parse_shard(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m:
        raise TargetSpecError(f"--shard {text!r}: expected K/N, e.g. 2/8")
    return int(m.group(1)), int(m.group(2))


def parse_regions(values: Sequence[str]) -> tuple[str, ...]:
    """``("us-east-1,eu-west-1", "all")`` style option values → a de-duplicated tuple."""
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if part and part not in out:
                out.append(part)
    if values and not out:
        given = ",".join(values)
        raise TargetSpecError(f"--regions {given!r} names no region (e.g. us-east-1,eu-west-1 "
                              "or all)")
    return tuple(out)


def check_endpoint_url(url: str) -> str:
    """``--endpoint-url`` must be an http(s) URL with a host (botocore would fail every call)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetSpecError(f"--endpoint-url {url!r} is not an http:// or https:// URL "
                              "with a host (e.g. http://127.0.0.1:5000)")
    return url


class _SharedCredentials(CredentialProvider):
    METHOD = "gpuaudit-shared"
    CANONICAL_NAME = "gpuaudit-shared"

    def __init__(self, credentials: Credentials) -> None:
        super().__init__()
        self._credentials = credentials

    def load(self) -> Credentials:
        return self._credentials


SessionMaker = Callable[[str | None], botocore.session.Session]

_LOADERS: dict[str, Loader] = {}
_LOADERS_LOCK = threading.Lock()


def _shared_loader(bs: botocore.session.Session) -> Loader:
    """One botocore data loader per data path for every session: each (account, region) gets
    its own session (sessions are not thread-safe) without re-reading the service models."""
    key = str(bs.get_config_variable("data_path") or "")
    with _LOADERS_LOCK:
        if key not in _LOADERS:
            _LOADERS[key] = create_loader(bs.get_config_variable("data_path"))
        return _LOADERS[key]


def fast_timestamp(value: Any) -> datetime:
    """botocore's timestamp parser without dateutil for the ISO 8601 form AWS sends.

    botocore parses every timestamp with dateutil (about 0.1 ms each: 0.5 s of the client's
    time for the 7,700 timestamps of 5,000 volumes and 500 instances); ``fromisoformat`` takes
    about a microsecond. Anything else (epoch numbers, HTTP dates, no time zone) goes to
    botocore's own parser, so the result is the same timezone-aware datetime either way."""
    if isinstance(value, str) and len(value) >= 19 and value[10:11] == "T":
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if parsed.tzinfo is not None:
                return parsed
    return parse_timestamp(value)


def default_session_maker(profile: str | None) -> botocore.session.Session:
    return botocore.session.Session(profile=profile)


@dataclass
class Principal:
    """Credentials for one account. ``session(region)`` makes a fresh (thread-local) session
    that shares these credentials (refreshed by botocore when an assumed role nears expiry)."""

    account: str
    label: str
    profile: str | None
    credentials: Credentials
    default_region: str | None = None
    maker: SessionMaker = default_session_maker

    def session(self, region: str) -> boto3.Session:
        bs = self.maker(self.profile)
        bs.register_component("data_loader", _shared_loader(bs))
        bs.get_component("response_parser_factory").set_parser_defaults(
            timestamp_parser=fast_timestamp
        )
        bs.get_component("credential_provider").providers.insert(
            0, _SharedCredentials(self.credentials)
        )
        return boto3.Session(botocore_session=bs, region_name=region)

    @property
    def region(self) -> str:
        return self.default_region or DEFAULT_REGION


@dataclass(frozen=True)
class Target:
    """One (account, region) pair: a principal to read it with, or the reason it cannot be read."""

    account: str
    region: str
    principal: Principal | None = field(default=None, compare=False)
    failure: tuple[str, str] | None = None  # (what, reason), e.g. ("sts:AssumeRole", "denied")
    # Whether this pair also reads what is read once per account (scanner.aws.account_wide):
    # set by ``shard`` on each account's first pair, so that exactly one shard reads it;
    # None (pairs made elsewhere): the account's first pair at hand does.
    account_wide: bool | None = field(default=None, compare=False)

    @property
    def scope(self) -> str:
        return f"{self.account}/{self.region}"

    def sort_key(self) -> tuple[str, str]:
        return (self.account, self.region)


def shard(targets: Sequence[Target], spec: tuple[int, int] | None) -> list[Target]:
    """Deterministic split: sort the pairs, shard K of N takes every N-th from position K-1."""
    ordered = sorted(targets, key=Target.sort_key)
    # -- account-wide reads: the account's first pair of the whole list, whatever the shard --
    firsts: set[int] = set()
    seen: set[str] = set()
    for t in ordered:
        if t.account not in seen and t.principal is not None and t.failure is None:
            seen.add(t.account)
            firsts.add(id(t))
    ordered = [replace(t, account_wide=id(t) in firsts) for t in ordered]
    # -- end account-wide reads --
    if spec is None:
        return ordered
    k, n = spec
    return ordered[k - 1 :: n]


def resolve(
    spec: TargetSpec,
    factory: ClientFactory,
    *,
    max_workers: int = 8,
    session_maker: SessionMaker = default_session_maker,
) -> list[Target]:
    """Every (account, region) pair the spec names, sharded, sorted.

    ``session_maker(profile)`` builds every botocore session (tests hand in sessions carrying
    event handlers); by default a plain botocore session for the profile.
    """
    bases: list[Principal | Target] = []
    for profile in spec.profiles or (None,):
        bases.append(_base_principal(profile, factory, session_maker))
    principals: list[Principal | Target] = []
    for base in bases:
        if isinstance(base, Target):
            principals.append(base)
            continue
        if spec.role_arn:
            base = _assume(base, spec.role_arn, spec.external_id, factory)
            if isinstance(base, Target):
                principals.append(base)
                continue
        if spec.org:
            assert spec.role_name is not None
            principals.extend(_org_principals(base, spec, factory))
        else:
            principals.append(base)
    with ThreadPoolExecutor(max_workers=max(1, max_workers)) as pool:
        per_account = list(pool.map(lambda p: _regions_of(p, spec, factory), principals))
    seen: set[tuple[str, str]] = set()
    targets: list[Target] = []
    for group in per_account:
        for target in group:
            if target.sort_key() not in seen:  # the same account through two profiles: once
                seen.add(target.sort_key())
                targets.append(target)
    return shard(targets, spec.shard)


# -- principals --------------------------------------------------------------------------------


def _base_principal(
    profile: str | None, factory: ClientFactory, maker: SessionMaker
) -> Principal | Target:
    label = f"profile:{profile}" if profile else "default credentials"
    try:
        bs = maker(profile)
        bs.register_component("data_loader", _shared_loader(bs))
        region = bs.get_config_variable("region") or None
        session = boto3.Session(botocore_session=bs, region_name=region or DEFAULT_REGION)
        credentials = session.get_credentials()
        if credentials is None:
            return Target(label, "*", failure=("credentials", "no credentials found"))
        sts = cast("STSClient", factory.client(session, "sts", (), region=region or DEFAULT_REGION))
        account = str(sts.get_caller_identity()["Account"])
    except Exception as exc:
        return Target(label, "*", failure=("sts:GetCallerIdentity", faults.describe(exc)))
    return Principal(account, label, profile, credentials, region, maker)


def _assume(
    base: Principal,
    role_arn: str,
    external_id: str | None,
    factory: ClientFactory,
    account: str | None = None,
) -> Principal | Target:
    m = _ROLE_ARN.match(role_arn)
    account = account or (m.group(2) if m else "?")
    region = base.region
    sts = cast("STSClient", factory.client(base.session(region), "sts", (), region=region))
    params: dict[str, Any] = {"RoleArn": role_arn, "RoleSessionName": SESSION_NAME}
    if external_id:
        params["ExternalId"] = external_id

    def refresh() -> dict[str, str]:
        creds = sts.assume_role(**params)["Credentials"]
        expiry = creds["Expiration"]
        return {
            "access_key": creds["AccessKeyId"],
            "secret_key": creds["SecretAccessKey"],
            "token": creds["SessionToken"],
            "expiry_time": expiry.isoformat() if isinstance(expiry, datetime) else str(expiry),
        }

    credentials = DeferredRefreshableCredentials(refresh_using=refresh, method="assume-role")
    try:
        credentials.get_frozen_credentials()  # assume now, so a denied role is reported here
    except Exception as exc:
        return Target(account, "*", failure=("sts:AssumeRole", faults.describe(exc)))
    return Principal(
        account, f"role:{role_arn}", base.profile, credentials, base.default_region, base.maker
    )


def _org_principals(
    base: Principal, spec: TargetSpec, factory: ClientFactory
) -> list[Principal | Target]:
    region = base.region
    try:
        org = factory.client(
            base.session(region), "organizations", ("ListAccounts",), region=region
        )
        accounts: list[dict[str, Any]] = []
        for page in org.get_paginator("list_accounts").paginate():
            accounts.extend(page.get("Accounts") or [])
    except Exception as exc:
        return [
            Target(base.account, "*", failure=("organizations:ListAccounts", faults.describe(exc)))
        ]
    out: list[Principal | Target] = []
    for acct in sorted(accounts, key=lambda a: str(a.get("Id"))):
        state = acct.get("State") or acct.get("Status")  # older responses only say Status
        if str(state).upper() != "ACTIVE":
            continue
        account_id = str(acct["Id"])
        if account_id == base.account:
            out.append(base)  # the caller's own account: no role to assume into itself
            continue
        role_arn = f"arn:{partition(region)}:iam::{account_id}:role/{spec.role_name}"
        out.append(_assume(base, role_arn, spec.external_id, factory, account_id))
    return out


# -- regions -----------------------------------------------------------------------------------


def _regions_of(item: Principal | Target, spec: TargetSpec, factory: ClientFactory) -> list[Target]:
    if isinstance(item, Target):
        if spec.regions and spec.regions != ("all",):
            return [Target(item.account, r, failure=item.failure) for r in spec.regions]
        return [item]
    if not spec.regions:
        return [Target(item.account, item.region, item)]
    if spec.regions != ("all",):
        return [Target(item.account, r, item) for r in spec.regions]
    region = item.region
    try:
        ec2 = cast("EC2Client", factory.client(item.session(region), "ec2", ("DescribeRegions",),
                                               region=region))
        regions = ec2.describe_regions(
            Filters=[{"Name": "opt-in-status", "Values": ["opt-in-not-required", "opted-in"]}]
        )["Regions"]
    except Exception as exc:
        return [Target(item.account, "*", failure=("ec2:DescribeRegions", faults.describe(exc)))]
    names = sorted(
        str(r["RegionName"])
        for r in regions
        if r.get("OptInStatus", "opt-in-not-required") != "not-opted-in"
    )
    return [Target(item.account, r, item) for r in names]
