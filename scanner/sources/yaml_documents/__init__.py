"""YAML files of one or more documents (Kubernetes manifests, eksctl and ParallelCluster
configurations) → plain Python values with line numbers; shared by the formats that are YAML
but not CloudFormation.

Enters: the bytes (or text) of a YAML file. Leaves: its documents as plain values (dicts, lists,
strings, numbers), each with its line span and the line spans of its mappings and lists, or a
:class:`~.reader.YamlError` naming the line. Entry point: :func:`.reader.load_documents`.

Anchors and aliases are accepted, because every tool that reads these formats accepts them
(kubectl and eksctl read YAML with Go's yaml libraries, ParallelCluster with PyYAML), but an
alias is expanded against a budget of values per file, so an alias bomb is an input error, not
an exhausted memory. :mod:`.holes` marks the parts of a text that were not known when it was
rendered (a Terraform interpolation, a ``${VAR}`` placeholder) so that they read as UNKNOWN.
"""
