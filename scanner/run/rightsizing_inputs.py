"""What `scan` and `audit` do for the right-sizing policies (RS-*) before evaluating.

`scan` without ``--utilization`` leaves RS-* out (unless named with ``--policy``: they then give
no result, there being nothing to judge); with it, the utilization files are read and attached
beside the IaC resources (``scanner.telemetry.history``, imported only then). `audit` sets the
CloudWatch window (``--lookback-days``, else the config's RS lookback_days, else 14) and, with
``--prometheus-url``, reads DCGM utilization from Prometheus for the running GPU instances it
found (``with_prometheus_live``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from scanner.model import Notice, Resource, SourceResult
from scanner.run.pipeline import ReportOptions

RS_POLICIES = ("RS-001", "RS-002", "RS-003")
DEFAULT_LOOKBACK_DAYS = 14.0


def configured_lookback(opts: ReportOptions) -> float:
    """The config's ``lookback_days`` of RS-003 (the policy that judges coverage), else 14."""
    from scanner.engine.config import ConfigError, load_config

    try:
        config = load_config(opts.config_path)
    except ConfigError:
        return DEFAULT_LOOKBACK_DAYS  # reported when the run loads it again
    value = config.params("RS-003", {"lookback_days": DEFAULT_LOOKBACK_DAYS})["lookback_days"]
    return float(value) if isinstance(value, int | float) and value > 0 else \
        DEFAULT_LOOKBACK_DAYS


def with_utilization(result: SourceResult, opts: ReportOptions, specs: Sequence[str],
                     prometheus_url: str | None = None) -> None:
    if not specs and not prometheus_url:
        named = set(opts.policy_ids)
        opts.skip_ids = tuple(dict.fromkeys(
            [*opts.skip_ids, *(p for p in RS_POLICIES if p not in named)]))
        return
    from scanner.telemetry.history import attach, load_utilization

    attach(result, load_utilization(specs, configured_lookback(opts), prometheus_url))


_PORT = re.compile(r":\d+$")


def _live_names(instance: Resource) -> list[str]:
    """What a DCGM series may call a live instance: its id (an ``instance_id`` label from EC2
    service discovery), its private DNS name (dcgm-exporter's ``Hostname``, a Kubernetes node
    name) and that name's first label (a host's short name), its private IP (a scrape target
    ``instance``, its port aside)."""
    dns = instance.get("PrivateDnsName")
    names = [instance.id, dns, dns.split(".", 1)[0] if isinstance(dns, str) else None,
             instance.get("PrivateIpAddress")]
    return [n for n in dict.fromkeys(names) if isinstance(n, str) and n]


def _busiest(record: dict[str, Any]) -> float:
    return max((float(g.get("UtilMax") or 0.0) for m in record.get("Members") or []
                for g in m.get("Gpus") or []), default=0.0)


AMBIGUOUS = "\0ambiguous:"  # a host several audited instances answer to (never a real key)


def match_hosts(instances: Sequence[Resource], keys: dict[str, str]) -> dict[str, str]:
    """``{instance id: the Prometheus key whose series are its own}``. An instance id is unique;
    a private DNS name or IP may be reused in another VPC or account: a key that several
    instances answer to by name or IP is given to none of them (``AMBIGUOUS`` + key)."""
    out: dict[str, str] = {}
    claims: dict[str, list[str]] = {}
    for inst in instances:
        if inst.id in keys:
            out[inst.id] = keys[inst.id]
            continue
        key = next((keys[n] for n in _live_names(inst)[1:] if n in keys), None)
        if key is not None:
            claims.setdefault(key, []).append(inst.id)
    for key, ids in claims.items():
        for iid in ids:
            out[iid] = key if len(ids) == 1 else AMBIGUOUS + key
    return out


def with_prometheus_live(result: SourceResult, url: str, lookback_days: float) -> None:
    """``audit --prometheus-url``: the DCGM utilization of the running GPU instances the audit
    found, from a Prometheus server, beside (or in place of) CloudWatch's. Only in the regions
    where utilization was looked for (a ``telemetry.coverage`` marker: an RS policy enabled and
    CloudWatch read). An instance both sources measured keeps the busier record (a source that
    missed the work must not make it idle), said in a notice. A server that cannot be read is
    an error, and the instances CloudWatch did not measure are UNKNOWN for RS-* (never "no
    telemetry")."""
    from scanner.catalog import is_gpu_type
    from scanner.telemetry import COVERAGE, TELEMETRY
    from scanner.telemetry.history import load_prometheus

    coverage = {r.scope: r for r in result.resources if r.kind == COVERAGE}
    if not coverage:
        result.notices.append(Notice("--prometheus-url", "no utilization was looked for (the "
                                     "right-sizing policies are not enabled, or CloudWatch "
                                     "could not be read): Prometheus is not read"))
        return
    loaded = load_prometheus(url, lookback_days)
    shown = loaded.files[0] if loaded.files else "--prometheus-url"
    result.errors.extend(loaded.errors)
    result.notices.extend(loaded.notices)
    keys: dict[str, str] = {}
    for key in loaded.records:
        keys.setdefault(key, key)
        keys.setdefault(_PORT.sub("", key), key)
    measured = {str(r.get("Target")): r for r in result.resources if r.kind == TELEMETRY}
    used: set[str] = set()
    running = [r for r in result.resources if r.kind == "ec2.instance"
               and r.scope in coverage and r.get("State") == "running"
               and is_gpu_type(r.get("InstanceType"))]
    matched = match_hosts(running, keys)

    def unknown(inst: Resource, reason: str) -> None:
        if inst.id not in measured:
            unreadable = dict(coverage[inst.scope].get("Unreadable") or {})
            unreadable[inst.id] = reason
            coverage[inst.scope].attrs["Unreadable"] = unreadable

    for inst in running:
        if loaded.errors:
            unknown(inst, f"{shown}: {loaded.errors[0].reason}")
            continue
        key = matched.get(inst.id)
        if key is None:
            continue
        if key.startswith(AMBIGUOUS):
            used.add(key[len(AMBIGUOUS):])
            unknown(inst, f"{shown}: the Prometheus host {key[len(AMBIGUOUS):]!r} matches "
                          "several instances audited (the same private DNS name or IP in "
                          "several VPCs or accounts): whose utilization it is, is not known")
            continue
        used.add(key)
        record = {"Target": inst.id, **loaded.records[key]}
        have = measured.get(inst.id)
        if have is not None:
            if _busiest(dict(have.attrs)) >= _busiest(record):
                result.notices.append(Notice(shown, f"{inst.id}: measured by {have.get('Source')} "
                                             "and Prometheus; the busier, "
                                             f"{have.get('Source')}, is judged"))
                continue
            result.notices.append(Notice(shown, f"{inst.id}: measured by {have.get('Source')} "
                                         "and Prometheus; the busier, Prometheus, is judged"))
            result.resources.remove(have)
        result.resources.append(Resource(TELEMETRY, f"telemetry:{inst.id}", record,
                                         inst.provenance, inst.scope, declared=False))
        coverage[inst.scope].attrs["Prometheus"] = shown
    hosts = {m.get("Id") for k in used for m in loaded.records[k].get("Members") or []}
    unmatched = sorted(k for k, r in loaded.records.items() if k not in used and len(
        r.get("Members") or []) == 1 and not hosts & {m.get("Id") for m in r["Members"]})
    if unmatched and not loaded.errors:
        result.notices.append(Notice(shown, f"{len(unmatched)} Prometheus host(s) match no "
                                     "running GPU instance audited (by instance id, private "
                                     f"DNS name or IP), e.g. {unmatched[0]!r}"))
