"""Build the shipped GPU catalogue (scanner/catalog/gpu_instances.json, gpu_offerings_az.json).

Usage:
    python tools/build_catalog.py [--csv ../shared/reference/gpu_instances.csv]
                                  [--karpenter GIT_DIR_OR_GO_FILE] [--moto MOTO_EC2_RESOURCES]
                                  [--regional-prices tools/regional_prices_2026-01-21.json]

Every figure group of an entry names its source and date in ``figure_sources``:

- spec (vCPU, memory, accelerator model/count/memory, network, EFA, architecture): the
  reference CSV (each row keeps the source of its figures);
- price: karpenter-provider-aws's generated price list
  (``pkg/providers/pricing/zz_generated.pricing_aws.go``, us-east-1), commit and generation date
  recorded; without ``--karpenter`` the CSV's us-east-1 prices;
- model (memory bandwidth, BF16, FP8, Tensor Core generation): ``scanner/catalog/gpu_models.json``
  (one entry per accelerator model, each naming its vendor datasheet);
- interconnect: derived from the family, the model's vendor and the device count (``link_of``);
- offerings: moto's DescribeInstanceTypeOfferings dumps (per region and per zone ID).

The karpenter file publishes us-east-1 only (it has since its first version in 2022; the
cn-north-1 and us-gov-west-1 lists live in other files and are not commercial regions). Other
commercial regions come from ``--regional-prices``: tsaol/aws-gpu's ``data/*_instances.js``
(instances.vantage.sh data, dated by their "Last updated" line; a bare git dir, a folder, the
files, or the extract of them vendored under tools/ and written by ``--write-regional-prices``);
karpenter's newer us-east-1 price is kept where both have one, and a disagreement over 10 %
between the two is printed. ``--offers`` (AWS Price List files) win over both; ``gpuaudit
catalog refresh --region R`` reads the live Price List API; a report says when it priced a
region with us-east-1 prices. Every region's price carries its date (``price_dates``). The
shipped JSON never needs the CSV.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CSV = ROOT.parent / "shared" / "reference" / "gpu_instances.csv"
CATALOG_DIR = ROOT / "scanner" / "catalog"
OUT = CATALOG_DIR / "gpu_instances.json"
AZ_OUT = CATALOG_DIR / "gpu_offerings_az.json"
MODELS = CATALOG_DIR / "gpu_models.json"
KARPENTER_PATH = "pkg/providers/pricing/zz_generated.pricing_aws.go"
KARPENTER_DOCS = "website/content/en/docs/reference/instance-types.md"
# Karpenter's generated instance-type reference: its newest list, then the last list that still
# had the types AWS has since stopped returning (dl1 and p3 left the list in v1.13, fe623d537).
KARPENTER_DOC_REVS = ("HEAD", "fe623d537^")
EXCLUSIONS = ROOT / "tools" / "catalog_exclusions.json"
_GPU_FAMILY = re.compile(r"^(p|g|gr|dl|inf|trn)\d")
# karpenter's gpu-name / accelerator-name labels -> the model names DescribeInstanceTypes uses
DOC_MODEL_NAMES = {"radeon-pro-v520": "Radeon Pro V520", "gaudi-hl-205": "Gaudi HL-205",
                   "inferentia": "Inferentia", "inferentia2": "Inferentia2",
                   "trainium": "Trainium", "trainium2": "Trainium2", "h200": "H200",
                   "h100": "H100", "a100": "A100", "a10g": "A10G", "t4": "T4", "t4g": "T4g",
                   "l4": "L4", "l40s": "L40S", "v100": "V100", "b200": "B200", "b300": "B300"}
AS_OF = "2026-07-20"  # the date of the price list the reference cites

_REGION = re.compile(r'^\s*"([a-z]{2}(?:-[a-z]+)+-\d)":\s*\{', re.M)
_PRICE = re.compile(r'"([a-z0-9-]+\.[a-z0-9-]+)":\s*([0-9.]+)')
_GENERATED = re.compile(r"generated at (\d{4}-\d{2}-\d{2})T")
# Commercial partition: not cn-*, not us-gov-*, not the isolated iso regions.
_NOT_COMMERCIAL = re.compile(r"^(cn-|us-gov-|us-iso)")

# Families whose GPUs are joined all-to-all by NVSwitch, and those with NVLink but no switch.
NVSWITCH_FAMILIES = frozenset({"p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300",
                               "p6e-gb200", "p6e-gb300"})
NVLINK_FAMILIES = frozenset({"p3", "p3dn"})
LINK_RULE = ("interconnect rule (tools/build_catalog.py link_of): one device or less 'none'; "
             "p4d/p4de/p5/p5e/p5en/p6* 'nvswitch'; p3/p3dn 'nvlink'; AWS Neuron 'neuronlink'; "
             "Habana Gaudi 'roce'; any other 'pcie'")


def _num(text: str) -> float | None:
    text = text.strip()
    return float(text) if text else None


def vendor_of(gpu_model: str) -> str:
    """The accelerator vendor of a GPU model name (never recommended in place of another)."""
    model = gpu_model.lower()
    if model.startswith(("inferentia", "trainium")):
        return "aws-neuron"
    if "radeon" in model or model.startswith(("v520", "mi")):
        return "amd"
    if "gaudi" in model:
        return "habana"
    if "qualcomm" in model or model.startswith("ai100"):
        return "qualcomm"
    return "nvidia"


def family_of(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def link_of(instance_type: str, vendor: str, gpu_count: float | None) -> str:
    """How the accelerators of a type reach each other (scanner.catalog.INTERCONNECTS)."""
    if gpu_count is None or gpu_count <= 1:
        return "none"
    family = family_of(instance_type)
    if vendor == "aws-neuron":
        return "neuronlink"
    if vendor == "habana":
        return "roce"
    if family in NVSWITCH_FAMILIES:
        return "nvswitch"
    if family in NVLINK_FAMILIES:
        return "nvlink"
    return "pcie"


def load_models(path: Path = MODELS) -> dict[str, dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["models"]


def model_facts(models: dict[str, dict[str, Any]], gpu_model: str,
                gpu_mem_gib: float | None) -> tuple[dict[str, Any], str | None]:
    """(facts for the entry, their source) of an accelerator model; ({}, None) if not listed."""
    entry = models.get(gpu_model)
    if entry is None:
        return {}, None
    bandwidth = entry.get("mem_bandwidth_gbs")
    variants = entry.get("variants") or []
    if variants:
        # the variant whose memory is nearest the type's per-device memory
        if gpu_mem_gib is None:
            bandwidth = None
        else:
            bandwidth = min(variants, key=lambda v: abs(v["mem_gib"] - gpu_mem_gib))[
                "mem_bandwidth_gbs"]
    facts = {"gpu_mem_bandwidth_gbs": float(bandwidth) if bandwidth is not None else None,
             "bf16": entry["bf16"], "fp8": entry["fp8"],
             "tensor_core_gen": entry["tensor_core_gen"]}
    return facts, f"{entry['source']} (recorded {entry['recorded']})"


def read_csv(csv_path: Path) -> dict[str, dict[str, Any]]:
    instances: dict[str, dict[str, Any]] = {}
    with csv_path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            us_east_1 = _num(row["price_usd_hour_us_east_1"])
            instances[row["instance_type"]] = {
                "vcpu": int(row["vcpu"]),
                "mem_gib": _num(row["mem_gib"]),
                "arch": row["arch"],
                "gpu_model": row["gpu_model"],
                "gpu_vendor": vendor_of(row["gpu_model"]),
                "gpu_count": _num(row["gpu_count"]),
                "gpu_mem_gib": _num(row["gpu_mem_gib"]),
                "network_gbps": row["network_gbps"],
                "efa": row["efa"].strip().lower() == "true",
                "price_usd_hour": us_east_1,
                "prices": {"us-east-1": us_east_1} if us_east_1 is not None else {},
                "fp16_tflops_per_gpu": _num(row["fp16_dense_tflops_per_gpu"]),
                "source": row["source"],
            }
    return instances


def _csv_part(source: str, key: str) -> str:
    """The ``key:`` part of a CSV source text ("spec:...; price:...; fp16: ...")."""
    for part in source.split(";"):
        name, _, rest = part.strip().partition(":")
        if name.strip() == key:
            return rest.strip()
    return source


def parse_karpenter(text: str) -> dict[str, dict[str, float]]:
    """{region: {instance type: $/h}} from karpenter's generated Go map."""
    out: dict[str, dict[str, float]] = {}
    starts = [(m.group(1), m.end()) for m in _REGION.finditer(text)]
    for i, (region, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(text)
        out[region] = {t: float(p) for t, p in _PRICE.findall(text[start:end])}
    return out


def read_karpenter(source: Path) -> tuple[str, str, str]:
    """(Go source, commit, generation date) from a bare git dir or a plain .go file."""
    if source.is_dir():
        git = ["git", f"--git-dir={source}"]
        text = subprocess.run([*git, "show", f"HEAD:{KARPENTER_PATH}"], check=True,
                              capture_output=True, text=True).stdout
        commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                                text=True).stdout.strip()
    else:
        text, commit = source.read_text(), "unknown"
    found = _GENERATED.search(text)
    return text, commit, found.group(1) if found else AS_OF


# -- AWS Price List offers (bulk offer file JSON or CSV, or a pricing:GetProducts answer) -------

# The product an on-demand Linux price belongs to (as `gpuaudit catalog refresh` filters it).
_WANTED = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
           "capacitystatus": "Used"}
_CSV_COLUMNS = {"instanceType": "Instance Type", "regionCode": "Region Code",
                "operatingSystem": "Operating System", "tenancy": "Tenancy",
                "preInstalledSw": "Pre Installed S/W", "capacitystatus": "CapacityStatus",
                "licenseModel": "License Model", "usagetype": "usageType"}
Offers = dict[str, dict[str, float]]  # {region: {instance type: USD per hour}}


def _wanted(attrs: dict[str, Any], types: set[str]) -> bool:
    return (attrs.get("instanceType") in types and bool(attrs.get("regionCode"))
            and all(attrs.get(k) == v for k, v in _WANTED.items())
            and attrs.get("licenseModel", "No License required") == "No License required"
            and "BoxUsage" in str(attrs.get("usagetype", "BoxUsage")))


def _keep(out: Offers, attrs: dict[str, Any], usd: float) -> None:
    if usd > 0 and not _NOT_COMMERCIAL.match(attrs["regionCode"]):
        prices = out.setdefault(attrs["regionCode"], {})
        name = attrs["instanceType"]
        prices[name] = min(usd, prices.get(name, usd))


def _on_demand_usd(terms: Any) -> Iterable[float]:
    for term in (terms or {}).values():
        for dim in (term.get("priceDimensions") or {}).values():
            if str(dim.get("unit", "")).lower() in ("hrs", "hours"):
                yield float((dim.get("pricePerUnit") or {}).get("USD", 0))


def _offers_json(doc: Any, types: set[str]) -> tuple[Offers, str | None]:
    out: Offers = {}
    if isinstance(doc, dict) and "products" in doc:  # bulk offer file
        on_demand = (doc.get("terms") or {}).get("OnDemand") or {}
        for sku, product in doc["products"].items():
            attrs = product.get("attributes") or {}
            if _wanted(attrs, types):
                for usd in _on_demand_usd(on_demand.get(sku)):
                    _keep(out, attrs, usd)
        return out, str(doc.get("publicationDate") or "")[:10] or None
    pages = doc if isinstance(doc, list) else [doc]  # GetProducts answers (pages)
    dates: list[str] = []
    for page in pages:
        for raw in (page or {}).get("PriceList") or []:
            item = json.loads(raw) if isinstance(raw, str) else raw
            attrs = (item.get("product") or {}).get("attributes") or {}
            if _wanted(attrs, types):
                for usd in _on_demand_usd((item.get("terms") or {}).get("OnDemand")):
                    _keep(out, attrs, usd)
                if item.get("publicationDate"):
                    dates.append(str(item["publicationDate"])[:10])
    return out, max(dates) if dates else None


def _offers_csv(path: Path, types: set[str]) -> tuple[Offers, str | None]:
    """The bulk offer file's CSV form: five metadata rows, then one row per price (streamed)."""
    out: Offers = {}
    published = None
    with path.open(newline="", encoding="utf-8") as fh:
        rows = csv.reader(fh)
        for row in rows:
            if row and row[0] == "Publication Date":
                published = row[1][:10]
            if row and row[0] == "SKU":
                header = row
                break
        else:
            raise ValueError(f"{path}: no header row (SKU, OfferTermCode, ...)")
        col = {name: header.index(name) for name in
               [*_CSV_COLUMNS.values(), "TermType", "Unit", "PricePerUnit", "Currency"]}
        for row in rows:
            if len(row) < len(header) or row[col["TermType"]] != "OnDemand" \
                    or row[col["Currency"]] != "USD" \
                    or row[col["Unit"]].lower() not in ("hrs", "hours"):
                continue
            attrs = {key: row[col[name]] for key, name in _CSV_COLUMNS.items()}
            if _wanted(attrs, types):
                _keep(out, attrs, float(row[col["PricePerUnit"]] or 0))
    return out, published


def read_offers(path: Path, types: Iterable[str]) -> tuple[Offers, str | None]:
    """({region: {type: on-demand Linux USD/h}}, publication date) of ``types`` from an AWS
    Price List bulk offer file (JSON or CSV) or saved ``pricing get-products`` output."""
    wanted = set(types)
    with path.open("rb") as fh:
        head = fh.read(64).lstrip()
    if head.startswith((b'"FormatVersion"', b"FormatVersion")):
        return _offers_csv(path, wanted)
    return _offers_json(json.loads(path.read_text(encoding="utf-8")), wanted)


def apply_offers(instances: dict[str, dict[str, Any]], offers: Offers, source: str,
                 published: str | None = None) -> list[str]:
    """Set the offers' regional prices on ``instances``; the regions they priced."""
    for region, prices in offers.items():
        for name, usd in prices.items():
            entry = instances.get(name)
            if entry is not None:
                entry["prices"][region] = usd
                entry.setdefault("_price_sources", {})[region] = source
                if published:
                    entry.setdefault("_price_dates", {})[region] = published
    return sorted(offers)


# -- regional on-demand prices: tsaol/aws-gpu's data/*_instances.js (instances.vantage.sh) ------

REGIONAL_REPO = "tsaol/aws-gpu"
REGIONAL_GLOB = "data/*_instances.js"
REGIONAL_FORMAT = "gpuaudit regional on-demand prices v1"
MAX_REGIONAL_BYTES = 8 * 1024 * 1024  # the largest file (all_gpu_instances.js) is 150 kB
DISAGREEMENT = 0.10  # us-east-1: karpenter's price against the regional source's
_UPDATED = re.compile(r"^//\s*Last updated:\s*(\d{4}-\d{2}-\d{2})\s*$", re.M)
_JS_ARRAY = re.compile(r"^\s*(?:var|let|const)\s+[A-Za-z_$][\w$]*\s*=\s*(\[.*\])\s*;?\s*$",
                       re.S | re.M)
# A commercial region: two letters, one word, a number (eu-west-1, il-central-1); not a Local
# Zone or Wavelength Zone (us-west-2-lax-1, eu-west-3-wl1-cmn1), GovCloud or China.
_COMMERCIAL_REGION = re.compile(r"[a-z]{2}-[a-z]+-\d{1,2}")


class RegionalPrices:
    """{region: {type: USD/h}} of one regional source, its date and the text naming it."""

    def __init__(self, prices: Offers, updated: str, note: str, commit: str) -> None:
        self.prices, self.updated, self.note, self.commit = prices, updated, note, commit


def _js_array(text: str, where: str) -> tuple[list[Any], str]:
    """(the array, its "Last updated" date) of a ``var instanceData = [...];`` file, read as
    JSON (never evaluated)."""
    updated = _UPDATED.search(text)
    if updated is None:
        raise ValueError(f"{where}: no '// Last updated: YYYY-MM-DD' line: its prices cannot "
                         "be dated")
    found = _JS_ARRAY.search(text)
    if found is None:
        raise ValueError(f"{where}: no 'var NAME = [...];' array")
    try:
        rows = json.loads(found.group(1))
    except ValueError as exc:
        raise ValueError(f"{where}: the array is not JSON: {exc}") from None
    if not isinstance(rows, list):
        raise ValueError(f"{where}: expected an array of instance objects")
    return rows, updated.group(1)


def _regional_rows(rows: list[Any], where: str, types: set[str], out: Offers) -> None:
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(f"{where}: item {i}: expected an object")
        name = row.get("apiName")  # UltraServers (u-p6e-gb200x36) have none, and no price
        pricing = row.get("pricing") or {}
        if not isinstance(name, str) or name not in types or not isinstance(pricing, dict):
            continue
        for region, terms in pricing.items():
            if not (_COMMERCIAL_REGION.fullmatch(region) and not _NOT_COMMERCIAL.match(region)):
                continue
            usd = terms.get("onDemand") if isinstance(terms, dict) else None
            if isinstance(usd, bool) or not isinstance(usd, int | float) \
                    or not 0 < usd < 1e6:
                continue  # no on-demand price there (null, 0, text)
            prices = out.setdefault(region, {})
            if name in prices and prices[name] != usd:
                raise ValueError(f"{where}: {name} {region}: {usd} against {prices[name]} in "
                                 "another file: which is right is not known")
            prices[name] = float(usd)


def _js_sources(source: Path) -> tuple[list[tuple[str, str]], str]:
    """([(name, text)], commit) of the data files in a bare git dir, a folder or one file."""
    if source.is_dir() and (source / "HEAD").is_file() and (source / "objects").is_dir():
        git = ["git", f"--git-dir={source}"]
        names = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", "data/"],
                               check=True, capture_output=True, text=True).stdout.split()
        commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                                text=True).stdout.strip()
        wanted = [n for n in names if Path(n).match(REGIONAL_GLOB)]
        for name in wanted:  # the budget before the read
            size = int(subprocess.run([*git, "cat-file", "-s", f"HEAD:{name}"], check=True,
                                      capture_output=True, text=True).stdout)
            if size > MAX_REGIONAL_BYTES:
                raise ValueError(f"{source}:{name}: over {MAX_REGIONAL_BYTES} bytes")
        return [(n, subprocess.run([*git, "show", f"HEAD:{n}"], check=True,
                                   capture_output=True, text=True).stdout) for n in wanted], commit
    files = sorted(source.glob("*_instances.js")) if source.is_dir() else [source]
    out = []
    for path in files:
        if path.stat().st_size > MAX_REGIONAL_BYTES:
            raise ValueError(f"{path}: over {MAX_REGIONAL_BYTES} bytes")
        out.append((path.name, path.read_text(encoding="utf-8")))
    return out, "unknown"


def read_regional_prices(source: Path, types: Iterable[str]) -> RegionalPrices:
    """The on-demand prices of ``types`` in commercial regions from tsaol/aws-gpu's data files
    (a bare git dir, a folder, one ``*_instances.js``) or their extract (``.json``, written by
    ``write_regional_prices``). Dated by the oldest "Last updated" line of the files read."""
    wanted = set(types)
    if source.suffix == ".json":
        if source.stat().st_size > MAX_REGIONAL_BYTES:
            raise ValueError(f"{source}: over {MAX_REGIONAL_BYTES} bytes")
        doc = json.loads(source.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != REGIONAL_FORMAT:
            raise ValueError(f"{source}: not a regional price extract ('format' is not "
                             f"{REGIONAL_FORMAT!r})")
        rows = [{"apiName": t, "pricing": {r: {"onDemand": p} for r, p in by_region.items()}}
                for t, by_region in (doc.get("prices") or {}).items()]
        out: Offers = {}
        _regional_rows(rows, str(source), wanted, out)
        try:
            return RegionalPrices(out, str(doc["updated"]), str(doc["note"]),
                                  str(doc["commit"]))
        except KeyError as exc:
            raise ValueError(f"{source}: key {exc.args[0]!r} missing") from None
    files, commit = _js_sources(source)
    if not files:
        raise ValueError(f"{source}: no {REGIONAL_GLOB} files")
    out = {}
    dates = []
    for name, text in files:
        rows, updated = _js_array(text, f"{source}:{name}")
        _regional_rows(rows, f"{source}:{name}", wanted, out)
        dates.append(updated)
    updated = min(dates)
    note = (f"{REGIONAL_REPO}@{commit[:12]} {REGIONAL_GLOB} (instances.vantage.sh data, "
            f"updated {updated})")
    return RegionalPrices(out, updated, note, commit)


def write_regional_prices(found: RegionalPrices, path: Path) -> None:
    """The extract the build needs: {type: {region: USD/h}}, its source, commit and date."""
    by_type: dict[str, dict[str, float]] = {}
    for region, prices in found.prices.items():
        for name, usd in prices.items():
            by_type.setdefault(name, {})[region] = usd
    doc = {"format": REGIONAL_FORMAT, "note": found.note, "commit": found.commit,
           "updated": found.updated,
           "prices": {t: dict(sorted(r.items())) for t, r in sorted(by_type.items())}}
    path.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")


def apply_regional(instances: dict[str, dict[str, Any]], found: RegionalPrices
                   ) -> list[str]:
    """Set the regional prices the entries have none for (karpenter's newer us-east-1 price
    stays); the disagreements over 10 % with a price already there, as log lines."""
    disagree = []
    for region, prices in sorted(found.prices.items()):
        for name, usd in sorted(prices.items()):
            entry = instances.get(name)
            if entry is None:
                continue
            have = entry["prices"].get(region)
            if have is None:
                entry["prices"][region] = usd
                entry.setdefault("_price_sources", {})[region] = found.note
                entry.setdefault("_price_dates", {})[region] = found.updated
            elif abs(usd - have) > DISAGREEMENT * have:
                disagree.append(f"{name} {region}: {have:g} $/h kept, {found.note} says "
                                f"{usd:g} $/h ({(usd - have) / have:+.0%})")
    return disagree


# -- offerings (moto's DescribeInstanceTypeOfferings dumps) -------------------------------------

def moto_resources() -> Path | None:
    try:
        import moto
    except ImportError:
        return None
    return Path(moto.__file__).parent / "ec2" / "resources"


def moto_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("moto")
    except PackageNotFoundError:
        return "unknown"


def _offering_files(folder: Path) -> Iterable[tuple[str, list[dict[str, str]]]]:
    for path in sorted(folder.glob("*.json*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            yield path.name.split(".json")[0], json.load(fh)


def read_offerings(resources: Path, types: Iterable[str]
                   ) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """(regions covered, {type: regions}, {zone ID: types}) of ``types``."""
    wanted = set(types)
    regions: list[str] = []
    by_type: dict[str, list[str]] = {t: [] for t in wanted}
    for region, rows in _offering_files(resources / "instance_type_offerings" / "region"):
        regions.append(region)
        for row in rows:
            if row.get("InstanceType") in wanted:
                by_type[row["InstanceType"]].append(region)
    zones: dict[str, set[str]] = {}
    for _region, rows in _offering_files(resources / "instance_type_offerings" /
                                         "availability-zone-id"):
        for row in rows:
            if row.get("InstanceType") in wanted:
                zones.setdefault(row["Location"], set()).add(row["InstanceType"])
    return (sorted(regions), {t: sorted(r) for t, r in by_type.items()},
            {z: sorted(t) for z, t in sorted(zones.items())})


def moto_types(resources: Path) -> dict[str, dict[str, Any]]:
    with gzip.open(resources / "instance_types.json.gz", "rt", encoding="utf-8") as fh:
        return json.load(fh)


def moto_spec(info: dict[str, Any]) -> tuple[Any, ...]:
    """(vCPU, GiB, devices, GiB per device, EFA, model) as DescribeInstanceTypes gives them; a
    fractional GPU (Count 0) counts as its partition size."""
    devices = ((info.get("GpuInfo") or {}).get("Gpus")
               or (info.get("NeuronInfo") or {}).get("NeuronDevices")
               or (info.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or [{}])
    dev = devices[0]
    count = dev.get("Count") or dev.get("GpuPartitionSize")
    mib = (dev.get("MemoryInfo") or {}).get("SizeInMiB")
    return (info["VCpuInfo"]["DefaultVCpus"], info["MemoryInfo"]["SizeInMiB"] / 1024,
            float(count) if count is not None else None,
            round(mib / 1024, 2) if mib is not None else None,
            bool(info["NetworkInfo"].get("EfaSupported")), dev.get("Name"))


def moto_accelerated(types: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """moto's types with GPU, Neuron, inference, FPGA or media accelerators."""
    keys = ("GpuInfo", "NeuronInfo", "InferenceAcceleratorInfo", "FpgaInfo",
            "MediaAcceleratorInfo")
    return {n: i for n, i in types.items() if any(k in i for k in keys)}


_PERFORMANCE = re.compile(r"(?:Up to )?(?:(\d+)x )?([\d.]+) Gigabit")


def _network(info: dict[str, Any]) -> str:
    """Gbps as the reference CSV spells it, from NetworkPerformance ("Up to 10 Gigabit" -> 10,
    "16x 200 Gigabit" -> 3200); the text itself when it is not spelled so."""
    perf = str((info.get("NetworkInfo") or {}).get("NetworkPerformance", ""))
    found = _PERFORMANCE.fullmatch(perf)
    if not found:
        return perf
    return f"{float(found.group(2)) * int(found.group(1) or 1):g}"


def entry_from_moto(name: str, info: dict[str, Any], models: dict[str, dict[str, Any]]
                    ) -> dict[str, Any]:
    vcpu, mem_gib, count, dev_gib, efa, model = moto_spec(info)
    arch = (info.get("ProcessorInfo") or {}).get("SupportedArchitectures") or ["x86_64"]
    return {"vcpu": vcpu, "mem_gib": mem_gib, "arch": arch[0], "gpu_model": model,
            "gpu_vendor": vendor_of(model or ""), "gpu_count": count, "gpu_mem_gib": dev_gib,
            "network_gbps": _network(info), "efa": efa, "price_usd_hour": None, "prices": {},
            "fp16_tflops_per_gpu": _model_fp16(models, model)}


def _model_fp16(models: dict[str, dict[str, Any]], model: str | None) -> float | None:
    value = (models.get(model or "") or {}).get("fp16_tflops")
    return float(value) if value is not None else None


_DOC_TYPE = re.compile(r"^### `([a-z0-9-]+\.[a-z0-9-]+)`\s*$", re.M)
_DOC_ROW = re.compile(r"^\s*\|([^|]+)\|([^|]+)\|\s*$", re.M)


def parse_karpenter_docs(text: str) -> dict[str, dict[str, str]]:
    """{type: {label or resource: value}} from karpenter's instance-types.md."""
    out: dict[str, dict[str, str]] = {}
    marks = list(_DOC_TYPE.finditer(text))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        rows = {k.strip(): v.strip() for k, v in _DOC_ROW.findall(text[mark.end():end])}
        out[mark.group(1)] = rows
    return out


def entry_from_docs(name: str, rows: dict[str, str], models: dict[str, dict[str, Any]]
                    ) -> dict[str, Any] | None:
    label = "karpenter.k8s.aws/instance-"
    raw = rows.get(label + "gpu-name") or rows.get(label + "accelerator-name")
    if raw is None:
        return None
    model = DOC_MODEL_NAMES.get(raw, raw)
    count = rows.get(label + "gpu-count") or rows.get(label + "accelerator-count")
    dev_mib = rows.get(label + "gpu-memory")
    mbps = rows.get(label + "network-bandwidth")
    return {"vcpu": int(rows[label + "cpu"]), "mem_gib": int(rows[label + "memory"]) / 1024,
            "arch": {"amd64": "x86_64"}.get(rows.get("kubernetes.io/arch", ""),
                                            rows.get("kubernetes.io/arch", "")),
            "gpu_model": model, "gpu_vendor": vendor_of(model),
            "gpu_count": float(count) if count else None,
            "gpu_mem_gib": round(int(dev_mib) / 1024, 2) if dev_mib else None,
            "network_gbps": f"{int(mbps) / 1000:g}" if mbps else "",
            "efa": "vpc.amazonaws.com/efa" in rows, "price_usd_hour": None, "prices": {},
            "fp16_tflops_per_gpu": _model_fp16(models, model)}


def read_docs(git_dir: Path, rev: str) -> tuple[dict[str, dict[str, str]], str, str]:
    """(parsed docs, commit, commit date) of karpenter's instance-type reference at ``rev``."""
    git = ["git", f"--git-dir={git_dir}"]
    text = subprocess.run([*git, "show", f"{rev}:{KARPENTER_DOCS}"], check=True,
                          capture_output=True, text=True).stdout
    commit, date = subprocess.run([*git, "log", "-1", "--format=%h %cs", rev], check=True,
                                  capture_output=True, text=True).stdout.split()
    return parse_karpenter_docs(text), commit, date


def load_exclusions(path: Path = EXCLUSIONS) -> dict[str, str]:
    """{family: why the catalogue leaves it out} (not GPU compute, or retired)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {**doc["not_gpu"], **doc["retired"]}


def _git_date(git_dir: Path | None, rev: str) -> str | None:
    if git_dir is None or not git_dir.is_dir():
        return None
    done = subprocess.run(["git", f"--git-dir={git_dir}", "log", "-1", "--format=%cs", rev],
                          capture_output=True, text=True)
    return done.stdout.strip() or None if done.returncode == 0 else None


def spec_source(entry: dict[str, Any], info: dict[str, Any] | None, moto_source: str,
                karpenter: Path | None) -> str:
    """Where an entry's spec figures come from, with a date: the installed moto's dump when it
    agrees with them, else the reference CSV's source (a karpenter commit is dated from git)."""
    mine = (entry["vcpu"], entry["mem_gib"], entry["gpu_count"], entry["gpu_mem_gib"],
            entry["efa"], entry["gpu_model"])
    if info is not None and moto_spec(info) == mine:
        return moto_source
    text = _csv_part(entry["source"], "spec")
    found = re.search(r"aws/karpenter-provider-aws@([0-9a-f]{7,40}\^?)", text)
    date = _git_date(karpenter, found.group(1)) if found else None
    return f"{text} (commit of {date})" if date else text


# -- the catalogue ------------------------------------------------------------------------------

def _price_text(entry: dict[str, Any], base: str) -> str:
    """Where an entry's prices come from: per group of regions, the source and its date."""
    by_source: dict[str, list[str]] = {}
    extra = entry.pop("_price_sources", {})
    for region in sorted(entry["prices"]):
        by_source.setdefault(extra.get(region, base), []).append(region)
    if list(by_source) == [base]:
        return base
    return "; ".join(f"{', '.join(r)}: {src}" for src, r in by_source.items())


def _device_memory(entry: dict[str, Any], models: dict[str, dict[str, Any]]) -> str | None:
    """Set the per-device memory from the model's source where the instance data disagrees
    with it by more than 10 % (moto's dump gives Trainium2 512 GiB a chip; AWS's Neuron
    documentation 96 GiB); the note says so, else None."""
    model = models.get(entry.get("gpu_model") or "") or {}
    want, have = model.get("device_mem_gib"), entry.get("gpu_mem_gib")
    if want is None or have is None or abs(have - want) <= 0.1 * want:
        return None
    entry["gpu_mem_gib"] = float(want)
    return (f"device memory {want:g} GiB from {model['source']} (recorded "
            f"{model['recorded']}; the instance data says {have:g} GiB)")


def build(csv_path: Path, karpenter: Path | None, moto: Path | None = None,
          built: str = "2026-12-03", offers: Iterable[Path] = (),
          regional: Iterable[Path] = (), log: list[str] | None = None
          ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(catalogue document, per-zone offerings document or None); ``log`` gets the build's
    notes (the us-east-1 disagreements between karpenter and a regional source)."""
    log = log if log is not None else []
    instances = read_csv(csv_path)
    models = load_models()
    excluded = load_exclusions()
    moto = moto or moto_resources()
    known = moto_types(moto) if moto is not None else {}
    added: dict[str, str] = {}  # type -> spec source of the types the CSV does not have
    version = moto_version()
    types_source = (f"getmoto/moto {version} moto/ec2/resources/instance_types.json"
                    f" (DescribeInstanceTypes dump, installed {built})")
    for name, info in sorted(moto_accelerated(known).items()):
        if name in instances or family_of(name) in excluded:
            continue
        instances[name] = entry_from_moto(name, info, models)
        added[name] = types_source
    if karpenter is not None and karpenter.is_dir():
        for rev in KARPENTER_DOC_REVS:
            docs, commit, date = read_docs(karpenter, rev)
            for name, rows in sorted(docs.items()):
                if name in instances or not _GPU_FAMILY.match(name) \
                        or family_of(name) in excluded:
                    continue
                entry = entry_from_docs(name, rows, models)
                if entry is not None:
                    instances[name] = entry
                    added[name] = (f"aws/karpenter-provider-aws@{commit} {KARPENTER_DOCS} "
                                   f"(commit of {date})")
    for name, entry in instances.items():
        entry.setdefault("source", "")
        fixed = _device_memory(entry, models)
        if fixed:
            added[name] = f"{added.get(name, types_source)}; {fixed}"
    as_of, price_source = AS_OF, "aws/karpenter-provider-aws@1d927085 (generated 2026-07-20)"
    regions = ["us-east-1"]
    if karpenter is not None:
        text, commit, as_of = read_karpenter(karpenter)
        by_region = {r: p for r, p in parse_karpenter(text).items()
                     if not _NOT_COMMERCIAL.match(r)}
        regions = sorted(by_region)
        price_source = f"aws/karpenter-provider-aws@{commit[:12]} {KARPENTER_PATH} " \
                       f"(generated {as_of})"
        for name, entry in instances.items():
            prices = {r: by_region[r][name] for r in regions if name in by_region[r]}
            entry["prices"] = prices
            entry["price_usd_hour"] = prices.get("us-east-1")
    base_source, base_date = price_source, as_of
    dates = [as_of]
    notes = [base_source]  # each price source once, for "none: ..." texts
    for path in regional:
        got = read_regional_prices(path, instances)
        disagree = apply_regional(instances, got)
        log.extend(f"us-east-1 disagreement over {DISAGREEMENT:.0%}: {line}" for line in disagree)
        log.append(f"{got.note}: {sum(map(len, got.prices.values()))} prices in "
                   f"{len(got.prices)} regions")
        regions = sorted({*regions, *got.prices})
        price_source = f"{price_source}; {', '.join(sorted(got.prices))} from {got.note}"
        dates.append(got.updated)
        notes.append(got.note)
    for path in offers:
        found, published = read_offers(path, instances)
        if published is None:
            raise ValueError(f"{path}: no publication date: its prices cannot be dated")
        note = f"AWS Price List {path.name} (published {published})"
        regions = sorted({*regions, *apply_offers(instances, found, note, published)})
        price_source = f"{price_source}; {', '.join(sorted(found))} from {note}"
        dates.append(published)
        notes.append(note)
    as_of = min(dates)  # every price is at least this new
    for name, entry in instances.items():
        if name in added:
            entry["source"] = f"spec:{added[name]}; price:{price_source}"
        entry["price_usd_hour"] = entry["prices"].get("us-east-1")
        own = entry.pop("_price_dates", {})
        entry["price_dates"] = {r: own.get(r, base_date) for r in sorted(entry["prices"])}
        facts, model_source = model_facts(models, entry["gpu_model"], entry["gpu_mem_gib"])
        entry.update(facts)
        entry["interconnect"] = link_of(name, entry["gpu_vendor"], entry["gpu_count"])
        entry["figure_sources"] = {
            "spec": _csv_part(entry["source"], "spec"),
            "price": _price_text(entry, base_source) if entry["prices"] else
            f"none: no price for {name} in {'; '.join(notes)}",
            "model": model_source or f"none: {entry['gpu_model']} is not in gpu_models.json",
            "interconnect": f"{LINK_RULE} (recorded {built})",
        }
    doc: dict[str, Any] = {
        "source": "gpuaudit built-in catalogue (AWS Linux on-demand prices from "
                  "karpenter-provider-aws's generated price list"
                  + (" (us-east-1) and instances.vantage.sh data via tsaol/aws-gpu (other "
                     "regions)" if any(REGIONAL_REPO in n for n in notes) else "")
                  + "; specs from AWS/moto instance data)",
        "price_source": price_source,
        "as_of": as_of,
        "region": "us-east-1",
        "regions": regions,
        "instances": dict(sorted(instances.items())),
    }
    az_doc = None
    if moto is not None:
        covered, by_type, zones = read_offerings(moto, instances)
        source = (f"getmoto/moto {version} moto/ec2/resources/instance_type_offerings "
                  f"(DescribeInstanceTypeOfferings dumps, installed {built})")
        doc["offerings"] = {"source": source, "regions": covered}
        for name, entry in instances.items():
            entry["figure_sources"]["spec"] = added.get(name) or spec_source(
                entry, known.get(name), types_source, karpenter)
            if name in known:
                entry["offered_regions"] = by_type[name]
                entry["figure_sources"]["offerings"] = source
            else:
                entry["figure_sources"]["offerings"] = \
                    f"none: moto {moto_version()} does not list {name}"
        az_doc = {"source": source, "zones": zones}
    return doc, az_doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--karpenter", type=Path, default=None,
                        help="bare git dir of aws/karpenter-provider-aws, or the .go file")
    parser.add_argument("--moto", type=Path, default=None,
                        help="moto/ec2/resources (default: the installed moto's)")
    parser.add_argument("--offers", type=Path, action="append", default=[],
                        help="AWS Price List bulk offer file (AmazonEC2 index.json or "
                             "index.csv, one region or all) or saved `aws pricing get-products` "
                             "output; repeatable; its prices win over karpenter's")
    parser.add_argument("--regional-prices", type=Path, action="append", default=[],
                        help="tsaol/aws-gpu's data/*_instances.js (a bare git dir, a folder or "
                             "the files) or their extract (tools/regional_prices_*.json); "
                             "repeatable; karpenter's us-east-1 price is kept where both have it")
    parser.add_argument("--write-regional-prices", type=Path, default=None, metavar="JSON",
                        help="write the extract of the --regional-prices the catalogue's types "
                             "need (for vendoring under tools/)")
    parser.add_argument("--output", type=Path, default=OUT)
    parser.add_argument("--az-output", type=Path, default=AZ_OUT)
    args = parser.parse_args()
    log: list[str] = []
    if args.write_regional_prices is not None:
        if len(args.regional_prices) != 1:
            parser.error("--write-regional-prices takes exactly one --regional-prices")
        types = build(args.csv, args.karpenter, args.moto)[0]["instances"]
        write_regional_prices(read_regional_prices(args.regional_prices[0], types),
                              args.write_regional_prices)
        print(f"wrote {args.write_regional_prices}")
        return
    doc, az_doc = build(args.csv, args.karpenter, args.moto, offers=args.offers,
                        regional=args.regional_prices, log=log)
    for line in log:
        print(line)
    args.output.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if az_doc is not None:
        args.az_output.write_text(json.dumps(az_doc, separators=(",", ":"), sort_keys=True)
                                  + "\n")
    print(f"wrote {args.output}: {len(doc['instances'])} instance types, "
          f"prices for {', '.join(doc['regions'])} ({doc['price_source']})")


if __name__ == "__main__":
    main()
