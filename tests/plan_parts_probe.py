"""Run in a process of its own by tests/test_plan_parts.py (a pytest-xdist worker has an I/O
thread running, and the reader never forks while another thread runs): reads a large plan with
one process and with two, and prints what the test compares as JSON.

``python tests/plan_parts_probe.py same PLAN DIR``: each part read in a forked worker leaves a
file in DIR, and the main process is slowed down a little per part, so that the worker surely
takes some. ``... dies PLAN DIR``: the worker dies in its first part."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scanner.inputs import workers
from scanner.model import SourceResult
from scanner.sources.terraform.plan import stream
from scanner.sources.terraform.plan.reader import load_plan


def _read(plan: Path, n: str) -> SourceResult:
    os.environ[workers.WORKERS_ENV] = n
    return load_plan(plan, stream=True)


def _shape(result: SourceResult) -> dict[str, Any]:
    return {"resources": repr(result.resources), "errors": repr(result.errors),
            "notices": repr(result.notices), "gaps": repr(result.gaps),
            "sensitive": sorted(result.sensitive), "count": len(result.resources)}


def main(mode: str, plan: Path, marks: Path) -> None:
    one = _read(plan, "1")
    read_part = stream._read_part
    parent = os.getpid()

    def patched(*args: Any) -> Iterator[Any]:
        if os.getpid() == parent:
            time.sleep(0.05)  # the worker starts while the main process is still at work
        else:
            (marks / f"{os.getpid()}-{time.monotonic_ns()}").touch()
            if mode == "dies":
                os._exit(3)
        return read_part(*args)

    stream._read_part = patched  # type: ignore[assignment]
    two = _read(plan, "2")
    json.dump({"one": _shape(one), "two": _shape(two),
               "forked": sorted(p.name for p in marks.iterdir())}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
