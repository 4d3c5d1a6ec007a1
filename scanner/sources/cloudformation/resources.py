"""One resource of a CloudFormation template -> a normalized Resource.

Its type decides the kind (the kind schema, ``scanner/kinds``: the kind, property renames and
the property that names it); a condition not known statically makes whether it exists UNKNOWN;
each property is evaluated (:mod:`.evaluate`), capped in size once written out, linked to the
resource a name not known refers to, then coerced to the types the schema declares. A resource
that holds a document of another format is handed to :mod:`.embedded`.
"""

from __future__ import annotations

import json
from typing import Any

from scanner.catalog import region_name
from scanner.inputs.numbers import sane_number_text
from scanner.inputs.sizes import exceeds
from scanner.kinds import schema
from scanner.kinds.coerce import coerce_fields, garbage, to_bool, to_int, to_number
from scanner.kinds.types import Bool, FieldType, Ids, Int, Json, List, Num, Obj, Price
from scanner.kinds.types import Ref as RefTo
from scanner.model import (
    InputError,
    Notice,
    Provenance,
    Ref,
    Resource,
    Skip,
    SourceKind,
    SourceResult,
    Unknown,
)
from scanner.sources.cloudformation import embedded
from scanner.sources.cloudformation import yaml_nodes as cfn_yaml
from scanner.sources.cloudformation.evaluate import (
    NO_VALUE,
    Evaluator,
    OverBudget,
    _intrinsic,
    _text,
)
from scanner.sources.yaml_documents.coerce import shapes

# CloudFormation type -> kind, property renames and the property that names the resource: all
# from the kind schema (scanner/kinds), as are the types properties are coerced to.
_SCHEMA = schema()
KINDS: dict[str, str] = {t: k.name for t, (k, _c) in _SCHEMA.cloudformation.items()}
_RENAMES: dict[str, dict[str, str]] = {
    t: dict(c.renames) for t, (_k, c) in _SCHEMA.cloudformation.items() if c.renames}
_NAME_PROPERTY: dict[str, str] = {
    t: c.name_property for t, (_k, c) in _SCHEMA.cloudformation.items() if c.name_property}

# Resource tags written as TagSpecifications (the resource's own, not its instances').
_OWN_TAG_SPEC_TYPES = frozenset({"launch-template", "fleet", "spot-fleet-request"})


# One property's value written out (CloudFormation itself caps a template at 1 MB and a
# parameter value at 4 KB: a larger property is amplification).
MAX_PROPERTY = 1 << 20


class ResourceReader:
    """Reads the resources of one template into ``result``, one at a time."""

    def __init__(
        self,
        where: str,
        loaded: cfn_yaml.LoadedTemplate,
        region: str | None,
        result: SourceResult,
    ) -> None:
        self.where = where
        self.loaded = loaded
        self.region = region
        self.result = result
        # names built from values not known but fixed per stack: symbol -> [(logical id, kind)]
        self.names: dict[str, list[tuple[str, str]]] = {}

    def error(self, reason: str, line: int | None = None) -> None:
        self.result.errors.append(InputError(self.where, reason, line))

    def notice(self, message: str, line: int | None = None) -> None:
        self.result.notices.append(Notice(self.where, message, line))

    def read_resource(self, ev: Evaluator, logical_id: str, body: Any) -> None:
        """One entry of ``Resources``: a Resource, the documents it holds, or why it is not read."""
        start, end = self.loaded.resource_lines.get(logical_id, (None, None))
        rtype = self._type_of(logical_id, body, start)
        if rtype is None:
            return
        kind = KINDS.get(rtype)
        holds = embedded.property_of(rtype, body.get("Properties"))
        if kind is None and holds is None:
            return
        exists = self._exists(ev, logical_id, body.get("Condition"), start)
        if exists is False:
            return
        props = body.get("Properties")
        if props is None:
            props = {}
        if not isinstance(props, dict):
            self.error(f"Properties of resource {logical_id} is not a mapping", start)
            return
        if holds is not None:
            self._embedded(ev, holds, logical_id, rtype, body, props,
                           (start or 1, end or start or 1), exists)
            return
        assert kind is not None
        attrs = self._attributes(ev, logical_id, rtype, kind, props, start)
        self._append(logical_id, rtype, kind, attrs, body, exists, (start, end))

    def _type_of(self, logical_id: str, body: Any, start: int | None) -> str | None:
        """The resource's type; None (and why, said) when it has none to read."""
        if logical_id.startswith("Fn::ForEach::"):
            self.notice(
                f"{logical_id} is not expanded; resources it creates are not scanned", start
            )
            return None
        if not isinstance(body, dict):
            self.error(f"resource {logical_id} is not a mapping", start)
            return None
        rtype = body.get("Type")
        if not isinstance(rtype, str):
            if isinstance(rtype, dict) and any(str(k).startswith("Rain::") for k in rtype):
                self.error(
                    f"resource {logical_id} is a rain module; run `rain pkg` and scan its output",
                    start,
                )
            else:
                self.error(f"resource {logical_id} has no Type (or it is not a string)", start)
            return None
        return rtype

    def _exists(self, ev: Evaluator, logical_id: str, cond: Any,
                start: int | None) -> bool | Unknown:
        """Whether the resource is created: False when its condition is false, Unknown when the
        condition is not known statically."""
        if cond is None:
            return True
        created = ev.condition(cond) if isinstance(cond, str) else None
        if created is False:
            return False
        if created is None:
            # never assumed created nor absent: its results, and what leans on it, are
            # UNKNOWN (Resource.exists)
            self.notice(
                f"{logical_id}: condition {str(cond)[:80]!r} is not known statically; "
                "whether the resource is created is not known (its results are UNKNOWN)",
                start,
            )
            return Unknown(f"its condition {str(cond)[:80]!r} is not known statically")
        return True

    def _attributes(self, ev: Evaluator, logical_id: str, rtype: str, kind: str,
                    props: dict[str, Any], start: int | None) -> dict[str, Any]:
        """The properties evaluated, renamed, linked and coerced to the kind's types."""
        renames = _RENAMES.get(rtype, {})
        attrs: dict[str, Any] = {}
        fields = _SCHEMA.fields(kind)
        if len(props) == 1 and next(iter(props)) == "Fn::If":
            # the whole Properties chosen by a condition: the branch taken, or none known
            chosen = ev.value(props)
            if isinstance(chosen, Unknown):
                attrs = {key: Unknown(f"Properties: {chosen.reason}") for key in fields}
                props = {}
            else:
                props = chosen if isinstance(chosen, dict) else {}
        for key, raw in props.items():
            if isinstance(fields.get(key), Ids):
                raw = _joined_ids(raw)
            value = self._property(ev, logical_id, kind, key, raw, start)
            if value is NO_VALUE:
                continue
            if self.names:
                value = self._linked(ev, fields.get(renames.get(key, key)), raw, value)
            attrs[renames.get(key, key)] = value
        attrs = _coerce(kind, attrs, lambda msg: self.notice(f"{logical_id}: {msg}", start))
        for message in _misplaced(rtype, attrs):  # see the block at the end of this module
            self.notice(f"{logical_id}: {message}", start)
        return attrs

    def _property(self, ev: Evaluator, logical_id: str, kind: str, key: str, raw: Any,
                  start: int | None) -> Any:
        """One property's value (:data:`NO_VALUE` when ``AWS::NoValue`` removes it); Unknown,
        with an input error, past the evaluation budget or the written-out size."""
        literal = key == "ServiceName" and kind == "ec2.vpc_endpoint"
        try:
            value = ev.value(raw, literal_pseudo=literal)
        except OverBudget as exc:
            if exc.total:
                raise
            self.error(f"resource {logical_id}, property {key}: {exc.reason}", start)
            value = Unknown(exc.reason)
        if value is NO_VALUE:
            return value
        if exceeds(value, MAX_PROPERTY):  # references amplify: small here, huge written
            reason = (f"stands for more than {MAX_PROPERTY >> 20} MiB of text once its "
                      "references are written out")
            self.error(f"resource {logical_id}, property {key}: {reason}", start)
            value = Unknown(reason)
        return value

    def _append(self, logical_id: str, rtype: str, kind: str, attrs: dict[str, Any],
                body: dict[str, Any], exists: bool | Unknown,
                span: tuple[int | None, int | None]) -> None:
        """The Resource, with its tags, name, aliases and skips, added to the result."""
        start, end = span
        tags = _tags(attrs)
        name_prop = _NAME_PROPERTY.get(rtype)
        physical = attrs.get(name_prop) if name_prop else None
        name = physical if isinstance(physical, str) else tags.get("Name")
        self.result.resources.append(
            Resource(
                kind=kind,
                id=logical_id,
                attrs=attrs,
                provenance=Provenance(
                    SourceKind.CLOUDFORMATION, file=self.where, start_line=start, end_line=end,
                    # --region: where the stack would be deployed, to price it
                    pricing_region=region_name(self.region),
                ),
                scope=self.where,
                name=name,
                tags=tags,
                aliases=(physical,) if isinstance(physical, str) else (),
                skips=self._skips(logical_id, body.get("Metadata"), start),
                declared=True,
                exists=exists,
            )
        )

    def _linked(self, ev: Evaluator, t: FieldType | None, raw: Any, value: Any) -> Any:
        """``value`` with each reference by a name that is not known, but is the same
        expression as the name of one resource of the kinds the field refers to, replaced by a
        reference to that resource."""
        if isinstance(t, RefTo) and isinstance(value, Unknown) and t.kinds:
            symbol = ev.symbol(raw)
            hits = [lid for lid, kind in self.names.get(symbol or "", ()) if kind in t.kinds]
            return Ref(hits[0]) if len(hits) == 1 else value
        if isinstance(t, Obj) and isinstance(value, dict) and isinstance(raw, dict) \
                and not _intrinsic(raw):
            return {k: self._linked(ev, t.fields.get(k), raw.get(k), v) for k, v in value.items()}
        if isinstance(t, List) and isinstance(value, list) and isinstance(raw, list) \
                and len(raw) == len(value):
            return [self._linked(ev, t.item, r, v) for r, v in zip(raw, value, strict=True)]
        return value

    def _embedded(self, ev: Evaluator, prop: str, logical_id: str, rtype: str,
                  body: dict[str, Any], props: dict[str, Any], span: tuple[int, int],
                  exists: bool | Unknown) -> None:
        """Documents of another format the resource holds (:mod:`.embedded`), evaluated here:
        parameters resolved where known, a hole for each part of a text that is not."""
        from scanner.sources.yaml_documents.holes import HoledText

        host = embedded.Host(self.where, logical_id, span, exists,
                             self._skips(logical_id, body.get("Metadata"), span[0]),
                             self.region, self.result)
        raw = props.get(prop)
        if raw is None:
            embedded.missing(prop, rtype, props, host)
            return
        holed = HoledText("")
        try:
            value = ev.value(raw, holes=holed)
        except OverBudget as exc:
            if exc.total:
                raise
            self.error(f"resource {logical_id}, property {prop}: {exc.reason}", span[0])
            return
        if value is NO_VALUE:
            value = Unknown("it is removed (AWS::NoValue)")
        embedded.read(prop, value, holed, host)

    def _skips(self, logical_id: str, metadata: Any, line: int | None) -> tuple[Skip, ...]:
        if not isinstance(metadata, dict) or "gpuaudit" not in metadata:
            return ()
        block = metadata["gpuaudit"]
        entries = block.get("skip") if isinstance(block, dict) else None
        if not isinstance(entries, list):
            self.notice(
                f"{logical_id}: Metadata gpuaudit must be {{skip: [{{id, reason}}]}}; ignored", line
            )
            return ()
        skips: list[Skip] = []
        for n, entry in enumerate(entries, 1):
            pid = entry.get("id") if isinstance(entry, dict) else None
            reason = entry.get("reason") if isinstance(entry, dict) else None
            expires = entry.get("expires") if isinstance(entry, dict) else None
            if not isinstance(pid, str) or not pid.strip():
                self.notice(f"{logical_id}: gpuaudit skip #{n} has no policy id; ignored", line)
                continue
            if not isinstance(reason, str) or not reason.strip():
                self.notice(
                    f"{logical_id}: gpuaudit skip of {pid.strip()} has no reason; not suppressed",
                    line,
                )
                continue
            skips.append(
                Skip(
                    policy_id=pid.strip(),
                    reason=reason.strip(),
                    by=f"Metadata of {logical_id}",
                    expires=None if expires is None else str(expires),
                )
            )
        return tuple(skips)


# --------------------------------------------------------------------------------- coercion


def _coerce(kind: str, attrs: dict[str, Any], notice: Any) -> dict[str, Any]:
    """Coerce properties to the AWS types the kind schema declares (docs/resource-model.md)."""

    def convert(t: FieldType, key: str, value: Any) -> Any:
        if isinstance(t, Bool):
            return to_bool(key, value, notice)
        if isinstance(t, Int):
            return to_int(key, value, notice)
        if isinstance(t, Num):
            return to_number(key, value, notice)
        if isinstance(t, Price) and isinstance(value, str):
            # prices stay text (as AWS spells them); text spelling an absurd number is Unknown
            if isinstance(sane_number_text(value), Unknown):
                return garbage(key, value, "a usable price", notice)
            return value
        if isinstance(t, Ids):
            if isinstance(value, list):
                return _flat_list(value)
            if isinstance(value, str):
                return [part.strip() for part in value.split(",") if part.strip()]
            return value
        if isinstance(t, Json) and isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                notice(f"{key} is not valid JSON; treated as unknown")
                return Unknown(f"{key} is not valid JSON")
        return value

    fields = _SCHEMA.fields(kind)
    return shapes(fields, coerce_fields(fields, attrs, convert), notice)


def _joined_ids(raw: Any) -> Any:
    """A list of ids written as one comma-joined string (``!Join [",", [!Ref A, !Ref B]]``,
    what CloudFormation accepts for VPCZoneIdentifier) is read as the list it joins, so that
    its references stay references rather than an id that is not known."""
    if isinstance(raw, dict) and len(raw) == 1:
        arg = raw.get("Fn::Join")
        if isinstance(arg, list) and len(arg) == 2 and arg[0] == "," \
                and isinstance(arg[1], list):
            return arg[1]
    return raw


def _flat_list(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        elif isinstance(item, str) and "," in item:
            out.extend(part.strip() for part in item.split(",") if part.strip())
        else:
            out.append(item)
    return out


def _tags(attrs: dict[str, Any]) -> dict[str, str]:
    """Known tags as a plain dict (a tag whose value is not known is left out)."""
    lists = [attrs.get("Tags")]
    specs = attrs.get("TagSpecifications")
    if isinstance(specs, list):
        lists += [
            spec.get("Tags")
            for spec in specs
            if isinstance(spec, dict) and spec.get("ResourceType") in _OWN_TAG_SPEC_TYPES
        ]
    tags: dict[str, str] = {}
    for items in lists:
        if isinstance(items, dict):  # some templates write a plain mapping
            items = [{"Key": k, "Value": v} for k, v in items.items()]
        if not isinstance(items, list):
            continue
        for item in items:
            if not isinstance(item, dict):
                continue
            key, value = item.get("Key"), item.get("Value")
            if isinstance(key, str) and isinstance(value, (str, int, float, bool)):
                tags[key] = _text(value)
    return tags


# ------------------------------------------ properties CloudFormation rejects (ASG-003, ...)

# (resource type, property) -> where it belongs: read all the same (the policies judge what the
# template says), with a notice that the stack would not deploy as written.
MISPLACED: dict[tuple[str, str], str] = {
    ("AWS::AutoScaling::AutoScalingGroup", "TargetTrackingConfiguration"):
        "an AWS::AutoScaling::ScalingPolicy (PolicyType TargetTrackingScaling, "
        "AutoScalingGroupName: !Ref the group)",
}


def _misplaced(rtype: str, attrs: dict[str, Any]) -> list[str]:
    return [f"{prop} is not a property of {rtype}: CloudFormation rejects the template "
            f"(it belongs on {where}); read as the group's scaler all the same"
            for (t, prop), where in MISPLACED.items() if t == rtype and prop in attrs]
