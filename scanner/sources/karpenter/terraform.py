"""Karpenter objects applied by Terraform: the one translation from ``kubectl_manifest``,
``kubernetes_manifest`` and ``helm_release`` values to Karpenter Resources (the Terraform
sources hand the values over; this module knows what they mean).

- ``kubectl_manifest.yaml_body``: the YAML text (one document, as the provider takes it), a
  text with holes where interpolations were not known (:class:`HoledText`), or the object a
  ``yamlencode(...)`` encodes;
- ``kubernetes_manifest.manifest``: the object itself;
- ``helm_release.values``: the values texts, merged in order as Helm does, then its ``set``
  entries; Karpenter objects carried whole inside the values (charts that apply raw manifests)
  are read, and so are the ``nodePool`` / ``ec2NodeClass`` values of the
  ``karpenter-resources`` chart (aws-ia/terraform-aws-eks-data-addons), rendered the way its
  templates render them.

A text that is not known at all says so in a notice when the resource looks like Karpenter
(its address names Karpenter, a NodePool or a node class); a text that does not parse is an
input error naming the resource.

Reading is bounded before it is done: one text longer than :data:`MAX_MANIFEST_TEXT` is not
parsed, and a :class:`ManifestBudget` (one per root module or plan) stops the texts and objects
read in all at :data:`MANIFEST_BUDGET` characters, so that ``count`` (or ``for_each``) over a
``file()`` / ``templatefile()`` / ``yamldecode()`` of a large text is not parsed once per
instance without end. Past a budget the resource is an input error naming its file and line.
"""

from __future__ import annotations

import re
from typing import Any

from scanner.model import InputError, Notice, Provenance, Resource, Skip, Unknown
from scanner.sources.karpenter.objects import (
    Problems,
    find_objects,
    karpenter_kind,
    objects_in,
    translate,
)
from scanner.sources.yaml_documents.holes import HoledText, without_holes, without_placeholders
from scanner.sources.yaml_documents.reader import YamlError, load_documents

TYPES = frozenset({"kubectl_manifest", "kubernetes_manifest", "helm_release"})
# One manifest text: more than a Kubernetes object can be (etcd takes 1.5 MiB a request; Helm
# keeps a release, values included, in a Secret of at most 1 MiB). Parsing costs ~4 s a MiB.
MAX_MANIFEST_TEXT = 2 * 1024 * 1024
# Manifest text and objects read in all, per root module or plan (count x size): ~15 s of work.
MANIFEST_BUDGET = 4 * 1024 * 1024
_HINT = re.compile(r"karpenter|node_?pool|node_?class|nodeclass", re.IGNORECASE)
CHART = "karpenter-resources"


class ManifestBudget:
    """What the manifests of one root module (or plan) may make this module read in all:
    characters of text parsed and of objects walked. Each read asks first (:meth:`take`)."""

    def __init__(self, limit: int = MANIFEST_BUDGET) -> None:
        self.limit = limit
        self.left = limit
        self.refused: str | None = None  # the first resource refused, for the root's gap
        self.refusals = 0
        self._told: set[tuple[str, int | None, str]] = set()

    def take(self, size: int, address: str) -> bool:
        if size > self.left:
            self.refused = self.refused or address
            self.refusals += 1
            return False
        self.left -= size
        return True

    def first_time(self, where: str, line: int | None, why: str) -> bool:
        """Whether a refusal is the first of its resource block (count instances share one
        error: the others are counted in the root module's gap)."""
        key = (where, line, why)
        if key in self._told:
            return False
        self._told.add(key)
        return True

    def refusal(self) -> str:
        return (f"more than {self.limit // (1024 * 1024)} MiB of Kubernetes manifest text to "
                f"read (instances x text size: count or for_each over a large file?)")

    def gap(self) -> str:
        """What the root module's (or plan's) gap says: the first refused, how many."""
        more = f" and {self.refusals - 1} more" if self.refusals > 1 else ""
        return f"the manifests of {self.refused}{more} were not read (too large, or past the " \
               f"{self.limit // (1024 * 1024)} MiB budget of manifest text)"


def from_terraform(tf_type: str, address: str, values: Any, *, provenance: Provenance,
                   scope: str, skips: tuple[Skip, ...] = (),
                   budget: ManifestBudget | None = None,
                   ) -> tuple[list[Resource], list[Notice], list[InputError]]:
    """The Karpenter Resources one Terraform resource instance applies, with the notices and
    errors about it (file and line: the resource block's). Never raises. ``budget``: the one
    of the root module or plan (without it, this resource has a budget of its own)."""
    try:
        return _from_terraform(tf_type, address, values, provenance, scope, skips,
                               budget if budget is not None else ManifestBudget())
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        return [], [], [InputError(provenance.file or scope, f"{address}: internal error while "
                                   f"reading the manifest: {type(exc).__name__}: {exc}",
                                   provenance.start_line)]


def _from_terraform(tf_type: str, address: str, values: Any, provenance: Provenance,
                    scope: str, skips: tuple[Skip, ...], budget: ManifestBudget
                    ) -> tuple[list[Resource], list[Notice], list[InputError]]:
    where = provenance.file or scope
    problems = Problems(where)
    line = provenance.start_line
    reader = _Reader(address, problems, line, budget)
    objects: list[tuple[dict[str, Any], Any]] = []  # (object, how to clean it)
    values = values if isinstance(values, dict) else {}
    if tf_type == "kubectl_manifest":
        body, attr = values.get("yaml_body"), "yaml_body"
        if body is None or isinstance(body, Unknown):
            # a plan may hold the provider's computed copy instead
            parsed = values.get("yaml_body_parsed")
            if isinstance(parsed, str):
                body, attr = parsed, "yaml_body_parsed"
        objects = _from_text(body, address, attr, problems, line, reader)
    elif tf_type == "kubernetes_manifest":
        manifest = values.get("manifest")
        if isinstance(manifest, Unknown):
            _unknown(address, "manifest", manifest, problems, line)
        elif reader.object_fits(manifest, "manifest"):
            objects = [(o, without_placeholders) for o in objects_in(manifest)
                       if karpenter_kind(o) is not None]
    elif tf_type == "helm_release":
        objects = _from_helm(values, address, problems, line, reader)
    out: list[Resource] = []
    several = len(objects) > 1 or tf_type == "helm_release"
    for obj, clean in objects:
        name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"),
                                                                     dict) else None
        rid = f"{address}/{obj.get('kind')}/{name if isinstance(name, str) else '(no name)'}" \
            if several else address
        r = translate(obj, rid=rid, provenance=provenance, scope=scope, problems=problems,
                      skips=skips, clean=clean)
        if r is not None:
            out.append(r)
    errors = [InputError(e.path, f"{address}: {e.reason}", e.line or line)
              for e in problems.errors]
    notices = [Notice(n.path, n.message if n.message.startswith(address) else
                      f"{address}: {n.message}", n.line or line) for n in problems.notices]
    return out, notices, errors


class _Reader:
    """The budget checks of one resource's manifests, each before the work it allows."""

    def __init__(self, address: str, problems: Problems, line: int | None,
                 budget: ManifestBudget) -> None:
        self.address = address
        self.problems = problems
        self.line = line
        self.budget = budget

    def text_fits(self, text: str, attr: str) -> bool:
        if len(text) > MAX_MANIFEST_TEXT:
            self.budget.refused = self.budget.refused or self.address
            self.budget.refusals += 1
            self._error(f"{attr} not read: {len(text):,} characters, more than the "
                        f"{MAX_MANIFEST_TEXT // (1024 * 1024)} MiB a Kubernetes object can be")
            return False
        return self._take(len(text), attr)

    def object_fits(self, value: Any, attr: str) -> bool:
        from scanner.inputs.sizes import written_size

        return self._take(written_size(value, self.budget.left), attr)

    def _take(self, size: int, attr: str) -> bool:
        if self.budget.take(size, self.address):
            return True
        self._error(f"{attr} not read: {self.budget.refusal()}")
        return False

    def _error(self, reason: str) -> None:
        if self.budget.first_time(self.problems.where, self.line, reason):
            self.problems.error(reason, self.line)


def _unknown(address: str, attr: str, why: Unknown, problems: Problems,
             line: int | None) -> None:
    if _HINT.search(address):
        problems.notice(f"{address}: {attr} is not known statically ({why.reason}); if it "
                        "is a Karpenter NodePool or EC2NodeClass, it is not scanned", line)


def _from_text(value: Any, address: str, attr: str, problems: Problems,
               line: int | None, reader: _Reader) -> list[tuple[dict[str, Any], Any]]:
    """The Karpenter objects of a YAML text (str or HoledText) or of an encoded object."""
    if value is None:
        return []
    if isinstance(value, Unknown):
        _unknown(address, attr, value, problems, line)
        return []
    if isinstance(value, dict | list):  # yamlencode(...) / jsonencode(...) of an object
        if not reader.object_fits(value, attr):
            return []
        return [(o, without_placeholders) for o in objects_in(value)
                if karpenter_kind(o) is not None]
    holed = value if isinstance(value, HoledText) else None
    text = holed.text if holed else value
    if not isinstance(text, str):
        return []
    if "karpenter." not in text:
        return []
    if not reader.text_fits(text, attr):
        return []
    try:
        loaded = load_documents(text)
    except YamlError as exc:
        problems.error(f"{attr}: {exc.reason}", line)
        return []
    clean = (lambda v: without_holes(v, holed)) if holed else without_placeholders
    out: list[tuple[dict[str, Any], Any]] = []
    for doc in loaded.documents:
        if doc.error is not None:
            problems.error(f"{attr}, line {doc.error.line or doc.start_line} of the text: "
                           f"{doc.error.reason}", line)
            continue
        out.extend((o, clean) for o in objects_in(doc.value) if karpenter_kind(o) is not None)
    if loaded.error is not None and (out or "NodePool" in text or "EC2NodeClass" in text):
        problems.error(f"{attr}, line {loaded.error.line} of the text: {loaded.error.reason}",
                       line)
    return out


def _from_helm(values: dict[str, Any], address: str, problems: Problems,
               line: int | None, reader: _Reader) -> list[tuple[dict[str, Any], Any]]:
    texts = values.get("values")
    chart = values.get("chart")
    merged: Any = {}
    holes: list[HoledText] = []
    if isinstance(texts, Unknown):
        _unknown(address, "values", texts, problems, line)
        return []
    for i, text in enumerate(texts if isinstance(texts, list) else []):
        if isinstance(text, Unknown):
            if isinstance(merged, dict):
                merged = Unknown(f"values[{i}] is not known: {text.reason}")
            continue
        doc: Any = None
        if isinstance(text, dict):
            if not reader.object_fits(text, f"values[{i}]"):
                return []
            doc = text
        elif isinstance(text, HoledText | str):
            raw = text.text if isinstance(text, HoledText) else text
            if not reader.text_fits(raw, f"values[{i}]"):
                return []
            if isinstance(text, HoledText):
                holes.append(text)
            try:
                loaded = load_documents(raw)
            except YamlError as exc:
                problems.error(f"values[{i}]: {exc.reason}", line)
                continue
            err = loaded.error or next((d.error for d in loaded.documents if d.error), None)
            if err is not None:
                if "karpenter" in raw.lower() or "nodePool" in raw:
                    problems.error(f"values[{i}], line {err.line} of the text: {err.reason}",
                                   line)
                continue
            doc = loaded.documents[0].value if loaded.documents else None
        if isinstance(doc, dict) and isinstance(merged, dict):
            merged = _merge(merged, doc)
    if isinstance(merged, Unknown):
        if isinstance(chart, str) and CHART in chart:
            _unknown(address, "values", merged, problems, line)
        return []
    merged = _apply_sets(merged, values.get("set"))

    def clean(v: Any) -> Any:
        for h in holes:
            v = without_holes(v, h)
        return without_placeholders(v)

    out = [(o, clean) for o in find_objects(merged)]
    if isinstance(chart, str) and CHART in chart and not out:
        out = [(o, clean) for o in _karpenter_resources_chart(merged)]
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of values files: mappings deep-merged, anything else replaced."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _apply_sets(values: dict[str, Any], sets: Any) -> dict[str, Any]:
    """``set { name = "a.b.c", value = ... }`` entries on top of the values. A name with an
    index (``a[0].b``) or a value not known makes that key UNKNOWN."""
    for entry in sets if isinstance(sets, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name, value = entry["name"], entry.get("value")
        parts = re.split(r"(?<!\\)\.", name)
        parts = [p.replace("\\.", ".") for p in parts]
        if any("[" in p for p in parts):
            head = parts[0].split("[", 1)[0]
            values = dict(values)
            values[head] = Unknown(f"set {name!r}: an indexed Helm value is not applied")
            continue
        cur = values = dict(values)
        for p in parts[:-1]:
            nxt = cur.get(p)
            nxt = dict(nxt) if isinstance(nxt, dict) else {}
            cur[p] = nxt
            cur = nxt
        cur[parts[-1]] = value if not isinstance(value, Unknown) else Unknown(
            f"set {name!r} is not known: {value.reason}")
    return values


def _karpenter_resources_chart(values: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects the ``karpenter-resources`` chart renders from its values."""
    name = values.get("name", "default")
    out: list[dict[str, Any]] = []
    pool = values.get("nodePool")
    pool = pool if isinstance(pool, dict) else {}
    klass = values.get("ec2NodeClass")
    klass = klass if isinstance(klass, dict) else {}
    if pool.get("enabled", True) is not False:
        spec: dict[str, Any] = {"nodeClassRef": {"name": name, "group": "karpenter.k8s.aws",
                                                 "kind": "EC2NodeClass"}}
        if "requirements" in pool:
            spec["requirements"] = pool["requirements"]
        out.append({"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                    "metadata": {"name": name},
                    "spec": {"template": {"spec": spec}, "limits": pool.get("limits"),
                             "disruption": pool.get("disruption"),
                             "weight": pool.get("weight")}})
    if klass.get("enabled", True) is not False:
        kspec: dict[str, Any] = {"amiFamily": klass.get("amiFamily", "AL2")}
        terms = klass.get("subnetSelectorTerms")
        if isinstance(terms, Unknown):
            kspec["subnetSelectorTerms"] = terms
        elif isinstance(terms, dict):
            rendered: list[Any] = []
            if terms.get("tags"):
                rendered.append({"tags": terms["tags"]})
            if terms.get("id"):
                rendered.append({"id": terms["id"]})
            kspec["subnetSelectorTerms"] = rendered
        if "blockDeviceMappings" in klass:
            kspec["blockDeviceMappings"] = klass["blockDeviceMappings"]
        if "amiSelectorTerms" in klass:
            kspec["amiSelectorTerms"] = klass["amiSelectorTerms"]
        out.append({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                    "metadata": {"name": name}, "spec": kspec})
    return out
