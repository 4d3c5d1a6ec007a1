"""Run in a process of its own by tests/test_engine_parallel.py (a pytest-xdist worker has an
I/O thread running, and the engine never forks while another thread runs): evaluates the
fixtures with one process and with two, and prints what the test compares as JSON.

``python tests/engine_workers_probe.py same DIR``: the policies evaluated in a forked worker
leave a file in DIR, and the main process is slowed down a little per policy, so that the worker
surely takes some. ``... dies DIR``: the worker dies in its first policy."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import scanner.engine.evaluate as engine
from scanner.inputs import workers
from scanner.sources.registry import ScanOptions
from scanner.sources.scan import scan_paths

FIXTURES = Path(__file__).parent / "fixtures"
INPUTS = [FIXTURES / "terraform" / "gpu_estate_a", FIXTURES / "terraform" / "gpu_estate_b",
          FIXTURES / "terraform" / "gpu_modules", FIXTURES / "cfn", FIXTURES / "eksctl",
          FIXTURES / "karpenter"]


def _evaluate(n: str) -> engine.Evaluation:
    os.environ[workers.WORKERS_ENV] = n
    result = scan_paths([p for p in INPUTS if p.exists()], ScanOptions())
    assert result.resources
    return engine.run(result.resources, gaps=result.gaps, include_passed=False)


def _shape(ev: engine.Evaluation) -> object:
    return {"findings": [f.as_dict() for f in ev.findings],
            "notices": [n.as_dict() for n in ev.notices],
            "passed": sorted(ev.passed.items())}


def main(mode: str, marks: Path) -> None:
    one = _evaluate("1")
    evaluate_policy = engine._evaluate_policy
    parent = os.getpid()

    def patched(pol: object, env: object) -> object:
        if os.getpid() == parent:
            time.sleep(0.02)  # the workers start while the main process is still at work
        else:
            (marks / f"{os.getpid()}-{getattr(pol, 'id', '')}").touch()
            if mode == "dies":
                os._exit(3)
        return evaluate_policy(pol, env)  # type: ignore[arg-type]

    engine._evaluate_policy = patched  # type: ignore[assignment]
    two = _evaluate("2")
    json.dump({"one": _shape(one), "two": _shape(two),
               "statuses": sorted({f.status.value for f in one.findings}),
               "forked": sorted(p.name for p in marks.iterdir())}, sys.stdout, default=str)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
