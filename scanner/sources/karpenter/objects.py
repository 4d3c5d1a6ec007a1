"""One parsed Kubernetes object → a Karpenter Resource (or nothing, for any other object).

Shared by the file reader and the Terraform source, so a NodePool reads the same whichever way
it is written. Attribute names are Karpenter's, capitalised (docs/resource-model.md); the kind
schema types them. A part that is not a mapping or a list where Karpenter needs one is an input
error naming the object (and its line in a file); a value not known statically stays UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from scanner.model import InputError, Notice, Provenance, Resource, Skip, Unknown
from scanner.sources.yaml_documents.coerce import coerce
from scanner.sources.yaml_documents.skips import parse_skips

NODE_POOL = "karpenter.node_pool"
NODE_CLASS = "karpenter.ec2_node_class"
SKIP_ANNOTATION = "gpuaudit/skip"
LEGACY = {"Provisioner", "AWSNodeTemplate", "Machine"}

# Karpenter spellings that do not simply capitalise
_RENAMES = {"kmsKeyID": "KmsKeyId", "snapshotID": "SnapshotId",
            "associatePublicIPAddress": "AssociatePublicIpAddress"}


@dataclass
class Problems:
    """Where messages about one source's objects go."""

    where: str
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)

    def error(self, reason: str, line: int | None = None) -> None:
        self.errors.append(InputError(self.where, reason, line))

    def notice(self, message: str, line: int | None = None) -> None:
        self.notices.append(Notice(self.where, message, line))


Lines = Callable[[Any], tuple[int, int] | None]


def _no_lines(_value: Any) -> None:
    return None


def karpenter_kind(obj: Any) -> str | None:
    """The model kind of a Karpenter object, "legacy" for the pre-v1beta1 kinds, else None."""
    if not isinstance(obj, dict):
        return None
    api, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api, str) or not isinstance(kind, str):
        return None
    if api.startswith("karpenter.sh/"):
        if kind == "NodePool":
            return NODE_POOL
        return "legacy" if kind in LEGACY else None
    if api.startswith("karpenter.k8s.aws/"):
        if kind == "EC2NodeClass":
            return NODE_CLASS
        return "legacy" if kind in LEGACY else None
    return None


def objects_in(value: Any) -> Iterator[dict[str, Any]]:
    """The Kubernetes objects of one document: itself, or the items of a ``kind: List``."""
    if not isinstance(value, dict):
        return
    if value.get("kind") == "List" and isinstance(value.get("items"), list):
        for item in value["items"]:
            if isinstance(item, dict):
                yield item
    else:
        yield value


def find_objects(value: Any, limit: int = 10_000) -> list[dict[str, Any]]:
    """Every Karpenter object anywhere inside ``value`` (Helm values that carry whole
    manifests, as ``raw``-style charts take them), depth-first, at most ``limit``."""
    out: list[dict[str, Any]] = []
    stack: list[tuple[Any, int]] = [(value, 0)]
    seen = 0
    while stack and len(out) < limit and seen < 1_000_000:
        cur, depth = stack.pop()
        seen += 1
        if isinstance(cur, dict):
            if karpenter_kind(cur) is not None:
                out.append(cur)
                continue
            if depth < 64:
                stack.extend((v, depth + 1) for v in reversed(list(cur.values())))
        elif isinstance(cur, list) and depth < 64:
            stack.extend((v, depth + 1) for v in reversed(cur))
    return out


def translate(obj: dict[str, Any], *, rid: str | None, provenance: Provenance, scope: str,
              problems: Problems, lines: Lines = _no_lines,
              skips: tuple[Skip, ...] = (),
              clean: Callable[[Any], Any] = lambda v: v) -> Resource | None:
    """The Resource of one Karpenter object (None for another object, or one too malformed to
    read: an input error says why). ``rid``: its id (None: ``Kind/name``); ``clean``: applied
    to the attributes before they are typed (placeholders and holes become UNKNOWN)."""
    kind = karpenter_kind(obj)
    line = provenance.start_line
    if kind is None:
        return None
    if kind == "legacy":
        problems.notice(f"Karpenter {obj.get('kind')} ({obj.get('apiVersion')}) is the API "
                        "Karpenter removed in v0.32; not scanned (migrate to NodePool and "
                        "EC2NodeClass)", line)
        return None
    label = str(obj.get("kind"))
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name")
    shown = name if isinstance(name, str) and name else None
    spec = obj.get("spec")
    if spec is None:
        spec = {}
    if isinstance(spec, Unknown):
        spec = {"_unknown": spec}
    if not isinstance(spec, dict):
        problems.error(f"{label} {shown or ''}: spec is not a mapping".replace("  ", " "),
                       _line_of(spec, lines, line))
        return None
    attrs: dict[str, Any] = {"ApiVersion": obj.get("apiVersion")}
    if name is not None:
        attrs["Name"] = name
    where = f"{label} {shown or '(no name)'}"
    if kind == NODE_POOL:
        ok = _node_pool(spec, attrs, where, problems, lines, line)
    else:
        ok = _node_class(spec, attrs, where, problems, lines, line)
    if not ok:
        return None
    # Names stay as written: a NodePool and the EC2NodeClass it names are matched by their
    # text, and the same placeholder in one file renders the same.
    kept = {k: attrs.pop(k) for k in ("Name", "NodeClassRef") if k in attrs}
    attrs = clean({k: v for k, v in attrs.items() if v is not None})
    if isinstance(attrs, dict):
        attrs.update({k: v for k, v in kept.items() if v is not None})
    attrs = coerce(kind, attrs if isinstance(attrs, dict) else {},
                   lambda msg: problems.notice(f"{where}: {msg}", line))
    own_skips, bad = _skips(meta, where)
    for message in bad:
        problems.notice(message, line)
    tags = attrs.get("Tags") if kind == NODE_CLASS else None
    return Resource(
        kind=kind,
        id=rid or f"{label}/{shown or '(no name)'}",
        attrs=attrs,
        provenance=provenance,
        scope=scope,
        name=shown,
        tags={str(k): str(v) for k, v in tags.items() if isinstance(v, str | int | float)}
        if isinstance(tags, dict) else {},
        aliases=(shown,) if shown else (),
        skips=tuple(skips) + own_skips,
        declared=True,
    )


def _line_of(value: Any, lines: Lines, default: int | None) -> int | None:
    span = lines(value)
    return span[0] if span else default


def _mapping(value: Any, what: str, problems: Problems, lines: Lines,
             line: int | None, near: Any = None) -> dict[str, Any] | Unknown | None:
    """A part that must be a mapping: None when absent, an error when it is something else
    (on its line, else on the line of the mapping ``near`` that holds it)."""
    if value is None or isinstance(value, dict | Unknown):
        return value
    problems.error(f"{what} is not a mapping",
                   _line_of(value, lines, _line_of(near, lines, line)))
    raise _Malformed


def _list(value: Any, what: str, problems: Problems, lines: Lines,
          line: int | None, near: Any = None) -> list[Any] | Unknown | None:
    if value is None or isinstance(value, list | Unknown):
        return value
    problems.error(f"{what} is not a list", _line_of(value, lines, _line_of(near, lines, line)))
    raise _Malformed


class _Malformed(Exception):
    pass


def _node_pool(spec: dict[str, Any], attrs: dict[str, Any], where: str, problems: Problems,
               lines: Lines, line: int | None) -> bool:
    try:
        template = _mapping(spec.get("template"), f"{where}: spec.template", problems, lines,
                            line, spec)
        tspec: Any = None
        if isinstance(template, Unknown):
            tspec = template
        elif isinstance(template, dict):
            tspec = _mapping(template.get("spec"), f"{where}: spec.template.spec", problems,
                             lines, line, template)
        if "_unknown" in spec:
            tspec = spec["_unknown"]
        if isinstance(tspec, Unknown):
            attrs["Requirements"] = tspec
            attrs["NodeClassRef"] = tspec
        elif isinstance(tspec, dict):
            reqs = _list(tspec.get("requirements"),
                         f"{where}: spec.template.spec.requirements", problems, lines, line,
                         tspec)
            if isinstance(reqs, list):
                attrs["Requirements"] = [_requirement(r) for r in reqs]
            elif reqs is not None:
                attrs["Requirements"] = reqs
            ref = _mapping(tspec.get("nodeClassRef"), f"{where}: nodeClassRef", problems,
                           lines, line, tspec)
            if isinstance(ref, dict):
                attrs["NodeClassRef"] = {_cap(k): v for k, v in ref.items()
                                         if k in ("group", "kind", "name", "apiVersion")}
            elif ref is not None:
                attrs["NodeClassRef"] = ref
        for key in ("limits", "weight", "disruption"):
            if key in spec:
                attrs[_cap(key)] = spec[key]
    except _Malformed:
        return False
    return True


def _requirement(value: Any) -> Any:
    if not isinstance(value, dict):
        return value if isinstance(value, Unknown) else Unknown(
            f"a requirement is not a mapping: {str(value)[:60]!r}")
    out = {_cap(k): v for k, v in value.items() if k in ("key", "operator", "values",
                                                           "minValues")}
    return out


def _node_class(spec: dict[str, Any], attrs: dict[str, Any], where: str, problems: Problems,
                lines: Lines, line: int | None) -> bool:
    try:
        if "_unknown" in spec:
            unknown = spec["_unknown"]
            for key in ("SubnetSelectorTerms", "BlockDeviceMappings", "AmiFamily",
                        "AssociatePublicIpAddress"):
                attrs[key] = unknown
            return True
        for key in ("amiFamily", "role", "instanceProfile", "amiSelectorTerms",
                    "securityGroupSelectorTerms", "associatePublicIPAddress"):
            if key in spec:
                attrs[_cap(key)] = spec[key]
        if "tags" in spec:
            tags = _mapping(spec["tags"], f"{where}: spec.tags", problems, lines, line, spec)
            attrs["Tags"] = tags
        terms = _list(spec.get("subnetSelectorTerms"), f"{where}: spec.subnetSelectorTerms",
                      problems, lines, line, spec)
        if isinstance(terms, list):
            attrs["SubnetSelectorTerms"] = [_subnet_term(t) for t in terms]
        elif terms is not None:
            attrs["SubnetSelectorTerms"] = terms
        if "blockDeviceMappings" in spec:
            maps = _list(spec["blockDeviceMappings"], f"{where}: spec.blockDeviceMappings",
                         problems, lines, line, spec)
            attrs["BlockDeviceMappings"] = [_mapping_of(m) for m in maps] \
                if isinstance(maps, list) else maps
    except _Malformed:
        return False
    return True


def _subnet_term(value: Any) -> Any:
    if not isinstance(value, dict):
        return value if isinstance(value, Unknown) else Unknown(
            f"a subnet selector term is not a mapping: {str(value)[:60]!r}")
    out: dict[str, Any] = {}
    if "tags" in value:
        tags = value["tags"]
        out["Tags"] = tags if isinstance(tags, dict | Unknown) else Unknown(
            "the tags of a subnet selector term are not a mapping")
    if "id" in value:
        out["Id"] = value["id"]
    if not out:
        return Unknown("a subnet selector term without tags or id")
    return out


def _mapping_of(value: Any) -> Any:
    if not isinstance(value, dict):
        return value if isinstance(value, Unknown) else Unknown(
            f"a block device mapping is not a mapping: {str(value)[:60]!r}")
    out: dict[str, Any] = {}
    for key in ("deviceName", "rootVolume"):
        if key in value:
            out[_cap(key)] = value[key]
    ebs = value.get("ebs")
    if isinstance(ebs, dict):
        out["Ebs"] = {_cap(k): v for k, v in ebs.items()}
    elif ebs is not None:
        out["Ebs"] = ebs if isinstance(ebs, Unknown) else Unknown("ebs is not a mapping")
    return out


def _cap(key: str) -> str:
    return _RENAMES.get(key) or (key[:1].upper() + key[1:])


def _skips(meta: dict[str, Any], where: str) -> tuple[tuple[Skip, ...], list[str]]:
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict) or SKIP_ANNOTATION not in annotations:
        return (), []
    return parse_skips(annotations[SKIP_ANNOTATION],
                       f"annotation {SKIP_ANNOTATION} of {where}")
