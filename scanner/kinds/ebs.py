"""EBS: volumes and the account/region defaults."""

from __future__ import annotations

from scanner.kinds.facts import EBS_KMS_KEYS
from scanner.kinds.schema import CloudFormation, Kind, Terraform
from scanner.kinds.types import Bool, Int, List, Obj, Str

KINDS = (
    Kind(
        name="ec2.volume",
        doc="an EBS volume",
        attributes={
            "Encrypted": Bool(),
            "KmsKeyId": Str(),
            "Size": Int(),
            "VolumeType": Str(),
            "AvailabilityZone": Str(),
            "Iops": Int(),
            "Throughput": Int(),
            "SnapshotId": Str(),
            "MultiAttachEnabled": Bool(),
            "Attachments": List(Obj({"InstanceId": Str(), "Device": Str(), "State": Str(),
                                     "DeleteOnTermination": Bool()}), doc="live"),
        },
        terraform=(Terraform("aws_ebs_volume"),),
        cloudformation=(CloudFormation("AWS::EC2::Volume"),),
        live="DescribeVolumes",
        facts=(EBS_KMS_KEYS.name,),
    ),
    Kind(
        name="ec2.ebs_defaults",
        doc="the account/region EBS defaults; id ACCOUNT/REGION live",
        attributes={
            "EbsEncryptionByDefault": Bool(doc="Terraform: enabled, true when omitted"),
            "KmsKeyId": Str(doc="the default key, when known"),
            "SseType": Str(doc="live"),
        },
        terraform=(Terraform("aws_ebs_encryption_by_default"),
                   Terraform("aws_ebs_default_kms_key",
                             note="its KmsKeyId merges into the scope's defaults")),
        live="GetEbsEncryptionByDefault",
    ),
)
