"""A Karpenter NodePool's requirements read as facts about the instance types it may launch:
the capacity types (on-demand, spot, reserved), whether every type it admits is GPU compute,
and how many distinct types it can draw from.

Requirements use Kubernetes' well-known labels (``node.kubernetes.io/instance-type``,
``karpenter.k8s.aws/instance-family``, ``-category``, ``-size``, ``-gpu-count``, ``-gpu-name``
…; EKS Auto Mode spells the latter ``eks.amazonaws.com/instance-*``) with the operators In,
NotIn, Exists, DoesNotExist, Gt, Lt (and Gte, Lte).

What a key bears on (:func:`bears_on_type`):

* the instance type: ``node.kubernetes.io/instance-type``, ``kubernetes.io/arch`` and Karpenter's
  ``karpenter.k8s.aws/instance-*`` labels (family, category, generation, size, cpu, memory,
  gpu-name / -count / -manufacturer / -memory, accelerator-*, hypervisor ...);
* the purchase: ``karpenter.sh/capacity-type`` (:func:`capacity_types`);
* nothing about the type: the zone and region, the NodePool and EC2NodeClass names, tenancy,
  capacity reservations and placement groups, ``kubernetes.io/os`` (every instance type runs
  Linux; the AMI decides the OS), and every other key (a label Karpenter puts on its nodes).
  A requirement on such a key, known or not, never blocks a judgement of the type.

A label of a type is evaluated only where it is certain: from the type's name (family,
category, size, generation) or from the catalogue's facts (vCPUs, architecture, a whole GPU
count, the GPU maker; memory and GPU memory only where a comparison is far from the threshold);
anything else counts as "cannot tell", so a count of admitted types is a true lower bound and a
count of types not excluded a true upper bound.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from scanner.catalog import InstanceSpec, default_catalog, family_of, is_gpu_type, is_neuron_type
from scanner.model import Unknown

CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
_AWS = "karpenter.k8s.aws/instance-"
FAMILY = _AWS + "family"
CATEGORY = _AWS + "category"
SIZE = _AWS + "size"
GENERATION = _AWS + "generation"
HYPERVISOR = _AWS + "hypervisor"
CPU = _AWS + "cpu"
MEMORY = _AWS + "memory"
GPU_COUNT = _AWS + "gpu-count"
GPU_NAME = _AWS + "gpu-name"
GPU_MANUFACTURER = _AWS + "gpu-manufacturer"
GPU_MEMORY = _AWS + "gpu-memory"
ACCELERATOR = (_AWS + "accelerator-name", _AWS + "accelerator-count",
               _AWS + "accelerator-manufacturer")
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
ALIASES = {"beta.kubernetes.io/instance-type": INSTANCE_TYPE, "beta.kubernetes.io/arch": ARCH,
           "beta.kubernetes.io/os": OS}
# EKS Auto Mode's NodePools spell Karpenter's instance labels under its own prefix.
_AUTO_MODE = "eks.amazonaws.com/instance-"


def _alias(key: str) -> str:
    if key.startswith(_AUTO_MODE):
        return _AWS + key[len(_AUTO_MODE):]
    return ALIASES.get(key, key)
# Well-known keys that do not narrow which instance types are launched.
PLACEMENT_KEYS = frozenset({
    CAPACITY_TYPE, "karpenter.sh/nodepool", "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region", "topology.k8s.aws/zone-id", _AWS + "tenancy",
    "karpenter.k8s.aws/capacity-reservation-id", "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-interruptible", "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/placement-group-id", "karpenter.k8s.aws/placement-group-partition"})
ALL_CAPACITY = frozenset({"spot", "on-demand", "reserved"})
GPU_CATEGORIES = frozenset({"p", "g", "gr", "dl", "inf", "trn"})
XEN_FAMILIES = frozenset({"p2", "p3", "g2", "g3", "g3s"})  # the rest of the GPU types: Nitro
# GPU names as Karpenter writes them (lower-case, from DescribeInstanceTypes) that the
# catalogue's model names are known to match exactly.
GPU_NAMES = frozenset({"t4", "t4g", "a10g", "l4", "l40s", "a100", "h100", "h200", "v100",
                       "b200"})
OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"})


class _Cannot:
    """A label value that cannot be told for a type."""


CANNOT = _Cannot()


@dataclass(frozen=True)
class Req:
    key: str
    op: str
    values: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class Requirements:
    """The parsed requirements: the known ones, and why some are not known (first reason)."""

    known: tuple[Req, ...]
    unknown: Unknown | None  # a requirement (or all of them) not known statically
    unknown_key: bool  # an unknown requirement whose key is not known (it may narrow anything)
    unknown_keys: frozenset[str]  # keys of requirements whose operator or values are unknown

    def of(self, key: str) -> list[Req]:
        return [r for r in self.known if r.key == key]


def parse(value: Any, path: str = "Requirements") -> Requirements:
    if isinstance(value, Unknown):
        return Requirements((), value, True, frozenset())
    if value is None:
        return Requirements((), None, False, frozenset())
    if not isinstance(value, list):
        return Requirements((), Unknown("the requirements are not a list"), True, frozenset())
    known: list[Req] = []
    unknown: Unknown | None = None
    unknown_key = False
    keys: set[str] = set()
    for i, item in enumerate(value):
        where = f"{path}[{i}]"
        if not isinstance(item, dict):
            unknown = _first(unknown, item if isinstance(item, Unknown)
                             else Unknown(f"{where} is not a requirement"))
            unknown_key = True
            continue
        key, op, values = item.get("Key"), item.get("Operator"), item.get("Values")
        if not isinstance(key, str):
            unknown = _first(unknown, key if isinstance(key, Unknown)
                             else Unknown(f"{where}: no key"))
            unknown_key = True
            continue
        key = _alias(key)
        if not isinstance(op, str) or op not in OPERATORS:
            unknown = _first(unknown, op if isinstance(op, Unknown)
                             else Unknown(f"{where}: operator {str(op)[:40]!r} is not known"))
            keys.add(key)
            continue
        if values is None:
            values = []
        if not isinstance(values, list) or any(not isinstance(v, str | int | float)
                                               or isinstance(v, bool) for v in values):
            why = values if isinstance(values, Unknown) else next(
                (v for v in values if isinstance(v, Unknown)), None) \
                if isinstance(values, list) else None
            unknown = _first(unknown, why if why is not None
                             else Unknown(f"{where}: values are not a list of text"))
            keys.add(key)
            continue
        known.append(Req(key, op, tuple(_text(v) for v in values), where))
    return Requirements(tuple(known), unknown, unknown_key, frozenset(keys))


def _first(have: Unknown | None, new: Unknown) -> Unknown:
    """The first reason found (an Unknown is falsy: never ``have or new``)."""
    return have if have is not None else new


def _text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


# -- capacity types ----------------------------------------------------------------------------


def capacity_types(reqs: Requirements) -> frozenset[str] | Unknown:
    """The capacity types the pool may launch; absent = on-demand (Karpenter's default)."""
    found: frozenset[str] | None = None
    for r in reqs.of(CAPACITY_TYPE):
        if r.op == "In":
            here = frozenset(r.values) & ALL_CAPACITY
        elif r.op == "NotIn":
            here = ALL_CAPACITY - frozenset(r.values)
        elif r.op == "Exists":
            here = ALL_CAPACITY
        else:
            here = frozenset()
        found = here if found is None else found & here
    if CAPACITY_TYPE in reqs.unknown_keys or (found is None and reqs.unknown_key):
        return reqs.unknown if reqs.unknown is not None else Unknown(
            "the capacity type is not known")
    return frozenset({"on-demand"}) if found is None else found


# -- the GPU fact ------------------------------------------------------------------------------


def _category(family: str) -> str:
    m = re.match(r"[a-z]+", family)
    return m.group(0) if m else family


def _is_gpu_category(category: str) -> bool:
    return category in GPU_CATEGORIES


@dataclass(frozen=True)
class GpuFact:
    gpu: bool | Unknown
    detail: str
    path: str


def gpu_fact(reqs: Requirements) -> GpuFact:
    """True when every type the requirements admit is GPU (or Neuron) compute, False when none
    is, Unknown when they admit both (Karpenter then launches a GPU type only for pods that
    request GPUs) or a requirement that would decide is not known."""
    requires: list[Req] = []
    excludes: list[Req] = []
    no_gpu = no_neuron = False
    r: Req | None
    for r in reqs.known:
        kind = _gpu_effect(r)
        if kind == "requires":
            requires.append(r)
        elif kind == "excludes":
            excludes.append(r)
        elif kind == "no-gpu":
            no_gpu = True
        elif kind == "no-neuron":
            no_neuron = True
    if excludes or (no_gpu and no_neuron):
        r = excludes[0] if excludes else None
        return GpuFact(False, _describe(r) if r else "GPU and accelerator labels excluded",
                       r.path if r else "Requirements")
    if requires:
        r = requires[0]
        return GpuFact(True, _describe(r), r.path)
    if reqs.unknown is not None and (reqs.unknown_key or any(bears_on_type(k)
                                                              for k in reqs.unknown_keys)):
        return GpuFact(Unknown(f"a requirement is not known: {reqs.unknown.reason}"), "",
                       "Requirements")
    return GpuFact(Unknown("its requirements admit GPU and non-GPU instance types (Karpenter "
                           "launches a GPU type only for pods that request GPUs)"), "",
                   "Requirements")


def _describe(r: Req) -> str:
    values = f" [{', '.join(r.values[:8])}{', …' if len(r.values) > 8 else ''}]" \
        if r.values else ""
    return f"{r.key} {r.op}{values}"


def _numbers(r: Req) -> list[float] | None:
    try:
        return [float(v) for v in r.values]
    except ValueError:
        return None


def _gpu_effect(r: Req) -> str | None:
    """What one requirement says about GPU compute: requires, excludes (every GPU and Neuron
    type), no-gpu (no GPU, Neuron possible), no-neuron, or None."""
    if r.op == "In" and r.values:
        if r.key == INSTANCE_TYPE:
            flags = {is_gpu_type(v) for v in r.values}
        elif r.key == FAMILY:
            flags = {is_gpu_type(f"{v}.x") for v in r.values}
        elif r.key == CATEGORY:
            flags = {_is_gpu_category(v) for v in r.values}
        else:
            flags = set()
        if flags == {True}:
            return "requires"
        if flags == {False}:
            return "excludes"
    if r.op == "NotIn" and r.key == CATEGORY and set(r.values) >= GPU_CATEGORIES:
        return "excludes"
    if r.key in (GPU_COUNT, GPU_NAME, GPU_MANUFACTURER, GPU_MEMORY) or r.key in ACCELERATOR:
        neuron = r.key in ACCELERATOR
        nums = _numbers(r) if r.key in (GPU_COUNT, GPU_MEMORY, ACCELERATOR[1]) else None
        if r.op == "Exists":
            return "requires"
        if r.op == "DoesNotExist":
            return "no-neuron" if neuron else "no-gpu"
        if r.op == "In" and r.values:
            if nums is not None and all(n <= 0 for n in nums):
                return "no-neuron" if neuron else "no-gpu"
            if nums is None or all(n >= 1 for n in nums):
                return "requires"
        if nums and r.op in ("Gt", "Gte", "Lt", "Lte"):
            n = nums[0]
            if (r.op == "Gt" and n >= 0) or (r.op == "Gte" and n >= 1):
                return "requires"
            if (r.op == "Lt" and n <= 1) or (r.op == "Lte" and n < 1):
                return "no-neuron" if neuron else "no-gpu"
    return None


# -- counting the types ------------------------------------------------------------------------


def _label(t: str, key: str, spec: InstanceSpec | None) -> Any:
    """The value of a label on a type: text, None (the type has no such label) or CANNOT."""
    family = family_of(t)
    if key == INSTANCE_TYPE:
        return t
    if key == FAMILY:
        return family
    if key == SIZE:
        return t.split(".", 1)[1] if "." in t else CANNOT
    if key == CATEGORY:
        return _category(family)
    if key == GENERATION:
        m = re.match(r"[a-z]+(\d+)", family)
        return m.group(1) if m else CANNOT
    if key == HYPERVISOR:
        if family in XEN_FAMILIES:
            return "xen"
        gen = re.match(r"[a-z]+(\d+)", family)
        if spec is not None or (gen is not None and int(gen.group(1)) >= 5):
            return "nitro"  # every family of the 5th generation and later runs on Nitro
        return CANNOT
    if key == OS:
        return CANNOT
    gpu = is_gpu_type(t)
    neuron = is_neuron_type(t)
    if key in (GPU_COUNT, GPU_NAME, GPU_MANUFACTURER):
        if not gpu or neuron:
            return None
        if spec is None:
            return CANNOT
        if key == GPU_COUNT:
            count = spec.gpu_count
            return str(int(count)) if count is not None and float(count).is_integer() else CANNOT
        if key == GPU_MANUFACTURER:
            return spec.gpu_vendor if spec.gpu_vendor == "nvidia" else CANNOT
        name = spec.gpu_model.lower()
        return name if name in GPU_NAMES else CANNOT
    if key == GPU_MEMORY:
        if not gpu or neuron:
            return None
        return _About(spec.gpu_mem_gib * 1024) if spec is not None and spec.gpu_mem_gib \
            else CANNOT
    if key in ACCELERATOR:
        if not neuron:
            return None
        return "aws" if key == ACCELERATOR[2] else CANNOT
    if key == ARCH:
        if spec is not None:
            return {"x86_64": "amd64", "arm64": "arm64"}.get(spec.arch, CANNOT)
        return _arch_by_name(family)
    if spec is None:
        return CANNOT
    if key == CPU:
        return str(spec.vcpu)
    if key == MEMORY and spec.mem_gib:
        return _About(spec.mem_gib * 1024)  # MiB, as Karpenter labels it
    return CANNOT


class _About(float):
    """A label value the catalogue knows to a few per cent (memory in MiB as EC2 reports it
    differs from the catalogue's GiB by rounding): a comparison far from it is decided, an
    exact match (In, NotIn) is not."""

    MARGIN = 0.05


def _arch_by_name(family: str) -> Any:
    """Graviton families carry a ``g`` after the generation (m6g, c7gn, im4gn, a1 aside);
    the others are x86 (mac and unusual names: cannot tell)."""
    if family == "a1":
        return "arm64"
    m = re.fullmatch(r"([a-z]+)(\d+)([a-z-]*)", family)
    if m is None or family.startswith("mac"):
        return CANNOT
    return "arm64" if "g" in m.group(3).split("-")[0] else "amd64"


@functools.lru_cache(maxsize=1)
def ec2_instance_types() -> tuple[str, ...]:
    """Every instance type name the EC2 API knows (botocore's service model; read once, about
    0.2 s, only when a NodePool's types are not settled by the GPU catalogue)."""
    try:
        import botocore.loaders

        model = botocore.loaders.Loader().load_service_model("ec2", "service-2")
        names = model["shapes"]["InstanceType"]["enum"]
    except Exception:  # an unusual botocore: count from the catalogue alone
        return ()
    return tuple(n for n in names if isinstance(n, str))


def bears_on_type(key: str) -> bool:
    """Does a requirement on this key narrow the instance types? (the type's own labels; see
    the module's doc for the keys that do not)"""
    key = _alias(key)
    if key in PLACEMENT_KEYS:
        return False
    return key in (INSTANCE_TYPE, ARCH, OS) or key.startswith(_AWS)


def _matches(r: Req, value: Any) -> bool | None:
    if r.key == OS:  # every type runs Linux: only another OS may narrow (cannot tell which)
        linux = "linux" in r.values
        if (r.op == "In" and linux) or (r.op == "NotIn" and not linux) or r.op == "Exists":
            return True
        return None
    if value is CANNOT:
        return None
    if isinstance(value, _About):
        return _about(r, value)
    if r.op == "In":
        return value is not None and value in r.values
    if r.op == "NotIn":
        return value is None or value not in r.values
    if r.op == "Exists":
        return value is not None
    if r.op == "DoesNotExist":
        return value is None
    if value is None:
        return False
    try:
        have, want = float(value), float(r.values[0])
    except (ValueError, IndexError):
        return None
    return {"Gt": have > want, "Lt": have < want, "Gte": have >= want,
            "Lte": have <= want}[r.op]


def _about(r: Req, value: float) -> bool | None:
    """A comparison with a value known to a few per cent: decided only far from the
    threshold."""
    try:
        want = float(r.values[0])
    except (ValueError, IndexError):
        return None
    low, high = value * (1 - _About.MARGIN), value * (1 + _About.MARGIN)
    if r.op in ("Gt", "Gte"):
        return True if low > want else False if high < want else None
    if r.op in ("Lt", "Lte"):
        return True if high < want else False if low > want else None
    return None


def admits(t: str, reqs: Requirements, spec: InstanceSpec | None) -> bool | None:
    """Does the pool admit type ``t``? True, False, or None (cannot tell)."""
    verdict: bool | None = True
    for r in reqs.known:
        if not bears_on_type(r.key):
            continue
        m = _matches(r, _label(t, r.key, spec))
        if m is False:
            return False
        if m is None:
            verdict = None
    if reqs.unknown is not None and (reqs.unknown_key or any(bears_on_type(k)
                                                             for k in reqs.unknown_keys)):
        return None if verdict is not False else False
    return verdict


@dataclass(frozen=True)
class TypeBounds:
    named: tuple[str, ...]  # the types named by an instance-type In requirement
    fewest: int  # distinct types certainly admitted (catalogue and named types)
    most: int | None  # at most this many (None: no bound)
    examples: tuple[str, ...]  # some of the types certainly admitted


ENOUGH = 16  # counting stops here: no organisation asks for more distinct types than this


def type_bounds(reqs: Requirements) -> TypeBounds:
    catalog = default_catalog().instances
    named: list[str] | None = None
    for r in reqs.of(INSTANCE_TYPE):
        if r.op == "In":
            here = list(dict.fromkeys(r.values))
            named = here if named is None else [t for t in named if t in here]
    sure: list[str] = []
    candidates: Iterable[str] = named if named is not None else sorted(catalog)
    for t in candidates:
        if admits(t, reqs, catalog.get(t)) is True:
            sure.append(t)
    if named is None and len(sure) < ENOUGH:
        for t in ec2_instance_types():
            if t not in catalog and admits(t, reqs, None) is True:
                sure.append(t)
                if len(sure) >= ENOUGH:
                    break
    most: int | None = None
    if named is not None:
        most = sum(1 for t in named if admits(t, reqs, catalog.get(t)) is not False)
    else:
        families = _in_values(reqs, FAMILY)
        sizes = _in_values(reqs, SIZE)
        if families is not None and sizes is not None:
            most = len(families) * len(sizes)
    return TypeBounds(tuple(named or ()), len(sure), most, tuple(sure[:8]))


def _in_values(reqs: Requirements, key: str) -> set[str] | None:
    found: set[str] | None = None
    for r in reqs.of(key):
        if r.op == "In":
            found = set(r.values) if found is None else found & set(r.values)
    return found
