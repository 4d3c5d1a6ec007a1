"""Which files make a Terraform module: configuration files, variable files, and the ones
terraform loads by itself. Shared by the scan (which directories to load) and the change scope
(which changed files a finding is answerable for)."""

from __future__ import annotations

from pathlib import Path

TF_FILES = (".tf", ".tf.json")
TFVARS_AUTO = ("terraform.tfvars", "terraform.tfvars.json")
TFVARS_SUFFIXES = (".tfvars", ".tfvars.json")
TF_FAMILY = (*TF_FILES, *TFVARS_SUFFIXES)


def is_auto_tfvars(name: str) -> bool:
    """A variables file terraform loads by itself in its root module."""
    lower = name.lower()
    return lower in TFVARS_AUTO or lower.endswith((".auto.tfvars", ".auto.tfvars.json"))


def module_file(directory: Path) -> Path | None:
    """A ``.tf`` file that stands for its directory's module (the scan loads the whole
    directory for it, and not its subdirectories), or None when it has none."""
    try:
        names = sorted(p.name for p in directory.iterdir() if p.is_file())
    except OSError:
        return None
    for name in names:
        if name.endswith(TF_FILES) and not name.startswith("."):
            return directory / name
    return None
