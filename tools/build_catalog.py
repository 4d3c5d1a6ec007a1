"""Build the shipped GPU catalogue (scanner/catalog/gpu_instances.json).

Usage:
    python tools/build_catalog.py [--csv ../shared/reference/gpu_instances.csv]
                                  [--karpenter GIT_DIR_OR_GO_FILE]

Specs, CPU architecture and dense FP16 TFLOPS come from the reference CSV (each entry keeps the
source of its figures). Regional Linux on-demand prices come from karpenter-provider-aws's
generated price list (``pkg/providers/pricing/zz_generated.pricing_aws.go``): every region that
file holds is extracted for the GPU/accelerator types, and the commit and generation date are
recorded. Without ``--karpenter`` the CSV's us-east-1 prices are used.

The karpenter file publishes us-east-1 only (it has since its first version in 2022; the
cn-north-1 and us-gov-west-1 lists live in other files and are not commercial regions). Other
regions are priced by ``gpuaudit catalog refresh --region R`` from the AWS Price List API; a
report says when it priced a region with us-east-1 prices. The shipped JSON never needs the CSV.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CSV = ROOT.parent / "shared" / "reference" / "gpu_instances.csv"
OUT = ROOT / "scanner" / "catalog" / "gpu_instances.json"
KARPENTER_PATH = "pkg/providers/pricing/zz_generated.pricing_aws.go"
AS_OF = "2026-07-20"  # the date of the price list the reference cites

_REGION = re.compile(r'^\s*"([a-z]{2}(?:-[a-z]+)+-\d)":\s*\{', re.M)
_PRICE = re.compile(r'"([a-z0-9-]+\.[a-z0-9-]+)":\s*([0-9.]+)')
_GENERATED = re.compile(r"generated at (\d{4}-\d{2}-\d{2})T")
# Commercial partition: not cn-*, not us-gov-*, not the isolated iso regions.
_NOT_COMMERCIAL = re.compile(r"^(cn-|us-gov-|us-iso)")


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


def build(csv_path: Path, karpenter: Path | None) -> dict[str, Any]:
    instances = read_csv(csv_path)
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
    return {
        "source": "gpuaudit built-in catalogue (AWS Linux on-demand prices from "
                  "karpenter-provider-aws's generated price list; specs from AWS/moto instance "
                  "data)",
        "price_source": price_source,
        "as_of": as_of,
        "region": "us-east-1",
        "regions": regions,
        "instances": dict(sorted(instances.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--karpenter", type=Path, default=None,
                        help="bare git dir of aws/karpenter-provider-aws, or the .go file")
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args()
    doc = build(args.csv, args.karpenter)
    args.output.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.output}: {len(doc['instances'])} instance types, "
          f"prices for {', '.join(doc['regions'])} ({doc['price_source']})")


if __name__ == "__main__":
    main()
