"""The repository root that report paths are placed under (every format: JSON, table, HTML,
Markdown, CSV, JUnit, SARIF).

``--repo-root`` when given; else it comes from the scanned paths, never from the working
directory: each path's git work tree (the nearest directory at or above it holding ``.git``,
a directory or a worktree's file), or the scanned path itself (a directory; a file's
directory) when it is in no repository; with several paths, the deepest directory holding all
of their roots. The working directory only when nothing was scanned by path (a live audit).
No git process is started: walking up the parents is enough and costs nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


def git_work_tree(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.git``; None if there is none."""
    here = Path(os.path.realpath(start))
    if not here.is_dir():
        here = here.parent
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def path_root(path: Path) -> Path:
    """The root of one scanned path: its git work tree, else the path itself (its directory
    when it is a file, or the nearest existing directory when it does not exist)."""
    found = git_work_tree(path)
    if found is not None:
        return found
    here = Path(os.path.realpath(path))
    while not here.is_dir() and here != here.parent:
        here = here.parent
    return here


def repo_root(paths: Sequence[str | Path] = (), *, explicit: Path | None = None,
              cwd: Path | None = None) -> Path:
    cwd = cwd or Path.cwd()
    if explicit is not None:
        return Path(os.path.realpath(cwd / explicit))
    roots = {str(path_root(cwd / Path(p))) for p in paths if str(p)}
    if not roots:
        return git_work_tree(cwd) or Path(os.path.realpath(cwd))
    return Path(os.path.commonpath(sorted(roots)))
