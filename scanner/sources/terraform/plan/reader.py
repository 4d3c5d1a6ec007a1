"""Terraform plan JSON (`terraform show -json PLAN`) -> normalized Resources.

Resources come from ``planned_values`` (root and child modules; addresses such as
``module.x.aws_y.z`` with ``[key]`` for count/for_each instances). Terraform leaves every value
that is known only after apply out of the planned values (its ``omitUnknowns``: an unknown object
attribute is omitted, an unknown list element becomes null; ``after_unknown`` in
``resource_changes`` marks the same values). For each such value this source asks the plan's
``configuration`` section:

- not configured (no expression for it): the provider computes it, i.e. the AWS default applies,
  so it stays absent (e.g. no spot allocation strategy = lowest-price);
- configured with references to other resources: a :class:`Ref` to the full address
  (module path included; ``aws_subnet.a[*].id`` and ``[for s in aws_subnet.a : s.id]`` name every
  instance: ``Ref("aws_subnet.a")``), following module input variables up to the module call and
  module outputs down to their expressions;
- anything else (locals, data sources, several resources for one value): UNKNOWN with a reason.

``aws_subnet.a[count.index]`` / ``[each.key]`` / ``each.value`` of a ``for_each`` over another
resource are narrowed to the instance with the same key when that instance exists in the plan
(the plan keeps only the references, not the expression: this is the one inference made).
Blocks written with ``dynamic`` are missing from the configuration section: with the ``.tf``
source at hand, the names a dynamic block sets are read from it (a plain reference such as
``var.kms_key_arn`` is followed); without it, the attributes policies read in such a block
(:data:`BLOCK_KEYS`) stay UNKNOWN when absent.

Because of this, only ``planned_values`` and ``configuration`` are needed: terraform writes the
top-level keys in a fixed order, so the reader decodes those two (and the small keys) and skips
``resource_changes`` / ``prior_state`` (more than half of a large plan). When the layout is not
terraform's, the whole document is decoded. The cyclic GC is paused while loading.

Locations: when the plan sits beside its ``.tf`` files (or ``source_dir`` says where they are),
findings point at the ``resource`` block there (root module and local child modules, plus modules
installed by ``terraform init``); otherwise at the plan file and the line of the resource's
address in it (line 1 for terraform's one-line JSON). Inline ``# gpuaudit:skip=ID:reason``
comments are read from the located blocks.

Stdlib only: the pre-commit path imports this.
"""

from __future__ import annotations

import gc
import re
from pathlib import Path
from typing import Any

from scanner.model import (
    Gap,
    InputError,
    Notice,
    Provenance,
    Resource,
    SourceKind,
    SourceResult,
    Unknown,
)
from scanner.sources.terraform.plan.config import _config_modules, _module_dirs, _provider_regions
from scanner.sources.terraform.plan.document import (
    _from_changes,
    _iter_planned,
    _json_type,
    _plan_lines,
    _read,
)
from scanner.sources.terraform.plan.locate import Block, SourceIndex, has_tf_files
from scanner.sources.terraform.plan.refs import _keyless, _split_module_path
from scanner.sources.terraform.plan.resolve import _NO_EXPRESSIONS, BLOCK_KEYS, _Ctx, _Plan
from scanner.sources.terraform.plan.sensitive import (
    _sensitive,
    _sensitive_changes,
    _sensitive_variables,
)
from scanner.sources.terraform.translate import SUPPORTED_TYPES, merge_ebs_defaults, translate

__all__ = ["BLOCK_KEYS", "load_plan", "looks_like_plan"]

SNIFF_BYTES = 4096
_KEY_AFTER_VERSION = re.compile(
    r'"terraform_version"\s*:\s*"[^"]*"\s*,\s*"(variables|planned_values|resource_changes|'
    r'resource_drift|prior_state|output_changes|relevant_attributes|configuration)"')
_PLAN_KEY = re.compile(r'"(planned_values|resource_changes)"\s*:')


def looks_like_plan(head: str) -> bool:
    """Does this text look like `terraform show -json` of a plan?

    Rule: the head (the first bytes of the file; scan.py reads 64 KB, the first 4 KB suffice for
    terraform's own output) mentions ``"format_version"``, and either ``"planned_values"`` or
    ``"resource_changes"`` appears as a key in it, or the key right after ``"terraform_version"``
    is one only plans have (``variables``, ``planned_values``, ``resource_changes``,
    ``prior_state`` …): terraform writes ``format_version`` and ``terraform_version`` first, and
    a long ``variables`` section may push ``planned_values`` far into the file. A state file
    (``"values"`` after ``terraform_version``) is not a plan.
    """
    if '"format_version"' not in head:
        return False
    if _PLAN_KEY.search(head):
        return True
    return bool(_KEY_AFTER_VERSION.search(head[:SNIFF_BYTES]))



def load_plan(path: Path, *, source_dir: Path | None = None) -> SourceResult:
    """Read one plan JSON file. Bad input becomes an InputError in the result, never raises."""
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects, freed at once: the cyclic GC only slows it down
    try:
        result = SourceResult()
        read = _read(path)
        if isinstance(read, InputError):
            result.errors.append(read)
            return result
        doc, text = read
        try:
            _load(path, doc, text, source_dir, result)
        except (TypeError, AttributeError, KeyError, ValueError, IndexError,
                RecursionError) as exc:
            result.resources.clear()
            result.errors.append(InputError(str(path), f"malformed Terraform plan: "
                                                       f"{type(exc).__name__}: {exc}"))
        return result
    finally:
        if was_enabled:
            gc.enable()



def _load(path: Path, doc: dict[str, Any], text: str, source_dir: Path | None,
          result: SourceResult) -> None:
    from scanner.sources.karpenter.terraform import ManifestBudget

    spath = str(path)
    manifests = ManifestBudget()
    problems: list[str] = []
    if "planned_values" in doc:
        pv = doc["planned_values"]
        if not isinstance(pv, dict):
            problems.append(f"planned_values is {_json_type(pv)}, not an object")
            planned = []
        elif "root_module" not in pv:
            problems.append("planned_values has no root_module")
            planned = []
        else:
            planned = list(_iter_planned(pv["root_module"], problems))
    else:
        planned = _from_changes(doc.get("resource_changes"), problems)
    if "configuration" in doc and not isinstance(doc["configuration"], dict):
        problems.append(f"configuration is {_json_type(doc['configuration'])}, not an object")
    for problem in problems[:20]:
        result.errors.append(InputError(spath, f"malformed Terraform plan: {problem}"))
    if len(problems) > 20:
        result.errors.append(InputError(spath, f"malformed Terraform plan: {len(problems) - 20} "
                                               "more problems like these"))
    _sensitive_variables(doc, result.sensitive)
    _sensitive_changes(doc.get("resource_changes"), result.sensitive)
    config = _config_modules(doc.get("configuration"), result.errors, spath)
    module_instances: dict[tuple[str, str], list[str]] = {}
    addresses: set[str] = set()
    seen_modules: set[str] = {""}
    for module, r in planned:
        addr = r.get("address")
        if isinstance(addr, str):
            addresses.add(addr)
        while module not in seen_modules:  # this instance and its parents, once each
            seen_modules.add(module)
            segments = _split_module_path(module)
            if not segments:
                break
            parent = ".".join(f"module.{n}{i}" for n, i in segments[:-1])
            module_instances.setdefault((parent, segments[-1][0]), []).append(module)
            module = parent
    plan = _Plan(config, addresses, module_instances)

    if doc.get("errored") is True:
        result.notices.append(Notice(spath, "terraform reported errors while planning: the plan "
                                            "may be incomplete"))
    if not config:
        result.notices.append(Notice(spath, "the plan has no configuration section: values known "
                                            "only after apply cannot be told from unset ones"))

    # Where are the .tf files?
    tf_dir = source_dir
    if tf_dir is None and has_tf_files(path.parent):
        tf_dir = path.parent
    sources: SourceIndex | None = None
    dir_notices: list[Notice] = []
    if tf_dir is not None and config:
        sources = SourceIndex(_module_dirs(config, tf_dir, dir_notices, spath))
        if source_dir is None and not _matches(sources, planned):
            sources = None  # unrelated .tf files beside the plan
    if sources is not None:
        result.notices.extend(dir_notices)
    scope = str(tf_dir) if sources is not None else spath
    lines: dict[str, int] | None = None
    lines_done = False
    bad_skips_seen: set[tuple[str, int]] = set()
    plan_provs: dict[tuple[str, str | None, str], Provenance] = {}
    regions = _provider_regions(doc)

    out: list[Resource] = []
    for module, r in planned:
        tf_type = r.get("type")
        if not isinstance(tf_type, str) or tf_type not in SUPPORTED_TYPES \
                or r.get("mode", "managed") != "managed":
            continue
        address = r.get("address")
        name = r.get("name")
        if not isinstance(address, str) or not isinstance(name, str):
            result.errors.append(InputError(spath, f"malformed Terraform plan: a planned "
                                                   f"{tf_type} has no address or name"))
            continue
        values = r.get("values")
        if values is None:
            values = {}  # terraform omits "values" when every one is unknown
        elif not isinstance(values, dict):
            result.errors.append(InputError(spath, f"malformed Terraform plan: the values of "
                                                   f"{address} are {_json_type(values)}, not an "
                                                   "object"))
            continue
        _sensitive(values, r.get("sensitive_values"), result.sensitive)
        keyless = _keyless(module)
        block: Block | None = sources.locate(keyless, tf_type, name) if sources else None
        cm = config.get(keyless)
        rcfg = cm.resource(tf_type, name) if cm is not None else None
        region = regions.get(str(rcfg.get("provider_config_key"))) if rcfg is not None else None
        key = rcfg.get("provider_config_key") if rcfg is not None else None
        provider = key if isinstance(key, str) and key else "?"
        if rcfg is not None:
            exprs = rcfg.get("expressions")
            ctx = _Ctx(module, r.get("index"), rcfg.get("for_each_expression"),
                       block.dynamic if block else {}, tf_type,
                       block.picks if block else {})
            plan.fill(values, exprs if isinstance(exprs, dict) else _NO_EXPRESSIONS, ctx, address)
            for dyn in ctx.dynamic:
                # a `dynamic` block missing from the planned values (terraform writes known
                # blocks, even none, as a list): its for_each is known only after apply
                if dyn not in values:
                    plan._set(values, dyn, Unknown(f"the {dyn} blocks are made by a dynamic "
                                                   "block known only after apply"), address)
        if block is not None:
            prov = Provenance(SourceKind.TERRAFORM_PLAN, str(block.file), block.start_line,
                              block.end_line, module, pricing_region=region, provider=provider)
            skips = block.skips
            for line, line_text in block.bad_skips:
                if (str(block.file), line) not in bad_skips_seen:
                    bad_skips_seen.add((str(block.file), line))
                    result.notices.append(Notice(
                        str(block.file), f"gpuaudit:skip on {address} has no policy id or no "
                                         f"reason and is not applied: {line_text}", line))
        else:
            if not lines_done:
                lines, lines_done = _plan_lines(text), True
            if lines is None:  # one-line JSON: the same location for every resource of a module
                prov = plan_provs.get((module, region, provider))
                if prov is None:
                    prov = plan_provs[(module, region, provider)] = Provenance(
                        SourceKind.TERRAFORM_PLAN, spath, 1, 1, module, pricing_region=region,
                        provider=provider)
            else:
                line = lines.get(address, 1)
                prov = Provenance(SourceKind.TERRAFORM_PLAN, spath, line, line, module,
                                  pricing_region=region, provider=provider)
            skips = ()
        out.extend(translate(tf_type, address, values, provenance=prov, scope=scope,
                             skips=skips, notices=result.notices, errors=result.errors,
                             manifests=manifests))
    result.resources.extend(merge_ebs_defaults(out))
    if manifests.refused is not None:
        result.gaps.append(Gap(scope=scope, kinds=("*",), iac=True, reason=(
            f"the plan {spath} was not read whole: {manifests.gap()}")))
    if plan.unknown:
        result.notices.append(Notice(spath, f"{plan.unknown} value(s) are known only after apply "
                                            f"and stay UNKNOWN, e.g. {plan.example}"))


def _matches(sources: SourceIndex, planned: list[tuple[str, dict[str, Any]]]) -> bool:
    """Do the .tf files hold the plan's root module? (any root resource found, or none to find)"""
    root = [r for module, r in planned if not module and r.get("mode", "managed") == "managed"]
    if not root:
        return True
    return any(sources.locate("", str(r.get("type")), str(r.get("name"))) for r in root[:200])
