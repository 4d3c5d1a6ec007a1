"""The shipped catalogue with the facts a right-sizing move must keep pinned for the tests:
interconnect, per-GPU memory bandwidth (GB/s), BF16, FP8, Tensor Core generation and the
offering (us-east-1 for every type; us-west-2 and eu-west-1 where the shipped catalogue
says). Figures are NVIDIA's datasheet values
(V100 SXM2 900 GB/s, T4 320, A10G 600, A100 40GB 1555 / 80GB 2039, L4 300, L40S 864, H100 SXM
3350, H200 4800, B200/B300 8000, RTX PRO 6000 Blackwell Server 1597).

Pinned here so the tests do not move when the shipped figures are refreshed.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Any

from scanner.catalog import Catalog, InstanceSpec, Offerings, default_catalog
from scanner.model import Resource

# model: (bf16, fp8, tensor core generation, GB/s per GPU)
MODELS: dict[str, tuple[bool, bool, int, float]] = {
    "V100": (False, False, 1, 900.0), "T4": (False, False, 2, 320.0),
    "T4g": (False, False, 2, 320.0), "A10G": (True, False, 3, 600.0),
    "A100": (True, False, 3, 1555.0), "L4": (True, True, 4, 300.0),
    "L40S": (True, True, 4, 864.0), "H100": (True, True, 4, 3350.0),
    "H200": (True, True, 4, 4800.0), "B200": (True, True, 5, 8000.0),
    "B300": (True, True, 5, 8000.0), "RTX PRO Server 6000": (True, True, 5, 1597.0)}
BANDWIDTH_BY_TYPE = {"p4de.24xlarge": 2039.0}
# every region the shipped offerings cover, and us-east-1 for every type (no zone file)
OFFERINGS = Offerings("tests", frozenset({"us-east-1", "us-west-2", "eu-west-1"}))


def interconnect_of(spec: InstanceSpec) -> str:
    if spec.gpu_vendor == "aws-neuron":
        return "neuronlink"
    if not spec.gpu_count or spec.gpu_count <= 1:
        return "none"
    if spec.family.startswith(("p4", "p5", "p6")):
        return "nvswitch"
    if spec.family.startswith("p3"):
        return "nvlink"
    return "pcie"


def set_facts(spec: InstanceSpec, **values: Any) -> InstanceSpec:
    return dataclasses.replace(spec, **values)


def facts_of(spec: InstanceSpec) -> dict[str, Any]:
    model = MODELS.get(spec.gpu_model)
    regions = tuple(sorted({*(spec.offered_regions or ()), "us-east-1"}))
    out: dict[str, Any] = {"interconnect": interconnect_of(spec), "offered_regions": regions,
                           "offerings": OFFERINGS}
    if model is not None:
        bf16, fp8, gen, bandwidth = model
        out |= {"bf16": bf16, "fp8": fp8, "tensor_core_gen": gen,
                "gpu_mem_bandwidth_gbs": BANDWIDTH_BY_TYPE.get(spec.instance_type, bandwidth)}
    return out


def with_facts(catalog: Catalog, overrides: dict[str, dict[str, Any]] | None = None) -> Catalog:
    """``catalog`` with every type's facts set; ``overrides`` maps an instance type to facts
    replaced on it."""
    named = overrides or {}
    instances = {}
    for name, spec in catalog.instances.items():
        values = facts_of(spec) | named.get(name, {})
        instances[name] = set_facts(spec, **values)
    return dataclasses.replace(catalog, instances=instances)


@lru_cache(maxsize=1)
def facts_catalog() -> Catalog:
    return with_facts(default_catalog())


def without(catalog: Catalog, instance_type: str, *names: str) -> Catalog:
    """``catalog`` with facts of one type removed (None: the catalogue does not hold them)."""
    spec = catalog.instances[instance_type]
    instances = dict(catalog.instances)
    instances[instance_type] = set_facts(spec, **dict.fromkeys(names))
    return dataclasses.replace(catalog, instances=instances)


def in_region(resource: Resource, region: str = "us-east-1") -> Resource:
    """``resource`` deployed to ``region`` (as the Terraform provider's region says), unless its
    provenance already names one."""
    prov = resource.provenance
    if prov.region or prov.pricing_region:
        return resource
    return dataclasses.replace(resource, provenance=dataclasses.replace(
        prov, pricing_region=region))
