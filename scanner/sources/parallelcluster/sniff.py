"""The text test for a ParallelCluster v3 cluster configuration (stdlib only: the scan runs it
on every YAML file). A configuration has top-level ``HeadNode`` and ``Scheduling`` keys."""

from __future__ import annotations

import re

_HEAD = re.compile(r"""^["']?HeadNode["']?\s*:""", re.MULTILINE)
_SCHEDULING = re.compile(r"""^["']?Scheduling["']?\s*:""", re.MULTILINE)
_JSON = re.compile(r'"HeadNode"\s*:.*"Scheduling"\s*:|"Scheduling"\s*:.*"HeadNode"\s*:', re.S)


def looks_like_parallelcluster(head: str) -> bool:
    """Top-level ``HeadNode`` and ``Scheduling`` (or ``SlurmQueues`` under Scheduling) keys."""
    if "Scheduling" not in head:
        return False
    if _SCHEDULING.search(head) and (_HEAD.search(head) or "SlurmQueues" in head
                                     or "AwsBatchQueues" in head):
        return True
    return head.lstrip()[:1] == "{" and _JSON.search(head) is not None


def clearly_parallelcluster(text: str) -> bool:
    """Both top-level keys and a queue section: a file that does not parse is then an input
    error."""
    return looks_like_parallelcluster(text) and _HEAD.search(text) is not None and (
        "SlurmQueues" in text or "AwsBatchQueues" in text)
