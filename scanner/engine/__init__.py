"""Evaluation: the configuration (``config``), which policies run and how their results become
findings, suppressions, mutes and baselines (``evaluate``), and which findings a change is
answerable for (``change_scope``)."""
