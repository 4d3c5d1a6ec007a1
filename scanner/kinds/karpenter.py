"""Karpenter: NodePools and the EC2NodeClasses they launch from (karpenter.sh/v1 and
karpenter.k8s.aws/v1, also v1beta1). Attribute names are Karpenter's, capitalised
(``blockDeviceMappings[].ebs.encrypted`` → ``BlockDeviceMappings[].Ebs.Encrypted``)."""

from __future__ import annotations

from scanner.kinds.schema import Kind
from scanner.kinds.types import AsGiven, Bool, Int, List, Map, Obj, Str

FORMATS = ("Karpenter manifests (YAML, one or more documents; Terraform `kubectl_manifest`, "
           "`kubernetes_manifest` and `helm_release` values whose text is known statically)")

KINDS = (
    Kind(
        name="karpenter.node_pool",
        doc="a Karpenter NodePool; id `NodePool/NAME` in a manifest file, the Terraform "
            "address (with `/NodePool/NAME` after a `helm_release`) when Terraform applies it",
        attributes={
            "ApiVersion": Str(),
            "Name": Str(doc="metadata.name"),
            "NodeClassRef": Obj({"Group": Str(), "Kind": Str(), "Name": Str(),
                                 "ApiVersion": Str(doc="v1beta1")}),
            "Requirements": List(Obj({
                "Key": Str(doc="a well-known label such as karpenter.sh/capacity-type"),
                "Operator": Str(doc="In, NotIn, Exists, DoesNotExist, Gt, Lt"),
                "Values": List(Str()),
                "MinValues": Int(),
            }), doc="spec.template.spec.requirements"),
            "Limits": AsGiven(),
            "Weight": Int(),
            "Disruption": AsGiven(),
        },
        formats=FORMATS,
    ),
    Kind(
        name="karpenter.ec2_node_class",
        doc="a Karpenter EC2NodeClass; aliases: its name",
        attributes={
            "ApiVersion": Str(),
            "Name": Str(doc="metadata.name"),
            "AmiFamily": Str(doc="absent with an amiSelectorTerms alias: the alias's family"),
            "AmiSelectorTerms": AsGiven(),
            "SubnetSelectorTerms": List(Obj({
                "Tags": Map(Str(), doc='{key: value}; "*" matches any value'),
                "Id": Str(),
            }), doc="terms are ORed, the tags of one term ANDed"),
            "SecurityGroupSelectorTerms": AsGiven(),
            "AssociatePublicIpAddress": Bool(doc="Karpenter: associatePublicIPAddress; absent "
                                                 "= the subnet's MapPublicIpOnLaunch"),
            "BlockDeviceMappings": List(Obj({
                "DeviceName": Str(),
                "RootVolume": Bool(),
                "Ebs": Obj({
                    "Encrypted": Bool(),
                    "KmsKeyId": Str(doc="Karpenter: kmsKeyID"),
                    "VolumeSize": Str(doc="a Kubernetes quantity, e.g. 100Gi"),
                    "VolumeType": Str(),
                    "Iops": Int(),
                    "Throughput": Int(),
                    "SnapshotId": Str(doc="Karpenter: snapshotID"),
                    "DeleteOnTermination": Bool(),
                }),
            }), doc="absent: Karpenter's default mappings for the AMI family, encrypted "
                    "(Custom: none, the AMI's own)"),
            "Role": Str(),
            "InstanceProfile": Str(),
            "Tags": Map(Str(), doc="tags of the instances it launches"),
        },
        formats=FORMATS,
    ),
)
