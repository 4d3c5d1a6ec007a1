"""checkov, in both directions.

- gpuaudit's policies inside checkov: :mod:`.checks` is a directory for
  ``checkov --external-checks-dir`` (``gpuaudit checkov-dir`` prints it). Its checks are thin:
  :mod:`.conf` turns the configuration checkov hands a check (one Terraform or CloudFormation
  resource) into a :class:`~scanner.model.Resource`, and :mod:`.exports` runs gpuaudit's own
  policy on it and says PASS, FAIL or UNKNOWN.
- checkov's checks inside gpuaudit: :mod:`.run` runs the checkov command on the scanned paths
  (``gpuaudit scan --with-checkov``); :mod:`.findings` turns its failed checks into findings and
  merges those that report the same fact as a gpuaudit policy.

Enters: checkov's resource configurations; checkov's JSON report. Leaves: verdicts for checkov;
findings for gpuaudit's report. Only :mod:`.checks` imports checkov itself.
"""
