"""Terraform resource type -> normalized Resource (docs/resource-model.md).

Shared by both Terraform sources (HCL and plan JSON). ``values`` are a resource's attributes in
the shape of terraform's plan JSON: snake_case keys, nested blocks as lists of dicts (a single
dict is accepted too), where any value at any depth may be an :class:`Unknown` or a :class:`Ref`.
Both pass through untouched. Each translator maps names (and the shapes AWS and Terraform spell
differently); every real value is then coerced to the type the kind schema (``scanner/kinds``)
declares for it, the same types the CloudFormation reader coerces to:

- booleans become ``bool`` (launch templates spell them "true"/"false"/"" in plans);
- counts and sizes become ``int`` ("2" -> 2);
- prices stay as given (AWS uses strings; a number becomes its string form); ``""`` is dropped
  except for an ASG's ``spot_max_price`` (AWS's explicit "cap at the on-demand price");
- other empty strings mean "not set" and are dropped (terraform's zero value for unset strings);
- sets of ids become lists, and a single ``Ref`` where a list is expected becomes ``[Ref]``.

Absent or ``None`` means "not set": the AWS default applies. The only provider default filled in
is ``aws_ebs_encryption_by_default.enabled`` (true when omitted), because the HCL source cannot
know it otherwise. Stdlib only (the pre-commit path imports this).

The coercions are in ``coerce``; the translators, one module per family (``instances``,
``autoscaling``, ``fleets``, ``managed``, ``network``, ``scaling``, ``budgets``, ``storage``), are
assembled here into the one table of Terraform types, ``_TRANSLATORS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from scanner.model import InputError, Notice, Provenance, Resource, Skip, Unknown
from scanner.sources.terraform.translate.autoscaling import _asg_tags, _autoscaling_group
from scanner.sources.terraform.translate.budgets import _budgets_budget
from scanner.sources.terraform.translate.coerce import Translator, _coerce, _is_map
from scanner.sources.terraform.translate.fleets import (
    _ec2_fleet,
    _spot_fleet_request,
    _spot_instance_request,
)
from scanner.sources.terraform.translate.instances import (
    _ebs_default_kms_key,
    _ebs_encryption_by_default,
    _ebs_volume,
    _instance,
    _launch_configuration,
    _launch_template,
)
from scanner.sources.terraform.translate.managed import (
    _awscc_sagemaker_cluster,
    _batch_compute_environment,
    _eks_node_group,
)
from scanner.sources.terraform.translate.network import (
    _default_route_table,
    _internet_gateway,
    _internet_gateway_attachment,
    _main_route_table_association,
    _route,
    _route_table,
    _route_table_association,
    _subnet,
    _vpc,
    _vpc_endpoint,
    _vpc_endpoint_policy,
    _vpc_endpoint_route_table_association,
)
from scanner.sources.terraform.translate.scaling import (
    _autoscaling_policy,
    _event_rule,
    _event_target,
    _lifecycle_hook,
    _metric_alarm,
)
from scanner.sources.terraform.translate.storage import (
    _placement_group,
    _s3_bucket,
    _s3_intelligent_tiering,
    _s3_lifecycle,
)

_TRANSLATORS: dict[str, Translator] = {
    "aws_ebs_volume": _ebs_volume,
    "aws_ebs_encryption_by_default": _ebs_encryption_by_default,
    "aws_ebs_default_kms_key": _ebs_default_kms_key,
    "aws_instance": _instance,
    "aws_launch_template": _launch_template,
    "aws_launch_configuration": _launch_configuration,
    "aws_autoscaling_group": _autoscaling_group,
    "aws_spot_instance_request": _spot_instance_request,
    "aws_spot_fleet_request": _spot_fleet_request,
    "aws_ec2_fleet": _ec2_fleet,
    "aws_eks_node_group": _eks_node_group,
    "aws_batch_compute_environment": _batch_compute_environment,
    "awscc_sagemaker_cluster": _awscc_sagemaker_cluster,
    "aws_vpc": _vpc,
    "aws_subnet": _subnet,
    "aws_route_table": _route_table,
    "aws_default_route_table": _default_route_table,
    "aws_route": _route,
    "aws_route_table_association": _route_table_association,
    "aws_main_route_table_association": _main_route_table_association,
    "aws_internet_gateway": _internet_gateway,
    "aws_internet_gateway_attachment": _internet_gateway_attachment,
    "aws_vpc_endpoint": _vpc_endpoint,
    "aws_vpc_endpoint_route_table_association": _vpc_endpoint_route_table_association,
    "aws_vpc_endpoint_policy": _vpc_endpoint_policy,
    # scaling and interruption handling (ASG-003, SPOT-003)
    "aws_autoscaling_policy": _autoscaling_policy,
    "aws_cloudwatch_metric_alarm": _metric_alarm,
    "aws_autoscaling_lifecycle_hook": _lifecycle_hook,
    "aws_cloudwatch_event_rule": _event_rule,
    "aws_cloudwatch_event_target": _event_target,
    "aws_budgets_budget": _budgets_budget,  # COST-002
    "aws_placement_group": _placement_group,  # NET-001
    # S3 buckets and their storage-class configurations (S3-001)
    "aws_s3_bucket": _s3_bucket,
    "aws_s3_bucket_intelligent_tiering_configuration": _s3_intelligent_tiering,
    "aws_s3_bucket_lifecycle_configuration": _s3_lifecycle,
}

# Kubernetes objects applied by Terraform: the Karpenter source translates them (imported only
# when a root module has one of these resources).
MANIFEST_TYPES: frozenset[str] = frozenset({"kubectl_manifest", "kubernetes_manifest",
                                            "helm_release"})
# Attributes whose text the HCL source renders with holes where parts are not known
# (scanner.sources.yaml_documents.holes), so that what is known of a manifest is still read.
HOLED_ATTRIBUTES: dict[str, tuple[str, ...]] = {"kubectl_manifest": ("yaml_body",),
                                                "helm_release": ("values",)}
SUPPORTED_TYPES: frozenset[str] = frozenset(_TRANSLATORS) | MANIFEST_TYPES


def _tags(values: Mapping[str, Any]) -> dict[str, str]:
    tags: dict[str, str] = {}
    for key in ("tags_all", "tags"):  # explicit tags win over provider default tags
        raw = values.get(key)
        if raw and _is_map(raw):
            for k, v in raw.items():
                if isinstance(k, str) and isinstance(v, str):
                    tags[k] = v
        elif isinstance(raw, list):  # the awscc provider's tags: [{key = …, value = …}]
            for item in raw:
                if _is_map(item) and isinstance(k := item.get("key"), str) \
                        and isinstance(v := item.get("value"), str):
                    tags[k] = v
    return tags


def translate(
    tf_type: str,
    address: str,
    values: Mapping[str, Any],
    *,
    provenance: Provenance,
    scope: str,
    skips: tuple[Skip, ...] = (),
    notices: list[Notice] | None = None,
    errors: list[InputError] | None = None,
    manifests: Any = None,
) -> list[Resource]:
    """The normalized Resource(s) for one Terraform resource instance; [] for other types.
    ``notices`` / ``errors``: where a translator that reads text (a Kubernetes manifest) says
    what it could not read; ``manifests``: the root module's (or plan's)
    :class:`~scanner.sources.karpenter.terraform.ManifestBudget`."""
    if tf_type in MANIFEST_TYPES:
        from scanner.sources.karpenter.terraform import from_terraform

        found, said, wrong = from_terraform(tf_type, address, values, provenance=provenance,
                                            scope=scope, skips=skips, budget=manifests)
        if notices is not None:
            notices.extend(said)
        if errors is not None:
            errors.extend(wrong)
        return found
    fn = _TRANSLATORS.get(tf_type)
    if fn is None:
        return []
    if not _is_map(values):
        values = {}
    kind, attrs, name, extra = fn(values)
    attrs = _coerce(kind, attrs)
    tags = _tags(values)
    if tf_type == "aws_autoscaling_group":
        tags.update(_asg_tags(values))
    if not isinstance(name, str):
        name = tags.get("Name")
    aliases: list[str] = []
    for candidate in (values.get("id"), values.get("arn"), name, *extra):
        if isinstance(candidate, str) and candidate and candidate != address \
                and candidate not in aliases:
            aliases.append(candidate)
    return [Resource(kind=kind, id=address, attrs=attrs, provenance=provenance, scope=scope,
                     name=name, tags=tags, aliases=tuple(aliases), skips=tuple(skips),
                     declared=True, tags_unknown=_tags_unknown(values))]


def _tags_unknown(values: Mapping[str, Any]) -> Unknown | None:
    """Why some tags are not known: the tags map, or a tag's key or value, is known only at
    apply (``tags = var.tags``, ``Owner = var.owner``); None when every tag is known."""
    for key in ("tags", "tags_all"):
        raw = values.get(key)
        if isinstance(raw, Unknown):
            return Unknown(f"{key} is not known ({raw.reason or 'known only at apply'})")
        items: Iterable[tuple[Any, Any]] = raw.items() if _is_map(raw) else ()
        if isinstance(raw, list):  # awscc: [{key = …, value = …}]
            items = [(i.get("key"), i.get("value")) for i in raw if _is_map(i)]
        for k, v in items:
            if not isinstance(k, str) or not isinstance(v, str):
                what = f"tag {k}" if isinstance(k, str) else "a tag's key"
                reason = v.reason if isinstance(v, Unknown) and v.reason else "not known"
                return Unknown(f"{what} in {key} is not known ({reason})")
    return None


def merge_ebs_defaults(resources: list[Resource]) -> list[Resource]:
    """Fold each scope's ``aws_ebs_default_kms_key`` into its ``aws_ebs_encryption_by_default``.

    Both translate to ``ec2.ebs_defaults``; the key-only one (no ``EbsEncryptionByDefault``)
    gives its ``KmsKeyId`` to the scope's encryption-by-default resource and disappears (its
    address becomes an alias). Without such a resource in the scope it stays on its own.
    Order is kept otherwise.
    """
    flags: dict[tuple[str, str | None], Resource] = {}  # by scope and provider configuration
    keys: list[Resource] = []
    for r in resources:
        if r.kind == "ec2.ebs_defaults":
            if "EbsEncryptionByDefault" in r.attrs:
                flags.setdefault((r.scope, r.provenance.provider), r)
            else:
                keys.append(r)
    if not keys:
        return resources
    merged: set[int] = set()
    for key in keys:
        target = flags.get((key.scope, key.provenance.provider))
        if target is None:
            continue
        if "KmsKeyId" in key.attrs and target.attrs.get("KmsKeyId") is None:
            target.attrs["KmsKeyId"] = key.attrs["KmsKeyId"]
        target.aliases = (*target.aliases, key.id)
        target.skips = (*target.skips, *key.skips)
        merged.add(id(key))
    return [r for r in resources if id(r) not in merged]
