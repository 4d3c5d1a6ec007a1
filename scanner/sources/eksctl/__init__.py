"""eksctl ``ClusterConfig`` files (eksctl.io/v1alpha5) → Resources: one ``eksctl.node_group``
per entry of ``nodeGroups`` (unmanaged: an Auto Scaling group, with its
``instancesDistribution`` as the mixed instances policy) and of ``managedNodeGroups``.

Enters: a YAML (or JSON) file. Leaves: a SourceResult of node groups, each carrying the
cluster's VPC section (which subnets are public and private, or none when eksctl creates the
VPC), with input errors for a file that is clearly a ClusterConfig but malformed.
Entry points: :func:`.reader.read_if_cluster_config` (None for YAML that is not a
ClusterConfig) and :func:`.sniff.looks_like_eksctl` (the cheap text test the scan runs first).
"""
