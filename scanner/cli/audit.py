"""`gpuaudit audit` (live accounts) and `gpuaudit iam-policy` (the minimal read-only policy).

Thin: parse options, resolve targets, collect, hand the result to ``scanner.run.pipeline.finish``.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn

import click

from scanner.cli.options import build_report_options, expand_policy_ids, report_options
from scanner.model import UsageError
from scanner.run.pipeline import EXIT_ERROR, finish

if TYPE_CHECKING:
    from scanner.aws.clients import ClientFactory
    from scanner.aws.targets import Target, TargetSpec
    from scanner.model import SourceResult
    from scanner.run.pipeline import ReportOptions

# The whole audit's deadline by default (--timeout): a single account's enabled regions take
# well under a minute; an Organization that needs longer says so (or is sharded, --shard).
DEFAULT_TIMEOUT = 600.0


def needed_kinds(
    config_path: Path | None, policy_ids: Collection[str], skip_ids: Collection[str]
) -> frozenset[str]:
    """Every kind the selected policies read in an account: only the calls they need are made."""
    from scanner.engine.config import load_config
    from scanner.engine.evaluate import select_policies

    config = load_config(config_path)
    chosen = select_policies(config, policy_ids or None, skip_ids)
    return frozenset(k for pol in chosen for k in pol.observed_needs)


class Progress:
    """One line per (account, region) on stderr: a bar on a terminal, plain lines otherwise.
    On a terminal the bar also names each service as it is read (``service``, the listener of
    ``scanner.aws.progress``)."""

    WIDTH = 24

    def __init__(self, stream: IO[str] | None = None, *, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._last = 0
        self._done = 0
        self._total = 0
        self._services = 0

    def service(self, account: str, region: str, service: str, status: str) -> None:
        """A service read in (account, region): the terminal line says so (the pairs' bar stays)."""
        if not (self.enabled and self.tty):
            return
        self._services += 1
        self._draw(f"{account}/{region} {service} {status} ({self._services} services read)")

    def listener(self) -> Any:
        """The ``scanner.aws.progress`` listener: None (silent) unless drawing on a terminal."""
        return self.service if self.enabled and self.tty else None

    def _draw(self, label: str, end: str = "") -> None:
        filled = self.WIDTH * self._done // max(self._total, 1)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        line = f"\r[{bar}] {self._done}/{self._total} {label}"
        pad = max(self._last - len(line), 0)
        self._last = len(line)
        self._write(line + " " * pad + end)

    def start(self, total: int) -> None:
        self._total = total
        if self.enabled and not self.tty:
            self._write(f"gpuaudit: auditing {total} account/region pair(s)\n")

    def __call__(self, done: int, total: int, target: Any, status: str) -> None:
        if not self.enabled:
            return
        label = f"{target.account}/{target.region} {status}"
        if self.tty:
            self._done, self._total = done, total
            self._draw(label, "\n" if done == total else "")
        else:
            self._write(f"gpuaudit: [{done}/{total}] {label}\n")

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


@click.command()
@click.option(
    "--profile",
    "profiles",
    multiple=True,
    metavar="NAME",
    help="AWS profile (repeatable). Default: the standard boto3 credential chain.",
)
@click.option(
    "--regions",
    "--region",
    "regions",
    multiple=True,
    metavar="R1,R2|all",
    help="Regions to audit, comma-separated or repeated; 'all' = the account's enabled "
    "regions. Default: the profile's region.",
)
@click.option("--role-arn", metavar="ARN", help="Assume this role (in the audited account).")
@click.option("--external-id", metavar="ID", help="External id for --role-arn / --role-name.")
@click.option(
    "--org", is_flag=True, help="Audit every ACTIVE account of the Organization (ListAccounts)."
)
@click.option("--role-name", metavar="NAME", help="With --org: role to assume in each account.")
@click.option(
    "--endpoint-url",
    metavar="URL",
    help="One endpoint for every service (moto server, LocalStack). Per-service endpoints: "
    "AWS_ENDPOINT_URL_<SERVICE>.",
)
@click.option(
    "--max-workers",
    type=click.IntRange(1, 64),
    default=8,
    show_default=True,
    help="Parallel (account, region) pairs (each runs up to 4 collectors side by side).",
)
@click.option(
    "--endpoint-concurrency",
    type=click.IntRange(0, 64),
    default=None,
    metavar="N",
    help="Requests in flight to --endpoint-url at once (0: no bound). Default: 1 for an "
    "endpoint on this machine (a local emulator is one process: requests side by side slow "
    "it down), else 0.",
)
@click.option(
    "--max-attempts",
    type=click.IntRange(1, 20),
    default=None,
    help="Attempts per API call (adaptive retries; default 6 or AWS_MAX_ATTEMPTS).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0, 86400),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Deadline of the whole audit (0: none). After it nothing more is sent and what was "
    "not read is ERROR (exit 2); the report is still written.",
)
@click.option(
    "--shard", metavar="K/N", help="Audit only shard K of N of the sorted (account, region) pairs."
)
@click.option(
    "--lookback-days",
    type=click.FloatRange(min=1, max=455),
    default=None,
    metavar="N",
    help="Days of GPU utilization (CloudWatch) the right-sizing policies judge. Default: the "
    "config's RS lookback_days, else 14.",
)
@click.option(
    "--prometheus-url",
    metavar="URL",
    default=None,
    help="Also read DCGM exporter GPU utilization of the instances found from this Prometheus "
    "server (bearer token: $GPUAUDIT_PROMETHEUS_TOKEN), matched by instance id, private DNS "
    "name or IP.",
)
@click.option(
    "--with-spend",
    is_flag=True,
    help="Also read the last full month's actual GPU spend of the audited accounts and regions "
    "(Cost Explorer GetCostAndUsage, one request per account, each billed about USD 0.01) and "
    "show the estimated savings as a share of it.",
)
@report_options
def audit(
    profiles: tuple[str, ...],
    regions: tuple[str, ...],
    role_arn: str | None,
    external_id: str | None,
    org: bool,
    role_name: str | None,
    endpoint_url: str | None,
    max_workers: int,
    endpoint_concurrency: int | None,
    max_attempts: int | None,
    timeout: float,
    shard: str | None,
    lookback_days: float | None,
    prometheus_url: str | None,
    with_spend: bool,
    **kwargs: Any,
) -> None:
    """Audit live AWS accounts (read-only) with the same policies as `scan`."""
    opts = build_report_options(kwargs)
    spec = _target_spec(profiles, regions, role_arn, external_id, org, role_name, shard,
                        endpoint_url)
    missing = _unknown_profiles(profiles)
    if missing:
        _die(missing)
    kinds = _selected_kinds(opts)

    from scanner.aws.clients import ClientFactory
    from scanner.aws.collect import inputs_of, plan
    from scanner.aws.collectors.cloudwatch import configure
    from scanner.aws.deadline import Deadline
    from scanner.run.rightsizing_inputs import configured_lookback

    days = lookback_days or configured_lookback(opts)
    configure(lookback_days=days)

    progress = Progress(enabled=not opts.quiet)
    deadline = Deadline(timeout)
    factory = ClientFactory(
        endpoint_url=endpoint_url,
        max_attempts=max_attempts,
        endpoint_concurrency=endpoint_concurrency,
        deadline=deadline,
    )
    targets = plan(spec, factory, max_workers=max_workers)
    _say_no_credentials(targets, opts, progress)
    result = _collect(targets, kinds, factory, max_workers, progress)
    if prometheus_url:
        from scanner.run.rightsizing_inputs import with_prometheus_live

        with_prometheus_live(result, prometheus_url, days)
    if with_spend:
        from scanner.aws.spend import audit_spend
        from scanner.catalog import default_catalog

        opts.spend = audit_spend(targets, factory, default_catalog(), max_workers=max_workers)
    if deadline.expired and not opts.quiet:
        click.echo(f"gpuaudit: {deadline.reason}: what was not read is ERROR", err=True)
    try:
        code = finish(result, inputs=inputs_of(targets), opts=opts)
    except UsageError as exc:
        _die(str(exc))
    # Requests still in flight past the deadline are not waited for: ``scanner.cli.main`` ends
    # the process with os._exit once the reports are written.
    sys.exit(code)


def _target_spec(
    profiles: tuple[str, ...],
    regions: tuple[str, ...],
    role_arn: str | None,
    external_id: str | None,
    org: bool,
    role_name: str | None,
    shard: str | None,
    endpoint_url: str | None,
) -> TargetSpec:
    """The accounts and regions to audit (a ``TargetSpec``); a bad option is a usage error."""
    from scanner.aws.targets import (
        TargetSpec,
        TargetSpecError,
        check_endpoint_url,
        parse_regions,
        parse_shard,
    )

    try:
        if endpoint_url is not None:
            check_endpoint_url(endpoint_url)
        return TargetSpec(
            profiles=tuple(profiles),
            regions=parse_regions(regions),
            role_arn=role_arn,
            external_id=external_id,
            org=org,
            role_name=role_name,
            shard=parse_shard(shard) if shard else None,
        )
    except TargetSpecError as exc:
        raise click.UsageError(str(exc)) from exc


def _selected_kinds(opts: ReportOptions) -> frozenset[str]:
    """:func:`needed_kinds` of the options' config and policies; a bad one ends the run (2)."""
    try:
        return needed_kinds(opts.config_path, opts.policy_ids, opts.skip_ids)
    except KeyError as exc:
        _die(exc.args[0] if exc.args else str(exc))
    except Exception as exc:  # ConfigError and friends: a usage problem, not a traceback
        _die(str(exc))


def _say_no_credentials(targets: Collection[Target], opts: ReportOptions,
                        progress: Progress) -> None:
    """When no target has credentials: one line on stderr, and exit 2 unless report files were
    asked for (they are still written, with the error, and nothing more is said). Otherwise
    errors are said on stderr too (the table on stdout lists them as well)."""
    no_credentials = _no_credentials(targets)
    if not no_credentials:
        opts.say_errors = True
        return
    click.echo(f"gpuaudit: error: {no_credentials}", err=True)
    if opts.output is None and opts.output_dir is None:
        sys.exit(EXIT_ERROR)  # nothing was read: one line, not an ERROR per policy
    opts.quiet = True
    progress.enabled = False


def _collect(targets: list[Target], kinds: frozenset[str], factory: ClientFactory,
             max_workers: int, progress: Progress) -> SourceResult:
    """Read every target, the progress drawn as it goes."""
    from scanner.aws import progress as live_progress
    from scanner.aws.collect import collect_targets

    progress.start(len(targets))
    with live_progress.listening(progress.listener()):
        return collect_targets(
            targets, kinds=kinds, factory=factory, max_workers=max_workers, progress=progress
        )


def _unknown_profiles(profiles: Collection[str]) -> str | None:
    """One sentence when a --profile is configured nowhere (botocore would otherwise fail the
    same way in every region, as an ERROR per policy)."""
    if not profiles:
        return None
    import botocore.session

    known = botocore.session.Session().available_profiles
    missing = [p for p in profiles if p not in known]
    if not missing:
        return None
    where = "~/.aws/config and ~/.aws/credentials (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE)"
    found = ", ".join(sorted(known)) or "none"
    names = ", ".join(repr(p) for p in missing)
    return f"AWS profile {names} not found in {where}; profiles there: {found}"


def _no_credentials(targets: Collection[Any]) -> str | None:
    """One sentence when no target could be reached for want of any credentials."""
    if not targets or any(getattr(t, "failure", None) is None for t in targets):
        return None
    if {t.failure[0] for t in targets} != {"credentials"}:
        return None
    return ("no AWS credentials found (environment, --profile / AWS_PROFILE, ~/.aws/config "
            "and credentials, SSO, container or instance role): configure some, or pass "
            "--profile NAME; nothing was audited")


def _die(message: str) -> NoReturn:
    click.echo(f"gpuaudit: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.command("iam-policy")
@click.option(
    "--policy",
    "policy_ids",
    multiple=True,
    metavar="ID[,ID...]",
    help="Only what these policies need (ids or globs, comma-separated or repeated). "
    "Default: every policy, including off-by-default ones.",
)
@click.option("--send", is_flag=True,
              help="Print instead the separate write policy of `gpuaudit report "
              "send-securityhub` (securityhub:BatchImportFindings); the audit never needs it.")
def iam_policy(policy_ids: tuple[str, ...], send: bool) -> None:
    """Print the minimal read-only IAM policy for `gpuaudit audit`."""
    from scanner.aws.iam_policy import render, render_send

    if send:
        if policy_ids:
            raise click.UsageError("--send takes no --policy: the send policy is one action")
        click.echo(render_send(), nl=False)
        return

    kinds: frozenset[str] | None = None
    if policy_ids:
        from policies import all_policies

        catalogue = all_policies()
        wanted = expand_policy_ids(policy_ids, "--policy")
        kinds = frozenset(k for p in wanted for k in catalogue[p].observed_needs)
    click.echo(render(kinds), nl=False)
