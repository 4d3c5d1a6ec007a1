"""The text test for a Karpenter manifest (stdlib only: the scan runs it on every YAML file)."""

from __future__ import annotations

import re

_API = re.compile(r"""["']?apiVersion["']?\s*:\s*["']?karpenter\.(?:sh|k8s\.aws)/""")
_KIND = re.compile(r"""["']?kind["']?\s*:\s*["']?(?:NodePool|EC2NodeClass)\b""")


def looks_like_karpenter(head: str) -> bool:
    """A Karpenter apiVersion in the text (the structure decides afterwards)."""
    return "karpenter." in head and _API.search(head) is not None


def clearly_karpenter(text: str) -> bool:
    """A Karpenter apiVersion and a NodePool / EC2NodeClass kind: a file that does not parse
    is then an input error rather than YAML of another kind."""
    return looks_like_karpenter(text) and _KIND.search(text) is not None
