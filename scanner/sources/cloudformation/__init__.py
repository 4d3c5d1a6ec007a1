"""CloudFormation templates (YAML, JSON, CDK synth output) → Resources.

Enters: a template file, parameter overrides, region and account id. Leaves: a SourceResult.
Entry points: :func:`.reader.load_template`, and :func:`.reader.read_if_template` for a file
that may not be a template (decided by structure); :mod:`.yaml_nodes` reads YAML/JSON with
line numbers and short-form tags. The template is walked by :mod:`.template`, evaluated by
:mod:`.evaluate` (intrinsic functions, conditions, the budget) and each resource translated by
:mod:`.resources`.
"""
