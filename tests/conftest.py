"""Suite-wide rules.

Parallel runs (pytest-xdist, ``make test`` runs ``-n`` workers with ``--dist loadgroup``): the
tests of a module that share a module-scoped fixture (a moto server, a terraform apply, a
Chromium visit) run on one worker, so that the fixture is set up once; so do the tests that
share one pre-commit environment (its install holds a lock the others would wait on). Every
other test goes to whichever worker is free, the slowest modules first.

Every test runs: a skipped test is reported as a failure, because a skip hides exactly what
the suite is for (a missing corpus, tool or browser would otherwise pass in silence). Set
``GPUAUDIT_ALLOW_SKIP=1`` on a development machine that lacks a tool on purpose; CI
(``CI`` set) never allows it. ``xfail`` is not a skip and is unaffected.
"""

from __future__ import annotations

import functools
import gc
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# moto loads its ~1,300 built-in AMIs into every EC2 region backend it creates (0.1 s of CPU
# each; in-process mocks create them again for every test): no test reads them. Tests that need
# an AMI (terraform applying instances) set it back where they start their server.
os.environ.setdefault("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")

import botocore.loaders
import botocore.session
import pytest

ALLOW_SKIP = "GPUAUDIT_ALLOW_SKIP"

# One botocore data loader per data path for every session of a test process. botocore parses
# a service's JSON model (ec2's is 1.6 MB) once per session, and moto in-process (its backends,
# its region lists) and the seeding helpers make a new session for nearly every client: the
# moto tests spent a third of their CPU decoding the same JSON (53 s -> 33 s of CPU for the
# twelve moto modules in one process). The models are static files; gpuaudit already shares
# its loader across its own sessions (scanner/aws/targets.py), so what it does is unchanged.
# (Only the name botocore.session calls: a test that makes a loader of its own still gets a
# fresh one.)
botocore.session.create_loader = functools.cache(botocore.loaders.create_loader)  # type: ignore[assignment]


def skips_allowed() -> bool:
    return os.environ.get(ALLOW_SKIP) == "1" and not os.environ.get("CI")


SERIAL_MODULES = frozenset({"test_precommit.py"})
# The longest tests (a terraform apply into moto, the wheel and its virtualenv, the pre-commit
# environment, Chromium) start first, so that no worker begins one when the rest is done.
SLOW_FIRST = ("test_parity_live.py", "test_packaging.py", "test_precommit.py",
              "test_first_run_doc.py", "test_html_chromium.py")
_SHARED_FIXTURE = re.compile(r"""scope=["'](module|package|class)["']|moto_server_module""")


def grouped_modules(tests: Path) -> frozenset[str]:
    """Test modules whose tests must share one worker: those with a module-scoped fixture of
    their own or from tests/aws_helpers.py (read from the source: the xdist controller does
    not collect), and SERIAL_MODULES."""
    out = set(SERIAL_MODULES)
    for path in tests.glob("test_*.py"):
        if _SHARED_FIXTURE.search(path.read_text(encoding="utf-8")):
            out.add(path.name)
    return frozenset(out)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)  # stable: the order within each module is kept


# A grouped module with more tests is split into chunks of about this many (each chunk sets
# its fixture up again: test_aws_live_faults.py's moto estate costs ~5 s of CPU per chunk,
# so its 47 audits go in two chunks, not four).
GROUP_CHUNK = 24


class _Scheduling:
    """``--dist loadgroup``: one scope per test, except that a grouped module is one scope, or,
    when it has many tests (a module-scoped moto estate under 41 fault cases, say), a few
    contiguous chunks, one per worker at most: the fixture is then set up once per chunk rather
    than the whole module waiting on one worker. SERIAL_MODULES are never split. (xdist's own
    loadgroup reads ``xdist_group`` marks through item ids that pytest 9 no longer lets it
    change; subclassing LoadScopeScheduling's ``_split_scope`` is xdist's documented way.)"""

    def __init__(self, grouped: frozenset[str]) -> None:
        self.grouped = grouped

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadScopeScheduling

        grouped = self.grouped

        class Scheduler(LoadScopeScheduling):
            _scopes: dict[str, str] | None = None

            def _split_scope(self, nodeid: str) -> str:
                if self._scopes is None:
                    self._scopes = _scopes(next(iter(self.registered_collections.values())),
                                           grouped, self.numnodes)
                return self._scopes.get(nodeid, nodeid)

        return Scheduler(config, log)


def _scopes(collection: list[str], grouped: frozenset[str], workers: int) -> dict[str, str]:
    by_module: dict[str, list[str]] = {}
    for nodeid in collection:
        module = nodeid.split("::", 1)[0]
        if Path(module).name in grouped:
            by_module.setdefault(module, []).append(nodeid)
    out: dict[str, str] = {}
    for module, ids in by_module.items():
        parts = 1 if Path(module).name in SERIAL_MODULES else max(
            1, min(workers, -(-len(ids) // GROUP_CHUNK)))
        for i, nodeid in enumerate(ids):
            out[nodeid] = f"{module}#{i * parts // len(ids)}"
    return out


# The cyclic garbage collector at its default threshold (a pass every 700 allocations) costs
# about 5 % of the in-process tests' CPU: most of what they allocate is acyclic (parsed
# templates, plans, reports). Passes 30 times rarer, and none over what collection built. The
# product's CLI runs without it (scanner.cli.main); the memory bounds the tests assert are
# only stricter for garbage that waits longer.
GC_THRESHOLD = (20_000, 20, 20)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # The session is over; what is still alive the process's exit frees. pytest's
    # unraisable-exception plugin then runs two full collections over it (0.7-0.9 s each in a
    # worker that ran the moto tests, measured with gc.collect() here): frozen, they skip it.
    # An exception in a __del__ is still reported for the test during which it was raised;
    # only garbage the last tests left uncollected goes unexamined.
    gc.freeze()


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(*GC_THRESHOLD)
    if config.pluginmanager.hasplugin("xdist"):
        here = Path(__file__).resolve().parent
        config.pluginmanager.register(_Scheduling(grouped_modules(here)), "gpuaudit-scheduling")


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
