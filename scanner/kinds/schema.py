"""What a kind is: its attributes and their types, the Terraform and CloudFormation types that
map to it, how it is observed live, and the declared facts its resources may carry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scanner.kinds.types import FieldType


@dataclass(frozen=True, eq=False)
class Terraform:
    """A Terraform resource type that becomes this kind. ``blocks``: each nested block and the
    attributes policies read in it (a plan leaves them unknown in a ``dynamic`` block when the
    ``.tf`` is not at hand); ``derived``: a note on how its values become the model's."""

    type: str
    blocks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True, eq=False)
class CloudFormation:
    """A CloudFormation resource type that becomes this kind. ``renames``: properties spelled
    differently from the model; ``name_property``: the property that names the resource."""

    type: str
    renames: Mapping[str, str] = field(default_factory=dict)
    name_property: str | None = None


@dataclass(frozen=True, eq=False)
class Kind:
    name: str
    doc: str
    attributes: Mapping[str, FieldType]
    terraform: tuple[Terraform, ...] = ()
    cloudformation: tuple[CloudFormation, ...] = ()
    live: str = ""  # the calls that observe it, for the docs ("" = not read live)
    formats: str = ""  # the other formats it is read from (scanner/sources/*), for the docs
    facts: tuple[str, ...] = ()  # declared facts (scanner.kinds.facts) its resources may carry
