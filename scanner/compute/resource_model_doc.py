"""Render ``docs/resource-model.md`` from the kind schema (and the compute registry).

    python -m scanner.compute.resource_model_doc            print it
    python -m scanner.compute.resource_model_doc --write    write docs/resource-model.md

A test checks that the file in the repository is what this renders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scanner.kinds import Kind, Schema, schema
from scanner.kinds.types import FieldType, Ids, List, Map, Obj, Ref

DOC = Path(__file__).resolve().parents[2] / "docs" / "resource-model.md"

HEADER = """\
# The normalized resource model (the contract between sources and policies)

<!-- Generated from scanner/kinds/ by `python -m scanner.compute.resource_model_doc --write`; do not edit. -->

Every source (`scanner/sources/*`, `scanner/aws/*`) produces `scanner.model.Resource` objects of
the kinds below, with attributes spelled as the AWS API / CloudFormation spells them. The kinds,
their attributes and their types are declared once, in `scanner/kinds/` (one module per service
family); the CloudFormation type table and coercions, the types Terraform values are coerced to,
the plan reader's block keys, the check of a policy's `kinds`/`needs` and this page all come from
there. Policies read the compute view (`scanner/compute/`, below) and the network graph
(`scanner/model/graph.py`). Anything not listed may be carried along but no policy relies on it.

Value rules:
- Absent or `None` means "not set" (the AWS default applies).
- `UNKNOWN` (or `Unknown(reason)`) means "set, but not knowable statically". Never guess.
- References to other resources (marked → kind) are either the literal id/name (live, or
  hard-coded in IaC) or a `Ref(target, attr)` whose target is a Terraform address (full, with
  module path, without `[index]` when the reference names every instance) or a CloudFormation
  logical id. `scanner.model.graph.ResourceIndex.resolve*` turns both into resources of the same
  `scope`. A `Ref` to a VPC with attr `default_route_table_id` / `main_route_table_id` means that
  VPC's main route table.
- Coercion, by the declared type: `bool` (Terraform plans give launch template `encrypted` as
  "true"), `int` (`DesiredCapacity: "2"` becomes 2), `number`, `list` (`VPCZoneIdentifier` "a,b"
  becomes `["a", "b"]`), `dict` (a JSON policy document, parsed). A `price` stays as AWS spells
  it (a string, `"0.50"`); the compute view parses it (`scanner.compute.values.to_price`). A
  value that cannot be coerced is UNKNOWN with the reason (CloudFormation also gives a notice).
- `Resource.scope`: Terraform root module directory (plan: the directory the plan describes, else
  the plan file), CloudFormation template path, live `ACCOUNT/REGION`.
- `Resource.declared`: True for IaC, False for observed live state. Only the compute extractors
  read it; no policy does.
- `Resource.exists`: True, or UNKNOWN when IaC cannot say whether the resource will be created
  (an unknown `count`/`for_each`, a CloudFormation `Condition` that cannot be decided). Its own
  results are UNKNOWN, and so is a verdict that leans on it through a join (`Result.doubt`;
  see docs/maybe-resources.md).
- `Provenance.pricing_region`: IaC only, the region the input says it deploys to (CloudFormation
  `--region`, the Terraform aws provider's region, eksctl `metadata.region`), used only to price
  it; `Provenance.region` is where a resource was observed (live) and part of its identity.
- `Resource.name`: Name tag, LaunchTemplateName, AutoScalingGroupName, …; `aliases`: other strings
  that may refer to it (live id, name, ARN).
- `Resource.tags`: plain `dict[str, str]` (Terraform `tags`, CloudFormation `Tags` list, live tags).
"""

COMPUTE = """\
## The compute view

Each compute (or storage) kind registers one extractor in `scanner/compute/extractors/` that
builds its `ComputeView` once per resource: the instance types (or the GPU requirement when types
are chosen by attributes), the capacity (desired, min, max, weights), the purchase option
(spot offers with their max price, absolute or a percentage of on-demand; the on-demand base and
percentage and the on-demand/spot split of a group; the spot allocation strategy), the storage
devices with their encryption, the subnets and public-IP settings, and the launch templates it
uses; each fact with its attribute path. Differences between IaC and live state are decided
there (live: the observed public address, volumes carry encryption). What each kind's view
provides decides which policies judge it:

Adding a compute kind: declare it in a module of `scanner/kinds/` (attributes, types, its
Terraform and CloudFormation types, the facts it carries) and register its extractor in a module
of `scanner/compute/extractors/` (both found by discovery; `tests/test_compute_view.py` adds a
made-up kind this way). The CloudFormation source then reads and coerces it, the plan reader
knows its block keys, and every policy whose question applies judges it. What remains per
source: a translator in `scanner/sources/terraform/translate.py` (names only; the schema types
the values) and, live, a collector in `scanner/aws/collectors/` listed in `scanner/aws/registry.py`.
A kind read from a format of its own (Karpenter, eksctl, ParallelCluster) names it in
`Kind.formats`; its package in `scanner/sources/` has a stdlib `sniff` module the scan runs on
every YAML/JSON file and a `reader` imported only when the sniff matches
(`scanner/sources/scan.py`, `_read_data_file`); `scanner/sources/yaml_documents` reads the YAML.
Then `python -m scanner.compute.resource_model_doc --write`.

| kind | provides | reads |
|---|---|---|
"""


def _type(t: FieldType) -> str:
    parts = []
    if isinstance(t, Ref | Ids) and t.kinds:
        parts.append(("list of " if isinstance(t, Ids) else "") + "→ " + ", ".join(t.kinds))
    elif t.label:
        parts.append(t.label if not isinstance(t, Map) else f"map of {_type(t.value) or 'string'}")
    if t.doc:
        parts.append(t.doc)
    return "; ".join(p for p in parts if p)


def _fields(fields: dict[str, FieldType], depth: int, out: list[str]) -> None:
    pad = "  " * depth
    for name, t in fields.items():
        item = t
        suffix = ""
        while isinstance(item, List):
            suffix += "[]"
            item = item.item
        note = _type(t) if t is item else "; ".join(x for x in (_type(item), t.doc) if x)
        out.append(f"{pad}- `{name}{suffix}`" + (f" ({note})" if note else ""))
        if isinstance(item, Obj):
            _fields(dict(item.fields), depth + 1, out)


def _kind(k: Kind, s: Schema) -> list[str]:
    out = [f"### `{k.name}`", "", k.doc[0].upper() + k.doc[1:] + "."]
    meta = []
    if k.terraform:
        meta.append("Terraform: " + ", ".join(
            f"`{tf.type}`" + (f" ({tf.note})" if tf.note else "") for tf in k.terraform))
    if k.cloudformation:
        meta.append("CloudFormation: " + ", ".join(
            f"`{c.type}`" + (f" (`{'`, `'.join(f'{a}` → `{b}' for a, b in c.renames.items())}`)"
                             if c.renames else "") for c in k.cloudformation))
    if k.formats:
        meta.append(k.formats)
    if k.live:
        meta.append(f"Live: {k.live}")
    if k.facts:
        meta.append("Facts: " + ", ".join(f"`{f}`" for f in k.facts))
    out += ["", ". ".join(meta) + ".", ""] if meta else [""]
    lines: list[str] = []
    _fields(dict(k.attributes), 0, lines)
    for name in k.facts:
        f = s.facts[name]
        lines.append(f"- `{f.attribute}` ({_type(f.type)}; fact `{f.name}`, live)")
    return out + lines + [""]


def render(s: Schema | None = None) -> str:
    from scanner.compute import registry

    s = s or schema()
    out = [HEADER, "## Kinds", ""]
    for k in s.kinds.values():
        out += _kind(k, s)
    out += ["## Declared facts", "",
            "What a live collector adds to resources of other kinds, only when an enabled "
            "policy lists the fact in `needs` (a failed call is then a gap on that policy "
            "alone):", "", "| fact | adds | to | also fills |", "|---|---|---|---|"]
    for f in s.facts.values():
        fills = ", ".join(f"`{k}.{a}`" for k, a in f.fills) or "—"
        to = ", ".join(f"`{k}`" for k in s.kinds_with_fact(f.name))
        out.append(f"| `{f.name}` | `{f.attribute}`: {f.doc} | {to} | {fills} |")
    out += ["", COMPUTE.rstrip("\n")]
    for kind, ext in registry.registered().items():
        provides = ", ".join(c for c in ("launches", "places", "spot", "group", "pools",
                                         "devices", "devices_live", "measured")
                             if c in ext.provides)
        reads = ", ".join(f"`{r}`" for r in ext.reads) or "—"
        out.append(f"| `{kind}` | {provides} | {reads} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--write" in argv:
        DOC.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
