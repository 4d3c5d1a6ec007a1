"""The GPU instance catalogue shipped with the package: specs and dated regional on-demand prices.

``gpu_instances.json`` is built by ``tools/build_catalog.py``; ``gpuaudit catalog refresh`` writes
a file of the same shape with the regions it read from the AWS Price List API (``--catalog``
uses it). ``price_usd_hour`` is the us-east-1 price; ``prices`` holds every region's.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from scanner.pricing.money import HOURS_PER_MONTH

__all__ = ["CATALOG_FILE", "HOURS_PER_MONTH", "Catalog", "CatalogError", "InstanceSpec",
           "default_catalog", "is_gpu_type", "is_neuron_type", "load_catalog", "region_name",
           "vendor_by_family"]

CATALOG_FILE = Path(__file__).with_name("gpu_instances.json")
BASE_REGION = "us-east-1"

# GPU compute is decided by the family prefix, so a type missing from the catalogue still counts.
_GPU_FAMILY = re.compile(r"^(p|g|gr|dl|inf|trn)\d")
_NEURON_FAMILY = re.compile(r"^(inf|trn)\d")
_REGION = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")  # us-east-1, us-gov-west-1, ap-southeast-2


def region_name(value: object) -> str | None:
    """``value`` when it is spelled like an AWS region name, else None (a region an input gives
    for pricing: anything else is not a region to price in)."""
    return value if isinstance(value, str) and _REGION.fullmatch(value) else None


class CatalogError(Exception):
    """A catalogue file that cannot be used (the message names the file and why)."""


def is_gpu_type(instance_type: object) -> bool:
    return isinstance(instance_type, str) and _is_gpu_name(instance_type)


@lru_cache(maxsize=4096)
def _is_gpu_name(name: str) -> bool:
    return bool(_GPU_FAMILY.match(name.strip()))


def is_neuron_type(instance_type: object) -> bool:
    return isinstance(instance_type, str) and bool(_NEURON_FAMILY.match(instance_type.strip()))


# Accelerator vendors of GPU families the catalogue does not list (AMD Radeon Pro V520, Habana
# Gaudi, Qualcomm AI 100); any other GPU family is NVIDIA, inf*/trn* AWS Neuron.
_VENDOR_BY_FAMILY = {"g4ad": "amd", "dl1": "habana", "dl2q": "qualcomm"}


def vendor_by_family(instance_type: str) -> str:
    """The accelerator vendor of a GPU type the catalogue does not list, from its family."""
    if is_neuron_type(instance_type):
        return "aws-neuron"
    return _VENDOR_BY_FAMILY.get(family_of(instance_type.strip()), "nvidia")


def family_of(instance_type: str) -> str:
    """``g5.2xlarge`` -> ``g5``; ``p6-b200.48xlarge`` -> ``p6-b200``."""
    return instance_type.split(".", 1)[0]


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
    gpu_vendor: str = "nvidia"
    prices: dict[str, float] = field(default_factory=dict)

    @property
    def family(self) -> str:
        return family_of(self.instance_type)


@dataclass(frozen=True)
class Catalog:
    source: str
    as_of: str
    region: str
    instances: dict[str, InstanceSpec]
    regions: tuple[str, ...] = (BASE_REGION,)
    price_source: str = ""

    def spec(self, instance_type: object) -> InstanceSpec | None:
        if not isinstance(instance_type, str):
            return None
        return self.instances.get(instance_type.strip())

    def price(self, instance_type: object) -> float | None:
        """The us-east-1 on-demand price (see ``scanner.pricing.price`` for other regions)."""
        spec = self.spec(instance_type)
        return spec.price_usd_hour if spec else None

    def regional_price(self, instance_type: object, region: str) -> float | None:
        """The on-demand price in ``region``; None when the catalogue has none there."""
        spec = self.spec(instance_type)
        if spec is None:
            return None
        if region == BASE_REGION and BASE_REGION not in spec.prices:
            return spec.price_usd_hour
        return spec.prices.get(region)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "as_of": self.as_of, "region": self.region}
        if self.regions != (BASE_REGION,):
            out["regions"] = list(self.regions)
        return out

    def to_doc(self) -> dict[str, Any]:
        """The catalogue as the JSON file spells it (``load_catalog`` reads it back)."""
        instances = {}
        for name, spec in sorted(self.instances.items()):
            entry = {k: v for k, v in spec.__dict__.items() if k != "instance_type"}
            entry["prices"] = dict(sorted(spec.prices.items()))
            instances[name] = entry
        return {"source": self.source, "price_source": self.price_source, "as_of": self.as_of,
                "region": self.region, "regions": sorted(self.regions), "instances": instances}


_FIELDS = frozenset(InstanceSpec.__dataclass_fields__) - {"instance_type"}


def _price(value: Any) -> bool:
    """An on-demand price a verdict can rest on: a finite number above zero (an infinite,
    NaN or zero price gave "max price 1 $/h is below 0.25 x on-demand (inf $/h)")."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and 0 < value < 1e6)


def catalog_from_doc(doc: Any, where: str) -> Catalog:
    if not isinstance(doc, dict) or not isinstance(doc.get("instances"), dict):
        raise CatalogError(f"{where}: not a gpuaudit catalogue (no 'instances' object)")
    instances: dict[str, InstanceSpec] = {}
    for name, values in doc["instances"].items():
        if not isinstance(values, dict):
            raise CatalogError(f"{where}: key 'instances.{name}': expected an object")
        try:
            kwargs = {k: v for k, v in values.items() if k in _FIELDS}
            prices = kwargs.get("prices") or {}
            if not isinstance(prices, dict) or not all(_price(p) for p in prices.values()):
                raise TypeError("'prices' must map regions to positive finite numbers")
            if kwargs.get("price_usd_hour") is not None and not _price(kwargs["price_usd_hour"]):
                raise TypeError("'price_usd_hour' must be a positive finite number")
            for key, value in kwargs.items():
                if isinstance(value, float) and not math.isfinite(value):
                    raise TypeError(f"'{key}' is not a finite number")
            if not prices and kwargs.get("price_usd_hour") is not None:
                prices = {BASE_REGION: kwargs["price_usd_hour"]}
            kwargs["prices"] = {str(r): float(p) for r, p in prices.items()}
            instances[name] = InstanceSpec(instance_type=name, **kwargs)
        except TypeError as exc:
            raise CatalogError(f"{where}: key 'instances.{name}': {exc}") from exc
    try:
        return Catalog(str(doc["source"]), str(doc["as_of"]), str(doc.get("region", BASE_REGION)),
                       instances, tuple(doc.get("regions") or (BASE_REGION,)),
                       str(doc.get("price_source") or ""))
    except KeyError as exc:
        raise CatalogError(f"{where}: key '{exc.args[0]}' missing") from exc


MAX_CATALOG_BYTES = 64 * 1024 * 1024


def load_catalog(path: Path = CATALOG_FILE) -> Catalog:
    from scanner.safe_read import ReadError, read_regular

    try:
        # a regular file only (a FIFO given to --catalog would block the run forever)
        doc = json.loads(read_regular(path, limit=MAX_CATALOG_BYTES).decode("utf-8"))
    except ReadError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.reason}") from None
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CatalogError(f"{path}: not valid JSON: {exc}") from exc
    return catalog_from_doc(doc, str(path))


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    return load_catalog()
