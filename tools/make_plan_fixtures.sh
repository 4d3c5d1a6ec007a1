#!/usr/bin/env bash
# Regenerate the real-terraform plan fixtures under tests/fixtures/terraform/<case>/plan.json.
#
# For every case directory that has a providers.tf, runs
#   terraform init && terraform plan -out && terraform show -json
# offline: the AWS provider comes from a filesystem mirror (default /opt/tf-plugins, override with
# TF_PLUGIN_MIRROR) and the provider block of each case uses fake credentials and skips every
# AWS call made at plan time. The plan JSON is written exactly as terraform produced it.
# .terraform/, the lock file, the binary plan and any state stay out of the repository
# (they are removed afterwards; .gitignore lists them too).
#
# Usage: tools/make_plan_fixtures.sh [CASE...]     (default: every case)
# A CASE may also be a directory beside tests/fixtures/terraform, written ../tf_x.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fixtures="$repo/tests/fixtures/terraform"
mirror="${TF_PLUGIN_MIRROR:-/opt/tf-plugins}"

command -v terraform >/dev/null || { echo "terraform is not on PATH" >&2; exit 2; }
[ -d "$mirror/registry.terraform.io/hashicorp/aws" ] || {
  echo "no AWS provider in the filesystem mirror $mirror" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/terraformrc" <<RC
provider_installation {
  filesystem_mirror {
    path = "$mirror"
  }
}
RC
export TF_CLI_CONFIG_FILE="$work/terraformrc"
export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1
unset TF_WORKSPACE TF_DATA_DIR

if [ "$#" -gt 0 ]; then
  cases=("$@")
else
  cases=()
  for d in "$fixtures"/*/; do
    [ -f "$d/providers.tf" ] && cases+=("$(basename "$d")")
  done
fi

for case in "${cases[@]}"; do
  dir="$fixtures/$case"
  [ -f "$dir/providers.tf" ] || { echo "not a fixture case: $dir" >&2; exit 2; }
  echo "== $case"
  log="$work/$(basename "$case")"
  (
    cd "$dir"
    rm -rf .terraform .terraform.lock.hcl
    terraform init -input=false -no-color -backend=false >"$log.init.log" 2>&1 \
      || { cat "$log.init.log" >&2; exit 1; }
    terraform plan -input=false -no-color -refresh=false -lock=false \
      -out="$log.tfplan" >"$log.plan.log" 2>&1 \
      || { cat "$log.plan.log" >&2; exit 1; }
    grep -E '^Plan:' "$log.plan.log" || true
    terraform show -json "$log.tfplan" >"$log.plan.json"
    mv "$log.plan.json" plan.json
    rm -rf .terraform .terraform.lock.hcl terraform.tfstate terraform.tfstate.backup
  )
done
