"""ParallelCluster v3 cluster configuration files: the queues (Slurm or AWS Batch), the head
node and the shared EBS volumes.

The configuration's keys are already PascalCase and kept as written. ``${VAR}`` placeholders
(the configs are often ``envsubst`` templates) read as UNKNOWN. A queue tag ``gpuaudit:skip``
(``EBS-001:reason;...``; the cluster's ``Tags`` apply to every resource) suppresses. A file
that is clearly a cluster configuration but malformed (a queue list that is not a list, a
queue that is not a mapping) is an input error naming the line. YAML anchors and aliases are
accepted (ParallelCluster reads the file with PyYAML) within the budget of the YAML reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.catalog import region_name
from scanner.model import (
    InputError,
    Notice,
    Provenance,
    Resource,
    Skip,
    SourceKind,
    SourceResult,
    Unknown,
)
from scanner.sources.parallelcluster.sniff import clearly_parallelcluster
from scanner.sources.yaml_documents.coerce import coerce
from scanner.sources.yaml_documents.dispatch import YamlFormat, read_yaml_file
from scanner.sources.yaml_documents.files import ConfigFile
from scanner.sources.yaml_documents.holes import without_placeholders
from scanner.sources.yaml_documents.reader import Document
from scanner.sources.yaml_documents.skips import parse_skips

QUEUE = "parallelcluster.queue"
HEAD_NODE = "parallelcluster.head_node"
STORAGE = "parallelcluster.shared_storage"
SKIP_TAG = "gpuaudit:skip"
_QUEUE_KEYS = ("Name", "CapacityType", "AllocationStrategy", "ComputeResources", "Networking",
               "ComputeSettings", "CapacityReservationTarget")


def is_cluster_configuration(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("Scheduling"), dict) and (
        "HeadNode" in value or "SlurmQueues" in value["Scheduling"]
        or "AwsBatchQueues" in value["Scheduling"])


def read_documents(file: ConfigFile, docs: list[Document], result: SourceResult) -> None:
    for doc in docs:
        _cluster(doc.value, file, result)


FORMAT = YamlFormat("ParallelCluster configuration", clearly_parallelcluster,
                    is_cluster_configuration, read_documents)


def read_if_cluster_configuration(path: Path) -> SourceResult | None:
    """The resources of a cluster configuration; None for a file that is not one. Never
    raises."""
    return read_yaml_file(path, only=(FORMAT,))


@dataclass(frozen=True)
class Embedding:
    """A configuration inside another file (a CloudFormation ``Custom::PclusterCluster``):
    the prefix of its resources' ids, the suppressions and existence of the resource that holds
    it, and the region to assume when the configuration names none."""

    id_prefix: str = ""
    skips: tuple[Skip, ...] = ()
    exists: bool | Unknown = True
    region: Any = None
    label: str = ""  # what an error message starts with ("resource X, ClusterConfiguration: ")


def read_embedded(cfg: dict[str, Any], file: ConfigFile, result: SourceResult,
                  embedding: Embedding) -> None:
    """The resources of a cluster configuration held by another file (its values already
    read: Unknown where not known, Ref to the file's other resources)."""
    _cluster(cfg, file, result, embedding)


class _Reader:
    def __init__(self, file: ConfigFile, result: SourceResult, region: Any,
                 cluster_tags: dict[str, str], embedding: Embedding) -> None:
        self.file = file
        self.result = result
        self.region = region
        self.cluster_tags = cluster_tags
        self.embedding = embedding

    def error(self, message: str, value: Any, default: tuple[int, int], parent: Any = None,
              key: str | int | None = None) -> None:
        line = self.file.line(value, parent, key, default[0])
        self.result.errors.append(InputError(self.file.where, self.embedding.label + message,
                                             line))

    def unknown(self, what: str, why: Unknown, line: int) -> None:
        """A part not known (an intrinsic function of the template that holds it): a notice,
        never an error of the configuration."""
        self.result.notices.append(Notice(
            self.file.where, f"{self.embedding.label}{what} is not known ({why.reason}): not "
                             "judged", line))

    def add(self, kind: str, rid: str, attrs: dict[str, Any], span: tuple[int, int],
            tags: dict[str, str], name: str | None) -> None:
        where = self.file.where
        rid = self.embedding.id_prefix + rid
        attrs = without_placeholders(attrs)
        if self.region is not None:
            attrs.setdefault("Region", self.region)

        def notice(message: str) -> None:
            self.result.notices.append(Notice(where, f"{rid}: {message}", span[0]))

        attrs = coerce(kind, attrs, notice)
        all_tags = {**self.cluster_tags, **tags}
        skips: tuple[Skip, ...] = ()
        if SKIP_TAG in all_tags:
            skips, problems = parse_skips(all_tags[SKIP_TAG], f"tag {SKIP_TAG} of {rid}")
            for p in problems:
                notice(p)
        self.result.resources.append(Resource(
            kind=kind, id=rid, attrs=attrs,
            provenance=Provenance(SourceKind.PARALLELCLUSTER, file=where, start_line=span[0],
                                  end_line=span[1], pricing_region=region_name(self.region)),
            scope=where, name=name, tags=all_tags, aliases=(name,) if name else (),
            skips=(*self.embedding.skips, *skips), declared=True,
            exists=self.embedding.exists))


def _tags(value: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("Key"), str) and \
                isinstance(item.get("Value"), str | int | float | bool):
            out[item["Key"]] = str(item["Value"])
    return out


def _cluster(cfg: dict[str, Any], file: ConfigFile, result: SourceResult,
             embedding: Embedding = Embedding()) -> None:
    span = file.lines_of(cfg) or (1, 1)
    region = cfg.get("Region")
    reader = _Reader(file, result, embedding.region if region is None else region,
                     _tags(cfg.get("Tags")), embedding)
    head = cfg.get("HeadNode")
    if isinstance(head, dict):
        attrs = {k: head[k] for k in ("InstanceType", "Networking", "LocalStorage") if k in head}
        reader.add(HEAD_NODE, "HeadNode", attrs, file.lines_of(head) or span, {}, None)
    elif isinstance(head, Unknown):
        reader.unknown("HeadNode", head, span[0])
    elif head is not None:
        reader.error("HeadNode is not a mapping", head, span, cfg, "HeadNode")
    scheduling = cfg["Scheduling"]
    scheduler = scheduling.get("Scheduler")
    for section in ("SlurmQueues", "AwsBatchQueues"):
        queues = scheduling.get(section)
        if queues is None:
            continue
        if isinstance(queues, Unknown):
            reader.unknown(f"Scheduling.{section}", queues, span[0])
            continue
        if not isinstance(queues, list):
            reader.error(f"Scheduling.{section} is not a list", queues, span, scheduling,
                         section)
            continue
        for i, q in enumerate(queues):
            q_span = file.lines_of(q) or span
            if isinstance(q, Unknown):
                reader.unknown(f"Scheduling.{section}[{i}]", q, span[0])
                continue
            if not isinstance(q, dict):
                reader.error(f"Scheduling.{section}[{i}] is not a mapping", q, span, queues, i)
                continue
            name = q.get("Name")
            shown = name if isinstance(name, str) and name else f"#{i}"
            attrs = {k: q[k] for k in _QUEUE_KEYS if k in q}
            attrs["Scheduler"] = scheduler if scheduler is not None else (
                "awsbatch" if section == "AwsBatchQueues" else "slurm")
            crs = attrs.get("ComputeResources")
            if crs is not None and not isinstance(crs, list | Unknown):
                reader.error(f"Scheduling.{section}[{i}].ComputeResources is not a list", crs,
                             q_span, q, "ComputeResources")
                continue
            reader.add(QUEUE, f"Scheduling/{section}/{shown}", attrs, q_span,
                       _tags(q.get("Tags")), name if isinstance(name, str) else None)
    storages = cfg.get("SharedStorage")
    if isinstance(storages, Unknown):
        reader.unknown("SharedStorage", storages, span[0])
        storages = []
    if storages is not None and not isinstance(storages, list):
        reader.error("SharedStorage is not a list", storages, span, cfg, "SharedStorage")
        storages = []
    for i, st in enumerate(storages or []):
        if isinstance(st, Unknown):
            reader.unknown(f"SharedStorage[{i}]", st, span[0])
            continue
        if not isinstance(st, dict):
            reader.error(f"SharedStorage[{i}] is not a mapping", st, span, storages, i)
            continue
        if st.get("StorageType") != "Ebs":
            continue  # EFS and FSx are not EBS volumes
        name = st.get("Name")
        shown = name if isinstance(name, str) and name else f"#{i}"
        attrs = {k: st[k] for k in ("Name", "MountDir", "StorageType", "EbsSettings") if k in st}
        reader.add(STORAGE, f"SharedStorage/{shown}", attrs, file.lines_of(st) or span, {},
                   name if isinstance(name, str) else None)
