"""Remediations spelled in the YAML formats (Karpenter, eksctl, ParallelCluster): a finding on a
NodePool says what to change in the NodePool, not in an ``aws_launch_template``. Each policy's
remediation gets these per kind through :func:`with_formats`; the text names the field."""

from __future__ import annotations

from dataclasses import replace

from policies.base import Remediation

NODE_POOL = "karpenter.node_pool"
NODE_CLASS = "karpenter.ec2_node_class"
NODE_GROUP = "eksctl.node_group"
QUEUE = "parallelcluster.queue"
HEAD = "parallelcluster.head_node"
STORAGE = "parallelcluster.shared_storage"

FIXES: dict[str, dict[str, str]] = {
    "EBS-001": {
        NODE_CLASS: "In the EC2NodeClass, set encrypted: true on every "
                    "spec.blockDeviceMappings[].ebs (or remove blockDeviceMappings: Karpenter's "
                    "default mappings are encrypted).",
        NODE_GROUP: "In the node group, set volumeEncrypted: true (and on every "
                    "additionalVolumes entry).",
        QUEUE: "Set ComputeSettings.LocalStorage.RootVolume.Encrypted: true (or remove false: "
               "ParallelCluster encrypts by default).",
        HEAD: "Set HeadNode.LocalStorage.RootVolume.Encrypted: true (or remove false).",
        STORAGE: "Set SharedStorage[].EbsSettings.Encrypted: true (or remove false).",
    },
    "EBS-003": {
        NODE_CLASS: "Set kmsKeyID to a customer-managed KMS key on every "
                    "spec.blockDeviceMappings[].ebs of the EC2NodeClass.",
        NODE_GROUP: "Set volumeKmsKeyID to a customer-managed KMS key.",
        QUEUE: "Set ComputeSettings.LocalStorage.RootVolume.KmsKeyId to a customer-managed key.",
        HEAD: "Set HeadNode.LocalStorage.RootVolume.KmsKeyId to a customer-managed key.",
        STORAGE: "Set SharedStorage[].EbsSettings.KmsKeyId to a customer-managed key.",
    },
    "VPC-004": {
        NODE_POOL: "Set associatePublicIPAddress: false on its EC2NodeClass and select only "
                   "private subnets in subnetSelectorTerms.",
        NODE_GROUP: "Set privateNetworking: true (the nodes then run in the private subnets).",
        QUEUE: "Set Networking.AssignPublicIp: false and use private subnets behind NAT.",
        HEAD: "Set HeadNode.Networking.ElasticIp: false and reach the head node through SSM "
              "or a bastion.",
    },
    "SPOT-001": {
        NODE_GROUP: "Set instancesDistribution.maxPrice to at most max_price_ratio x the "
                    "on-demand price of every instance type.",
        QUEUE: "Set SpotPrice (AWS Batch: SpotBidPercentage) on every compute resource to at "
               "most max_price_ratio x on-demand.",
    },
    "SPOT-002": {
        NODE_GROUP: "Raise instancesDistribution.maxPrice to at least min_price_ratio x "
                    "on-demand.",
        QUEUE: "Raise SpotPrice (AWS Batch: SpotBidPercentage) to at least min_price_ratio x "
               "on-demand.",
    },
    "ASG-001": {
        NODE_GROUP: "Use an instancesDistribution with onDemandPercentageAboveBaseCapacity "
                    "inside the band (30 for the 70/30 mix) and a small onDemandBaseCapacity.",
    },
    "ASG-002": {
        NODE_POOL: "Allow more instance types for spot: list several in "
                   "node.kubernetes.io/instance-type, or choose by instance-family / "
                   "instance-size / instance-gpu-count instead of one type.",
        NODE_GROUP: "List at least two instance types (instanceTypes, or "
                    "instancesDistribution.instanceTypes) and set spotAllocationStrategy: "
                    "price-capacity-optimized.",
        QUEUE: "List several types under the compute resource's Instances and set the queue's "
               "AllocationStrategy: capacity-optimized.",
    },
}


def with_formats(policy_id: str, remediation: Remediation) -> Remediation:
    """``remediation`` with the YAML formats' own text for their kinds."""
    fixes = FIXES.get(policy_id, {})
    by_kind = dict(remediation.by_kind)
    for kind, text in fixes.items():
        by_kind.setdefault(kind, Remediation(text=text))
    return replace(remediation, by_kind=by_kind)
