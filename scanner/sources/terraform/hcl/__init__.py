"""Terraform HCL source: ``.tf`` / ``.tf.json`` code → Resources, before any plan exists.

Enters: directories and ``.tf`` files, ``--var-file`` / ``--var`` values. Leaves: a SourceResult.
Entry point: :func:`.reader.load_terraform_dir`. Inside: :mod:`.config` reads a directory's files
(:mod:`.parse` for native syntax with tree-sitter, :mod:`.json_syntax` for ``.tf.json``),
:mod:`.modules` instantiates modules (count / for_each, variables, locals, module calls),
:mod:`.expressions` evaluates expressions over :mod:`.values` with the built-ins of
:mod:`.functions`, :mod:`.type_constraints` converts variable values to their declared types,
:mod:`.data_sources` evaluates the data sources that are pure functions of their arguments.
"""
