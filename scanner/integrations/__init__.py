"""Integrations with other tools (checkov). Imported only by the commands that ask for them, so
that `gpuaudit scan` without an integration option never loads them."""
