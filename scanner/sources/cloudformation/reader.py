"""CloudFormation templates (YAML, JSON, CDK synth output) → normalized Resources: the public
read functions.

:func:`load_template` reads a template file, :func:`read_if_template` a file that may not be
one (decided by structure), :func:`read_parsed_template` a template another tool has parsed.
The template is walked by :mod:`.template`, its intrinsic functions and conditions evaluated
by :mod:`.evaluate`, each resource translated by :mod:`.resources`. ``KINDS`` (CloudFormation
type -> kind) and ``MAX_STRING`` (the longest string intrinsic functions may build) are
re-exported from there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scanner.inputs.safe_read import ReadError, decode_head, read_regular
from scanner.model import TEMPLATE_NOT_READ, InputError, Notice, SourceResult
from scanner.sources.cloudformation import yaml_nodes as cfn_yaml
from scanner.sources.cloudformation.evaluate import MAX_STRING
from scanner.sources.cloudformation.resources import KINDS
from scanner.sources.cloudformation.template import TemplateReader
from scanner.sources.yaml_documents.holes import template_action

__all__ = [
    "KINDS",
    "MAX_STRING",
    "is_template",
    "load_template",
    "looks_like_cloudformation",
    "read_if_template",
    "read_parsed_template",
]

_SNIFF = re.compile(r"AWSTemplateFormatVersion|\bType[\"']?\s*:\s*[\"']?AWS::")


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
        text = _text_of(data)
        if detect and not _TOP_KEY.search(text):
            return None
        near = "\n".join(text.splitlines()[max((exc.line or 1) - 2, 0):exc.line or 1])
        action = template_action(near)  # an action where the parse failed, not any {{ }}
        if action is not None:  # a Jinja / Go template of a template: YAML once rendered
            action = (action[0] + max((exc.line or 1) - 2, 0), action[1])
            result.notices.append(Notice(where, (
                f"{TEMPLATE_NOT_READ}: {action[1]} (line {action[0]}) is filled in when it is "
                f"rendered, and until then the file is not YAML (line {exc.line}: {exc.reason})"
                "; render it and scan what it renders"), exc.line or action[0]))
            return result
        result.errors.append(InputError(where, exc.reason, exc.line))
        return result
    if detect and not is_template(loaded.data):
        return None
    try:
        TemplateReader(where, loaded, params, region, account_id, result).read()
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
        TemplateReader(where, cfn_yaml.LoadedTemplate(data), params, region, account_id,
                       result).read()
    except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        result.errors.append(
            InputError(where, f"internal error while reading template: {type(exc).__name__}: {exc}")
        )
    return result
