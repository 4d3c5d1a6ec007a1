"""EBS encryption: volumes and block device mappings (EBS-001), account default (EBS-002),
customer-managed keys (EBS-003)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from policies.base import Context, Remediation, policy
from policies.yaml_kinds import HEAD, NODE_CLASS, NODE_GROUP, QUEUE, STORAGE
from scanner.compute import DEVICES, DEVICES_LIVE, Device, kinds_with
from scanner.compute.view import AWS_OWNED
from scanner.kinds.facts import EBS_KMS_KEYS
from scanner.model import Resource, Result, Severity, Status, Unknown

# The volumes and every kind whose view carries storage devices (block device mappings of
# instances, launch templates, launch configurations, spot requests and fleets, node volumes of
# EKS node groups and Batch compute environments in IaC; live, the volumes themselves carry the
# state, so only they and the account defaults are read). EBS-003 also reads, live, the kinds
# whose volumes are not in the account at all (a SageMaker HyperPod cluster's configuration is
# all there is; HyperPod always encrypts them, so EBS-001 has nothing to judge there).
DEVICE_KINDS = kinds_with(DEVICES)
AWS_MANAGED_KEYS = ("alias/aws/ebs",)
OBSERVED = ("ec2.volume", "ec2.ebs_defaults")
OBSERVED_KEYS = (*OBSERVED, *kinds_with(DEVICES_LIVE), EBS_KMS_KEYS.name)


def devices(resource: Resource, ctx: Context) -> tuple[Device, ...]:
    view = ctx.compute.of(resource)
    return view.devices if view is not None else ()


def default_encryption(resource: Resource, ctx: Context) -> tuple[bool | Unknown, Any]:
    """Is EBS encryption by default known to be on in the resource's scope? (and its key)"""
    memo: dict[Any, tuple[bool | Unknown, Any]] = ctx.memo.setdefault("ebs_defaults", {})
    provider = resource.provenance.provider
    if (resource.scope, provider) not in memo:
        memo[(resource.scope, provider)] = _scope_defaults(resource.scope, provider, ctx)
    return memo[(resource.scope, provider)]


def _scope_defaults(scope: str, provider: str | None,
                    ctx: Context) -> tuple[bool | Unknown, Any]:
    found: bool | Unknown = False
    key: Any = None
    settings = ctx.index.of_kind("ec2.ebs_defaults", scope)
    if provider is not None and provider != "?":
        # the settings of the same provider configuration decide, when there are any
        own = [d for d in settings if d.provenance.provider == provider]
        settings = own or settings
    for d in settings:
        value = d.get("EbsEncryptionByDefault")
        own_key = d.get("KmsKeyId")
        if isinstance(d.exists, Unknown):  # a setting that may not be created decides nothing
            maybe = Unknown(f"whether {d.id} exists is not known ({d.exists.reason})")
            value = maybe if value is True else value
            own_key = maybe if own_key else own_key
        theirs = d.provenance.provider
        if provider is not None and (theirs != provider or provider == "?"):
            # encryption by default is per account and region: set under another aws provider
            # configuration (aws.west, a module's own) it may cover another region
            other = Unknown(f"{d.id} is created by the aws provider configuration {theirs}, "
                            f"this resource by {provider}: whether they deploy to the same "
                            "account and region is not known")
            value = other if value is True else value
            own_key = other if own_key else own_key
        key = key or own_key
        if value is True:
            found = True
        elif isinstance(value, Unknown) and found is not True:
            found = value
    return found, key


def _effective(dev: Device, resource: Resource, ctx: Context) -> tuple[Any, Any, str]:
    """(encrypted, key, how) for a device, applying the default-encryption rule to absent values
    and the snapshot rule to a volume created from a snapshot."""
    default, key = default_encryption(resource, ctx)
    if dev.encrypted is None:
        if default is True:
            return True, _key(dev, key), "Encrypted unset; encryption by default is on"
        if isinstance(default, Unknown):
            return default, None, "Encrypted unset; encryption by default is not known"
        if dev.from_snapshot:
            return (_snapshot_decides(dev, _UNSET), None,
                    f"Encrypted unset; created from the snapshot in {dev.snapshot_path}")
        return False, None, "Encrypted unset and encryption by default is not known to be on"
    if dev.encrypted is False and dev.from_snapshot:
        return (_snapshot_decides(dev, _FALSE), None,
                f"Encrypted = False; created from the snapshot in {dev.snapshot_path}")
    # an encrypted volume without a key uses the account's default EBS key
    return dev.encrypted, _key(dev, key), f"Encrypted = {dev.encrypted!r}"


_UNSET = ("with Encrypted unset, a volume created from a snapshot is encrypted exactly when the "
          "snapshot is")
_FALSE = ("Encrypted = false does not decrypt: a volume created from an encrypted snapshot is "
          "encrypted all the same")


def _snapshot_decides(dev: Device, setting: str) -> Unknown:
    """A volume created from a snapshot without Encrypted = true is encrypted when the snapshot
    is (AWS always encrypts a volume from an encrypted snapshot), and the model carries no
    snapshot's encryption: not known, whatever the snapshot id."""
    snap = dev.snapshot
    if isinstance(snap, Unknown):
        what = f"its snapshot ({dev.snapshot_path}) is not known" + (
            f": {snap.reason}" if snap.reason else "")
    else:  # an id, or a reference (Ref) to another resource's attribute
        what = (f"it is created from the snapshot {snap} ({dev.snapshot_path}), whose "
                "encryption is not known here")
    return Unknown(f"{what}; {setting}")


def _key(dev: Device, default_key: Any) -> Any:
    """The device's own key (Unknown stays Unknown), else the account's default EBS key."""
    return default_key if dev.kms_key is None or dev.kms_key == "" else dev.kms_key


# Where Encrypted (and the key) is set, per kind: Terraform and CloudFormation spell it
# differently for a volume, an instance, a launch template, a launch configuration, a spot request
# and a spot fleet, and a finding's remediation must match the resource it is on.
_DEFAULTS_TF = ('\n# or, for the whole account/region:\n'
                'resource "aws_ebs_encryption_by_default" "on" {\n  enabled = true\n}')
_TF = {
    "ec2.volume": ('resource "aws_ebs_volume" "x" {{\n  {enc}\n}}'),
    "ec2.instance": ('resource "aws_instance" "x" {{\n  root_block_device {{\n    {enc4}\n  }}\n'
                     '  ebs_block_device {{\n    device_name = "/dev/sdf"\n    {enc4}\n  }}\n}}'),
    "ec2.launch_template": ('resource "aws_launch_template" "x" {{\n'
                            '  block_device_mappings {{\n    device_name = "/dev/xvda"\n'
                            '    ebs {{\n      {enc6}\n    }}\n  }}\n}}'),
    "autoscaling.launch_configuration": ('resource "aws_launch_configuration" "x" {{\n'
                                         '  root_block_device {{\n    {enc4}\n  }}\n}}'),
    "ec2.spot_request": ('resource "aws_spot_instance_request" "x" {{\n'
                         '  root_block_device {{\n    {enc4}\n  }}\n}}'),
    "ec2.spot_fleet": ('resource "aws_spot_fleet_request" "x" {{\n  launch_specification {{\n'
                       '    root_block_device {{\n      {enc6}\n    }}\n  }}\n}}'),
    "eks.nodegroup": ('resource "aws_launch_template" "nodes" {{\n'
                      '  block_device_mappings {{\n    device_name = "/dev/xvda"\n'
                      '    ebs {{\n      {enc6}\n    }}\n  }}\n}}\n'
                      'resource "aws_eks_node_group" "x" {{\n  launch_template {{\n'
                      '    id      = aws_launch_template.nodes.id\n'
                      '    version = aws_launch_template.nodes.latest_version\n  }}\n}}'),
    "batch.compute_environment": ('resource "aws_launch_template" "nodes" {{\n'
                                  '  block_device_mappings {{\n    device_name = "/dev/xvda"\n'
                                  '    ebs {{\n      {enc6}\n    }}\n  }}\n}}\n'
                                  'resource "aws_batch_compute_environment" "x" {{\n'
                                  '  compute_resources {{\n    launch_template {{\n'
                                  '      launch_template_id = aws_launch_template.nodes.id\n'
                                  '    }}\n  }}\n}}'),
    "sagemaker.cluster": "",  # no Terraform resource in the AWS provider
}
_CFN = {
    "ec2.volume": "Properties:\n  Encrypted: true{key}",
    "ec2.instance": "Properties:\n  BlockDeviceMappings:\n    - DeviceName: /dev/xvda\n"
                    "      Ebs: {ebs}",
    "ec2.launch_template": "Properties:\n  LaunchTemplateData:\n    BlockDeviceMappings:\n"
                           "      - DeviceName: /dev/xvda\n        Ebs: {ebs}",
    "autoscaling.launch_configuration": "Properties:\n  BlockDeviceMappings:\n"
                                        "    - DeviceName: /dev/xvda\n      Ebs: {ebs}",
    "ec2.spot_request": "",  # no CloudFormation type
    "ec2.spot_fleet": "Properties:\n  SpotFleetRequestConfigData:\n    LaunchSpecifications:\n"
                      "      - BlockDeviceMappings:\n          - DeviceName: /dev/xvda\n"
                      "            Ebs: {ebs}",
    "eks.nodegroup": "NodesTemplate:  # AWS::EC2::LaunchTemplate\n  Properties:\n"
                     "    LaunchTemplateData:\n      BlockDeviceMappings:\n"
                     "        - DeviceName: /dev/xvda\n          Ebs: {ebs}\n"
                     "# and on the AWS::EKS::Nodegroup:\n"
                     "#   LaunchTemplate: {{Id: !Ref NodesTemplate}}",
    "batch.compute_environment": "NodesTemplate:  # AWS::EC2::LaunchTemplate\n  Properties:\n"
                                 "    LaunchTemplateData:\n      BlockDeviceMappings:\n"
                                 "        - DeviceName: /dev/xvda\n          Ebs: {ebs}\n"
                                 "# and in the compute environment's ComputeResources:\n"
                                 "#   LaunchTemplate: {{LaunchTemplateId: !Ref NodesTemplate}}",
    # HyperPod encrypts its volumes itself: only the key can be chosen (EBS-003)
    "sagemaker.cluster": "{hyperpod}",
}


_HYPERPOD_KEYS = ("Properties:\n  InstanceGroups:\n    - InstanceStorageConfigs:\n"
                  "        - EbsVolumeConfig:\n"
                  "            {RootVolume: true, VolumeKmsKeyId: !GetAtt EbsKey.Arn}\n"
                  "        - EbsVolumeConfig:\n"
                  "            {VolumeSizeInGB: 500, VolumeKmsKeyId: !GetAtt EbsKey.Arn}")


def _storage_remediation(text: str, *, key: bool) -> Remediation:
    """The remediation of EBS-001 (key False) or EBS-003 (key True), one per kind."""

    def enc(indent: int) -> str:
        if not key:
            return "encrypted = true"
        return "encrypted  = true\n" + " " * indent + "kms_key_id = aws_kms_key.ebs.arn"

    by_kind = {}
    for kind, tf in _TF.items():
        terraform = tf.format(enc=enc(2), enc4=enc(4), enc6=enc(6)) + (
            "" if key or not tf else _DEFAULTS_TF)
        cfn = _CFN[kind].format(
            key="\n  KmsKeyId: !GetAtt EbsKey.Arn" if key else "",
            ebs="{Encrypted: true, KmsKeyId: !GetAtt EbsKey.Arn}" if key else "{Encrypted: true}",
            hyperpod=_HYPERPOD_KEYS if key else "")
        by_kind[kind] = Remediation(text=text, terraform=terraform, cloudformation=cfn)
    volume = by_kind["ec2.volume"]
    return Remediation(text=text, terraform=volume.terraform,
                       cloudformation=volume.cloudformation, by_kind=by_kind)


@policy(
    id="EBS-001",
    title="EBS storage is not encrypted",
    severity=Severity.HIGH,
    category="security",
    kinds=DEVICE_KINDS,
    needs=("ec2.ebs_defaults",),
    observed_needs=OBSERVED,
    description=(
        "EBS volumes and the block device mappings of instances, launch templates, launch "
        "configurations and spot requests must be encrypted. In IaC an absent Encrypted passes "
        "only where encryption by default is enabled in the same root module / template "
        "(Terraform: through the same aws provider configuration, i.e. the same region). A "
        "volume created from a snapshot without Encrypted true is encrypted exactly when the "
        "snapshot is (Encrypted false does not decrypt it): UNKNOWN, since the scan does not "
        "hold the snapshot's encryption; a live volume's own Encrypted is judged."),
    remediation=_storage_remediation(
        "Set Encrypted to true on every EBS volume and block device mapping, or enable EBS "
        "encryption by default for the account and region in the same configuration.",
        key=False),
    fixes={
        NODE_CLASS: ("In the EC2NodeClass, set encrypted: true on every "
                     "spec.blockDeviceMappings[].ebs (or remove blockDeviceMappings: Karpenter's "
                     "default mappings are encrypted)."),
        NODE_GROUP: ("In the node group, set volumeEncrypted: true (and on every additionalVolumes"
                     " entry)."),
        QUEUE: ("Set ComputeSettings.LocalStorage.RootVolume.Encrypted: true (or remove false: "
                "ParallelCluster encrypts by default)."),
        HEAD: "Set HeadNode.LocalStorage.RootVolume.Encrypted: true (or remove false).",
        STORAGE: "Set SharedStorage[].EbsSettings.Encrypted: true (or remove false).",
    },
)
def ebs_001(resource: Resource, ctx: Context) -> Iterator[Result]:
    # a volume the service always encrypts (HyperPod) has nothing to fail: EBS-003 judges its key
    devs = tuple(d for d in devices(resource, ctx) if not d.service_encrypted)
    if not devs:
        return
    failing, unknown, evidence = [], [], {}
    for dev in devs:
        enc, _key, how = _effective(dev, resource, ctx)
        evidence[dev.path] = how
        if isinstance(enc, Unknown) or (enc is not True and enc is not False):
            unknown.append((dev, enc))
        elif enc is False:
            failing.append(dev)
    if failing:
        names = ", ".join(d.name for d in failing)
        yield ctx.result(resource, Status.FAIL, f"EBS storage not encrypted: {names}",
                         path=failing[0].path, evidence=evidence)
    elif unknown:
        dev, enc = unknown[0]
        reason = enc.reason if isinstance(enc, Unknown) and enc.reason else f"value {enc!r}"
        yield ctx.result(resource, Status.UNKNOWN,
                         f"cannot tell whether {dev.name} is encrypted: {reason}",
                         path=dev.path, evidence=evidence)
    else:
        yield ctx.result(resource, Status.PASS, "EBS storage is encrypted", evidence=evidence)


@policy(
    id="EBS-002",
    title="EBS encryption by default is disabled",
    severity=Severity.MEDIUM,
    category="security",
    kinds=("ec2.ebs_defaults",),
    description="Encryption by default must be enabled for the account and region.",
    remediation=Remediation(
        text="Enable EBS encryption by default in every region you use.",
        terraform='resource "aws_ebs_encryption_by_default" "on" {\n  enabled = true\n}',
        cloudformation="",
    ),
    sources="HPL",
)
def ebs_002(resource: Resource, ctx: Context) -> Iterator[Result]:
    value = resource.get("EbsEncryptionByDefault")
    evidence = {"EbsEncryptionByDefault": value}
    if value is True:
        yield ctx.result(resource, Status.PASS, "encryption by default is enabled",
                         evidence=evidence)
    elif value is False:
        yield ctx.result(resource, Status.FAIL, "encryption by default is disabled",
                         path="EbsEncryptionByDefault", evidence=evidence)
    else:
        reason = value.reason if isinstance(value, Unknown) else f"value {value!r}"
        yield ctx.result(resource, Status.UNKNOWN,
                         f"cannot tell whether encryption by default is on: {reason}",
                         path="EbsEncryptionByDefault", evidence={"EbsEncryptionByDefault": None})


def _aws_managed(key: Any, dev: Device) -> bool | Unknown:
    if isinstance(key, Unknown):
        return key
    if key is None or key == "":
        # The account's default EBS key applies: aws/ebs unless the account chose another, which
        # only the account (live: GetEbsDefaultKmsKeyId) or an aws_ebs_default_kms_key says.
        return Unknown("it names no KMS key, so the account's default EBS key applies, and "
                       "nothing read here says which key that is (aws_ebs_default_kms_key)")
    if isinstance(key, str) and any(key.endswith(k) for k in AWS_MANAGED_KEYS):
        return True
    manager = dev.key_manager
    if isinstance(manager, Unknown):
        return manager
    return manager in ("AWS", AWS_OWNED) if isinstance(manager, str) else False


@policy(
    id="EBS-003",
    title="EBS encrypted with the AWS-managed key, not a customer-managed key",
    severity=Severity.LOW,
    category="security",
    kinds=DEVICE_KINDS,
    needs=("ec2.ebs_defaults", EBS_KMS_KEYS.name),  # live: default key and key aliases
    observed_needs=OBSERVED_KEYS,
    description="Encrypted EBS storage must use a customer-managed KMS key (off by default).",
    remediation=_storage_remediation(
        "Set KmsKeyId to a customer-managed KMS key (and the account's default EBS key).",
        key=True),
    fixes={
        NODE_CLASS: ("Set kmsKeyID to a customer-managed KMS key on every "
                     "spec.blockDeviceMappings[].ebs of the EC2NodeClass."),
        NODE_GROUP: "Set volumeKmsKeyID to a customer-managed KMS key.",
        QUEUE: "Set ComputeSettings.LocalStorage.RootVolume.KmsKeyId to a customer-managed key.",
        HEAD: "Set HeadNode.LocalStorage.RootVolume.KmsKeyId to a customer-managed key.",
        STORAGE: "Set SharedStorage[].EbsSettings.KmsKeyId to a customer-managed key.",
    },
    enabled_by_default=False,
)
def ebs_003(resource: Resource, ctx: Context) -> Iterator[Result]:
    devs = devices(resource, ctx)
    checked, failing, unknown = {}, [], []
    for dev in devs:
        enc, key, _how = _effective(dev, resource, ctx)
        if enc is not True:
            continue  # unencrypted is EBS-001's finding
        managed = _aws_managed(key, dev)
        checked[dev.path] = key if isinstance(key, str) else None
        if isinstance(managed, Unknown):
            unknown.append((dev, managed))
        elif managed:
            failing.append(dev)
    if not checked:
        return
    if failing:
        owned = [d for d in failing if d.key_manager == AWS_OWNED]
        which = "an AWS owned key" if len(owned) == len(failing) else "the AWS-managed key"
        yield ctx.result(resource, Status.FAIL,
                         f"encrypted with {which}: " + ", ".join(d.name for d in failing),
                         path=failing[0].path, evidence={"KmsKeyId": checked})
    elif unknown:
        dev, u = unknown[0]
        yield ctx.result(resource, Status.UNKNOWN, f"KMS key of {dev.name} not known: {u.reason}",
                         path=dev.path, evidence={"KmsKeyId": checked})
    else:
        yield ctx.result(resource, Status.PASS, "encrypted with a customer-managed key",
                         evidence={"KmsKeyId": checked})
