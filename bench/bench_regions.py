"""`make bench-regions`: a whole live audit of an empty account in 17 regions, against a moto
server on 127.0.0.1 (tests/live_server.py), in this process.

What an audit of every region costs before there is anything to read: one client per service
and region (86 here), the discovery calls, the report. Reports the audit's CPU time (median of
``--repeat`` runs; the server's CPU is its own process's and not counted), the clients made and
the client classes botocore built for them in the first run (counted by wrapping botocore's
builder: one per service when the audit's clients share their class,
scanner/aws/client_classes.py; later runs in the process may reuse them).

    python bench/bench_regions.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402
from botocore.client import ClientCreator  # noqa: E402

from tests.live_server import MotoProcess, clean_aws_env  # noqa: E402

PARTITION_PREFIXES = ("us", "eu", "ap", "ca", "sa")


def _counting() -> tuple[collections.Counter[str], collections.Counter[str]]:
    clients: collections.Counter[str] = collections.Counter()
    classes: collections.Counter[str] = collections.Counter()
    make_client, make_methods = ClientCreator.create_client, ClientCreator._create_methods

    def create_client(self: Any, service_name: str, *args: Any, **kwargs: Any) -> Any:
        clients[service_name] += 1
        return make_client(self, service_name, *args, **kwargs)

    def create_methods(self: Any, service_model: Any) -> Any:
        classes[service_model.service_name] += 1
        return make_methods(self, service_model)

    ClientCreator.create_client = create_client  # type: ignore[method-assign]
    ClientCreator._create_methods = create_methods  # type: ignore[method-assign]
    return clients, classes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    regions = [r for r in boto3.Session().get_available_regions("ec2")
               if r.split("-")[0] in PARTITION_PREFIXES][:17]
    clients, classes = _counting()
    from scanner.cli.main import cli

    cpu: list[float] = []
    first: tuple[int, dict[str, int]] = (0, {})
    with MotoProcess() as server, tempfile.TemporaryDirectory() as tmp:
        os.environ.clear()
        os.environ.update(clean_aws_env(home=Path(tmp)))
        for run in range(args.repeat):
            clients.clear()
            classes.clear()
            started = time.process_time()
            try:
                cli.main(["audit", "--endpoint-url", server.url, "--regions", ",".join(regions),
                          "--format", "json", "-o", str(Path(tmp) / "audit.json"), "--quiet",
                          "--fail-on", "none"], standalone_mode=False)
            except SystemExit as exit_:
                if exit_.code not in (0, None):
                    print(f"gpuaudit audit exited {exit_.code}", file=sys.stderr)
                    return 1
            cpu.append(time.process_time() - started)
            if run == 0:  # later runs of this process may reuse the classes it built
                first = (sum(clients.values()), dict(classes))
    made, built = first
    print(f"{len(regions)} regions, empty account: {made} clients, "
          f"{sum(built.values())} client classes built "
          f"({', '.join(f'{s} {n}' for s, n in sorted(built.items()))}); "
          f"audit CPU median {statistics.median(cpu):.2f} s, best {min(cpu):.2f} s "
          f"({args.repeat} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
