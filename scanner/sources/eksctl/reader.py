"""eksctl ClusterConfig files: every node group, unmanaged and managed.

Attribute names are eksctl's, capitalised (``volumeEncrypted`` → ``VolumeEncrypted``,
``instancesDistribution.maxPrice`` → ``InstancesDistribution.MaxPrice``); each node group also
carries what it needs of the cluster (name, region, the VPC section, the cluster's Availability
Zones, ``privateCluster``). A ``${VAR}`` placeholder (``envsubst``) reads as UNKNOWN. A node
group tag ``gpuaudit:skip`` (``EBS-001:reason;...``) suppresses, as the same tag does live.
A file that is clearly a ClusterConfig but malformed (a node group list that is not a list, a
node group that is not a mapping) is an input error naming the line. YAML anchors and aliases
are accepted (eksctl accepts them) within the budget of the YAML reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scanner.catalog import region_name
from scanner.model import InputError, Notice, Provenance, Resource, SourceKind, SourceResult
from scanner.sources.eksctl.sniff import clearly_eksctl
from scanner.sources.yaml_documents.coerce import coerce
from scanner.sources.yaml_documents.dispatch import YamlFormat, read_yaml_file
from scanner.sources.yaml_documents.files import ConfigFile
from scanner.sources.yaml_documents.holes import without_placeholders
from scanner.sources.yaml_documents.reader import Document
from scanner.sources.yaml_documents.skips import parse_skips

KIND = "eksctl.node_group"
SKIP_TAG = "gpuaudit:skip"
_SECTIONS = (("nodeGroups", False), ("managedNodeGroups", True))
_KEYS = ("name", "instanceType", "instanceTypes", "instanceSelector", "spot",
         "instanceMarketOptions", "desiredCapacity", "minSize", "maxSize", "volumeName",
         "volumeSize", "volumeType", "volumeEncrypted", "volumeKmsKeyID", "amiFamily",
         "privateNetworking", "subnets", "availabilityZones", "launchTemplate",
         "instancesDistribution", "efaEnabled", "capacityReservation", "placement")


def is_cluster_config(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") == "ClusterConfig" and \
        isinstance(value.get("apiVersion"), str) and value["apiVersion"].startswith("eksctl.io/")


def read_documents(file: ConfigFile, docs: list[Document], result: SourceResult) -> None:
    for doc in docs:
        _cluster(doc.value, file, result)


FORMAT = YamlFormat("eksctl ClusterConfig", clearly_eksctl, is_cluster_config, read_documents)


def read_if_cluster_config(path: Path) -> SourceResult | None:
    """The node groups of a ClusterConfig file; None for a file that is not one. Never
    raises."""
    return read_yaml_file(path, only=(FORMAT,))


def _cap(key: str) -> str:
    return key[:1].upper() + key[1:]


def _capitalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {_cap(k) if isinstance(k, str) else k: v for k, v in value.items()}
    return value


def _cluster(cfg: dict[str, Any], file: ConfigFile, result: SourceResult) -> None:
    where = file.where
    meta = got if isinstance(got := cfg.get("metadata"), dict) else {}
    cluster = meta.get("name")
    cluster_name = cluster if isinstance(cluster, str) and cluster else "(no name)"
    span = file.lines_of(cfg) or (1, 1)
    shared: dict[str, Any] = {"ClusterName": cluster, "Region": meta.get("region")}
    vpc = cfg.get("vpc")
    if vpc is not None:
        shared["Vpc"] = vpc
    if cfg.get("availabilityZones") is not None:
        shared["ClusterAvailabilityZones"] = cfg["availabilityZones"]
    private = cfg.get("privateCluster")
    if isinstance(private, dict) and private.get("enabled") is not None:
        shared["PrivateCluster"] = private["enabled"]
    for section, managed in _SECTIONS:
        groups = cfg.get(section)
        if groups is None:
            continue
        if not isinstance(groups, list):
            line = file.line(groups, cfg, section, span[0])
            result.errors.append(InputError(where, f"ClusterConfig {cluster_name}: {section} "
                                                   "is not a list", line))
            continue
        for i, ng in enumerate(groups):
            ng_span = file.lines_of(ng) or span
            if not isinstance(ng, dict):
                result.errors.append(InputError(
                    where, f"ClusterConfig {cluster_name}: {section}[{i}] is not a mapping",
                    file.line(ng, groups, i, span[0])))
                continue
            _node_group(ng, i, section, managed, shared, cluster_name, ng_span, where, result)


def _node_group(ng: dict[str, Any], i: int, section: str, managed: bool,
                shared: dict[str, Any], cluster: str, span: tuple[int, int], where: str,
                result: SourceResult) -> None:
    name = ng.get("name")
    shown = name if isinstance(name, str) and name else f"#{i}"
    label = f"{section} {shown}"
    attrs: dict[str, Any] = {_cap(k): ng[k] for k in _KEYS if k in ng}
    if "instancesDistribution" in ng:
        attrs["InstancesDistribution"] = _capitalised(ng["instancesDistribution"])
    if "launchTemplate" in ng:
        attrs["LaunchTemplate"] = _capitalised(ng["launchTemplate"])
    if "placement" in ng:  # NET-001
        attrs["Placement"] = _capitalised(ng["placement"])
    volumes = ng.get("additionalVolumes")
    if isinstance(volumes, list):
        attrs["AdditionalVolumes"] = [_capitalised(v) for v in volumes]
    elif volumes is not None:
        attrs["AdditionalVolumes"] = volumes
    attrs["Managed"] = managed
    attrs.update({k: v for k, v in shared.items() if v is not None})
    attrs = without_placeholders(attrs)

    def notice(message: str) -> None:
        result.notices.append(Notice(where, f"{label}: {message}", span[0]))

    attrs = coerce(KIND, attrs, notice)
    tags = ng.get("tags")
    tags = {str(k): str(v) for k, v in tags.items() if isinstance(v, str | int | float)} \
        if isinstance(tags, dict) else {}
    skips: tuple[Any, ...] = ()
    if SKIP_TAG in tags:
        skips, problems = parse_skips(tags[SKIP_TAG], f"tag {SKIP_TAG} of {label}")
        for p in problems:
            notice(p)
    result.resources.append(Resource(
        kind=KIND, id=f"ClusterConfig/{cluster}/{section}/{shown}", attrs=attrs,
        provenance=Provenance(SourceKind.EKSCTL, file=where, start_line=span[0],
                              end_line=span[1], pricing_region=region_name(attrs.get("Region"))),
        scope=where, name=name if isinstance(name, str) else None, tags=tags,
        aliases=(name,) if isinstance(name, str) and name else (), skips=skips, declared=True))
