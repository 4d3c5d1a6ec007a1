#!/usr/bin/env bash
# Regenerate the plan JSON fixtures of these policy tests: for every <ID>/<expect>/hcl/ root
# module, real terraform plans it offline (fake credentials, the AWS provider from a filesystem
# mirror: TF_PLUGIN_MIRROR, default /opt/tf-plugins) and `terraform show -json` is written to
# <ID>/<expect>/plan.json exactly as terraform produced it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mirror="${TF_PLUGIN_MIRROR:-/opt/tf-plugins}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'provider_installation {\n  filesystem_mirror {\n    path = "%s"\n  }\n}\n' "$mirror" \
  >"$work/terraformrc"
export TF_CLI_CONFIG_FILE="$work/terraformrc" TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1
for hcl in "$here"/*/pass/hcl "$here"/*/fail/hcl; do  # unknown/: no plan without a value
  case_dir="$(dirname "$hcl")"
  copy="$work/$(basename "$(dirname "$case_dir")")-$(basename "$case_dir")"
  cp -r "$hcl" "$copy"
  (
    cd "$copy"
    terraform init -input=false -no-color -backend=false >init.log 2>&1 || { cat init.log; exit 1; }
    terraform plan -input=false -no-color -refresh=false -lock=false -out=plan.out >plan.log 2>&1 \
      || { cat plan.log; exit 1; }
    terraform show -json plan.out >"$case_dir/plan.json"
  )
  echo "wrote $case_dir/plan.json"
done
