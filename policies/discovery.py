"""One discovery of every policy the engine and the reports know, in three origins that are the
same thing to them:

1. built-in: the modules of :data:`BUILTIN_MODULES` (each registers with ``policies.base.policy``);
2. plugins: the modules named by the entry points of group :data:`ENTRY_POINT_GROUP`
   (registering with ``policies.api.policy``), loaded once per process;
3. declarative YAML policies of the policy directories in use (``--policy-dir``, ``policy_dirs:``
   of the config), loaded by ``policies.declarative`` and validated before any scan.

An id is unique across the three: a plugin or a YAML file that reuses one is an error naming it.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from policies.base import REGISTRY, Policy

BUILTIN_MODULES = ("policies.ebs", "policies.vpc", "policies.spot", "policies.asg",
                   "policies.rightsizing", "policies.unread_modules",
                   "policies.asg_scaling", "policies.spot_interruption", "policies.s3",
                   "policies.net", "policies.cost", "policies.commitments")
ENTRY_POINT_GROUP = "gpuaudit.policies"


class PolicyLoadError(Exception):
    """A policy that is not built in could not be loaded (the message names the file and line,
    or the entry point): nothing is scanned."""


class _State:
    def __init__(self) -> None:
        self.builtin: frozenset[str] | None = None
        self.plugins_loaded = False
        self.plugin_errors: list[str] = []
        self.plugin_ids: list[str] = []
        self.user: dict[str, Policy] = {}
        self.dirs: dict[str, tuple[str, ...]] = {}  # real path -> the ids its files declare
        self.generation = 0


_STATE = _State()


def builtin_ids() -> frozenset[str]:
    if _STATE.builtin is None:
        for name in BUILTIN_MODULES:
            importlib.import_module(name)
        _STATE.builtin = frozenset(REGISTRY)
    return _STATE.builtin


def _load_plugins() -> None:
    if _STATE.plugins_loaded:
        return
    builtin_ids()
    _STATE.plugins_loaded = True
    if not _may_have_plugins():
        return
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        before = set(REGISTRY)
        try:
            ep.load()
        except Exception as exc:  # a broken plugin is an error naming it, not a traceback
            _STATE.plugin_errors.append(
                f"policy plugin {ep.name} ({ep.value}, entry point group {ENTRY_POINT_GROUP}) "
                f"could not be loaded: {type(exc).__name__}: {exc}")
            continue
        _STATE.plugin_ids.extend(sorted(set(REGISTRY) - before))
    _STATE.generation += 1


def _may_have_plugins() -> bool:
    """Whether an installed distribution on sys.path declares the entry-point group: a look at
    the ``entry_points.txt`` files, so that the scan of a pre-commit hook does not pay for
    importing importlib.metadata (about 60 ms) where no plugin is installed."""
    marker = f"[{ENTRY_POINT_GROUP}]"
    for entry in sys.path:
        try:
            listing = os.scandir(entry or ".")
        except OSError:  # not a directory (a zip archive: let importlib.metadata look)
            if entry and os.path.isfile(entry):
                return True
            continue
        with listing:
            for item in listing:
                if not item.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(item.path, "entry_points.txt"), "rb") as fh:
                        if marker.encode() in fh.read(1 << 20):
                            return True
                except OSError:
                    continue
    return False


def all_policies() -> dict[str, Policy]:
    """Every policy: built-in, plugins, and the YAML policies of the directories in use."""
    builtin_ids()
    _load_plugins()
    return dict(sorted({**REGISTRY, **_STATE.user}.items()))


def plugin_errors() -> list[str]:
    _load_plugins()
    return list(_STATE.plugin_errors)


def generation() -> int:
    """Changes whenever the set of policies changes (caches of metadata key on it)."""
    return _STATE.generation


def use_policy_dirs(dirs: Iterable[Path | str]) -> None:
    """The YAML policies in use become exactly those of ``dirs`` (a new command line)."""
    _STATE.user = {}
    _STATE.dirs = {}
    _STATE.generation += 1
    add_policy_dirs(dirs)


def add_policy_dirs(dirs: Iterable[Path | str]) -> None:
    """Load the YAML policies of ``dirs`` (those not loaded yet), all validated first; raises
    PolicyLoadError naming the file and line of the first problem, and then loads none of
    them."""
    dirs = list(dirs)
    plugins = plugin_errors()
    if plugins:
        raise PolicyLoadError(plugins[0])
    if not dirs:
        return
    from policies.declarative import PolicyFileError, load_policy_dir

    taken = dict.fromkeys(all_policies())
    fresh: dict[str, Policy] = {}
    loaded: dict[str, tuple[str, ...]] = {}
    for d in dirs:
        real = os.path.realpath(d)
        if real in _STATE.dirs or real in loaded:
            continue
        try:
            found = load_policy_dir(Path(d), taken={**taken, **fresh},
                                    builtin=builtin_ids() | set(_STATE.plugin_ids))
        except PolicyFileError as exc:
            raise PolicyLoadError(str(exc)) from None
        for pol in found:
            fresh[pol.id] = pol
        loaded[real] = tuple(p.id for p in found)
    if not loaded:
        return
    _STATE.user.update(fresh)
    _STATE.dirs.update(loaded)
    _STATE.generation += 1


def user_policy_dirs() -> list[str]:
    return list(_STATE.dirs)


def check_plugins() -> None:
    """Raise PolicyLoadError when a plugin could not be loaded."""
    errors = plugin_errors()
    if errors:
        raise PolicyLoadError(errors[0])
