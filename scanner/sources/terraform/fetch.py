"""Fetching remote Terraform modules (``scan --fetch-modules``)."""

from __future__ import annotations


class FetchError(Exception):
    """A module source that could not be fetched; the message holds no credentials."""
