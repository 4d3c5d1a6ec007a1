"""CloudFormation templates (YAML, JSON, CDK synth output) → normalized Resources.

Intrinsic functions are evaluated where the template alone decides them (parameters with defaults
or overrides, pseudo parameters given by the caller, conditions, mappings, ``Fn::Sub`` / ``Join`` /
``Select`` / ``Split``); references to resources become :class:`~scanner.model.Ref`; everything
else becomes :class:`~scanner.model.Unknown` with a reason.

One deliberate exception: in a VPC endpoint's ``ServiceName`` an unknown pseudo
parameter is kept as its literal ``${AWS::Region}`` text, so that
``!Sub com.amazonaws.${AWS::Region}.s3`` is still recognised as the S3 service by pattern.

Names built from values that are not known but are one value per stack (pseudo parameters such
as ``AWS::StackName``, parameters without a default) are still the same string wherever the
same expression builds them: a reference by name (``LaunchTemplateName: !Sub
"${AWS::StackName}-gpu"``) to the one resource of the template that the same expression names
becomes a reference to that resource (:meth:`Evaluator.symbol`), in either form (``!Sub``,
``!Join``; long or short, YAML or JSON).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scanner.catalog import region_name
from scanner.inputs.numbers import sane_number_text
from scanner.inputs.safe_read import ReadError, decode_head, read_regular
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

_PSEUDO = frozenset(
    {
        "AWS::Region",
        "AWS::AccountId",
        "AWS::Partition",
        "AWS::URLSuffix",
        "AWS::StackName",
        "AWS::StackId",
        "AWS::NotificationARNs",
    }
)

_SNIFF = re.compile(r"AWSTemplateFormatVersion|\bType[\"']?\s*:\s*[\"']?AWS::")
_SUB_VAR = re.compile(r"\$\{([^}]*)\}")


# The evaluation budget of one template: intrinsic functions can build far more than the file
# holds (a Join of a long parameter a thousand times; mappings that look each other up). Past a
# limit the value is an input error, never a 100 MB report or an exhausted memory.
MAX_STRING = 256 * 1024  # characters in one string built by Join / Sub / Base64 / ToJsonString
MAX_BUILT = 32 * 1024 * 1024  # characters built in all, per template
MAX_WORK = 1_000_000  # values evaluated, per template


# One property's value written out (CloudFormation itself caps a template at 1 MB and a
# parameter value at 4 KB: a larger property is amplification).
MAX_PROPERTY = 1 << 20


class OverBudget(Exception):
    """A value past the evaluation budget; ``total``: the template's whole budget is spent."""

    def __init__(self, reason: str, *, total: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.total = total


class _NoValue:
    """``AWS::NoValue``: the key (or list element) is removed."""


NO_VALUE = _NoValue()


def looks_like_cloudformation(head: str) -> bool:
    """The text sniff: ``AWSTemplateFormatVersion``, or a ``Type: AWS::…`` (YAML or JSON).

    Only a pre-filter: :func:`read_if_template` then decides by the structure."""
    return _SNIFF.search(head) is not None


# A template's top-level keys as text, for a file that does not parse: YAML keys at column 0,
# JSON keys anywhere (a string value holding them would be escaped: \"Resources\").
_TOP_KEY = re.compile(
    r'^["\']?(?:AWSTemplateFormatVersion|Resources)["\']?[ \t]*:'
    r'|"AWSTemplateFormatVersion"\s*:|"Resources"\s*:\s*\{',
    re.MULTILINE,
)


def is_template(data: Any) -> bool:
    """A CloudFormation template by structure: a mapping with ``AWSTemplateFormatVersion``, or
    with ``Resources`` whose entries have ``Type: AWS::…`` (or another resource type provider's
    prefix, or a language-extensions ``Fn::ForEach``)."""
    if not isinstance(data, dict):
        return False
    if "AWSTemplateFormatVersion" in data:
        return True
    resources = data.get("Resources")
    if not isinstance(resources, dict):
        return False
    for logical_id, body in resources.items():
        if str(logical_id).startswith("Fn::ForEach::"):
            return True
        rtype = body.get("Type") if isinstance(body, dict) else None
        if isinstance(rtype, str) and rtype.startswith(("AWS::", "Custom::", "Alexa::")):
            return True
        if isinstance(rtype, dict) and any(str(k).startswith("Rain::") for k in rtype):
            return True
    return False


def load_template(
    path: Path,
    *,
    params: Mapping[str, str] = {},
    region: str | None = None,
    account_id: str | None = None,
) -> SourceResult:
    """Read one template. Never raises: unreadable input becomes an ``InputError``."""
    result = _load(path, params, region, account_id, detect=False)
    assert result is not None
    return result


def read_if_template(
    path: Path,
    *,
    params: Mapping[str, str] = {},
    region: str | None = None,
    account_id: str | None = None,
) -> SourceResult | None:
    """Like :func:`load_template` for a file that may not be a template at all (any YAML or
    JSON that mentions ``Type: AWS::``): None when its structure is not a template's. A file
    that cannot be parsed counts as a template (and its error is reported) only when its text
    has a template's top-level keys."""
    return _load(path, params, region, account_id, detect=True)


def _load(
    path: Path,
    params: Mapping[str, str],
    region: str | None,
    account_id: str | None,
    *,
    detect: bool,
) -> SourceResult | None:
    result = SourceResult()
    where = str(path)
    try:
        data = read_regular(path, limit=cfn_yaml.MAX_BYTES)
    except ReadError as exc:
        too_big = exc.reason.startswith("larger than")
        result.errors.append(InputError(where, f"file is {exc.reason}" if too_big
                                        else f"cannot read file: {exc.reason}"))
        return result
    try:
        loaded = cfn_yaml.load_bytes(data)
    except cfn_yaml.TemplateError as exc:
        if detect and not _TOP_KEY.search(_text_of(data)):
            return None
        result.errors.append(InputError(where, exc.reason, exc.line))
        return result
    if detect and not is_template(loaded.data):
        return None
    try:
        _Reader(where, loaded, params, region, account_id, result).read()
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        # A bug must not cost the user the rest of the run; the fuzz test looks for these.
        result.errors.append(
            InputError(where, f"internal error while reading template: {type(exc).__name__}: {exc}")
        )
    return result


def _text_of(data: bytes) -> str:
    return decode_head(data)


def read_parsed_template(
    data: Any,
    where: str,
    *,
    params: Mapping[str, str] = {},
    region: str | None = None,
    account_id: str | None = None,
) -> SourceResult:
    """Read a template that another tool has parsed already (checkov hands its checks one
    resource of it): the same evaluation, coercion and kinds as :func:`load_template`, without
    line numbers. Never raises."""
    result = SourceResult()
    try:
        _Reader(where, cfn_yaml.LoadedTemplate(data), params, region, account_id, result).read()
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        result.errors.append(
            InputError(where, f"internal error while reading template: {type(exc).__name__}: {exc}")
        )
    return result


class _Reader:
    def __init__(
        self,
        where: str,
        loaded: cfn_yaml.LoadedTemplate,
        params: Mapping[str, str],
        region: str | None,
        account_id: str | None,
        result: SourceResult,
    ) -> None:
        self.where = where
        self.loaded = loaded
        self.overrides = params
        self.region = region
        self.account_id = account_id
        self.result = result
        self.names: dict[str, list[tuple[str, str]]] = {}  # see _symbolic_names

    def error(self, reason: str, line: int | None = None) -> None:
        self.result.errors.append(InputError(self.where, reason, line))

    def notice(self, message: str, line: int | None = None) -> None:
        self.result.notices.append(Notice(self.where, message, line))

    def read(self) -> None:
        tpl = self.loaded.data
        if not isinstance(tpl, dict):
            self.error("template is not a mapping", 1)
            return
        if "Resources" not in tpl:
            if "AWSTemplateFormatVersion" in tpl:
                self.error("template has no Resources section")
            else:  # e.g. a macro event or a stack-set config that mentions a resource type
                self.notice("not a CloudFormation template (no Resources section); skipped")
            return
        resources = tpl["Resources"]
        if not isinstance(resources, dict):
            self.error("Resources is not a mapping", self.loaded.resources_line)
            return
        sections = {}
        for section in ("Parameters", "Mappings", "Conditions"):
            value = tpl.get(section)
            if value is None:
                value = {}
            if not isinstance(value, dict):
                self.error(f"{section} is not a mapping")
                return
            sections[section] = value
        self._transform_notice(tpl.get("Transform"))
        self._no_echo(sections["Parameters"])
        ev = Evaluator(
            parameters=sections["Parameters"],
            mappings=sections["Mappings"],
            conditions=sections["Conditions"],
            resource_ids=frozenset(resources),
            overrides=self.overrides,
            region=self.region,
            account_id=self.account_id,
            sensitive=self.result.sensitive,
        )
        self.names = self._symbolic_names(ev, resources)
        for logical_id, body in resources.items():
            try:
                self._resource(ev, logical_id, body)
            except OverBudget as exc:
                start = self.loaded.resource_lines.get(logical_id, (None, None))[0]
                self.error(f"resource {logical_id}: {exc.reason}; it and the resources after it "
                           "are not read", start)
                return

    def _symbolic_names(self, ev: Evaluator, resources: dict[str, Any]
                        ) -> dict[str, list[tuple[str, str]]]:
        """The names that are built from values not known but fixed per stack (see
        :meth:`Evaluator.symbol`): symbol -> [(logical id, kind)]."""
        names: dict[str, list[tuple[str, str]]] = {}
        for logical_id, body in resources.items():
            if not isinstance(body, dict) or not isinstance(body.get("Type"), str):
                continue
            kind, prop = KINDS.get(body["Type"]), _NAME_PROPERTY.get(body["Type"])
            props = body.get("Properties")
            if kind is None or prop is None or not isinstance(props, dict) or prop not in props:
                continue
            symbol = ev.symbol(props[prop])
            if symbol is not None:
                names.setdefault(symbol, []).append((logical_id, kind))
        return names

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

    def _no_echo(self, parameters: dict[str, Any]) -> None:
        """The values of ``NoEcho`` parameters (default and ``--cfn-param``) are secret: the
        report step shows them as ``(sensitive)`` wherever they appear."""
        for name, spec in parameters.items():
            if not isinstance(spec, dict) or _text(spec.get("NoEcho")).lower() != "true":
                continue
            values = [spec.get("Default"), self.overrides.get(name)]
            for value in values:
                items = value if isinstance(value, list) else [value]
                if isinstance(value, str) and "," in value:
                    items = [value, *value.split(",")]
                for item in items:
                    if isinstance(item, str | int | float) and not isinstance(item, bool):
                        text = _text(item)
                        self.result.sensitive.update({text, text.strip(),
                                                      json.dumps(text)[1:-1]})

    def _transform_notice(self, transform: Any) -> None:
        names = transform if isinstance(transform, list) else [transform]
        for name in names:
            if name is None or name in ("AWS::Serverless-2016-10-31", "AWS::LanguageExtensions"):
                continue
            self.notice(
                f"template uses the transform {name!r}; resources it adds or changes are not "
                "scanned"
            )

    def _resource(self, ev: Evaluator, logical_id: str, body: Any) -> None:
        start, end = self.loaded.resource_lines.get(logical_id, (None, None))
        if logical_id.startswith("Fn::ForEach::"):
            self.notice(
                f"{logical_id} is not expanded; resources it creates are not scanned", start
            )
            return
        if not isinstance(body, dict):
            self.error(f"resource {logical_id} is not a mapping", start)
            return
        rtype = body.get("Type")
        if not isinstance(rtype, str):
            if isinstance(rtype, dict) and any(str(k).startswith("Rain::") for k in rtype):
                self.error(
                    f"resource {logical_id} is a rain module; run `rain pkg` and scan its output",
                    start,
                )
            else:
                self.error(f"resource {logical_id} has no Type (or it is not a string)", start)
            return
        kind = KINDS.get(rtype)
        holds = embedded.property_of(rtype, body.get("Properties"))
        if kind is None and holds is None:
            return
        cond = body.get("Condition")
        exists: bool | Unknown = True
        if cond is not None:
            created = ev.condition(cond) if isinstance(cond, str) else None
            if created is False:
                return
            if created is None:
                # never assumed created nor absent: its results, and what leans on it, are
                # UNKNOWN (Resource.exists)
                exists = Unknown(f"its condition {str(cond)[:80]!r} is not known statically")
                self.notice(
                    f"{logical_id}: condition {str(cond)[:80]!r} is not known statically; "
                    "whether the resource is created is not known (its results are UNKNOWN)",
                    start,
                )
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
            literal = key == "ServiceName" and kind == "ec2.vpc_endpoint"
            if isinstance(fields.get(key), Ids):
                raw = _joined_ids(raw)
            try:
                value = ev.value(raw, literal_pseudo=literal)
            except OverBudget as exc:
                if exc.total:
                    raise
                self.error(f"resource {logical_id}, property {key}: {exc.reason}", start)
                value = Unknown(exc.reason)
            if value is NO_VALUE:
                continue
            if exceeds(value, MAX_PROPERTY):  # references amplify: small here, huge written
                reason = (f"stands for more than {MAX_PROPERTY >> 20} MiB of text once its "
                          "references are written out")
                self.error(f"resource {logical_id}, property {key}: {reason}", start)
                value = Unknown(reason)
            if self.names:
                value = self._linked(ev, fields.get(renames.get(key, key)), raw, value)
            attrs[renames.get(key, key)] = value
        attrs = _coerce(kind, attrs, lambda msg: self.notice(f"{logical_id}: {msg}", start))
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


# ------------------------------------------------------------------------------- evaluation


class Evaluator:
    """Evaluates intrinsic functions against one template's parameters, mappings, conditions."""

    def __init__(
        self,
        *,
        parameters: dict[str, Any],
        mappings: dict[str, Any],
        conditions: dict[str, Any],
        resource_ids: frozenset[str],
        overrides: Mapping[str, str],
        region: str | None,
        account_id: str | None,
        sensitive: set[str] | None = None,
    ) -> None:
        self.parameters = parameters
        # values that must not reach a report (NoEcho); what Fn::Base64 makes of them joins them
        self.sensitive = sensitive if sensitive is not None else set()
        self.mappings = mappings
        self.conditions = conditions
        self.resource_ids = resource_ids
        self.overrides = overrides
        self.region = region
        self.account_id = account_id
        self._params: dict[str, Any] = {}
        self._conds: dict[str, bool | None] = {}
        self._cond_stack: set[str] = set()
        self.work = 0
        self.built = 0
        self.holes: Any = None  # see value()
        self._symbolic = False
        self._mark = f"\x00{secrets.token_hex(6)}:"  # no template text can forge it

    def symbol(self, raw: Any) -> str | None:
        """The value of ``raw`` as a symbol when it is text built from values not known but
        fixed for the stack (pseudo parameters, parameters without a default), each kept as
        a mark of its name: the same expression gives the same symbol, which no other text
        equals. None when ``raw`` is known (compare the value) or not such text."""
        self._symbolic = True
        try:
            value = self.value(raw)
        except OverBudget:
            return None
        finally:
            self._symbolic = False
        return value if isinstance(value, str) and self._mark in value else None

    def _symbol_of(self, name: str) -> str:
        return f"{self._mark}{name}\x00"

    # ---- the budget

    def spend(self, n: int = 1) -> None:
        self.work += n
        if self.work > MAX_WORK:
            raise OverBudget(f"evaluating the template takes more than {MAX_WORK:,} steps "
                             "(intrinsic functions expand it)", total=True)

    def build(self, fn: str, size: int, *, so_far: bool = False) -> None:
        """Account for a string of ``size`` characters that ``fn`` is about to build
        (``so_far``: at least that many, it was not finished)."""
        if size > MAX_STRING:
            raise OverBudget(f"{fn} builds a string of {'more than ' if so_far else ''}"
                             f"{size:,} characters, more than the {MAX_STRING // 1024} KiB "
                             "limit")
        self.built += size
        if self.built > MAX_BUILT:
            raise OverBudget(f"intrinsic functions build more than {MAX_BUILT >> 20} MiB of "
                             "text in this template", total=True)

    # ---- values

    def value(self, v: Any, *, literal_pseudo: bool = False, holes: Any = None) -> Any:
        """Resolve ``v``; returns :data:`NO_VALUE` where ``AWS::NoValue`` removes it.
        ``holes`` (a :class:`~scanner.sources.yaml_documents.holes.HoledText`): text built by
        ``Fn::Sub`` / ``Fn::Join`` keeps a token for each part that is not known, rather than
        being not known as a whole (a YAML document written with ``!Sub``, read afterwards).
        Raises :class:`OverBudget`."""
        if holes is not None:
            before, self.holes = self.holes, holes
            try:
                return self.value(v, literal_pseudo=literal_pseudo)
            finally:
                self.holes = before
        self.work += 1
        if self.work > MAX_WORK:
            self.spend(0)
        if isinstance(v, dict):
            if len(v) == 1:
                ((key, arg),) = v.items()
                if key == "Ref" or key.startswith("Fn::"):
                    return self._intrinsic(key, arg, literal_pseudo)
            out = {}
            for k, item in v.items():
                r = self.value(item, literal_pseudo=literal_pseudo)
                if r is not NO_VALUE:
                    out[k] = r
            return out
        if isinstance(v, list):
            items = (self.value(item, literal_pseudo=literal_pseudo) for item in v)
            return [item for item in items if item is not NO_VALUE]
        return v

    def _intrinsic(self, fn: str, arg: Any, lit: bool) -> Any:
        handler = _HANDLERS.get(fn)
        if handler is None:
            return Unknown(f"{fn} is not evaluated")
        return handler(self, arg, lit)

    def ref(self, name: Any, lit: bool = False) -> Any:
        if not isinstance(name, str):
            return Unknown("Ref: malformed argument")
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in _PSEUDO:
            return self.pseudo(name, lit)
        if name in self.parameters:
            value = self.parameter(name)
            if self._symbolic and isinstance(value, Unknown):
                return self._symbol_of(name)
            return value
        if name in self.resource_ids:
            return Ref(name)
        return Unknown(f"Ref to {name}, which the template does not define")

    def pseudo(self, name: str, lit: bool = False) -> Any:
        region = self.region
        value: str | None = None
        if name == "AWS::Region":
            value = region
        elif name == "AWS::AccountId":
            value = self.account_id
        elif name == "AWS::Partition":
            value = _partition(region)
        elif name == "AWS::URLSuffix":
            value = "amazonaws.com.cn" if region and region.startswith("cn-") else "amazonaws.com"
        if value is not None:
            return value
        if self._symbolic and name in ("AWS::Region", "AWS::AccountId", "AWS::StackName",
                                       "AWS::StackId"):
            return self._symbol_of(name)
        if lit:
            return "${" + name + "}"
        hint = {"AWS::Region": " (pass --region)", "AWS::AccountId": " (pass --account-id)"}
        return Unknown(f"{name} is not known{hint.get(name, '')}")

    def parameter(self, name: str) -> Any:
        if name not in self._params:
            self._params[name] = self._parameter(name)
        return self._params[name]

    def _parameter(self, name: str) -> Any:
        spec = self.parameters.get(name)
        spec = spec if isinstance(spec, dict) else {}
        ptype = spec.get("Type")
        ptype = ptype if isinstance(ptype, str) else "String"
        if name in self.overrides:
            raw: Any = self.overrides[name]
        elif "Default" in spec:
            raw = spec["Default"]
        else:
            return Unknown(f"parameter {name} has no default")
        if isinstance(raw, Unknown):
            return Unknown(f"parameter {name}: its value is {raw.reason}")
        if ptype.startswith("AWS::SSM::Parameter::Value"):
            return Unknown(f"parameter {name} is read from SSM Parameter Store ({_text(raw)})")
        if ptype.startswith("List<") or ptype == "CommaDelimitedList":
            if isinstance(raw, list):
                return [item if isinstance(item, Unknown) else _text(item) for item in raw]
            text = _text(raw)
            return [part.strip() for part in text.split(",")] if text else []
        if isinstance(raw, (dict, list)):
            return Unknown(f"parameter {name} has a malformed default")
        return _text(raw)

    # ---- conditions

    def condition(self, name: str) -> bool | None:
        """True / False, or None when it cannot be decided statically."""
        if name in self._conds:
            return self._conds[name]
        if name in self._cond_stack or name not in self.conditions:
            return None
        self._cond_stack.add(name)
        try:
            value = self.truth(self.conditions[name])
        finally:
            self._cond_stack.discard(name)
        self._conds[name] = value
        return value

    def truth(self, expr: Any) -> bool | None:
        symbolic, self._symbolic = self._symbolic, False  # a symbol never decides a condition
        try:
            return self._truth(expr)
        finally:
            self._symbolic = symbolic

    def _truth(self, expr: Any) -> bool | None:
        if isinstance(expr, bool):
            return expr
        if isinstance(expr, str):
            return self.condition(expr)
        if not isinstance(expr, dict) or len(expr) != 1:
            return None
        ((fn, arg),) = expr.items()
        if fn == "Condition":
            return self.condition(arg) if isinstance(arg, str) else None
        if fn == "Fn::Equals":
            if not isinstance(arg, list) or len(arg) != 2:
                return None
            left, right = (_plain(self.value(a)) for a in arg)
            if left is None or right is None:
                return None
            return left == right
        items = arg if isinstance(arg, list) else None
        if items is None:
            return None
        values = [self.truth(item) for item in items]
        if fn == "Fn::Not":
            return None if len(values) != 1 or values[0] is None else not values[0]
        if fn == "Fn::And":
            return False if False in values else (None if None in values else True)
        if fn == "Fn::Or":
            return True if True in values else (None if None in values else False)
        return None


def _intrinsic(value: dict[str, Any]) -> bool:
    if len(value) != 1:
        return False
    key = next(iter(value))
    return key == "Ref" or key.startswith("Fn::")


def _partition(region: str | None) -> str:
    if region and region.startswith("cn-"):
        return "aws-cn"
    if region and region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def _text(value: Any) -> str:
    """A scalar as CloudFormation's string form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _plain(value: Any) -> Any:
    """A fully known value in comparable string form, else None."""
    if isinstance(value, (str, int, float, bool)):
        return _text(value)
    if isinstance(value, list):
        items = [_plain(item) for item in value]
        return None if any(item is None for item in items) else tuple(items)
    return None


def _first_unknown(value: Any) -> Unknown | None:
    if isinstance(value, Unknown):
        return value
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = _first_unknown(item)
            if found is not None:
                return found
    return None


def _as_string(fn: str, value: Any) -> str | Unknown:
    if isinstance(value, Unknown):
        return value
    if isinstance(value, Ref):
        return Unknown(f"{fn}: the {'attribute' if value.attr else 'id'} of {value} is not known")
    if isinstance(value, (str, int, float, bool)):
        return _text(value)
    return Unknown(f"{fn}: a part is not a string")


def _fn_ref(ev: Evaluator, arg: Any, lit: bool) -> Any:
    return ev.ref(arg, lit)


def _fn_getatt(ev: Evaluator, arg: Any, lit: bool) -> Any:
    if isinstance(arg, str):
        logical_id, _, attr = arg.partition(".")
        arg = [logical_id, attr]
    if not isinstance(arg, list) or len(arg) != 2 or not isinstance(arg[0], str):
        return Unknown("Fn::GetAtt: malformed arguments")
    attr = ev.value(arg[1])
    if not isinstance(attr, str) or not attr:
        return Unknown("Fn::GetAtt: attribute name is not known")
    if arg[0] not in ev.resource_ids:
        return Unknown(f"Fn::GetAtt of {arg[0]}, which the template does not define")
    return Ref(arg[0], attr)


def _fn_sub(ev: Evaluator, arg: Any, lit: bool) -> Any:
    variables: dict[str, Any] = {}
    if isinstance(arg, list) and len(arg) == 2 and isinstance(arg[1], dict):
        arg, variables = arg[0], arg[1]
    if not isinstance(arg, str):
        return Unknown("Fn::Sub: malformed arguments")
    whole = _SUB_VAR.fullmatch(arg)
    parts: list[str] = []
    pos = 0
    size = start = 0  # characters so far; where the literal text after the last variable starts
    for m in _SUB_VAR.finditer(arg):
        parts.append(arg[pos : m.start()])
        pos = m.end()
        name = m.group(1).strip()
        if name.startswith("!"):
            parts.append("${" + name[1:] + "}")
            continue
        if name in variables:
            value = ev.value(variables[name], literal_pseudo=lit)
        elif name in _PSEUDO or name in ev.parameters or name in ev.resource_ids:
            value = ev.ref(name, lit)
        elif "." in name and name.partition(".")[0] in ev.resource_ids:
            value = Ref(*name.split(".", 1))
        else:
            return Unknown(f"Fn::Sub: ${{{name}}} is not defined")
        if whole is not None and isinstance(value, Ref):
            return value
        text = _as_string("Fn::Sub", value)
        if isinstance(text, Unknown) and ev.holes is not None:
            text = ev.holes.token(text)
        if isinstance(text, Unknown):
            return text
        parts.append(text)
        size += len(text) + m.start() - start
        start = m.end()
        if size > MAX_STRING:
            ev.build("Fn::Sub", size, so_far=True)
    parts.append(arg[pos:])
    ev.build("Fn::Sub", size + len(arg) - start)
    return "".join(parts)


def _fn_join(ev: Evaluator, arg: Any, lit: bool) -> Any:
    if not isinstance(arg, list) or len(arg) != 2 or not isinstance(arg[0], str):
        return Unknown("Fn::Join: malformed arguments")
    items = ev.value(arg[1], literal_pseudo=lit)
    if isinstance(items, Unknown):
        return items
    if not isinstance(items, list):
        return Unknown("Fn::Join: the list is not a list")
    texts = [_as_string("Fn::Join", item) for item in items]
    if ev.holes is not None:
        texts = [ev.holes.token(t) if isinstance(t, Unknown) else t for t in texts]
    for text in texts:
        if isinstance(text, Unknown):
            return text
    ev.build("Fn::Join", sum(len(str(t)) for t in texts) + len(arg[0]) * max(len(texts) - 1, 0))
    return arg[0].join(str(t) for t in texts)


def _fn_select(ev: Evaluator, arg: Any, lit: bool) -> Any:
    if not isinstance(arg, list) or len(arg) != 2:
        return Unknown("Fn::Select: malformed arguments")
    index = ev.value(arg[0])
    items = ev.value(arg[1], literal_pseudo=lit)
    if isinstance(index, Unknown):
        return index
    if isinstance(items, Unknown):
        return items
    try:
        i = int(index)
    except (TypeError, ValueError):
        return Unknown("Fn::Select: the index is not a number")
    if not isinstance(items, list) or not 0 <= i < len(items):
        return Unknown("Fn::Select: index out of range")
    return items[i]


def _fn_split(ev: Evaluator, arg: Any, lit: bool) -> Any:
    if not isinstance(arg, list) or len(arg) != 2 or not isinstance(arg[0], str) or not arg[0]:
        return Unknown("Fn::Split: malformed arguments")
    text = _as_string("Fn::Split", ev.value(arg[1], literal_pseudo=lit))
    if isinstance(text, Unknown):
        return text
    ev.spend(text.count(arg[0]) + 1)
    pieces = text.split(arg[0])
    if ev.sensitive and any(len(secret) >= 4 and secret in text for secret in ev.sensitive):
        ev.sensitive.update(p for p in pieces if p)  # parts of a NoEcho value are secret too
    return pieces


def _fn_if(ev: Evaluator, arg: Any, lit: bool) -> Any:
    if not isinstance(arg, list) or len(arg) != 3 or not isinstance(arg[0], str):
        return Unknown("Fn::If: malformed arguments")
    truth = ev.condition(arg[0])
    if truth is None:
        return Unknown(f"condition {arg[0]} is not known statically")
    return ev.value(arg[1] if truth else arg[2], literal_pseudo=lit)


def _fn_logic(fn: str) -> Any:
    def handler(ev: Evaluator, arg: Any, lit: bool) -> Any:
        truth = ev.truth({fn: arg})
        return Unknown(f"{fn} is not known statically") if truth is None else truth

    return handler


def _fn_find_in_map(ev: Evaluator, arg: Any, lit: bool) -> Any:
    if not isinstance(arg, list) or len(arg) not in (3, 4):
        return Unknown("Fn::FindInMap: malformed arguments")
    keys = [ev.value(a) for a in arg[:3]]
    default = (
        arg[3].get("DefaultValue", NO_VALUE)
        if len(arg) == 4 and isinstance(arg[3], dict)
        else NO_VALUE
    )
    for key in keys:
        if isinstance(key, Unknown):
            return Unknown(f"Fn::FindInMap: a key is not known ({key.reason})")
        if not isinstance(key, (str, int, float, bool)):
            return Unknown("Fn::FindInMap: a key is not a string")
    node: Any = ev.mappings
    for key in keys:
        node = node.get(_text(key)) if isinstance(node, dict) else None
        if node is None:
            if default is not NO_VALUE:
                return ev.value(default, literal_pseudo=lit)
            return Unknown(f"Fn::FindInMap: {'/'.join(_text(k) for k in keys)} is not in Mappings")
    return ev.value(node, literal_pseudo=lit)


def _fn_base64(ev: Evaluator, arg: Any, lit: bool) -> Any:
    text = _as_string("Fn::Base64", ev.value(arg))
    if isinstance(text, Unknown):
        return text
    data = text.encode("utf-8")
    ev.build("Fn::Base64", (len(data) + 2) // 3 * 4)
    encoded = base64.b64encode(data).decode("ascii")
    if ev.sensitive and any(len(secret) >= 4 and secret in text for secret in ev.sensitive):
        ev.sensitive.add(encoded)  # a NoEcho value inside: the encoded form is secret too
    return encoded


def _fn_to_json(ev: Evaluator, arg: Any, lit: bool) -> Any:
    value = ev.value(arg)
    missing = _first_unknown(value)
    if missing is not None:
        return missing
    ev.build("Fn::ToJsonString", _text_size(value))
    try:
        return json.dumps(value, separators=(",", ":"), default=_reject)
    except TypeError:
        return Unknown("Fn::ToJsonString: a value is a resource reference")


def _text_size(value: Any) -> int:
    """About the length of ``value`` as JSON (strings and punctuation), stopping past the cap."""
    total = 0
    stack = [value]
    while stack and total <= MAX_STRING:
        cur = stack.pop()
        if isinstance(cur, dict):
            total += 2 + sum(len(str(k)) + 4 for k in cur)
            stack.extend(cur.values())
        elif isinstance(cur, list):
            total += 2 + len(cur)
            stack.extend(cur)
        else:
            total += len(str(cur)) + 2
    return total


def _reject(value: Any) -> Any:
    raise TypeError(repr(value))


def _fn_length(ev: Evaluator, arg: Any, lit: bool) -> Any:
    value = ev.value(arg)
    return len(value) if isinstance(value, list) else Unknown("Fn::Length: not a known list")


def _fn_unknown(reason: str) -> Any:
    def handler(ev: Evaluator, arg: Any, lit: bool) -> Any:
        return Unknown(reason)

    return handler


_HANDLERS: dict[str, Any] = {
    "Ref": _fn_ref,
    "Fn::GetAtt": _fn_getatt,
    "Fn::Sub": _fn_sub,
    "Fn::Join": _fn_join,
    "Fn::Select": _fn_select,
    "Fn::Split": _fn_split,
    "Fn::If": _fn_if,
    "Fn::Equals": _fn_logic("Fn::Equals"),
    "Fn::Not": _fn_logic("Fn::Not"),
    "Fn::And": _fn_logic("Fn::And"),
    "Fn::Or": _fn_logic("Fn::Or"),
    "Fn::FindInMap": _fn_find_in_map,
    "Fn::Base64": _fn_base64,
    "Fn::ToJsonString": _fn_to_json,
    "Fn::Length": _fn_length,
    "Fn::GetAZs": _fn_unknown("Fn::GetAZs: the availability zones of the account are not known"),
    "Fn::ImportValue": _fn_unknown("Fn::ImportValue: the value is exported by another stack"),
    "Fn::Cidr": _fn_unknown("Fn::Cidr is not evaluated"),
    "Fn::Transform": _fn_unknown("Fn::Transform: a macro decides the value"),
}


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
