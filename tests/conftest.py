"""Suite-wide rules.

Parallel runs (pytest-xdist, ``make test`` runs ``-n`` workers with ``--dist loadgroup``): the
tests of a module that share a module-scoped fixture (a moto server, a terraform apply, a
Chromium visit) run on one worker, so that the fixture is set up once; so do the tests that
share one pre-commit environment (its install holds a lock the others would wait on). Every
other test goes to whichever worker is free.

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


SERIAL_MODULES = frozenset({"test_precommit.py"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        shared = any(d.scope in ("module", "class", "package") for ds in defs for d in ds)
        if shared or item.path.name in SERIAL_MODULES:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))


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
