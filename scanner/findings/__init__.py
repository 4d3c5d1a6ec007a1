"""The report document, every renderer's one input: built from an evaluation (``report``), its
file paths as repository paths (``paths``), redacted of secrets (``redact``), validated by its
JSON Schema (``schema``, ``findings.schema.json``) and merged from shards (``merge``)."""
