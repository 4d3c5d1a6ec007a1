"""Terraform plan JSON (``terraform show -json PLAN``) → Resources.

Enters: a plan file (and optionally the directory of its ``.tf`` files). Leaves: a SourceResult.
Entry point: :func:`.reader.load_plan`; :mod:`.locate` finds each resource's block in the
``.tf`` files so findings point at source lines.
"""
