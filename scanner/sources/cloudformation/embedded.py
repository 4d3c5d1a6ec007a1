"""Documents of other formats that a CloudFormation template holds in a resource's property,
read by those formats' own readers (one reader per format, no copy):

* a ParallelCluster cluster (``Custom::PclusterCluster``, ``AWS::ParallelCluster::Cluster``, or
  any custom resource whose ``ClusterConfiguration`` has ``HeadNode`` and ``Scheduling``): its
  configuration, by :func:`scanner.sources.parallelcluster.reader.read_embedded`;
* Kubernetes manifests the template applies (``AWSQS::Kubernetes::Resource``'s ``Manifest``):
  their Karpenter objects, by :func:`scanner.sources.karpenter.objects.translate`.

Enters: the property's value as the template reader evaluated it (a mapping with Unknown where
parts are not known and Ref to the template's resources, or text whose unknown parts are holes
of a :class:`~scanner.sources.yaml_documents.holes.HoledText`), and the :class:`Host` resource.
Leaves: resources in the host's result, in the template's scope (so refs and tag selectors find
the template's subnets), at the host's lines, with its Condition and Metadata skips; input
errors naming the resource.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scanner.catalog import region_name
from scanner.model import InputError, Notice, Provenance, Skip, SourceKind, SourceResult, Unknown
from scanner.sources.yaml_documents.holes import HoledText, without_holes
from scanner.sources.yaml_documents.reader import YamlError, load_documents

# The documentation's spelling; CDK writes Custom::PClusterCluster (types compared lower-case).
PARALLELCLUSTER_TYPES = frozenset({"custom::pclustercluster", "aws::parallelcluster::cluster"})
MANIFEST_TYPES = frozenset({"awsqs::kubernetes::resource"})  # the Quick Start registry type
CONFIGURATION = "ClusterConfiguration"
MANIFEST = "Manifest"


def property_of(rtype: str, props: Any) -> str | None:
    """The property of a resource of this type that holds documents gpuaudit reads, or None."""
    if rtype.lower() in MANIFEST_TYPES:
        return MANIFEST
    if rtype.lower() in PARALLELCLUSTER_TYPES:
        return CONFIGURATION
    if not (rtype.startswith("Custom::") or rtype == "AWS::CloudFormation::CustomResource"):
        return None
    cfg = props.get(CONFIGURATION) if isinstance(props, dict) else None
    if isinstance(cfg, dict) and len(cfg) == 1 and str(next(iter(cfg))).startswith("Fn::"):
        cfg = next(iter(cfg.values()))  # !Sub "...", !ToJsonString {...}
        cfg = cfg[0] if isinstance(cfg, list) and cfg else cfg
    if isinstance(cfg, dict | str) and "Scheduling" in cfg and "HeadNode" in cfg:
        return CONFIGURATION
    return None


@dataclass
class Host:
    """The template resource that holds the documents."""

    where: str
    logical_id: str
    span: tuple[int, int]
    exists: bool | Unknown
    skips: tuple[Skip, ...]
    region: str | None
    result: SourceResult

    def error(self, reason: str) -> None:
        self.result.errors.append(InputError(self.where, reason, self.span[0]))

    def notice(self, message: str) -> None:
        self.result.notices.append(Notice(self.where, message, self.span[0]))


def read(prop: str, value: Any, holed: HoledText, host: Host) -> None:
    """Read the evaluated value of the host's property ``prop`` (see :func:`property_of`)."""
    label = f"resource {host.logical_id}, {prop}: "
    docs = _documents(value, holed, label, host)
    if docs is None:
        return
    if isinstance(docs, Unknown):
        host.notice(f"{label}not known ({docs.reason}); not scanned")
        return
    if prop == MANIFEST:
        _manifests(docs, host)
    else:
        _parallelcluster(docs, label, host)


def missing(prop: str, rtype: str, props: dict[str, Any], host: Host) -> None:
    """The host has no such property."""
    if prop == MANIFEST:
        if props.get("Url") is not None:
            host.notice(f"resource {host.logical_id}: its manifest is read from a URL; not "
                        "scanned")
        return
    # a valid template (the property may be given when the stack is deployed): nothing to read
    host.notice(f"resource {host.logical_id} ({rtype}) has no {prop}: what it creates is not "
                "in this file; not judged")


def _documents(value: Any, holed: HoledText, label: str, host: Host
               ) -> list[Any] | Unknown | None:
    """The documents a value holds: a mapping (one document), or YAML / JSON text of one or
    more (a hole where a part is not known reads as UNKNOWN); an Unknown as a whole; None after
    an input error."""
    if isinstance(value, Unknown):
        return value
    if not isinstance(value, str):
        return [without_holes(value, holed) if holed.holes else value]
    holed.text = value
    try:
        loaded = load_documents(value)
    except YamlError as exc:
        host.error(f"{label}{exc.reason}")
        return None
    problem = loaded.error or next((d.error for d in loaded.documents if d.error), None)
    if problem is not None:
        at = f" (line {problem.line} of the text)" if problem.line else ""
        host.error(f"{label}{problem.reason}{at}")
        return None
    return [without_holes(d.value, holed) for d in loaded.documents if d.value is not None]


def _parallelcluster(docs: list[Any], label: str, host: Host) -> None:
    from scanner.sources.parallelcluster.reader import (
        Embedding,
        is_cluster_configuration,
        read_embedded,
    )
    from scanner.sources.yaml_documents.files import ConfigFile

    if len(docs) != 1:
        host.error(f"{label}the text holds {len(docs)} YAML documents, not one")
        return
    (cfg,) = docs
    scheduling = cfg.get("Scheduling") if isinstance(cfg, dict) else None
    if isinstance(scheduling, Unknown):
        host.notice(f"{label}Scheduling is not known ({scheduling.reason}); its queues are "
                    "not judged")
        return
    if not is_cluster_configuration(cfg):
        host.error(f"{label}not a ParallelCluster configuration (no Scheduling with "
                   "SlurmQueues or AwsBatchQueues, or no HeadNode)")
        return
    region = host.region if host.region is not None else Unknown(
        "AWS::Region is not known (pass --region)")
    embedding = Embedding(id_prefix=f"{host.logical_id}/", skips=host.skips, exists=host.exists,
                          region=region, label=label)
    read_embedded(cfg, ConfigFile(host.where, span=host.span), host.result, embedding)


def _manifests(docs: list[Any], host: Host) -> None:
    """The Karpenter objects of the manifests; other objects are not read (as a template's
    resources of other types are not)."""
    from scanner.sources.karpenter.objects import Problems, karpenter_kind, objects_in, translate

    problems = Problems(host.where)
    for doc in docs:
        for obj in objects_in(doc):
            if karpenter_kind(obj) is None:
                continue
            prov = Provenance(SourceKind.KARPENTER, file=host.where, start_line=host.span[0],
                              end_line=host.span[1], pricing_region=region_name(host.region))
            r = translate(obj, rid=None, provenance=prov, scope=host.where, problems=problems,
                          skips=host.skips)
            if r is not None:
                r.id = f"{host.logical_id}/{r.id}"
                r.exists = host.exists
                host.result.resources.append(r)
    host.result.errors.extend(problems.errors)
    host.result.notices.extend(problems.notices)
