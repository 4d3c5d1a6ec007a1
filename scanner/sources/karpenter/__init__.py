"""Karpenter manifests → Resources: ``NodePool`` (karpenter.sh/v1, v1beta1) and ``EC2NodeClass``
(karpenter.k8s.aws/v1, v1beta1).

Enters: a YAML (or JSON) file of one or more Kubernetes documents; or, from the Terraform
source, the text of a ``kubectl_manifest``'s ``yaml_body``, the object of a
``kubernetes_manifest``'s ``manifest`` and the ``values`` of a ``helm_release``.
Leaves: a SourceResult of ``karpenter.node_pool`` and ``karpenter.ec2_node_class`` resources
(input errors for a file that is clearly Karpenter but malformed, notices).
Entry points: :func:`.reader.read_if_manifests` (files; None for YAML that holds no Karpenter
object), :func:`.terraform.from_terraform` (Terraform resources),
:func:`.sniff.looks_like_karpenter` (the cheap text test the scan runs first); :mod:`.objects`
turns one parsed object into a Resource for both.
"""
