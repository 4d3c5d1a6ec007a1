"""Module source addresses (kinds, `//subdir`, `?ref=`), how they are shown (no credential),
and terraform's version constraints over semver (=, !=, >, >=, <, <=, ~>)."""

from __future__ import annotations

import pytest

from scanner.sources.terraform.module_sources import (
    ArchiveSource,
    GitSource,
    LocalSource,
    OtherSource,
    RegistrySource,
    display_source,
    parse_source,
    redact_text,
)
from scanner.sources.terraform.versions import VersionError, allows, newest


@pytest.mark.parametrize(("source", "expected"), [
    ("./modules/x", LocalSource("./modules/x")),
    ("terraform-aws-modules/eks/aws",
     RegistrySource("registry.terraform.io", "terraform-aws-modules", "eks", "aws")),
    ("terraform-aws-modules/eks/aws//modules/karpenter",
     RegistrySource("registry.terraform.io", "terraform-aws-modules", "eks", "aws",
                    "modules/karpenter")),
    ("app.terraform.io/acme/gpu/aws", RegistrySource("app.terraform.io", "acme", "gpu", "aws")),
    ("127.0.0.1:8080/acme/gpu/aws", RegistrySource("127.0.0.1:8080", "acme", "gpu", "aws")),
    ("github.com/acme/tf-gpu", GitSource("https://github.com/acme/tf-gpu.git")),
    ("github.com/acme/tf-gpu//modules/nodes?ref=v1.2.0",
     GitSource("https://github.com/acme/tf-gpu.git", "v1.2.0", "modules/nodes")),
    ("git::https://example.com/acme/m.git//sub?ref=main",
     GitSource("https://example.com/acme/m.git", "main", "sub")),
    ("git::ssh://git@example.com/acme/m.git?ref=v3",
     GitSource("ssh://git@example.com/acme/m.git", "v3")),
    ("git@github.com:acme/m.git", GitSource("git@github.com:acme/m.git")),
    ("git::file:///srv/m.git?ref=v1&depth=1", GitSource("file:///srv/m.git", "v1", "", 1)),
    ("https://example.com/m-1.0.tar.gz//gpu", ArchiveSource("https://example.com/m-1.0.tar.gz",
                                                            "gpu")),
])
def test_sources_are_parsed(source: str, expected: object) -> None:
    assert parse_source(source) == expected


@pytest.mark.parametrize("source", ["s3::https://s3.amazonaws.com/b/m.zip",
                                    "hg::http://example.com/m", "gcs::https://x/y.zip",
                                    "https://example.com/page",
                                    "git::https://example.com/m.git?sshkey=LS0tLS1CRUdJTg"])
def test_sources_not_fetched_say_why(source: str) -> None:
    parsed = parse_source(source)
    assert isinstance(parsed, OtherSource) and parsed.why
    assert "LS0tLS1CRUdJTg" not in parsed.text


@pytest.mark.parametrize(("source", "shown"), [
    ("git::https://deploy:s3cret@git.example.com/m.git?ref=v1",
     "git::https://REDACTED@git.example.com/m.git?ref=v1"),
    ("git::https://ghp_0123456789abcdef@github.com/o/m.git",
     "git::https://REDACTED@github.com/o/m.git"),
    ("git::ssh://git@github.com/o/m.git?ref=v2", "git::ssh://git@github.com/o/m.git?ref=v2"),
    ("https://example.com/m.zip?token=abc&archive=zip",
     "https://example.com/m.zip?token=REDACTED&archive=zip"),
    ("terraform-aws-modules/eks/aws", "terraform-aws-modules/eks/aws"),
])
def test_credentials_are_never_shown(source: str, shown: str) -> None:
    assert display_source(source) == shown


def test_git_errors_lose_their_credentials() -> None:
    text = "fatal: unable to access 'https://oauth2:glpat-XYZ@gitlab.com/o/m.git/': 403"
    assert "glpat-XYZ" not in redact_text(text)


@pytest.mark.parametrize(("constraint", "version", "ok"), [
    ("1.2.3", "1.2.3", True), ("= 1.2.3", "1.2.4", False), ("!= 1.2.3", "1.2.4", True),
    ("> 1.2", "1.2.0", False), (">= 1.2", "1.2.0", True), ("< 2", "1.99.0", True),
    ("<= 2.0", "2.0.1", False),
    ("~> 1.2", "1.9.0", True), ("~> 1.2", "2.0.0", False), ("~> 1.2", "1.1.9", False),
    ("~> 1.2.3", "1.2.9", True), ("~> 1.2.3", "1.3.0", False),
    ("~> 20.0", "20.8.5", True), ("~> 20.0", "21.0.0", False),
    (">= 1.0, < 1.2", "1.1.5", True), (">= 1.0, < 1.2", "1.2.0", False),
    ("~> 1.0", "1.3.0-beta1", False), ("1.3.0-beta1", "1.3.0-beta1", True),
    (None, "5.0.0", True), (None, "5.0.0-rc1", False), ("v1.2.0", "1.2.0", True),
])
def test_version_constraints(constraint: str | None, version: str, ok: bool) -> None:
    assert allows(constraint, version) is ok


def test_newest_matching_version() -> None:
    listed = ["1.0.0", "1.10.0", "1.9.2", "2.0.0", "1.11.0-rc1", "garbage"]
    assert newest("~> 1.0", listed) == "1.10.0"  # numeric, not textual, order
    assert newest(None, listed) == "2.0.0"
    assert newest("> 2.0.0", listed) is None
    with pytest.raises(VersionError):
        newest(">>= 1", listed)
