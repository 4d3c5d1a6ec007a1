"""Intrinsic functions and conditions of one CloudFormation template, under a budget.

Intrinsic functions are evaluated where the template alone decides them (parameters with defaults
or overrides, pseudo parameters given by the caller, conditions, mappings, ``Fn::Sub`` / ``Join`` /
``Select`` / ``Split``); references to resources become :class:`~scanner.model.Ref`; everything
else becomes :class:`~scanner.model.Unknown` with a reason.

One deliberate exception: in a VPC endpoint's ``ServiceName`` an unknown pseudo
parameter is kept as its literal ``${AWS::Region}`` text, so that
``!Sub com.amazonaws.${AWS::Region}.s3`` is still recognised as the S3 service by pattern.

Names built from values that are not known but are one value per stack (pseudo parameters such
as ``AWS::StackName``, parameters without a default) are still the same string wherever the
same expression builds them (:meth:`Evaluator.symbol`): the template reader links a reference by
such a name to the one resource the same expression names.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from collections.abc import Mapping
from typing import Any

from scanner.model import Ref, Unknown

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

_SUB_VAR = re.compile(r"\$\{([^}]*)\}")

# The evaluation budget of one template: intrinsic functions can build far more than the file
# holds (a Join of a long parameter a thousand times; mappings that look each other up). Past a
# limit the value is an input error, never a 100 MB report or an exhausted memory.
MAX_STRING = 256 * 1024  # characters in one string built by Join / Sub / Base64 / ToJsonString
MAX_BUILT = 32 * 1024 * 1024  # characters built in all, per template
MAX_WORK = 1_000_000  # values evaluated, per template


class OverBudget(Exception):
    """A value past the evaluation budget; ``total``: the template's whole budget is spent."""

    def __init__(self, reason: str, *, total: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.total = total


class _NoValue:
    """``AWS::NoValue``: the key (or list element) is removed."""


NO_VALUE = _NoValue()


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
            return bool(left == right)  # plain values: == is a bool already
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


IMPORTED = "the value is exported by another stack"


def _fn_import_value(ev: Evaluator, arg: Any, lit: bool) -> Any:
    """Not known here; the export's name, when it is a plain string that is no secret, says
    which value (``Fn::ImportValue ml-net-PrivateSubnets: ...``)."""
    name = ev.value(arg, literal_pseudo=lit)
    if isinstance(name, str) and 0 < len(name) <= 255 and not any(
            len(secret) >= 4 and secret in name for secret in ev.sensitive or ()):
        return Unknown(f"Fn::ImportValue {name}: {IMPORTED}")
    return Unknown(f"Fn::ImportValue: {IMPORTED}")


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
    "Fn::ImportValue": _fn_import_value,
    "Fn::Cidr": _fn_unknown("Fn::Cidr is not evaluated"),
    "Fn::Transform": _fn_unknown("Fn::Transform: a macro decides the value"),
}
