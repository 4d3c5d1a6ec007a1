"""The repository root that report paths are placed under (SARIF, HTML links).

``--repo-root`` when given; else the git work tree (the nearest directory holding ``.git``, a
directory or a worktree's file) of the first scanned path; else the one of the working
directory; else the working directory itself. No git process is started: walking up the
parents is enough and costs nothing.
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


def repo_root(paths: Sequence[str | Path] = (), *, explicit: Path | None = None,
              cwd: Path | None = None) -> Path:
    cwd = cwd or Path.cwd()
    if explicit is not None:
        return Path(os.path.realpath(cwd / explicit))
    for path in paths:
        found = git_work_tree(cwd / Path(path))
        if found is not None:
            return found
        break  # the first input decides; a path outside any repository falls back to the cwd
    return git_work_tree(cwd) or Path(os.path.realpath(cwd))
