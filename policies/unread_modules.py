"""Terraform module calls that were not read (TF-001): what their modules declare is not in the
scan, so no result on it can be given; the call is reported UNKNOWN, never left to pass in
silence."""

from __future__ import annotations

from collections.abc import Iterator

from policies.base import Context, Remediation, policy
from scanner.model import Resource, Result, Severity, Status

MODULE_CALL = "terraform.module_call"


@policy(
    id="TF-001",
    title="Terraform module not read",
    severity=Severity.HIGH,
    category="compliance",
    kinds=(MODULE_CALL,),
    description="A module call whose module could not be read: a remote source (the "
                "Terraform Registry, git, an archive) that `terraform init` did not install "
                "in `.terraform/modules` and `scan --fetch-modules` did not fetch, or whose "
                "fetch failed. Whatever the module declares (node groups, launch templates, "
                "volumes) is not judged, so the call is UNKNOWN: a scan that reads none of an "
                "EKS platform's modules does not pass. `--strict` (`--fail-on-unknown`) makes "
                "it fail the run (exit 1).",
    remediation=Remediation(
        text="Run `terraform init` in the root module (gpuaudit reads `.terraform/modules`), "
             "or scan with `--fetch-modules` (git and registry sources, cached under "
             "`--cache-dir`). To accept modules that are not read, skip TF-001 "
             "(`--skip-policy TF-001`). `terraform init -backend=false` installs the "
             "modules without touching any state."),
    sources="H",
)
def tf_001(call: Resource, ctx: Context) -> Iterator[Result]:
    source = call.get("Source")
    reason = call.get("Reason") or "it was not read"
    fix = call.get("Fix") or "run terraform init, or scan with --fetch-modules"
    version = call.get("Version")
    what = f"source {source!s}" + (f", version {version}" if isinstance(version, str) else "")
    yield ctx.result(
        call, Status.UNKNOWN,
        f"{call.id} ({what}) was not read: {reason}; its resources are not judged. Fix: {fix}",
        evidence={"source": source, "version": version, "reason": reason, "fix": fix})
