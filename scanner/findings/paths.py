"""File paths of a report as repository paths: relative to the repository root, forward slashes,
never ``..`` and never absolute. SARIF needs them so (code scanning places a result in the
repository's file of that path) and the HTML report links files by them.

A report keeps paths as they were given on the command line: relative to the directory the scan
ran in (``base``), or absolute. ``root`` is the repository root (``--repo-root``, else the git
work tree holding the scanned paths, see ``scanner/inputs/repo_root.py``).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path, PureWindowsPath
from urllib.parse import quote


def _real(path: str) -> str:
    from scanner.inputs.real_path import real_path  # the parents' answers kept for the run

    return real_path(path)


def repo_relative(path: str, *, root: Path | None = None, base: Path | None = None) -> str | None:
    """``path`` relative to ``root`` (forward slashes, symlinks resolved as code scanning asks),
    or None when it is not under ``root``. Without ``root``, a relative path is taken to be
    relative to the repository root already (None if it climbs out with ``..``)."""
    if not path or "\x00" in path:
        return None
    if PureWindowsPath(path).drive or path.startswith("\\\\"):
        return None  # a Windows path cannot be placed under a POSIX root
    posix = path.replace("\\", "/")
    if root is None:
        if posix.startswith("/"):
            return None
        rel = posixpath.normpath(posix)
    else:
        absolute = posix if posix.startswith("/") else os.path.join(base or os.getcwd(), posix)
        rel = os.path.relpath(_real(absolute), _real(str(root))).replace(os.sep, "/")
    if rel == "." or rel == ".." or rel.startswith("../") or rel.startswith("/"):
        return None
    return rel


def uri(rel: str) -> str:
    """A repository path as a relative URI reference: percent-encoded, ``/`` kept. A ``:`` is
    encoded too, so that no first segment can read as a scheme (``javascript:x.tf``)."""
    return quote(rel, safe="/-._~")
