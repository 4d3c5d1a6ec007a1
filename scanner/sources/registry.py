"""The one list of sources: for each, its name in reports (``SourceKind``), its catalogue letter,
the files it reads, the cheap text test that picks a file for it and its reader.

Readers and sniffs are named as ``module:function`` and imported only when a file of theirs is
found, so that importing this list costs nothing (the pre-commit hook scans one file). The scan
(:mod:`scanner.sources.scan`) walks the tree for the suffixes named here and hands each data
file to the first source whose sniff matches and whose reader accepts it; the policy catalogue
and its pages name sources by the letters declared here. Adding a source is one entry here and
one package beside the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from scanner.model import SourceKind, SourceResult


@dataclass
class ScanOptions:
    cfn_params: Mapping[str, str] = field(default_factory=dict)
    region: str | None = None
    account_id: str | None = None
    source_dir: Path | None = None
    var_files: Sequence[Path] = ()
    variables: Mapping[str, str] = field(default_factory=dict)
    # Terraform: fetch remote module sources not in .terraform/modules into this cache
    # (scanner.sources.terraform.fetch); None: not fetched (a TF-001 UNKNOWN at each call)
    module_cache: Path | None = None


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    title: str  # how the product names it (messages, docs)
    letter: str  # the catalogue's letter: a policy's ``sources`` lists the ones it supports
    suffixes: tuple[str, ...] = ()  # the file names it reads (lower case); none: not files
    sniff: str = ""  # "module:function" (head text -> bool): may this file be one?
    # (path, options) -> what it read, or None when the structure is not its format
    read: Callable[[Path, ScanOptions], SourceResult | None] | None = None

    def looks_like(self, head: str) -> bool:
        module, _, attr = self.sniff.partition(":")
        return bool(getattr(import_module(module), attr)(head))


# -- readers (each imports its source only when called) ---------------------------------------


def _read_plan(path: Path, opts: ScanOptions) -> SourceResult | None:
    from scanner.sources.terraform.plan.reader import load_plan

    return load_plan(path, source_dir=opts.source_dir)


def _read_template(path: Path, opts: ScanOptions) -> SourceResult | None:
    from scanner.sources.cloudformation.reader import read_if_template

    return read_if_template(path, params=opts.cfn_params, region=opts.region,
                            account_id=opts.account_id)


def _read_yaml(path: Path, opts: ScanOptions) -> SourceResult | None:
    """Every document of the file, of whichever YAML format each is."""
    from scanner.sources.yaml_documents.dispatch import read_yaml_file

    return read_yaml_file(path)


_YAML = (".yaml", ".yml")
_DATA = (".json", *_YAML, ".template")

TERRAFORM_HCL = Source(SourceKind.TERRAFORM_HCL, "Terraform HCL", "H", (".tf", ".tf.json"))
# The data formats, in the order their sniffs are tried (a plan is JSON that a template's
# sniff could match too); the YAML formats share one reader, which reads every document.
DATA_SOURCES: tuple[Source, ...] = (
    Source(SourceKind.TERRAFORM_PLAN, "Terraform plan JSON", "P", (".json",),
           "scanner.sources.terraform.plan.reader:looks_like_plan", _read_plan),
    Source(SourceKind.CLOUDFORMATION, "CloudFormation", "C", _DATA,
           "scanner.sources.cloudformation.reader:looks_like_cloudformation", _read_template),
    Source(SourceKind.KARPENTER, "Karpenter manifest", "K", _YAML,
           "scanner.sources.karpenter.sniff:looks_like_karpenter", _read_yaml),
    Source(SourceKind.EKSCTL, "eksctl ClusterConfig", "E", _YAML,
           "scanner.sources.eksctl.sniff:looks_like_eksctl", _read_yaml),
    Source(SourceKind.PARALLELCLUSTER, "ParallelCluster configuration", "Y", _YAML,
           "scanner.sources.parallelcluster.sniff:looks_like_parallelcluster", _read_yaml),
)
LIVE = Source(SourceKind.AWS, "live AWS account", "L")
SOURCES: tuple[Source, ...] = (TERRAFORM_HCL, *DATA_SOURCES, LIVE)

TF_SUFFIXES = TERRAFORM_HCL.suffixes
DATA_SUFFIXES = tuple(dict.fromkeys(s for src in DATA_SOURCES for s in src.suffixes))
TITLES_BY_LETTER = {s.letter: s.title for s in SOURCES}


def read_data_file(path: Path, head: str, opts: ScanOptions) -> SourceResult | None:
    """What the first data source whose sniff matches ``head`` and whose reader accepts the
    file read (a reader returns None when the text matched and the structure did not); None:
    not IaC. A reader shared by several formats reads a file once."""
    tried: set[object] = set()
    for source in DATA_SOURCES:
        if source.read is None or source.read in tried or not source.looks_like(head):
            continue
        tried.add(source.read)
        found = source.read(path, opts)
        if found is not None or source.kind is SourceKind.TERRAFORM_PLAN:
            return found
    return None


def not_iac_message() -> str:
    """What is said when none of the files named on the command line is IaC."""
    names = [TERRAFORM_HCL.title, *(s.title for s in DATA_SOURCES)]
    return (f"nothing scanned: none of the {{n}} file(s) named is {', '.join(names[:-1])} or "
            f"{names[-1]} (none of their marks in the first 64 KB)")
