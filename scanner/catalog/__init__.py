"""The GPU instance catalogue shipped with the package: specs and dated on-demand prices."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

HOURS_PER_MONTH = 730
CATALOG_FILE = Path(__file__).with_name("gpu_instances.json")

# GPU compute is decided by the family prefix, so a type missing from the catalogue still counts.
_GPU_FAMILY = re.compile(r"^(p|g|gr|dl|inf|trn)\d")
_NEURON_FAMILY = re.compile(r"^(inf|trn)\d")


def is_gpu_type(instance_type: object) -> bool:
    return isinstance(instance_type, str) and _is_gpu_name(instance_type)


@lru_cache(maxsize=4096)
def _is_gpu_name(name: str) -> bool:
    return bool(_GPU_FAMILY.match(name.strip()))


def is_neuron_type(instance_type: object) -> bool:
    return isinstance(instance_type, str) and bool(_NEURON_FAMILY.match(instance_type.strip()))


@dataclass(frozen=True)
class InstanceSpec:
    instance_type: str
    vcpu: int
    mem_gib: float | None
    arch: str
    gpu_model: str
    gpu_count: float | None
    gpu_mem_gib: float | None
    efa: bool
    network_gbps: str
    price_usd_hour: float | None
    fp16_tflops_per_gpu: float | None
    source: str


@dataclass(frozen=True)
class Catalog:
    source: str
    as_of: str
    region: str
    instances: dict[str, InstanceSpec]

    def spec(self, instance_type: object) -> InstanceSpec | None:
        if not isinstance(instance_type, str):
            return None
        return self.instances.get(instance_type.strip())

    def price(self, instance_type: object) -> float | None:
        spec = self.spec(instance_type)
        return spec.price_usd_hour if spec else None

    def describe(self) -> dict[str, Any]:
        return {"source": self.source, "as_of": self.as_of, "region": self.region}


def load_catalog(path: Path = CATALOG_FILE) -> Catalog:
    doc = json.loads(path.read_text())
    instances = {
        name: InstanceSpec(instance_type=name, **values)
        for name, values in doc["instances"].items()
    }
    return Catalog(doc["source"], doc["as_of"], doc["region"], instances)


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    return load_catalog()
