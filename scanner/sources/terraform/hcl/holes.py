"""Render a manifest's text with holes where parts are not known.

``yaml_body = <<-YAML ... ${module.eks.cluster_name} ... YAML`` is, as terraform sees it, not
known until apply: one unknown interpolation makes the whole string unknown. For a Kubernetes
manifest most of it is known (the instance types, the capacity type, the block devices), so the
HCL source renders such an attribute a second time with each unknown interpolation written as a
token (:class:`~scanner.sources.yaml_documents.holes.HoledText`): the manifest reader reads
what is known and makes each token's value UNKNOWN.

Only the outermost text is rendered this way: a heredoc or string template, a
``templatefile(...)`` whose variables are partly unknown, each item of a list of them (a Helm
release's ``values``). ``yamlencode(x)`` / ``jsonencode(x)`` give ``x`` itself (the object, its
unknown parts UNKNOWN). Everything inside is evaluated as usual, and nothing rendered here is
remembered by the evaluator, so no token can reach another value.
"""

from __future__ import annotations

from typing import Any

from scanner.sources.terraform.hcl.expressions import (
    _IN_TEMPLATEFILE,
    _render,
    evaluate,
    materialize,
)
from scanner.sources.terraform.hcl.functions import file_text
from scanner.sources.terraform.hcl.parse import (
    Call,
    Expr,
    ParseError,
    Template,
    TupleExpr,
    parse_template,
)
from scanner.sources.terraform.hcl.values import (
    EvalError,
    Scope,
    as_unknown,
    is_opaque,
    literal_scope,
    to_str,
)
from scanner.sources.yaml_documents.holes import HoledText


def evaluate_holed(expr: Expr, scope: Scope) -> Any:
    """The value of ``expr``: a text (``str``, or a :class:`HoledText` when parts are not
    known), the object an encoder was given, a list of those, or what plain evaluation gives."""
    if isinstance(expr, TupleExpr):
        return [evaluate_holed(item, scope) for item in expr.items]
    if isinstance(expr, Template):
        parts = expr.parts
        if len(parts) == 1 and isinstance(parts[0], Expr):
            return evaluate_holed(parts[0], scope)
        return _holed(parts, scope)
    if isinstance(expr, Call) and not expr.expand:
        if expr.name in ("yamlencode", "jsonencode") and len(expr.args) == 1:
            return materialize(evaluate(expr.args[0], scope))
        if expr.name == "templatefile" and len(expr.args) == 2 and not _IN_TEMPLATEFILE:
            return _templatefile(expr, scope)
    return materialize(evaluate(expr, scope))


def _holed(parts: list[Any], scope: Scope) -> Any:
    text = HoledText("")
    out: list[str] = []
    stopped = _render(parts, scope, out, [0], text.token)
    if stopped is not None:
        return stopped
    text.text = "".join(out)
    return text if text.holes else text.text


def _templatefile(expr: Call, scope: Scope) -> Any:
    path = evaluate(expr.args[0], scope)
    variables = evaluate(expr.args[1], scope)
    if is_opaque(path):
        return as_unknown(path)
    if is_opaque(variables):
        return as_unknown(variables)
    if not isinstance(variables, dict):
        raise EvalError("templatefile(): the variables must be a map or object")
    source = file_text(path, "templatefile")
    if not isinstance(source, str):
        return source
    try:
        template = parse_template(source)
    except ParseError as exc:
        raise EvalError(f"templatefile(): {exc.reason}") from None
    inner = literal_scope(dict(variables))
    _IN_TEMPLATEFILE.append(to_str(path))
    try:
        if isinstance(template, Template):
            return _holed(template.parts, inner)
        return materialize(evaluate(template, inner))
    finally:
        _IN_TEMPLATEFILE.pop()
