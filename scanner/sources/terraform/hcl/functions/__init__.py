"""Terraform's built-in functions, the pure ones, for :mod:`.expressions`.

Files (``file``, ``templatefile``, ``fileexists``, ``filebase64``, ``file*sha*``) are read
only inside the scanned tree, through the reader the source sets (:data:`FILE_READER`).

Two kinds: *structural* functions (``concat``, ``merge``, ``lookup``, ``length`` …) only need the
shape of their arguments, so lists and maps may carry Unknown / Ref elements through them;
*value* functions (``format``, ``join``, ``jsonencode``, ``cidrsubnet`` …) need every part of
every argument, and return Unknown as soon as any part is unknown. Functions that depend on the
clock, randomness, the machine or the provider (``timestamp``, ``uuid``, ``fileset``,
``provider::…``) are not evaluated: they give Unknown with a reason.
"""

from __future__ import annotations

# the families register themselves in FUNCTIONS when imported, in this order
from scanner.sources.terraform.hcl.functions import (  # noqa: F401
    collection,
    conversion,
    encoding,
    files,
    network,
    numeric,
    strings,
)
from scanner.sources.terraform.hcl.functions.encoding import _json
from scanner.sources.terraform.hcl.functions.files import FILE_READER, file_text, read_file
from scanner.sources.terraform.hcl.functions.registry import FUNCTIONS, make_set

__all__ = ["FILE_READER", "FUNCTIONS", "_json", "file_text", "make_set", "read_file"]
