"""The resource model's kind of a Terraform or CloudFormation type (for checkov's findings)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=512)
def kind_of(resource_type: str) -> str:
    """``aws_ebs_volume`` / ``AWS::EC2::Volume`` → ``ec2.volume``; other types stay as given."""
    if resource_type.startswith("AWS::"):
        from scanner.sources.cloudformation.reader import KINDS

        return KINDS.get(resource_type, resource_type)
    from scanner.model import Provenance, SourceKind
    from scanner.sources.terraform.translate import translate

    found = translate(resource_type, resource_type, {},
                      provenance=Provenance(SourceKind.TERRAFORM_HCL), scope="")
    return found[0].kind if found else resource_type
