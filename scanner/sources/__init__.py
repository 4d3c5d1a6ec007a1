"""IaC sources: one package per format, each turning files into normalized Resources.

- :mod:`.terraform` — Terraform: ``hcl/`` reads ``.tf`` / ``.tf.json`` code before any plan exists,
  ``plan/`` reads ``terraform show -json`` plans; ``translate`` (shared by both) turns a resource's
  values into the model.
- :mod:`.cloudformation` — CloudFormation YAML/JSON templates and CDK synth output (and, through
  ``embedded``, the ParallelCluster configurations and Karpenter manifests a template holds).
- :mod:`.karpenter`, :mod:`.eksctl`, :mod:`.parallelcluster` — the YAML formats; a file is read
  once by :mod:`.yaml_documents.dispatch`, which hands each document to the format it is.

Each package's ``reader`` module is its entry point (``looks_like_*`` and ``load_*``); everything
else in the package is internal to it. What enters: file paths and options; what leaves: a
:class:`~scanner.model.SourceResult` (resources, input errors, notices). The live source is
:mod:`scanner.aws`.
"""
