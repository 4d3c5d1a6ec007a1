"""Generate a large Terraform plan JSON for the plan source benchmark.

    python bench/gen_plan.py OUT.json --resources 50000 [--seed 1] [--indent N]

The plan has the shape `terraform show -json` gives (format_version 1.2: variables,
planned_values with child modules, resource_changes with after_unknown / after_sensitive,
prior_state, configuration with module calls and expression references, relevant_attributes),
because it is stamped out from the real plans terraform produced for the test fixtures
(tests/fixtures/terraform/*/plan.json):

- module instances `module.estate_a["aNNNN"]` of the gpu_estate_a root module (40 resources:
  volumes, instances, launch templates, mixed-instances ASGs, spot requests, subnets, VPC, route
  tables, routes, associations, endpoints), `module.estate_b["bNNNN"]` of gpu_estate_b (spot
  fleet, EC2 fleet, launch configuration, ...) and `module.estate_m["mNNNN"]` of gpu_modules
  (nested modules with for_each, count, dynamic blocks);
- about a tenth of the resources at the root, each with its own configuration block (a large
  flat root module): EBS volumes and GPU instances.

Instance types, prices and CIDRs vary per instance so the data is not one block repeated.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "terraform"
CASES = {"a": "gpu_estate_a", "b": "gpu_estate_b", "m": "gpu_modules"}
GPU_TYPES = ["g5.xlarge", "g5.2xlarge", "g4dn.xlarge", "g6.xlarge", "p3.2xlarge", "p3.8xlarge"]


def _load(case: str) -> dict[str, Any]:
    return json.loads((FIXTURES / case / "plan.json").read_text(encoding="utf-8"))


def _count(module: dict[str, Any]) -> int:
    return len(module.get("resources") or ()) + sum(
        _count(c) for c in module.get("child_modules") or ())


def _readdress(module: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A planned_values module moved under `prefix` (a module instance address)."""
    out: dict[str, Any] = {"address": prefix + ("." + module["address"]
                                                if module.get("address") else "")}
    out["resources"] = [{**r, "address": f"{prefix}.{r['address']}"}
                        for r in module.get("resources") or ()]
    children = [_readdress(c, prefix) for c in module.get("child_modules") or ()]
    if children:
        out["child_modules"] = children
    for key in ("resources",):
        if not out[key]:
            del out[key]
    return out


def _vary(values: dict[str, Any], rng: random.Random, i: int) -> None:
    if "instance_type" in values and isinstance(values["instance_type"], str) \
            and values["instance_type"][:1] in "gp":
        values["instance_type"] = rng.choice(GPU_TYPES)
    if isinstance(values.get("cidr_block"), str) and values["cidr_block"].startswith("10."):
        parts = values["cidr_block"].split(".")
        parts[1] = str(i % 250)
        values["cidr_block"] = ".".join(parts)
    if isinstance(values.get("spot_price"), str) and values["spot_price"]:
        values["spot_price"] = f"{rng.uniform(0.05, 1.5):.2f}"


class Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.templates = {k: _load(v) for k, v in CASES.items()}
        self.sizes = {k: _count(t["planned_values"]["root_module"])
                      for k, t in self.templates.items()}
        self.root_resources: list[dict[str, Any]] = []
        self.child_modules: list[dict[str, Any]] = []
        self.changes: list[dict[str, Any]] = []
        self.config_resources: list[dict[str, Any]] = []
        self.instances: dict[str, list[str]] = {k: [] for k in CASES}
        self.total = 0

    def add_instance(self, kind: str) -> None:
        t = self.templates[kind]
        key = f"{kind}{len(self.instances[kind]):05d}"
        self.instances[kind].append(key)
        prefix = f'module.estate_{kind}["{key}"]'
        mod = copy.deepcopy(t["planned_values"]["root_module"])
        i = len(self.child_modules)
        moved = _readdress(mod, prefix)

        def vary(m: dict[str, Any]) -> None:
            for r in m.get("resources") or ():
                if isinstance(r.get("values"), dict):
                    _vary(r["values"], self.rng, i)
            for c in m.get("child_modules") or ():
                vary(c)

        vary(moved)
        self.child_modules.append(moved)
        for rc in t["resource_changes"]:
            rc = copy.deepcopy(rc)
            rc["address"] = f"{prefix}.{rc['address']}"
            rc["module_address"] = prefix + ("." + rc["module_address"]
                                             if rc.get("module_address") else "")
            if isinstance(rc["change"].get("after"), dict):
                _vary(rc["change"]["after"], self.rng, i)
            self.changes.append(rc)
        self.total += self.sizes[kind]

    def add_root(self, n: int) -> None:
        base = self.templates["a"]
        vol = next(r for r in base["planned_values"]["root_module"]["resources"]
                   if r["address"] == "aws_ebs_volume.data_cmk")
        inst = next(r for r in base["planned_values"]["root_module"]["resources"]
                    if r["address"] == "aws_instance.trainer")
        changes = {rc["address"]: rc for rc in base["resource_changes"]}
        configs = {c["address"]: c for c in base["configuration"]["root_module"]["resources"]}
        for j in range(n):
            tmpl = vol if j % 2 == 0 else inst
            name = f"{tmpl['name']}_{j:06d}"
            addr = f"{tmpl['type']}.{name}"
            r = copy.deepcopy(tmpl)
            r.update(address=addr, name=name)
            _vary(r["values"], self.rng, j)
            if tmpl is vol:
                r["values"]["encrypted"] = j % 7 != 0
            self.root_resources.append(r)
            rc = copy.deepcopy(changes[tmpl["address"]])
            rc.update(address=addr, name=name)
            rc["change"]["after"] = r["values"]
            self.changes.append(rc)
            cfg = copy.deepcopy(configs[tmpl["address"]])
            cfg.update(address=addr, name=name)
            self.config_resources.append(cfg)
        self.total += n

    def plan(self) -> dict[str, Any]:
        a = self.templates["a"]
        module_calls: dict[str, Any] = {}
        variables: dict[str, Any] = {}
        for kind, case in CASES.items():
            keys = self.instances[kind]
            if not keys:
                continue
            var = f"estates_{kind}"
            variables[var] = {"value": {k: {"team": f"team-{k[-2:]}"} for k in keys}}
            module_calls[f"estate_{kind}"] = {
                "source": f"./modules/{case}",
                "for_each_expression": {"references": [f"var.{var}"]},
                "module": self.templates[kind]["configuration"]["root_module"],
            }
        root_cfg = {"resources": self.config_resources, "module_calls": module_calls,
                    "variables": {v: {"description": "estates"} for v in variables}}
        self.changes.sort(key=lambda rc: rc["address"])
        return {
            "format_version": "1.2",
            "terraform_version": a["terraform_version"],
            "variables": variables,
            "planned_values": {"root_module": {"resources": self.root_resources,
                                               "child_modules": self.child_modules}},
            "resource_changes": self.changes,
            "prior_state": {"format_version": "1.0",
                            "terraform_version": a["terraform_version"],
                            "values": {"root_module": {}}},
            "configuration": {"provider_config": a["configuration"]["provider_config"],
                              "root_module": root_cfg},
            "relevant_attributes": a.get("relevant_attributes", []),
            "timestamp": "2025-01-01T00:00:00Z",
            "applyable": True,
            "complete": True,
            "errored": False,
        }


def build(resources: int, seed: int = 1) -> dict[str, Any]:
    b = Builder(seed)
    root = resources // 10
    kinds = ["a", "a", "b", "m"]
    k = 0
    while b.total + root + b.sizes[kinds[k % len(kinds)]] <= resources:
        b.add_instance(kinds[k % len(kinds)])
        k += 1
    b.add_root(resources - b.total)
    return b.plan()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--resources", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--indent", type=int, default=None,
                    help="pretty-print (terraform writes one line)")
    args = ap.parse_args()
    plan = build(args.resources, args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as fh:
        json.dump(plan, fh, indent=args.indent, separators=None if args.indent else (",", ":"))
        fh.write("\n")
    n = sum(1 for _ in plan["resource_changes"])
    print(f"wrote {args.out}: {n} resources, {args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
