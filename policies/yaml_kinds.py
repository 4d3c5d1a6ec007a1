"""The kinds of the YAML formats (Karpenter, eksctl, ParallelCluster) that a policy's ``fixes``
name: a finding on a NodePool says what to change in the NodePool, not in an
``aws_launch_template``."""

NODE_POOL = "karpenter.node_pool"
NODE_CLASS = "karpenter.ec2_node_class"
NODE_GROUP = "eksctl.node_group"
QUEUE = "parallelcluster.queue"
HEAD = "parallelcluster.head_node"
STORAGE = "parallelcluster.shared_storage"
