"""Suite-wide rules.

Every test runs: a skipped test is reported as a failure, because a skip hides exactly what
the suite is for (a missing corpus, tool or browser would otherwise pass in silence). Set
``GPUAUDIT_ALLOW_SKIP=1`` on a development machine that lacks a tool on purpose; CI
(``CI`` set) never allows it. ``xfail`` is not a skip and is unaffected.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

ALLOW_SKIP = "GPUAUDIT_ALLOW_SKIP"


def skips_allowed() -> bool:
    return os.environ.get(ALLOW_SKIP) == "1" and not os.environ.get("CI")


def _fail_a_skip(report: Any) -> None:
    if not report.skipped or hasattr(report, "wasxfail") or skips_allowed():
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (
        f"skipped, and a skip counts as a failure in this suite: {reason}\n"
        f"(install what is missing; on a development machine {ALLOW_SKIP}=1 allows skips)"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    _fail_a_skip(outcome.get_result())  # pytest.skip() in a test, a skipif marker (setup)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    _fail_a_skip(outcome.get_result())  # a module-level skip or importorskip
