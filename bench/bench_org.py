"""`make bench-org`: an organisation-wide audit on the distributed engine gpuaudit uses (a job
matrix of `audit --org --shard K/N` processes and `report merge`), simulated on one machine.

A moto server (bench/seed_live.py's counting server) holds an AWS Organization of ``--accounts``
member accounts, each with a GPU estate in ``--regions`` regions, seeded through a role assumed
into each account. Every AWS request waits ``--latency-ms`` (a network round trip to a real
endpoint; the server is threaded) and every ``--throttle-every``-th request is
answered with the service's throttling error (retried by botocore's adaptive mode).

For 1, 4 and 16 shards, every shard runs as its own process, one after the other (a matrix gives
each shard its own runner; run side by side here they would share 2 cores and say nothing of a
matrix), and their reports are merged. Printed per shard count: the slowest and the mean shard
wall, the calls made and the throttles met, the calls per (account, region) beside their lower
bound (one call for each distinct operation the audit needed there: no pagination, no retry),
and a projection to 1,000 accounts x 17 regions on 16 shards: a shard's wall fitted as fixed
cost + cost per pair over every shard run, at the pairs a shard of the target holds. The merged
report of every shard count must equal the unsharded one (same findings by fingerprint and
status): otherwise the bench fails.

    python bench/bench_org.py [--accounts 8] [--regions 2] [--latency-ms 100]
                              [--throttle-every 20] [--shards 1,4,16]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402

from bench.seed_live import Scale, seed, serve_command  # noqa: E402
from tests.live_server import clean_aws_env, free_port  # noqa: E402

ROLE = "gpuaudit-read"
ALL_REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2",
               "ap-northeast-1", "ca-central-1", "sa-east-1")
TARGET_ACCOUNTS, TARGET_REGIONS, TARGET_SHARDS = 1000, 17, 16
SCALE = Scale(volumes=12, instances=4, launch_templates=3, asgs=2, vpcs_per_region=1,
              subnets_per_vpc=2)


def _admin(url: str, path: str, method: str = "GET") -> Any:
    req = urllib.request.Request(url + path, method=method)
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = resp.read()
    return json.loads(body) if body else None


def _start(port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "MOTO_EC2_LOAD_DEFAULT_AMIS": "false"}
    proc = subprocess.Popen(serve_command(port), stdout=log.open("ab"), stderr=subprocess.STDOUT,
                            env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            _admin(url, "/bench/calls")
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the moto server did not start")


def _organization(url: str, accounts: int, regions: list[str]) -> list[str]:
    def client(service: str, **creds: str) -> Any:
        return boto3.client(service, region_name="us-east-1", endpoint_url=url,
                            **(creds or {"aws_access_key_id": "testing",
                                         "aws_secret_access_key": "testing"}))

    org = client("organizations")
    org.create_organization(FeatureSet="ALL")
    ids = []
    for i in range(accounts):
        created = org.create_account(Email=f"gpu-{i}@example.com", AccountName=f"gpu-{i}")
        ids.append(created["CreateAccountStatus"]["AccountId"])
    for n, account in enumerate(ids):
        role = client("sts").assume_role(RoleArn=f"arn:aws:iam::{account}:role/{ROLE}",
                                         RoleSessionName="seed")["Credentials"]
        creds = {"aws_access_key_id": role["AccessKeyId"],
                 "aws_secret_access_key": role["SecretAccessKey"],
                 "aws_session_token": role["SessionToken"]}
        seed(url, SCALE, regions, quiet=True, credentials=creds)
        print(f"seeded account {n + 1}/{accounts} ({account})", file=sys.stderr, flush=True)
    return ids


def _audit(url: str, regions: list[str], out: Path, shard: str | None) -> tuple[float, int]:
    cmd = [sys.executable, "-m", "scanner", "audit", "--org", "--role-name", ROLE, "--regions",
           ",".join(regions), "--endpoint-url", url, "--endpoint-concurrency", "16",
           "--format", "json", "--output", str(out), "--deterministic", "--fail-on", "none",
           "--quiet"]
    if shard:
        cmd += ["--shard", shard]
    env = clean_aws_env(extra={"PYTHONPATH": str(ROOT), "AWS_DEFAULT_REGION": "us-east-1",
                               "GPUAUDIT_TELEMETRY_END": "2026-01-15T00:00:00Z"})
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1) or not out.exists():
        raise SystemExit(f"audit {shard or ''} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return wall, proc.returncode


def _merge(reports: list[Path], out: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "scanner", "report", "merge", *map(str, reports),
                           "--format", "json", "--output", str(out), "--deterministic",
                           "--fail-on", "none"],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"report merge exited {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(out.read_text())


def _verdicts(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((f["id"], f["status"]) for f in doc["findings"])


def _pairs(doc: dict[str, Any], total: int, shards: int) -> int:
    """The (account, region) pairs a shard held: its report names the accounts and regions it
    covered (at most their product), and the split is balanced (at most ceil(total / N))."""
    inputs = doc.get("inputs") or {}
    product = len(inputs.get("accounts") or []) * len(inputs.get("regions") or [])
    return min(product, -(-total // shards))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accounts", type=int, default=8)
    parser.add_argument("--regions", type=int, default=2)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--throttle-every", type=int, default=20)
    parser.add_argument("--shards", default="1,4,16")
    args = parser.parse_args(argv)
    regions = list(ALL_REGIONS[: args.regions])
    shard_counts = [int(s) for s in args.shards.split(",")]
    work = Path(tempfile.mkdtemp(prefix="bench-org-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _start(port, work / "moto.log")
    try:
        started = time.perf_counter()
        accounts = _organization(url, args.accounts, regions)
        print(f"seeded {len(accounts)} accounts x {len(regions)} regions in "
              f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
        _admin(url, f"/bench/latency?ms={args.latency_ms}", "POST")
        _admin(url, f"/bench/throttle?every={args.throttle_every}", "POST")
        rows = []
        points: list[tuple[int, float]] = []  # (pairs in a shard, its wall)
        whole: list[tuple[str, str]] | None = None
        total_pairs = (len(accounts) + 1) * len(regions)  # the management account too
        for n in shard_counts:
            walls, calls, throttled, pairs = [], 0, 0, []
            reports = []
            per_region: dict[str, set[tuple[str, str]]] = {}
            for k in range(1, n + 1):
                _admin(url, "/bench/calls", "POST")
                out = work / f"shards-{n}" / f"shard-{k}.json"
                out.parent.mkdir(parents=True, exist_ok=True)
                wall, _ = _audit(url, regions, out, f"{k}/{n}" if n > 1 else None)
                counted = _admin(url, "/bench/calls")
                walls.append(wall)
                calls += sum(r["calls"] for r in counted)
                throttled += sum(r["throttled"] for r in counted)
                for r in counted:
                    if r["region"] in regions and r["calls"] > r["throttled"]:
                        per_region.setdefault(r["region"], set()).add((r["service"],
                                                                       r["operation"]))
                reports.append(out)
                pairs.append(_pairs(json.loads(out.read_text()), total_pairs, n))
            merged = _merge(reports, work / f"merged-{n}.json")
            verdicts = _verdicts(merged)
            if whole is None:
                whole = verdicts
            elif verdicts != whole:
                raise SystemExit(f"the merge of {n} shards differs from the unsharded audit")
            lower = statistics.mean(len(v) for v in per_region.values()) if per_region else 0
            points += list(zip(pairs, walls, strict=True))
            rows.append({
                "shards": n, "slowest_s": round(max(walls), 2),
                "mean_s": round(statistics.mean(walls), 2), "calls": calls,
                "throttled": throttled, "calls_per_pair": round(calls / total_pairs, 1),
                "lower_bound_per_pair": lower, "pairs_per_shard": max(pairs),
                "findings": len(verdicts),
            })
        _print(rows, args, len(accounts) + 1, regions)
        fixed, per_pair = _fit(points)
        pairs = TARGET_ACCOUNTS * TARGET_REGIONS / TARGET_SHARDS
        print(f"Shard wall ~ {fixed:.2f} s + {per_pair:.3f} s x pairs (least squares over "
              f"{len(points)} shard runs). Projection for {TARGET_ACCOUNTS:,} accounts x "
              f"{TARGET_REGIONS} regions on {TARGET_SHARDS} shards ({pairs:,.0f} pairs a "
              f"shard, the shards side by side): {(fixed + per_pair * pairs) / 60:.1f} min.")
    finally:
        server.terminate()
        server.wait(timeout=10)
    return 0


def _fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """wall = a + b x pairs, least squares; (the mean wall, 0) when the pairs do not vary."""
    xs, ys = [float(p) for p, _ in points], [w for _, w in points]
    if len(set(xs)) < 2:
        return statistics.mean(ys), 0.0
    slope, intercept = statistics.linear_regression(xs, ys)
    return max(intercept, 0.0), slope


def _print(rows: list[dict[str, Any]], args: argparse.Namespace, accounts: int,
           regions: list[str]) -> None:
    print(f"\nOrganisation audit, simulated: {accounts} accounts (management included) x "
          f"{len(regions)} regions, {args.latency_ms:g} ms a call, every "
          f"{args.throttle_every}th call throttled; shards run one after the "
          "other, one process each")
    head = ("shards", "slowest shard s", "mean shard s", "calls", "throttled", "calls/pair",
            "lower bound/pair", "pairs/shard")
    print(" | ".join(head))
    for r in rows:
        print(" | ".join(str(v) for v in (
            r["shards"], r["slowest_s"], r["mean_s"], r["calls"], r["throttled"],
            r["calls_per_pair"], r["lower_bound_per_pair"], r["pairs_per_shard"])))
    print("Every merge equals the unsharded report (findings by fingerprint and status).")


if __name__ == "__main__":
    sys.exit(main())
