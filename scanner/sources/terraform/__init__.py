"""Terraform: HCL code (:mod:`.hcl`) and plan JSON (:mod:`.plan`).

Both produce the values of each resource instance in the shape of terraform's plan JSON and hand
them to :mod:`.translate`, the one place that knows how a Terraform resource type maps onto the
resource model, so the two sources cannot disagree about a resource.
"""
