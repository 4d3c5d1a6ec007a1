"""``os.path.realpath`` with each directory's answer kept for the run.

``os.path.realpath`` asks the file system about every component of a path, each time: for the
thousands of files under one tree that is the same parents resolved again and again (a tenth of
a 2,000-stack scan). Here a path's parent is resolved once (recursively, cached) and only its
last component is looked at again. The answer is the same as ``os.path.realpath``'s: a path
with ``..`` or ``.`` components (which resolve after the symbolic link before them) and a last
component that is a link or cannot be looked at go to ``os.path.realpath`` itself.
"""

from __future__ import annotations

import os
import stat

MAX_CACHED = 1 << 16  # absolute paths remembered (a few MiB at most)


_KNOWN: dict[str, str] = {}  # path -> its real path, for paths that exist only


def real_path(path: str) -> str:
    """The canonical path of ``path``, as ``os.path.realpath(path)`` returns it. Only paths
    that exist are remembered (one created later, e.g. a fetched module, is looked at then)."""
    known = _KNOWN.get(path)
    if known is not None:
        return known
    absolute = path if path.startswith(os.sep) else os.path.join(os.getcwd(), path)
    parts = absolute.split(os.sep)
    if "." in parts or ".." in parts:
        return os.path.realpath(path)
    parent, name = os.path.split(absolute.rstrip(os.sep) or os.sep)
    if not name or parent == absolute:
        return os.path.realpath(path)
    joined = os.path.join(real_path(parent), name)
    try:
        if stat.S_ISLNK(os.lstat(joined).st_mode):
            return os.path.realpath(joined)
    except OSError:  # missing or unreadable: realpath's own (non-strict) answer
        return os.path.realpath(path)
    if len(_KNOWN) < MAX_CACHED and path.startswith(os.sep):
        _KNOWN[path] = joined
    return joined


def forget() -> None:
    """Start a new run: the file system may have changed since the last one."""
    _KNOWN.clear()


__all__ = ["forget", "real_path"]
