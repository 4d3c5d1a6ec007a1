"""The kind schema: every kind of the resource model, its attributes and their types, in one
place (a module of this package per service family, each with a ``KINDS`` tuple, found by
discovery).

From here come: the CloudFormation type -> kind table and its coercions
(``scanner.kinds.coerce``), the Terraform types each kind comes from and the attributes policies
read in their nested blocks (the plan reader's block keys), the types Terraform values are
coerced to (``scanner.sources.terraform.translate``), the validation of a policy's ``kinds`` /
``needs`` when it is registered, the declared facts live collectors add (``facts``), and
``docs/resource-model.md`` (``python -m scanner.compute.resource_model_doc``, checked by a test).

Stdlib only: the pre-commit path imports it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass

from scanner.kinds.facts import FACTS, Fact
from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import FieldType, List, Map, Obj

__all__ = ["CloudFormation", "Fact", "Kind", "Schema", "Terraform", "schema"]


@dataclass(frozen=True, eq=False)
class Schema:
    kinds: dict[str, Kind]
    facts: dict[str, Fact]
    terraform: dict[str, tuple[Kind, Terraform]]
    cloudformation: dict[str, tuple[Kind, CloudFormation]]

    def kind(self, name: str) -> Kind:
        return self.kinds[name]

    def names(self) -> frozenset[str]:
        """Every name a policy may list in ``kinds`` / ``needs``: kinds and declared facts."""
        return frozenset(self.kinds) | frozenset(self.facts)

    def kinds_with_fact(self, fact: str) -> tuple[str, ...]:
        return tuple(k.name for k in self.kinds.values() if fact in k.facts)

    def fields(self, kind: str) -> dict[str, FieldType]:
        """A kind's attributes, with the attributes its declared facts add."""
        k = self.kinds[kind]
        out = dict(k.attributes)
        for name in k.facts:
            f = self.facts[name]
            out.setdefault(f.attribute, f.type)
        return out

    def attribute(self, kind: str, path: str) -> FieldType | None:
        """The type at a dotted path ("LaunchTemplateData.BlockDeviceMappings.Ebs.Encrypted";
        list items are stepped into implicitly). None when the schema does not declare it."""
        current: FieldType | None = Obj(self.fields(kind))
        for part in path.split("."):
            while isinstance(current, List):
                current = current.item
            if isinstance(current, Obj):
                current = current.fields.get(part)
            elif isinstance(current, Map):
                current = current.value
            else:
                return None
            if current is None:
                return None
        return current

    def check_policy(self, policy_id: str, kinds: Iterable[str], needs: Iterable[str]) -> None:
        """A policy's kinds must be kinds of the schema, its needs kinds or declared facts."""
        for name in kinds:
            if name not in self.kinds:
                raise ValueError(f"policy {policy_id}: {name!r} in kinds is not a kind of the "
                                 f"schema ({_close(name, self.kinds)})")
        for name in needs:
            if name not in self.kinds and name not in self.facts:
                raise ValueError(f"policy {policy_id}: {name!r} in needs is neither a kind nor "
                                 f"a declared fact ({_close(name, self.names())})")


def _close(name: str, known: Iterable[str]) -> str:
    import difflib

    hits = difflib.get_close_matches(name, sorted(known), n=1)
    return f"did you mean {hits[0]!r}?" if hits else "see docs/resource-model.md"


def _modules() -> list[Kind]:
    out: list[Kind] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        declared = getattr(module, "KINDS", None)
        if isinstance(declared, tuple) and all(isinstance(k, Kind) for k in declared):
            out.extend(declared)
    return out


def build(declared: Iterable[Kind], facts: Iterable[Fact] = FACTS) -> Schema:
    """The schema of these kinds and facts, checked: one declaration per kind, Terraform type,
    CloudFormation type and fact; a kind's facts are declared; no fact shares a kind's name."""
    kinds: dict[str, Kind] = {}
    terraform: dict[str, tuple[Kind, Terraform]] = {}
    cloudformation: dict[str, tuple[Kind, CloudFormation]] = {}
    fact_map = {f.name: f for f in facts}
    for k in declared:
        if k.name in kinds:
            raise ValueError(f"kind {k.name} is declared twice")
        if k.name in fact_map:
            raise ValueError(f"{k.name} is both a kind and a fact")
        kinds[k.name] = k
        for tf in k.terraform:
            if tf.type in terraform:
                raise ValueError(f"Terraform type {tf.type} maps to two kinds")
            terraform[tf.type] = (k, tf)
        for cfn in k.cloudformation:
            if cfn.type in cloudformation:
                raise ValueError(f"CloudFormation type {cfn.type} maps to two kinds")
            cloudformation[cfn.type] = (k, cfn)
        for name in k.facts:
            if name not in fact_map:
                raise ValueError(f"kind {k.name} carries an undeclared fact {name}")
    for f in fact_map.values():
        for kind, _attr in f.fills:
            if kind not in kinds:
                raise ValueError(f"fact {f.name} fills an attribute of an unknown kind {kind}")
    return Schema(kinds, fact_map, terraform, cloudformation)


@functools.lru_cache(maxsize=1)
def schema() -> Schema:
    """The schema of every kind declared in this package."""
    return build(_modules())
