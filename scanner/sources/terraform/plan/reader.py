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
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
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
from scanner.sources.terraform.plan.planned import (
    Planned,
    PlannedIndex,
    PlannedResources,
    in_memory,
)
from scanner.sources.terraform.plan.refs import _keyless
from scanner.sources.terraform.plan.resolve import (
    _NO_EXPRESSIONS,
    BLOCK_KEYS,
    _ConfigModule,
    _Ctx,
    _Plan,
)
from scanner.sources.terraform.plan.sensitive import (
    _sensitive,
    _sensitive_changes,
    _sensitive_variables,
)
from scanner.sources.terraform.translate import SUPPORTED_TYPES, merge_ebs_defaults, translate

__all__ = ["BLOCK_KEYS", "load_plan", "looks_like_plan"]

SNIFF_BYTES = 4096
# "whole" or "stream": how every plan is read (for comparing the two; default: by size)
READ_ENV = "GPUAUDIT_PLAN_READ"
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



def load_plan(path: Path, *, source_dir: Path | None = None,
              stream: bool | None = None) -> SourceResult:
    """Read one plan JSON file. Bad input becomes an InputError in the result, never raises.

    ``stream``: read it in one streaming pass (:mod:`.stream`) rather than as one document;
    None: as the environment variable :data:`READ_ENV` says, else stream files of at least
    :data:`~.stream.STREAM_BYTES`. Both give the same result: a
    file the streaming reader does not take (not terraform's layout, not valid JSON) is read
    as one document, which says what is wrong with it."""
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects, freed at once: the cyclic GC only slows it down
    try:
        if stream is None and os.environ.get(READ_ENV) in ("whole", "stream"):
            stream = os.environ[READ_ENV] == "stream"
        if stream is not False:
            streamed = _streamed(path, source_dir, force=stream is True)
            if streamed is not None:
                return streamed
        read = _read(path)
        if isinstance(read, InputError):
            result = SourceResult()
            result.errors.append(read)
            return result
        doc, text = read
        problems: list[str] = []

        def load(result: SourceResult) -> None:
            planned = in_memory(_planned_of(doc, problems))
            _load(path, doc, planned, lambda: _plan_lines(text), problems, source_dir, result)

        return _guarded(path, load)
    finally:
        if was_enabled:
            gc.enable()


def _streamed(path: Path, source_dir: Path | None, *, force: bool) -> SourceResult | None:
    """The plan read by :mod:`.stream`; None when it does not take the file."""
    from scanner.sources.terraform.plan.stream import NotStreamable, stream_plan

    try:
        doc, planned, lines_of = stream_plan(path, force=force)
        return _guarded(path, lambda result: _load(path, doc, planned, lines_of, [], source_dir,
                                                   result))
    except NotStreamable:
        return None


def _guarded(path: Path, load: Callable[[SourceResult], None]) -> SourceResult:
    """``load`` into a new result; a plan of a shape it does not expect is an input error."""
    result = SourceResult()
    try:
        load(result)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError, RecursionError) as exc:
        result.resources.clear()
        result.errors.append(InputError(str(path), f"malformed Terraform plan: "
                                                   f"{type(exc).__name__}: {exc}"))
    return result


def _planned_of(doc: dict[str, Any], problems: list[str]) -> list[Planned]:
    """The planned resources of a decoded plan; what is not of terraform's shape goes to
    ``problems``."""
    if "planned_values" not in doc:
        return _from_changes(doc.get("resource_changes"), problems)
    pv = doc["planned_values"]
    if not isinstance(pv, dict):
        problems.append(f"planned_values is {_json_type(pv)}, not an object")
        return []
    if "root_module" not in pv:
        problems.append("planned_values has no root_module")
        return []
    return list(_iter_planned(pv["root_module"], problems))


@dataclass
class _Where:
    """Where findings point: the .tf blocks (when the files are the plan's) or the plan file."""

    spath: str
    sources: SourceIndex | None
    scope: str
    lines_of: Callable[[], dict[str, int] | None]
    lines: dict[str, int] | None = None
    lines_done: bool = False
    bad_skips_seen: set[tuple[str, int]] = field(default_factory=set)
    # the bad-skip notices said, under (file, line), when resources are read part by part
    said: list[tuple[tuple[str, int], Notice]] | None = None
    plan_provs: dict[tuple[str, str | None, str], Provenance] = field(default_factory=dict)

    def plan_line(self, address: str) -> int | None:
        """The line of ``address`` in the plan; None when the JSON is on one line."""
        if not self.lines_done:
            self.lines, self.lines_done = self.lines_of(), True
        return None if self.lines is None else self.lines.get(address, 1)


def _load(path: Path, doc: dict[str, Any], planned: PlannedResources,
          lines_of: Callable[[], dict[str, int] | None], problems: list[str],
          source_dir: Path | None, result: SourceResult) -> None:
    from scanner.sources.karpenter.terraform import ManifestBudget

    spath = str(path)
    manifests = ManifestBudget()
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
    index = planned.index
    plan = _Plan(config, index.addresses, index.module_instances)
    if doc.get("errored") is True:
        result.notices.append(Notice(spath, "terraform reported errors while planning: the plan "
                                            "may be incomplete"))
    if not config:
        result.notices.append(Notice(spath, "the plan has no configuration section: values known "
                                            "only after apply cannot be told from unset ones"))
    where = _where(path, source_dir, config, index, lines_of, result)
    regions = _provider_regions(doc)

    def one(module: str, r: dict[str, Any], into: SourceResult) -> list[Resource]:
        return _translate_one(module, r, plan, config, regions, where, manifests, into)

    out = _translated(planned, one, plan, where, result)
    from scanner.sources.terraform.s3_configs import fold_s3_configs

    result.resources.extend(fold_s3_configs(merge_ebs_defaults(out)))
    if manifests.refused is not None:
        result.gaps.append(Gap(scope=where.scope, kinds=("*",), iac=True, reason=(
            f"the plan {spath} was not read whole: {manifests.gap()}")))
    if plan.unknown:
        result.notices.append(Notice(spath, f"{plan.unknown} value(s) are known only after apply "
                                            f"and stay UNKNOWN, e.g. {plan.example}"))


def _translated(planned: PlannedResources, one: Callable[[str, dict[str, Any], SourceResult],
                                                          list[Resource]],
                plan: _Plan, where: _Where, result: SourceResult) -> list[Resource]:
    """Every planned resource translated: part by part in several processes when the plan is
    large (:mod:`.parts`), else in one pass in order. Both give the same; a part that raises
    (a plan of a shape not expected) is read again in one pass, which raises the same where it
    would have."""
    workers = 1
    if planned.parts > 1:  # a streamed plan (8 MiB or more)
        from scanner.sources.karpenter.terraform import TYPES as MANIFEST_TYPES
        from scanner.sources.terraform.plan.parts import shareable

        workers = shareable(planned, MANIFEST_TYPES)
    if workers > 1:
        from scanner.sources.terraform.plan.parts import Ordered, translate_in_parts

        if where.sources is None:
            where.plan_line("")  # the address lines, found once for every process
        try:
            return translate_in_parts(planned, one, Ordered(plan, where), workers, result)
        except Exception:  # read again in order, which says what is wrong (or reads it)
            pass
    out: list[Resource] = []
    for module, r in planned.again():
        out.extend(one(module, r, result))
    return out


def _where(path: Path, source_dir: Path | None, config: dict[str, _ConfigModule],
           index: PlannedIndex, lines_of: Callable[[], dict[str, int] | None],
           result: SourceResult) -> _Where:
    """Where are the .tf files?"""
    spath = str(path)
    tf_dir = source_dir
    if tf_dir is None and has_tf_files(path.parent):
        tf_dir = path.parent
    sources: SourceIndex | None = None
    dir_notices: list[Notice] = []
    if tf_dir is not None and config:
        sources = SourceIndex(_module_dirs(config, tf_dir, dir_notices, spath))
        if source_dir is None and not _matches(sources, index.root):
            sources = None  # unrelated .tf files beside the plan
    if sources is not None:
        result.notices.extend(dir_notices)
    scope = str(tf_dir) if sources is not None else spath
    return _Where(spath, sources, scope, lines_of)


def _translate_one(module: str, r: dict[str, Any], plan: _Plan,
                   config: dict[str, _ConfigModule], regions: dict[str, str], where: _Where,
                   manifests: Any, result: SourceResult) -> list[Resource]:
    """The Resource(s) of one planned resource, its values known after apply resolved."""
    spath = where.spath
    tf_type = r.get("type")
    if not isinstance(tf_type, str) or tf_type not in SUPPORTED_TYPES \
            or r.get("mode", "managed") != "managed":
        return []
    address = r.get("address")
    name = r.get("name")
    if not isinstance(address, str) or not isinstance(name, str):
        result.errors.append(InputError(spath, f"malformed Terraform plan: a planned "
                                               f"{tf_type} has no address or name"))
        return []
    values = r.get("values")
    if values is None:
        values = {}  # terraform omits "values" when every one is unknown
    elif not isinstance(values, dict):
        result.errors.append(InputError(spath, f"malformed Terraform plan: the values of "
                                               f"{address} are {_json_type(values)}, not an "
                                               "object"))
        return []
    _sensitive(values, r.get("sensitive_values"), result.sensitive)
    keyless = _keyless(module)
    block: Block | None = where.sources.locate(keyless, tf_type, name) if where.sources else None
    cm = config.get(keyless)
    rcfg = cm.resource(tf_type, name) if cm is not None else None
    region = regions.get(str(rcfg.get("provider_config_key"))) if rcfg is not None else None
    key = rcfg.get("provider_config_key") if rcfg is not None else None
    provider = key if isinstance(key, str) and key else "?"
    if rcfg is not None:
        _fill(plan, module, r, values, rcfg, block, tf_type, address)
    if block is not None:
        prov = Provenance(SourceKind.TERRAFORM_PLAN, str(block.file), block.start_line,
                          block.end_line, module, pricing_region=region, provider=provider)
        skips = block.skips
        _bad_skips(block, address, where, result)
    else:
        prov = _plan_provenance(where, module, address, region, provider)
        skips = ()
    return translate(tf_type, address, values, provenance=prov, scope=where.scope,
                     skips=skips, notices=result.notices, errors=result.errors,
                     manifests=manifests)


def _fill(plan: _Plan, module: str, r: dict[str, Any], values: dict[str, Any],
          rcfg: dict[str, Any], block: Block | None, tf_type: str, address: str) -> None:
    exprs = rcfg.get("expressions")
    ctx = _Ctx(module, r.get("index"), rcfg.get("for_each_expression"),
               block.dynamic if block else {}, tf_type, block.picks if block else {})
    plan.fill(values, exprs if isinstance(exprs, dict) else _NO_EXPRESSIONS, ctx, address)
    for dyn in ctx.dynamic:
        # a `dynamic` block missing from the planned values (terraform writes known
        # blocks, even none, as a list): its for_each is known only after apply
        if dyn not in values:
            plan._set(values, dyn, Unknown(f"the {dyn} blocks are made by a dynamic "
                                           "block known only after apply"), address)


def _bad_skips(block: Block, address: str, where: _Where, result: SourceResult) -> None:
    for line, line_text in block.bad_skips:
        key = (str(block.file), line)
        if key not in where.bad_skips_seen:
            where.bad_skips_seen.add(key)
            notice = Notice(str(block.file), f"gpuaudit:skip on {address} has no policy id or "
                                             f"no reason and is not applied: {line_text}", line)
            result.notices.append(notice)
            if where.said is not None:
                where.said.append((key, notice))


def _plan_provenance(where: _Where, module: str, address: str, region: str | None,
                     provider: str) -> Provenance:
    line = where.plan_line(address)
    if line is not None:
        return Provenance(SourceKind.TERRAFORM_PLAN, where.spath, line, line, module,
                          pricing_region=region, provider=provider)
    # one-line JSON: the same location for every resource of a module
    prov = where.plan_provs.get((module, region, provider))
    if prov is None:
        prov = where.plan_provs[(module, region, provider)] = Provenance(
            SourceKind.TERRAFORM_PLAN, where.spath, 1, 1, module, pricing_region=region,
            provider=provider)
    return prov


def _matches(sources: SourceIndex, root: list[tuple[str, str]]) -> bool:
    """Do the .tf files hold the plan's root module? (any root resource found, or none to find)"""
    if not root:
        return True
    return any(sources.locate("", tf_type, name) for tf_type, name in root)
