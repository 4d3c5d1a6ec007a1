"""The paths a declarative policy reads: the resource's own attributes (the kind schema's
PascalCase spelling, ``LaunchTemplateData.InstanceType``), its identity and tags, and the fields
of its compute view (``compute.*``, the same on every source).

Every reader returns a value, a list of values (a path that crosses a list: each instance type of
a mixed group, each block device), ``None`` (not set) or an :class:`Unknown` with its reason.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from scanner.catalog import Catalog, family_of, is_gpu_type
from scanner.compute import ComputeView, SpotOffer
from scanner.model import Ref, Resource, Unknown

Reader = Callable[[Resource, "ComputeView | None", Catalog], Any]
TAGS = "tags."
COMPUTE = "compute."


@dataclass(frozen=True)
class Field:
    name: str
    doc: str
    read: Reader
    needs_view: bool = False


def _region(r: Resource, _v: ComputeView | None, _c: Catalog) -> Any:
    prov = r.provenance
    return prov.region or prov.pricing_region or Unknown(
        "the region it deploys to is not stated (Terraform: the aws provider's region; "
        "CloudFormation: --region)")


def _account(r: Resource, _v: ComputeView | None, _c: Catalog) -> Any:
    return r.provenance.account or Unknown(
        "the account is known only of resources observed in an account (gpuaudit audit)")


def _types(view: ComputeView) -> Any:
    values = list(view.types.values)
    if values:
        return values
    req = view.types.requirement
    if req is not None:
        detail = f" ({req.detail})" if req.detail else ""
        return Unknown(f"instance types are chosen by attributes{detail}")
    return None


def _instance_types(_r: Resource, view: ComputeView | None, _c: Catalog) -> Any:
    return None if view is None else _types(view)


def _map_types(view: ComputeView | None, fn: Callable[[str], Any], gpu_only: bool) -> Any:
    if view is None:
        return None
    types = _types(view)
    if not isinstance(types, list):
        return types
    out: list[Any] = []
    for t in types:
        if not isinstance(t, str):  # an unknown type may be a GPU type
            out.append(t if isinstance(t, Unknown) else Unknown("instance type not known"))
        elif not gpu_only or is_gpu_type(t):
            out.append(fn(t))
    return out or None


def _families(_r: Resource, view: ComputeView | None, _c: Catalog) -> Any:
    return _map_types(view, family_of, gpu_only=False)


def _gpu_families(_r: Resource, view: ComputeView | None, _c: Catalog) -> Any:
    return _map_types(view, family_of, gpu_only=True)


def _spec_field(attr: str) -> Reader:
    def read(_r: Resource, view: ComputeView | None, catalog: Catalog) -> Any:
        def one(t: str) -> Any:
            spec = catalog.spec(t)
            if spec is None:
                return Unknown(f"{t} is not in the GPU catalogue")
            value = getattr(spec, attr)
            return Unknown(f"the catalogue has no {attr} of {t}") if value is None else value
        return _map_types(view, one, gpu_only=True)
    return read


def _gpu(_r: Resource, view: ComputeView | None, _c: Catalog) -> Any:
    return None if view is None else view.types.gpu()


def _spot(_r: Resource, view: ComputeView | None, _c: Catalog) -> Any:
    if view is None:
        return None
    offers = view.purchase.spot
    if isinstance(offers, Unknown):
        return offers
    if offers or any(p.spot is True for p in view.purchase.pools):
        return True
    unknown = [p.spot for p in view.purchase.pools if isinstance(p.spot, Unknown)]
    if unknown:
        return unknown[0]
    return view.on_spot


def _purchase_option(r: Resource, view: ComputeView | None, c: Catalog) -> Any:
    if view is None:
        return None
    option = getattr(view.purchase, "option", None)  # the purchase options of the view
    if option is not None:
        return option
    spot = _spot(r, view, c)
    if isinstance(spot, Unknown):
        return spot
    split = view.purchase.split
    if spot and split is not None and not isinstance(split, Unknown) and split.on_demand:
        return "mixed"
    return "spot" if spot else "on-demand"


def _offer_cap(offer: SpotOffer, region: str | None, catalog: Catalog) -> Any:
    from scanner.pricing.prices import on_demand

    t = offer.instance_type
    if not isinstance(t, str):
        return t if isinstance(t, Unknown) else Unknown("instance type not known")
    price = on_demand(t, region, catalog)
    if offer.max_price_percent is None:
        cap = offer.cap(price.usd_hour or 0.0)
        if cap is not None:
            return cap
    if price.usd_hour is None:
        return Unknown(f"no catalogue price for {t}: its max price is a share of it")
    return offer.cap(price.usd_hour) if offer.max_price_percent is not None else price.usd_hour


def _spot_max_price(r: Resource, view: ComputeView | None, catalog: Catalog) -> Any:
    if view is None:
        return None
    from scanner.pricing.prices import on_demand, region_of

    offers = view.purchase.spot
    if isinstance(offers, Unknown):
        return offers
    region = region_of(r)
    if offers:
        return [_offer_cap(o, region, catalog) for o in offers]
    # spot pools without a max price of their own (a NodePool, a managed node group): the
    # cap is AWS's, the on-demand price of each type
    out: list[Any] = []
    for pool in view.purchase.pools:
        if pool.spot is not True:
            if isinstance(pool.spot, Unknown):
                out.append(pool.spot)
            continue
        if not pool.types:
            out.append(Unknown("the spot pools' instance types are chosen by attributes"))
        for t in pool.types:
            if not isinstance(t, str):
                out.append(t if isinstance(t, Unknown) else Unknown("instance type not known"))
                continue
            price = on_demand(t, region, catalog).usd_hour
            out.append(price if price is not None else Unknown(
                f"no catalogue price for {t}: its spot cap is the on-demand price"))
    return out or None


def _capacity(which: str) -> Reader:
    def read(_r: Resource, view: ComputeView | None, _c: Catalog) -> Any:
        if view is None or view.capacity is None:
            return None
        return getattr(view.capacity, which).value
    return read


FIELDS: dict[str, Field] = {f.name: f for f in (
    Field("kind", "the resource's kind (ec2.instance, autoscaling.group, …)",
          lambda r, _v, _c: r.kind),
    Field("id", "its identity: Terraform address, CloudFormation logical id, live id",
          lambda r, _v, _c: r.id),
    Field("name", "its name (Name tag, LaunchTemplateName, group name)",
          lambda r, _v, _c: r.name),
    Field("region", "where it runs (live) or deploys (the Terraform aws provider's region, "
          "CloudFormation --region); UNKNOWN when not stated", _region),
    Field("account", "the account id (live); UNKNOWN in IaC", _account),
    Field("compute.gpu", "true when it launches GPU or Neuron compute (by the type's family)",
          _gpu, True),
    Field("compute.spot", "true when it requests spot capacity", _spot, True),
    Field("compute.purchase_option", "on-demand, spot, mixed (and capacity-block, "
          "reservation-targeted, reservation-open where the view knows them)",
          _purchase_option, True),
    Field("compute.instance_types", "every instance type it can launch (a list)",
          _instance_types, True),
    Field("compute.instance_families", "the family of each type (g5, p4d, …)", _families, True),
    Field("compute.gpu_families", "the family of each GPU/accelerator type (g5, p4d, inf2, …)",
          _gpu_families, True),
    Field("compute.gpu_models", "the accelerator model of each GPU type (A10G, H100, …), from "
          "the catalogue", _spec_field("gpu_model"), True),
    Field("compute.gpu_count", "accelerators per instance of each GPU type",
          _spec_field("gpu_count"), True),
    Field("compute.gpu_memory_gib", "accelerator memory per instance (GiB) of each GPU type",
          _spec_field("gpu_mem_gib"), True),
    Field("compute.spot_max_price", "the max price of each spot offer in $/h (absent: AWS's "
          "cap, the on-demand price; a percentage: of the on-demand price)",
          _spot_max_price, True),
    Field("compute.capacity.desired", "desired capacity of a group", _capacity("desired"), True),
    Field("compute.capacity.min", "minimum size of a group", _capacity("min"), True),
    Field("compute.capacity.max", "maximum size of a group", _capacity("max"), True),
)}


def read_attribute(resource: Resource, path: str) -> Any:
    """An attribute path of the kind schema (``BlockDeviceMappings.Ebs.Encrypted``): lists are
    stepped into (each item read, and a list value gives its items); Unknown anywhere on the
    way is that Unknown; a reference to another resource's attribute is known only after
    apply."""
    current: list[Any] = [resource.attrs]
    fanned = False
    for part in path.split("."):
        nxt: list[Any] = []
        for value in current:
            if isinstance(value, list):
                fanned = True
            for item in _flat(value):
                if isinstance(item, Unknown):
                    nxt.append(item)
                elif isinstance(item, dict):
                    got = item.get(part)
                    if got is not None:
                        nxt.append(got)
                elif isinstance(item, Ref):
                    nxt.append(Unknown(f"{item} is known only after apply"))
        current = nxt
    out: list[Any] = []
    for value in current:
        if isinstance(value, list):
            fanned = True
        out.extend(_known(v) for v in _flat(value))
    if not fanned:
        return out[0] if out else None
    return out or None


def _flat(value: Any) -> list[Any]:
    if not isinstance(value, list):
        return [value]
    out: list[Any] = []
    for item in value:
        out.extend(_flat(item))
    return out


def _known(value: Any) -> Any:
    if isinstance(value, Ref):
        return Unknown(f"{value} is known only after apply")
    return value


def read_tag(resource: Resource, key: str, view: ComputeView | None = None) -> Any:
    """A tag's value: the resource's own, else that of a template it launches from whose kind
    declares ``Tags`` as the tags of what it launches (a NodePool's EC2NodeClass); Unknown when
    the tags it may be among are not known statically."""
    holders = [resource, *_tagging_templates(view)]
    for holder in holders:
        if key in holder.tags:
            return holder.tags[key]
    for holder in holders:
        doubt = tags_doubt(holder)
        if doubt is not None:
            return Unknown(f"tag {key}: {doubt}")
    return None


def _tagging_templates(view: ComputeView | None) -> list[Resource]:
    if view is None:
        return []
    from scanner.kinds import schema

    s = schema()
    return [use.template for use in view.templates
            if "Tags" in s.kinds[use.template.kind].attributes]


def tags_doubt(resource: Resource) -> str | None:
    """Why a tag absent from ``resource.tags`` may still be set: the tags (or a tag's value)
    are not known statically. None when the tags are known."""
    for name in ("Tags", "TagSpecifications"):
        raw = resource.attrs.get(name)
        if raw is not None and _has_unknown(raw):
            return f"its {name} are not all known ({_reason(raw)})"
    doubt = getattr(resource, "tags_unknown", None)  # set by sources that know
    if isinstance(doubt, Unknown):
        return doubt.reason or "its tags are not all known"
    return None


def _has_unknown(value: Any, depth: int = 0) -> bool:
    if isinstance(value, Unknown | Ref):
        return True
    if depth > 8:
        return False
    if isinstance(value, dict):
        return any(_has_unknown(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_has_unknown(v, depth + 1) for v in value)
    return False


def _reason(value: Any, depth: int = 0) -> str:
    if isinstance(value, Unknown):
        return value.reason or "not known"
    if isinstance(value, Ref):
        return f"{value} is known only after apply"
    if depth > 8:
        return "not known"
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) \
        else ()
    for item in items:
        if _has_unknown(item, depth + 1):
            return _reason(item, depth + 1)
    return "not known"


# -- validation of paths against the kind schema ----------------------------------------------


def kind_paths(kind: str) -> list[str]:
    """Every attribute path the kind schema declares for ``kind`` (lists stepped into)."""
    from scanner.kinds import schema
    from scanner.kinds.types import List, Map, Obj

    out: list[str] = []

    def walk(prefix: str, t: Any, depth: int) -> None:
        while isinstance(t, List):
            t = t.item
        if isinstance(t, Obj) and depth < 12:
            for name, sub in t.fields.items():
                path = f"{prefix}{name}"
                out.append(path)
                walk(path + ".", sub, depth + 1)
        elif isinstance(t, Map):
            out.append(f"{prefix}KEY")

    for name, t in schema().fields(kind).items():
        out.append(name)
        walk(name + ".", t, 1)
    return out


def view_kinds() -> frozenset[str]:
    from scanner.compute import registry

    return frozenset(registry.registered())


def check_path(path: str, kinds: Iterable[str]) -> str | None:
    """None when ``path`` is readable on at least one of ``kinds``; else why not, with the
    nearest valid path."""
    from scanner.kinds import schema

    kinds = list(kinds)
    if path.startswith(TAGS):
        return None if len(path) > len(TAGS) else "tags. needs a tag key (tags.Owner)"
    if path in FIELDS:
        fld = FIELDS[path]
        if fld.needs_view and not view_kinds().intersection(kinds):
            return (f"{path} is a compute view field, and none of the kinds "
                    f"({', '.join(kinds)}) has a compute view")
        return None
    s = schema()
    for kind in kinds:
        if _declared(s, kind, path):
            return None
    candidates = sorted({*FIELDS, "tags.KEY", *(p for k in kinds for p in kind_paths(k))})
    near = difflib.get_close_matches(path, candidates, n=1, cutoff=0.5)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return (f"{path!r} is not an attribute of {', '.join(kinds)} nor a compute view field"
            f"{hint} (gpuaudit policies paths lists them)")


def _declared(s: Any, kind: str, path: str) -> bool:
    from scanner.kinds.types import Map

    if s.attribute(kind, path) is not None:
        return True
    # a path into a map ("Tags.Team") is declared when its parent is a map
    parent, _, _last = path.rpartition(".")
    return bool(parent) and isinstance(s.attribute(kind, parent), Map)
