"""Send a report's findings to AWS Security Hub (BatchImportFindings): the one write gpuaudit
makes to AWS, and only from ``gpuaudit report send-securityhub``.

Its client is made here, not by the audit's read-only factory (scanner.aws.clients, which
refuses every write): a botocore handler on this client refuses every operation but
``securityhub:BatchImportFindings`` and ``sts:GetCallerIdentity``, so this write allowance
cannot reach the audit. Batches of 100 findings (Security Hub's limit), botocore's standard
retries. The Ids are stable (reports.asff), so sending the same report twice updates the same
findings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scanner import __version__

WRITE_ACTION = "securityhub:BatchImportFindings"
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {("securityhub", "BatchImportFindings"), ("sts", "GetCallerIdentity")})
BATCH = 100  # BatchImportFindings takes at most 100 findings a request
MAX_ATTEMPTS = 5


class SendRefused(RuntimeError):
    """An operation this client is not allowed to call."""


class SendError(RuntimeError):
    """The findings could not be sent (the message says why)."""


def write_policy_document() -> dict[str, Any]:
    """The IAM policy that `gpuaudit report send-securityhub` needs, apart from the audit's."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "GpuauditSendSecurityHub", "Effect": "Allow",
        "Action": [WRITE_ACTION], "Resource": "*"}]}


def _guard(service: str) -> Callable[..., None]:
    def check(model: Any = None, **_: Any) -> None:
        name = getattr(model, "name", "?")
        if (service, name) not in ALLOWED:
            raise SendRefused(f"{service}:{name} is not allowed (send-securityhub makes only "
                              f"{WRITE_ACTION})")
    return check


def client(service: str, *, region: str | None, endpoint_url: str | None,
           session: Any = None) -> Any:
    import boto3
    from botocore.config import Config

    sess = session or boto3.session.Session()
    cfg = Config(retries={"mode": "standard", "max_attempts": MAX_ATTEMPTS},
                 user_agent_extra=f"gpuaudit/{__version__}", connect_timeout=10, read_timeout=30)
    made = sess.client(service, region_name=region, endpoint_url=endpoint_url, config=cfg)
    made.meta.events.register(f"before-parameter-build.{service}", _guard(service))
    return made


@dataclass
class SendResult:
    sent: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    account: str = ""
    region: str = ""


def send(doc: dict[str, Any], *, region: str | None = None, endpoint_url: str | None = None,
         session: Any = None, progress: Callable[[str], None] | None = None) -> SendResult:
    """Import ``doc``'s findings into the caller's account and region."""
    from botocore.exceptions import BotoCoreError, ClientError

    from reports.asff import build

    try:
        hub = client("securityhub", region=region, endpoint_url=endpoint_url, session=session)
        where = hub.meta.region_name
        sts = client("sts", region=where, endpoint_url=endpoint_url, session=session)
        account = str(sts.get_caller_identity()["Account"])
    except (BotoCoreError, ClientError) as exc:
        raise SendError(f"cannot reach Security Hub: {exc}") from exc
    findings = build(doc, account=account, region=where, force_account=True)
    result = SendResult(account=account, region=where)
    for start in range(0, len(findings), BATCH):
        batch = findings[start:start + BATCH]
        try:
            answer = hub.batch_import_findings(Findings=batch)
        except (BotoCoreError, ClientError) as exc:
            raise SendError(f"BatchImportFindings failed after {result.sent} sent: {exc}") from exc
        result.sent += int(answer.get("SuccessCount") or 0)
        result.failed += int(answer.get("FailedCount") or 0)
        result.failures += [f"{f.get('Id')}: {f.get('ErrorCode')} {f.get('ErrorMessage')}"
                            for f in answer.get("FailedFindings") or []]
        if progress is not None:
            progress(f"sent {min(start + BATCH, len(findings))}/{len(findings)}")
    return result
