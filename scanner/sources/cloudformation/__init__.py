"""CloudFormation templates (YAML, JSON, CDK synth output) → Resources.

Enters: a template file, parameter overrides, region and account id. Leaves: a SourceResult.
Entry point: :func:`.reader.load_template`; :mod:`.yaml_nodes` reads YAML/JSON with line numbers
and short-form tags.
"""
