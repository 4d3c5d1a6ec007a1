"""`gpuaudit demo`: a whole audit of a sandbox AWS account, with no AWS account.

moto (the ``demo`` extra) emulates AWS inside this process; ``estate.seed`` creates a GPU estate
in it (see that module for what, and which findings each part should give). The real
``gpuaudit audit`` then audits that account through its read-only collectors, exactly as it
would a real one; the IaC examples shipped in the package (``examples/``) are scanned with
``gpuaudit scan``; the two JSON reports are merged (``gpuaudit report merge``) into
report.html, report.json and report.sarif. Nothing leaves the process: the environment's AWS
settings (profile, endpoints, credentials) are replaced by fake ones for the duration.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shlex
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parent / "examples"
FORMATS = ("html", "json", "sarif")
INSTALL_HINT = (
    "gpuaudit demo needs moto, which emulates AWS in this process: "
    "pip install 'gpuaudit[demo]' (or pip install moto)"
)
SANDBOX_ENV = {
    "AWS_ACCESS_KEY_ID": "demo",
    "AWS_SECRET_ACCESS_KEY": "demo",
    "AWS_SESSION_TOKEN": "demo",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_DISABLE_REQUEST_COMPRESSION": "true",
    # moto's ~1,300 built-in AMIs per region backend: nothing in the demo reads them (its
    # instances name one moto does not check), and loading them took 0.6 s of the demo
    "MOTO_EC2_LOAD_DEFAULT_AMIS": "false",
}


class DemoUnavailable(Exception):
    """What the demo needs is not installed; the message says how to get it."""


def available() -> None:
    if importlib.util.find_spec("moto") is None:
        raise DemoUnavailable(INSTALL_HINT)


@contextlib.contextmanager
def sandbox(home: Path) -> Iterator[None]:
    """moto in this process, and an environment in which no AWS setting of the machine (a
    profile, an endpoint, real credentials, ~/.aws) can reach the demo."""
    from moto import mock_aws

    saved = dict(os.environ)
    try:
        for name in [k for k in os.environ if k.startswith("AWS_")]:
            del os.environ[name]
        os.environ.update(SANDBOX_ENV)
        os.environ["AWS_CONFIG_FILE"] = str(home / "aws-config")
        os.environ["AWS_SHARED_CREDENTIALS_FILE"] = str(home / "aws-credentials")
        with mock_aws():
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_demo(output_dir: Path, echo: Callable[[str], None] = print) -> int:
    """Seed, audit, scan, merge, write; the exit code (0, or 2 when something in the demo
    could not be read, which would be a bug)."""
    available()
    from scanner.cli.demo.estate import REGIONS, seed
    from scanner.findings.merge import Part, merge_reports, read_report
    from scanner.run.pipeline import ReportOptions, report_exit_code, write_reports

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpuaudit-demo-") as tmp:
        work = Path(tmp)
        config = work / "gpuaudit.yaml"  # the defaults: no config of the working directory
        config.write_text("policies: {}\n", encoding="utf-8")
        live_json, iac_json = work / "sandbox-account.json", work / "iac-examples.json"
        with sandbox(work):
            echo("gpuaudit demo: seeding a sandbox AWS account (moto, in this process) ...")
            estate = seed()
            echo(f"  account {estate.account}, regions {', '.join(REGIONS)}: "
                 f"{len(estate.ids)} resources (and the instances of 2 groups), and "
                 f"{estate.metric_points:,} CloudWatch agent GPU data points")
            echo("gpuaudit demo: gpuaudit audit --regions " + ",".join(REGIONS) + " ...")
            audit_code = _audit(REGIONS, config, live_json)
        echo("gpuaudit demo: gpuaudit scan <bundled IaC examples> ...")
        _scan_examples(config, iac_json)
        parts = [Part("sandbox AWS account", read_report(live_json)),
                 Part("bundled IaC examples", read_report(iac_json))]
        doc = merge_reports(parts)
    opts = ReportOptions(formats=FORMATS, output_dir=output_dir, quiet=True)
    if hasattr(opts, "repo_root"):  # SARIF paths relative to the examples, wherever installed
        opts.repo_root = EXAMPLES.parent
    write_reports(doc, opts)
    for line in totals(doc):
        echo(line)
    paths = [output_dir / f"report.{fmt}" for fmt in FORMATS]
    echo("Reports: " + ", ".join(str(p) for p in paths))
    echo(f"The table: gpuaudit report render {shlex.quote(str(output_dir / 'report.json'))}   "
         f"({time.perf_counter() - started:.1f} s)")
    code = report_exit_code(doc, "none")
    return code if code else (2 if audit_code == 2 else 0)


def _audit(regions: tuple[str, ...], config: Path, out: Path) -> int:
    """The real `gpuaudit audit` command, in this process (so that it meets the sandbox)."""
    from scanner.cli.audit import audit

    args = ["--regions", ",".join(regions), "--config", str(config), "--format", "json",
            "--output", str(out), "--include-passed", "--fail-on", "none", "--quiet"]
    try:
        audit.main(args=args, prog_name="gpuaudit audit", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    return 0


def _scan_examples(config: Path, out: Path) -> int:
    """`gpuaudit scan` of the examples shipped in the package."""
    from scanner.run.pipeline import ReportOptions, finish
    from scanner.sources.scan import scan_paths

    result = scan_paths([EXAMPLES])
    opts = ReportOptions(formats=("json",), output=out, config_path=config, fail_on="none",
                         include_passed=True, quiet=True)
    return finish(result, inputs={"paths": [str(EXAMPLES)]}, opts=opts)


def totals(doc: dict[str, Any]) -> list[str]:
    """The demo's closing lines: results by status, failing results by policy, the money."""
    from reports.common import money

    summary = doc["summary"]
    statuses = ", ".join(f"{n} {s}" for s, n in summary["by_status"].items())
    failing = {pid: c["FAIL"] for pid, c in summary["by_policy"].items() if c.get("FAIL")}
    # the report's own totals: an amount on capacity already counted is left out of them
    saving = summary.get("savings_usd_month") or 0.0
    exposure = summary.get("exposure_usd_month") or 0.0
    inputs = doc["inputs"]
    lines = [
        "",
        f"Audited: account(s) {', '.join(inputs.get('accounts', []))} in "
        f"{', '.join(inputs.get('regions', []))}, and {len(inputs.get('paths', []))} IaC "
        f"path(s); {summary['resources']} resources.",
        f"Results: {statuses}.",
        "Failing, by policy: " + ", ".join(f"{pid} {n}" for pid, n in failing.items()) + ".",
        f"Estimated saving: {money(saving)}/month (right-sizing and the spot mix); "
        f"spot bids allow up to {money(exposure)}/month of overspend above the caps.",
    ]
    if doc["errors"]:
        lines.append(f"Could not read: {len(doc['errors'])} input(s) (see the report's errors).")
    return lines


__all__ = ["EXAMPLES", "DemoUnavailable", "available", "run_demo", "sandbox", "totals"]
