"""AWS ParallelCluster v3 cluster configurations → Resources: one ``parallelcluster.queue`` per
Slurm (or AWS Batch) queue, the ``parallelcluster.head_node``, and one
``parallelcluster.shared_storage`` per shared EBS volume.

Enters: a YAML (or JSON) cluster configuration file. Leaves: a SourceResult of those
resources, with input errors for a file that is clearly a cluster configuration but malformed.
Entry points: :func:`.reader.read_if_cluster_configuration` (None for YAML that is not one) and
:func:`.sniff.looks_like_parallelcluster` (the cheap text test the scan runs first).
"""
