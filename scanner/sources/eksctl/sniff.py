"""The text test for an eksctl ClusterConfig (stdlib only: the scan runs it on every YAML file)."""

from __future__ import annotations

import re

_API = re.compile(r"""["']?apiVersion["']?\s*:\s*["']?eksctl\.io/""")
_KIND = re.compile(r"""["']?kind["']?\s*:\s*["']?ClusterConfig\b""")


def looks_like_eksctl(head: str) -> bool:
    """An eksctl apiVersion in the text (the structure decides afterwards)."""
    return "eksctl.io/" in head and _API.search(head) is not None


def clearly_eksctl(text: str) -> bool:
    """An eksctl apiVersion and ``kind: ClusterConfig``: a file that does not parse is then an
    input error rather than YAML of another kind."""
    return looks_like_eksctl(text) and _KIND.search(text) is not None
