"""The directory for ``checkov --external-checks-dir`` (``gpuaudit checkov-dir`` prints it).

checkov loads Python checks only from a directory that is a package, and imports each module in
it by its file name: ``gpuaudit_checkov_checks.py`` holds every exported check.
"""
