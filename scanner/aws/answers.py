"""Is a reply the service's answer? A check before botocore parses it.

botocore reads some replies that are not an AWS answer as an empty one: a well-formed HTML page
(a captive portal, a proxy's sign-in page, a wrong endpoint) becomes an EC2 answer with no items,
a JSON body that does not parse becomes ``{"message": ...}``. An empty list would then be taken
for "no resources". ``check_answer`` runs on every successful reply (``before-parse``) and raises
``UnreadableAnswer`` unless the body is what the protocol answers: for the XML protocols (EC2,
query) a document whose root element is ``<Operation>Response``; for JSON and REST-JSON, a JSON
object; for REST-XML, an XML document that is not an HTML page. Only the first bytes are looked
at for XML (the parser reads the rest), so a 10 MB answer costs nothing more. The reason names
the content type and root element, never the body's text.
"""

from __future__ import annotations

import json
import re
from typing import Any

# BOM, XML declaration, comments, processing instructions and a doctype may precede the root.
_ROOT = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:\s|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<([A-Za-z_][\w.:-]*)",
    re.S,
)
_HEAD = 4096  # bytes looked at to find the root element


class UnreadableAnswer(Exception):
    """The reply is not the service's answer to the operation (one line saying why)."""


def check_answer(
    operation_model: Any = None, response_dict: dict[str, Any] | None = None, **_: Any
) -> None:
    """botocore ``before-parse`` handler: raise ``UnreadableAnswer`` for a success status whose
    body is not the operation's answer. Error statuses are left to botocore (its generic 5xx
    handling keeps them retryable)."""
    if operation_model is None or response_dict is None:
        return
    status = int(response_dict.get("status_code") or 0)
    if not 200 <= status < 300 or operation_model.has_streaming_output:
        return
    body = response_dict.get("body") or b""
    if isinstance(body, str):
        body = body.encode("utf-8", "replace")
    name = operation_model.name
    service = operation_model.service_model
    protocol = getattr(service, "resolved_protocol", None) or service.protocol
    headers = response_dict.get("headers") or {}
    ctype = str(headers.get("content-type") or headers.get("Content-Type") or "no content type")
    ctype = ctype.split(";", 1)[0].strip()[:60]
    if protocol in ("ec2", "query"):
        # the envelope <OperationResponse> is there even when the output has no members
        if not body.strip():
            raise UnreadableAnswer(f"HTTP {status} with an empty body, not the {name} answer")
        expected = f"{name}Response"
        root = _root(body)
        if root != expected:
            found = f"<{root}>" if root else "no XML element"
            raise UnreadableAnswer(
                f"HTTP {status} ({ctype}) whose root is {found}, not <{expected}>: a proxy, "
                "a captive portal or a wrong endpoint answered"
            )
        return
    if not _has_body(operation_model.output_shape):
        return  # nothing is answered in the body (e.g. headers only): nothing to check
    if not body.strip():
        raise UnreadableAnswer(f"HTTP {status} with an empty body, not the {name} answer")
    if protocol in ("json", "rest-json"):
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise UnreadableAnswer(
                f"HTTP {status} ({ctype}) whose body is not a JSON object, not the {name} answer"
            )
        names = _body_names(operation_model.output_shape)
        if doc and names is not None and not names.intersection(doc):
            # {"message": "..."} from a proxy or gateway: botocore reads it as an answer with
            # no items
            raise UnreadableAnswer(
                f"HTTP {status} ({ctype}) whose JSON object has none of the {name} answer's "
                "members: a proxy, a gateway or a wrong endpoint answered"
            )
    elif protocol == "rest-xml" and (_root(body) or "").lower() in ("", "html"):
        root = _root(body)
        raise UnreadableAnswer(
            f"HTTP {status} ({ctype}) whose root is {f'<{root}>' if root else 'no XML element'}, "
            f"not the {name} answer: a proxy, a captive portal or a wrong endpoint answered"
        )


def _has_body(shape: Any) -> bool:
    """Whether the operation answers anything in the body (members not in headers or status)."""
    if shape is None:
        return False
    if shape.serialization.get("payload"):
        return True
    return any(not m.serialization.get("location") for m in shape.members.values())


def _body_names(shape: Any) -> set[str] | None:
    """The JSON keys the answer's body may hold (None when that cannot be told: a payload
    that is not a structure)."""
    payload = shape.serialization.get("payload")
    if payload:
        shape = shape.members[payload]
        if shape.type_name != "structure":
            return None
    return {m.serialization.get("name", n) for n, m in shape.members.items()
            if not m.serialization.get("location")}


def _root(body: bytes) -> str | None:
    m = _ROOT.match(body[:_HEAD])
    if m is None:
        return None
    tag = m.group(1).decode("ascii", "replace")
    return tag.rsplit(":", 1)[-1][:60]  # a namespace prefix is not part of the name
