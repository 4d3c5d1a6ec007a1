"""The GPU instance catalogue shipped with the package: specs and dated regional on-demand prices.

``gpu_instances.json`` is built by ``tools/build_catalog.py``; ``gpuaudit catalog refresh`` writes
a file of the same shape with the regions it read from the AWS Price List API (``--catalog``
uses it). ``price_usd_hour`` is the us-east-1 price; ``prices`` holds every region's and
``price_dates`` the date of each (``Catalog.price_date``).

Each type also carries what its accelerator model is (``gpu_mem_bandwidth_gbs`` per device,
``bf16``, ``fp8``, ``tensor_core_gen``, from ``gpu_models.json``), how its devices are joined
(``interconnect``, one of ``INTERCONNECTS``), where each group of figures comes from
(``figure_sources``: spec, price, model, interconnect, offerings -> source and date) and the
regions that offer it (``offered(region, az)``; per-zone offerings, by zone ID, are read from
``gpu_offerings_az.json`` only when a zone is asked about).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from scanner.model.money import HOURS_PER_MONTH

__all__ = ["CATALOG_FILE", "HOURS_PER_MONTH", "INTERCONNECTS", "Catalog", "CatalogError",
           "InstanceSpec", "Offerings", "default_catalog", "is_gpu_type", "is_neuron_type",
           "load_catalog", "region_name", "vendor_by_family"]

CATALOG_FILE = Path(__file__).with_name("gpu_instances.json")
AZ_OFFERINGS_FILE = Path(__file__).with_name("gpu_offerings_az.json")
BASE_REGION = "us-east-1"
# How a type's accelerators reach each other: NVSwitch (all-to-all NVLink), NVLink without a
# switch, AWS NeuronLink, RDMA over Ethernet on the chip (Habana Gaudi), the PCIe bus, or
# "none" (one device, or a fraction of one).
INTERCONNECTS = ("nvswitch", "nvlink", "neuronlink", "roce", "pcie", "none")
# The groups of figures an entry's ``figure_sources`` names a source for.
FIGURE_GROUPS = ("spec", "price", "model", "interconnect", "offerings")
_AZ_ID = re.compile(r"[a-z]{2,5}\d-az\d{1,2}")  # use1-az1: the same zone in every account

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


class Offerings:
    """Where types are offered: the regions the offerings source covers, and per zone ID
    (read from ``az_file`` the first time a zone is asked about)."""

    def __init__(self, source: str, regions: frozenset[str], az_file: Path | None = None):
        self.source = source
        self.regions = regions
        self._az_file = az_file
        self._zones: dict[str, frozenset[str]] | None = None

    def zones(self) -> dict[str, frozenset[str]]:
        """{zone ID: types offered there}; empty when there is no zone file."""
        if self._zones is None:
            zones: dict[str, frozenset[str]] = {}
            if self._az_file is not None and self._az_file.is_file():
                doc = json.loads(self._az_file.read_text(encoding="utf-8"))
                zones = {z: frozenset(t) for z, t in (doc.get("zones") or {}).items()}
            self._zones = zones
        return self._zones


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
    price_dates: dict[str, str] = field(default_factory=dict)  # region -> date of its price
    # per accelerator model (None: not known)
    gpu_mem_bandwidth_gbs: float | None = None  # per device, GB/s
    bf16: bool | None = None
    fp8: bool | None = None
    tensor_core_gen: int | None = None  # NVIDIA Tensor Core generation; None for other vendors
    interconnect: str | None = None  # one of INTERCONNECTS
    figure_sources: dict[str, str] = field(default_factory=dict)  # group -> "source (date)"
    offered_regions: tuple[str, ...] | None = None  # None: the offerings are not known
    offerings: Offerings | None = field(default=None, compare=False, repr=False)

    @property
    def family(self) -> str:
        return family_of(self.instance_type)

    def offered(self, region: str, az: str | None = None) -> bool | None:
        """Is this type offered in ``region`` (and in zone ``az``, a zone ID such as
        ``use1-az1``)? None when not known: no offerings for the type or the region, or a
        zone given by name (``us-east-1a`` maps to a different zone in each account)."""
        known = self.offerings
        if known is None or self.offered_regions is None or region not in known.regions:
            return None
        if region not in self.offered_regions:
            return False
        if az is None:
            return True
        zones = known.zones()
        if not _AZ_ID.fullmatch(az) or az not in zones:
            return None
        return self.instance_type in zones[az]


@dataclass(frozen=True)
class Catalog:
    source: str
    as_of: str
    region: str
    instances: dict[str, InstanceSpec]
    regions: tuple[str, ...] = (BASE_REGION,)
    price_source: str = ""
    offerings: Offerings | None = field(default=None, compare=False, repr=False)

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

    def price_date(self, instance_type: object, region: str) -> str | None:
        """The date of the on-demand price in ``region`` (a catalogue written without
        per-region dates: its ``as_of``, the oldest date its prices rest on); None when the
        catalogue has no price there."""
        if self.regional_price(instance_type, region) is None:
            return None
        spec = self.spec(instance_type)
        return (spec.price_dates.get(region) if spec else None) or self.as_of

    def offered(self, instance_type: object, region: str, az: str | None = None) -> bool | None:
        """``InstanceSpec.offered`` of a type; None for a type the catalogue lacks."""
        spec = self.spec(instance_type)
        return spec.offered(region, az) if spec else None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "as_of": self.as_of, "region": self.region}
        if self.regions != (BASE_REGION,):
            out["regions"] = list(self.regions)
        return out

    def to_doc(self) -> dict[str, Any]:
        """The catalogue as the JSON file spells it (``load_catalog`` reads it back)."""
        instances = {}
        for name, spec in sorted(self.instances.items()):
            entry = {k: v for k, v in spec.__dict__.items()
                     if k not in ("instance_type", "offerings")}
            entry["prices"] = dict(sorted(spec.prices.items()))
            entry["price_dates"] = dict(sorted(spec.price_dates.items()))
            if spec.offered_regions is not None:
                entry["offered_regions"] = list(spec.offered_regions)
            instances[name] = entry
        doc: dict[str, Any] = {
            "source": self.source, "price_source": self.price_source, "as_of": self.as_of,
            "region": self.region, "regions": sorted(self.regions), "instances": instances}
        if self.offerings is not None:
            doc["offerings"] = {"source": self.offerings.source,
                                "regions": sorted(self.offerings.regions)}
        return doc


_FIELDS = frozenset(InstanceSpec.__dataclass_fields__) - {"instance_type", "offerings"}


def _price(value: Any) -> bool:
    """An on-demand price a verdict can rest on: a finite number above zero (an infinite,
    NaN or zero price gave "max price 1 $/h is below 0.25 x on-demand (inf $/h)")."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and 0 < value < 1e6)


def _offerings(doc: dict[str, Any], where: str, az_file: Path | None) -> Offerings | None:
    raw = doc.get("offerings")
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("regions"), list):
        raise CatalogError(f"{where}: key 'offerings': expected an object with 'regions'")
    return Offerings(str(raw.get("source") or ""), frozenset(map(str, raw["regions"])), az_file)


def _check_entry(kwargs: dict[str, Any]) -> None:
    link = kwargs.get("interconnect")
    if link is not None and link not in INTERCONNECTS:
        raise TypeError(f"'interconnect' must be one of {', '.join(INTERCONNECTS)}")
    for key in ("bf16", "fp8"):
        if kwargs.get(key) is not None and not isinstance(kwargs[key], bool):
            raise TypeError(f"'{key}' must be true, false or null")
    regions = kwargs.get("offered_regions")
    if regions is not None:
        if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
            raise TypeError("'offered_regions' must be a list of region names")
        kwargs["offered_regions"] = tuple(regions)
    dates = kwargs.get("price_dates")
    if dates is None:
        kwargs.pop("price_dates", None)
    elif dates is not None and not (isinstance(dates, dict)
                                  and all(isinstance(v, str) for v in dates.values())):
        raise TypeError("'price_dates' must map regions to dates")
    sources = kwargs.get("figure_sources")
    if sources is not None and not (isinstance(sources, dict)
                                    and all(isinstance(v, str) for v in sources.values())):
        raise TypeError("'figure_sources' must map figure groups to source texts")


def catalog_from_doc(doc: Any, where: str, az_file: Path | None = None) -> Catalog:
    if not isinstance(doc, dict) or not isinstance(doc.get("instances"), dict):
        raise CatalogError(f"{where}: not a gpuaudit catalogue (no 'instances' object)")
    offerings = _offerings(doc, where, az_file)
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
            _check_entry(kwargs)
            instances[name] = InstanceSpec(instance_type=name, offerings=offerings, **kwargs)
        except TypeError as exc:
            raise CatalogError(f"{where}: key 'instances.{name}': {exc}") from exc
    try:
        return Catalog(str(doc["source"]), str(doc["as_of"]), str(doc.get("region", BASE_REGION)),
                       instances, tuple(doc.get("regions") or (BASE_REGION,)),
                       str(doc.get("price_source") or ""), offerings)
    except KeyError as exc:
        raise CatalogError(f"{where}: key '{exc.args[0]}' missing") from exc


MAX_CATALOG_BYTES = 64 * 1024 * 1024


def load_catalog(path: Path = CATALOG_FILE) -> Catalog:
    from scanner.inputs.safe_read import ReadError, read_regular

    try:
        # a regular file only (a FIFO given to --catalog would block the run forever)
        doc = json.loads(read_regular(path, limit=MAX_CATALOG_BYTES).decode("utf-8"))
    except ReadError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.reason}") from None
    except OSError as exc:
        raise CatalogError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CatalogError(f"{path}: not valid JSON: {exc}") from exc
    # the per-zone offerings beside the shipped catalogue belong to it alone
    az_file = AZ_OFFERINGS_FILE if path == CATALOG_FILE else None
    return catalog_from_doc(doc, str(path), az_file)


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    return load_catalog()
