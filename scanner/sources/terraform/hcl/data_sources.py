"""Data sources that are pure functions of their configuration, evaluated statically.

Only ``aws_iam_policy_document`` (endpoint policies are commonly written with it). Every other
data source is read by terraform at plan time from the cloud: its attributes stay Unknown.
"""

from __future__ import annotations

from typing import Any

from scanner.model import Unknown
from scanner.sources.terraform.hcl.values import as_unknown, first_opaque

_UNSUPPORTED = (
    "source_policy_documents",
    "override_policy_documents",
    "source_json",
    "override_json",
)


def _one_or_list(values: Any) -> Any:
    items = list(values) if isinstance(values, list) else [values]
    return items[0] if len(items) == 1 else items


def _principals(blocks: list[dict[str, Any]]) -> Any:
    out: dict[Any, Any] = {}  # by principal type, as given
    for b in blocks:
        ptype = b.get("type")
        ids = b.get("identifiers") or []
        if ptype == "*" and list(ids) == ["*"]:
            return "*"
        prev = out.get(ptype)
        merged = ([prev] if isinstance(prev, str) else list(prev or [])) + list(ids)
        out[str(ptype)] = _one_or_list(merged)
    return out


def render_policy_document(values: dict[str, Any], address: str) -> Any:
    """The ``json`` attribute of an aws_iam_policy_document, or Unknown."""
    from scanner.sources.terraform.hcl.functions import _json

    for key in _UNSUPPORTED:
        if values.get(key) not in (None, [], ""):
            return Unknown(f"{address}: {key} is not evaluated")
    opaque = first_opaque(values)
    if opaque is not None:
        return as_unknown(opaque)
    doc: dict[str, Any] = {"Version": values.get("version") or "2012-10-17"}
    if values.get("policy_id"):
        doc["Id"] = values["policy_id"]
    statements = []
    for st in values.get("statement") or []:
        out: dict[str, Any] = {}
        if st.get("sid"):
            out["Sid"] = st["sid"]
        out["Effect"] = st.get("effect") or "Allow"
        for key, name in (
            ("actions", "Action"),
            ("not_actions", "NotAction"),
            ("resources", "Resource"),
            ("not_resources", "NotResource"),
        ):
            if st.get(key):
                out[name] = _one_or_list(st[key])
        if st.get("principals"):
            out["Principal"] = _principals(st["principals"])
        if st.get("not_principals"):
            out["NotPrincipal"] = _principals(st["not_principals"])
        conditions: dict[str, dict[str, Any]] = {}
        for c in st.get("condition") or []:
            conditions.setdefault(str(c.get("test")), {})[str(c.get("variable"))] = _one_or_list(
                c.get("values") or []
            )
        if conditions:
            out["Condition"] = conditions
        statements.append(out)
    doc["Statement"] = statements
    return _json(doc)
