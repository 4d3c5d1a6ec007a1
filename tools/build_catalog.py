"""Build the shipped GPU catalogue (scanner/catalog/gpu_instances.json) from the reference facts.

Usage: python tools/build_catalog.py [../shared/reference/gpu_instances.csv]
Each entry keeps the source of its figures; prices are us-east-1 Linux on-demand.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CSV = ROOT.parent / "shared" / "reference" / "gpu_instances.csv"
OUT = ROOT / "scanner" / "catalog" / "gpu_instances.json"
AS_OF = "2026-07-20"  # the date of the price list the reference cites


def _num(text: str) -> float | None:
    text = text.strip()
    return float(text) if text else None


def main(csv_path: Path) -> None:
    instances: dict[str, dict[str, object]] = {}
    with csv_path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            instances[row["instance_type"]] = {
                "vcpu": int(row["vcpu"]),
                "mem_gib": _num(row["mem_gib"]),
                "arch": row["arch"],
                "gpu_model": row["gpu_model"],
                "gpu_count": _num(row["gpu_count"]),
                "gpu_mem_gib": _num(row["gpu_mem_gib"]),
                "network_gbps": row["network_gbps"],
                "efa": row["efa"].strip().lower() == "true",
                "price_usd_hour": _num(row["price_usd_hour_us_east_1"]),
                "fp16_tflops_per_gpu": _num(row["fp16_dense_tflops_per_gpu"]),
                "source": row["source"],
            }
    doc = {
        "source": "gpuaudit built-in catalogue (AWS us-east-1 Linux on-demand prices, "
        "karpenter-provider-aws generated price list; specs from AWS/moto instance data)",
        "as_of": AS_OF,
        "region": "us-east-1",
        "instances": dict(sorted(instances.items())),
    }
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} with {len(instances)} instance types")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CSV)
