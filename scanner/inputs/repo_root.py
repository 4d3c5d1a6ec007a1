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
              cwd: Path | None = None, files: Sequence[str | Path] = ()) -> Path:
    """``files``: the files the findings point at. Where a scanned path is in no repository, its
    root also holds those files (a local module outside the scanned directory, `source =
    "../../modules/disk"`), so that every path stays relative to the root."""
    cwd = cwd or Path.cwd()
    if explicit is not None:
        return Path(os.path.realpath(cwd / explicit))
    scanned = [cwd / Path(p) for p in paths if str(p)]
    roots = {str(path_root(p)) for p in scanned}
    if not roots:
        return git_work_tree(cwd) or Path(os.path.realpath(cwd))
    if files and any(git_work_tree(p) is None for p in scanned):
        outside = {os.path.dirname(os.path.realpath(cwd / Path(f))) for f in files if str(f)}
        roots |= {d for d in outside if git_work_tree(Path(d)) is None}
    return Path(os.path.commonpath(sorted(roots)))
