"""Terraform type constraints of variables: parse ``list(object({a = optional(string, "x")}))``
and convert values to them, filling optional object attributes with their defaults (or null),
as terraform does before a module sees its inputs."""

from __future__ import annotations

from typing import Any

from scanner.model import Ref, Unknown
from scanner.sources.terraform.hcl.expressions import evaluate
from scanner.sources.terraform.hcl.functions import make_set
from scanner.sources.terraform.hcl.parse import Call, Expr, Lit, ObjectExpr, Traversal, TupleExpr
from scanner.sources.terraform.hcl.values import (
    EvalError,
    GroupRefs,
    Lazy,
    Scope,
    TSet,
    to_bool,
    to_number,
    to_str,
    type_name,
)

# A type: ("any",) ("string",) ("number",) ("bool",) ("list", T) ("set", T) ("map", T)
# ("tuple", [T...]) ("object", {name: (T, optional, default)})
Type = tuple[Any, ...]

ANY: Type = ("any",)
_PRIMITIVES = {"string", "number", "bool", "any"}


class TypeSyntaxError(Exception):
    pass


def parse_type(expr: Expr, scope: Scope | None = None) -> Type:
    if isinstance(expr, Traversal) and not expr.ops and expr.root in _PRIMITIVES:
        return (expr.root,)
    if isinstance(expr, Lit) and isinstance(expr.value, str):  # terraform 0.11 style
        legacy = {"string": ("string",), "list": ("list", ANY), "map": ("map", ANY)}
        if expr.value in legacy:
            return legacy[expr.value]
    if isinstance(expr, Traversal) and not expr.ops and expr.root in ("list", "map", "set"):
        return (expr.root, ANY)
    if isinstance(expr, Call):
        name, args = expr.name, expr.args
        if name in ("list", "set", "map") and len(args) == 1:
            return (name, parse_type(args[0], scope))
        if name == "tuple" and len(args) == 1 and isinstance(args[0], TupleExpr):
            return ("tuple", [parse_type(a, scope) for a in args[0].items])
        if name == "object" and len(args) == 1 and isinstance(args[0], ObjectExpr):
            attrs: dict[str, tuple[Type, bool, Any]] = {}
            for key, val in args[0].items:
                if not isinstance(key, str):
                    if isinstance(key, Lit) and isinstance(key.value, str):
                        key = key.value
                    else:
                        raise TypeSyntaxError("object attribute names must be identifiers")
                if isinstance(val, Call) and val.name == "optional":
                    if not 1 <= len(val.args) <= 2:
                        raise TypeSyntaxError("optional() takes a type and a default")
                    t = parse_type(val.args[0], scope)
                    default: Any = None
                    if len(val.args) == 2:
                        if scope is None:
                            raise TypeSyntaxError("optional default needs a scope")
                        default = evaluate(val.args[1], scope)
                    attrs[key] = (t, True, default)
                else:
                    attrs[key] = (parse_type(val, scope), False, None)
            return ("object", attrs)
    raise TypeSyntaxError("invalid type constraint")


def convert(value: Any, t: Type, where: str = "value") -> Any:
    """Convert value to type t; raise EvalError when it cannot be."""
    kind = t[0]
    if kind == "any" or value is None:
        return value
    if isinstance(value, (Unknown, Ref, Lazy)):
        return value
    if kind == "string":
        if isinstance(value, (list, dict)):
            raise EvalError(f"{where}: a {type_name(value)} is not a string")
        return to_str(value)
    if kind == "number":
        return to_number(value)
    if kind == "bool":
        return to_bool(value)
    if kind in ("list", "set"):
        if isinstance(value, GroupRefs):
            return value  # ids of every instance of a resource: stays one relation
        if isinstance(value, dict) or not isinstance(value, list):
            raise EvalError(f"{where}: a {type_name(value)} is not a {kind}")
        items = [convert(x, t[1], f"{where}[{i}]") for i, x in enumerate(value)]
        return make_set(items) if kind == "set" else items
    if kind == "tuple":
        if not isinstance(value, list) or len(value) != len(t[1]):
            raise EvalError(f"{where}: does not match the tuple type")
        return [
            convert(x, et, f"{where}[{i}]")
            for i, (x, et) in enumerate(zip(value, t[1], strict=True))
        ]
    if kind == "map":
        if not isinstance(value, dict):
            raise EvalError(f"{where}: a {type_name(value)} is not a map")
        return {k: convert(v, t[1], f"{where}.{k}") for k, v in value.items()}
    if kind == "object":
        if not isinstance(value, dict):
            raise EvalError(f"{where}: a {type_name(value)} is not an object")
        out: dict[str, Any] = {}
        for name, (at, optional, default) in t[1].items():
            if name in value and value[name] is not None:
                out[name] = convert(value[name], at, f"{where}.{name}")
            elif name in value or optional:
                out[name] = convert(default, at, f"{where}.{name}") if optional else None
            else:
                raise EvalError(f'{where}: attribute "{name}" is required')
        return out
    return value


def is_complex(t: Type) -> bool:
    return t[0] in ("list", "set", "map", "tuple", "object")


__all__ = ["ANY", "TSet", "Type", "TypeSyntaxError", "convert", "is_complex", "parse_type"]
