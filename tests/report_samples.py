"""Realistic report documents (schema_version 1) for the renderer tests.

They are built by hand, in the exact shape ``Finding.as_dict()`` and the runner produce, so that the
renderers are tested without the engine: IaC findings with locations, live findings with
account/region/ARN, every status, savings, suppressions, errors, notices, hostile strings, unicode.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections import Counter
from html.parser import HTMLParser
from typing import Any

TOOL = {"name": "gpuaudit", "version": "0.1.0"}
CATALOG = {
    "source": "gpuaudit catalogue (us-east-1 on-demand)",
    "as_of": "2025-06-01",
    "region": "us-east-1",
}
REMEDIATION_EBS = {
    "text": "Encrypt the volume: set Encrypted = true (and KmsKeyId for a customer-managed key).",
    "terraform": 'resource "aws_ebs_volume" "x" {\n  encrypted = true\n}',
    "cloudformation": "Type: AWS::EC2::Volume\nProperties:\n  Encrypted: true",
}
REMEDIATION_SPOT = {
    "text": "Lower the spot max price to at most 0.7 x on-demand. AWS advises against setting "
    "a max price (you pay the spot price anyway); this organisation caps it to bound cost.",
    "terraform": 'instance_market_options {\n  spot_options {\n    max_price = "22.9"\n  }\n}',
    "cloudformation": None,
}


def fingerprint(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def finding(
    policy_id: str,
    title: str,
    severity: str,
    status: str,
    message: str,
    resource: dict[str, Any],
    *,
    location: dict[str, Any] | None = None,
    evidence: dict[str, Any] | None = None,
    remediation: dict[str, Any] | None = None,
    savings: dict[str, Any] | None = None,
    suppression: dict[str, Any] | None = None,
    path: str = "",
) -> dict[str, Any]:
    res = {
        "name": None,
        "address": None,
        "arn": None,
        "account": None,
        "region": None,
        "tags": {},
    } | resource
    ident = "/".join(str(res.get(k) or "") for k in ("account", "region", "id"))
    return {
        "id": fingerprint(policy_id, ident, path),
        "policy_id": policy_id,
        "title": title,
        "severity": severity,
        "status": status,
        "message": message,
        "resource": res,
        "location": location,
        "evidence": evidence or {},
        "remediation": remediation
        or {"text": "See the policy documentation.", "terraform": None, "cloudformation": None},
        "savings": savings,
        "suppression": suppression,
    }


def document(
    findings: list[dict[str, Any]],
    *,
    inputs: dict[str, Any],
    errors: list[dict[str, Any]] | None = None,
    notices: list[dict[str, Any]] | None = None,
    coverage: list[dict[str, Any]] | None = None,
    resources: int | None = None,
    catalog_note: str | None = None,
) -> dict[str, Any]:
    """A whole report with the summary computed from ``findings``, as the runner does."""
    by_policy: dict[str, Counter[str]] = {}
    for f in findings:
        by_policy.setdefault(f["policy_id"], Counter())[f["status"]] += 1
    fails = [f for f in findings if f["status"] == "FAIL"]
    saving = sum(f["savings"]["usd_month"] for f in fails if f["savings"])
    doc: dict[str, Any] = {
        "schema_version": 1,
        "tool": dict(TOOL),
        "inputs": inputs,
        "catalog": dict(CATALOG, **({"note": catalog_note} if catalog_note else {})),
        "summary": {
            "by_status": dict(Counter(f["status"] for f in findings)),
            "by_severity": dict(Counter(f["severity"] for f in fails)),
            "by_policy": {k: dict(v) for k, v in sorted(by_policy.items())},
            "savings_usd_month": round(saving, 2),
            "resources": resources
            if resources is not None
            else len({(f["resource"]["account"], f["resource"]["id"]) for f in findings}),
        },
        "errors": errors or [],
        "notices": notices or [],
        "coverage": coverage or [],
        "findings": sorted(findings, key=lambda f: f["id"]),
    }
    return doc


def iac_doc() -> dict[str, Any]:
    vol = {
        "kind": "ec2.volume",
        "id": "aws_ebs_volume.scratch",
        "address": "aws_ebs_volume.scratch",
        "tags": {"team": "ml"},
    }
    lt = {
        "kind": "ec2.launch_template",
        "id": "module.train.aws_launch_template.gpu",
        "address": "module.train.aws_launch_template.gpu",
        "name": "train-gpu",
    }
    asg = {
        "kind": "autoscaling.group",
        "id": "module.train.aws_autoscaling_group.workers",
        "address": "module.train.aws_autoscaling_group.workers",
        "name": "train-workers",
    }
    vpc = {"kind": "ec2.vpc", "id": "aws_vpc.gpu", "address": "aws_vpc.gpu"}
    cfn_inst = {"kind": "ec2.instance", "id": "InferenceHost", "name": "inference-1"}
    tf, mod = "infra/gpu/main.tf", "infra/gpu/modules/train/main.tf"
    findings = [
        finding(
            "EBS-001",
            "EBS storage not encrypted",
            "high",
            "FAIL",
            "aws_ebs_volume.scratch is not encrypted (Encrypted = false).",
            vol,
            location={"file": tf, "start_line": 12, "end_line": 20},
            evidence={"Encrypted": False, "default_encryption": "unknown"},
            remediation=REMEDIATION_EBS,
        ),
        finding(
            "EBS-001",
            "EBS storage not encrypted",
            "high",
            "PASS",
            "All block device mappings are encrypted.",
            lt,
            location={"file": mod, "start_line": 1, "end_line": 44},
            path="BlockDeviceMappings",
        ),
        finding(
            "SPOT-001",
            "Spot max price above the cap",
            "medium",
            "FAIL",
            "Spot max price 98.32 $/h for p5.48xlarge is above 0.7 x on-demand (68.82 $/h).",
            lt,
            location={"file": mod, "start_line": 30, "end_line": 36},
            evidence={
                "instance_type": "p5.48xlarge",
                "max_price": 98.32,
                "on_demand": 98.32,
                "cap": 68.82,
                "max_price_ratio": 0.7,
            },
            remediation=REMEDIATION_SPOT,
            savings={
                "usd_month": 21534.6,
                "kind": "overspend_cap",
                "basis": "(98.32 - 68.82) $/h x 730 h, per instance",
            },
        ),
        finding(
            "ASG-001",
            "On-demand share outside the allowed range",
            "medium",
            "UNKNOWN",
            "DesiredCapacity is UNKNOWN (var.workers has no default).",
            asg,
            location={"file": mod, "start_line": 50, "end_line": 80},
            evidence={"DesiredCapacity": "UNKNOWN(var.workers)", "bounds": [20, 40]},
        ),
        finding(
            "ASG-002",
            "Spot pools not diversified",
            "low",
            "SUPPRESSED",
            "Only 1 instance type (p4d.24xlarge) in the spot pools.",
            asg,
            location={"file": mod, "start_line": 50, "end_line": 80},
            evidence={"instance_types": ["p4d.24xlarge"], "min_instance_types": 2},
            suppression={
                "by": "comment at infra/gpu/modules/train/main.tf:49",
                "reason": "p4d is the only type with EFA in this AZ",
                "expires": None,
            },
        ),
        finding(
            "VPC-001",
            "No S3 gateway endpoint in a GPU VPC",
            "medium",
            "FAIL",
            "VPC aws_vpc.gpu hosts GPU compute but has no S3 gateway endpoint.",
            vpc,
            location={"file": tf, "start_line": 1, "end_line": 5},
            evidence={"gpu_resources": ["module.train.aws_autoscaling_group.workers"]},
        ),
        finding(
            "VPC-004",
            "GPU compute gets a public IP",
            "high",
            "FAIL",
            "InferenceHost (g5.xlarge) sets AssociatePublicIpAddress: true.",
            cfn_inst,
            location={"file": "cfn/inference.yaml", "start_line": 88, "end_line": 120},
            evidence={"AssociatePublicIpAddress": True, "InstanceType": "g5.xlarge"},
        ),
    ]
    return document(
        findings,
        inputs={"paths": ["infra/gpu", "cfn/inference.yaml"]},
        errors=[
            {
                "kind": "input",
                "path": "infra/gpu/broken.tf",
                "reason": "Invalid block definition: expected '}'",
                "line": 3,
            }
        ],
        notices=[
            {
                "path": "infra/gpu/main.tf",
                "line": 60,
                "message": 'module "vpc" from the registry was not fetched; '
                "its resources are not scanned",
            }
        ],
    )


def live_doc() -> dict[str, Any]:
    acct, region = "123456789012", "us-east-1"

    def live(kind: str, rid: str, name: str | None, arn_part: str | None, **kw: Any) -> dict:
        arn = f"arn:aws:ec2:{region}:{acct}:{arn_part}" if arn_part else None
        return {
            "kind": kind,
            "id": rid,
            "name": name,
            "arn": arn,
            "account": acct,
            "region": region,
            **kw,
        }

    vol = live(
        "ec2.volume", "vol-0abc123def4567890", "ckpt-scratch", "volume/vol-0abc123def4567890"
    )
    defaults = live("ec2.ebs_defaults", f"{acct}/{region}", None, None)
    idle = live(
        "ec2.instance",
        "i-0123456789abcdef0",
        "notebook-bob",
        "instance/i-0123456789abcdef0",
        tags={"Name": "notebook-bob", "owner": "bob"},
    )
    big = live("ec2.instance", "i-0fedcba9876543210", "infer-a100", "instance/i-0fedcba9876543210")
    asg = live("autoscaling.group", "train-workers", "train-workers", None)
    ep = live(
        "ec2.vpc_endpoint", "vpce-0a1b2c3d4e5f60718", None, "vpc-endpoint/vpce-0a1b2c3d4e5f60718"
    )
    findings = [
        finding(
            "EBS-001",
            "EBS storage not encrypted",
            "high",
            "FAIL",
            "Volume vol-0abc123def4567890 (500 GiB gp3) is not encrypted.",
            vol,
            evidence={"Encrypted": False, "Size": 500, "VolumeType": "gp3"},
            remediation=REMEDIATION_EBS,
        ),
        finding(
            "EBS-002",
            "Default EBS encryption disabled",
            "medium",
            "FAIL",
            "Default EBS encryption is off in 123456789012/us-east-1.",
            defaults,
            evidence={"EbsEncryptionByDefault": False},
        ),
        finding(
            "RS-002",
            "Idle GPU compute",
            "high",
            "FAIL",
            "Every GPU of i-0123456789abcdef0 (g5.12xlarge) stayed at or below 5% for 14 days.",
            idle,
            evidence={
                "instance_type": "g5.12xlarge",
                "gpu_util_p99": 1.5,
                "hours_of_data": 336,
                "gpus": 4,
            },
            savings={
                "usd_month": 4135.45,
                "kind": "idle",
                "basis": "5.672 $/h x 730 h x 1 instance (on-demand, us-east-1 prices)",
            },
        ),
        finding(
            "RS-001",
            "Oversized GPU compute",
            "medium",
            "FAIL",
            "p4d.24xlarge peaks at 18 GiB GPU memory and 9% compute; g6e.12xlarge fits.",
            big,
            evidence={
                "peak_gpu_mem_mib": 18432,
                "p95_gpu_util": 9.2,
                "recommended": "g6e.12xlarge",
            },
            savings={
                "usd_month": 16548.44,
                "kind": "rightsize",
                "basis": "(32.7726 - 10.1578) $/h x 730 h x 1 instance",
            },
        ),
        finding(
            "SPOT-002",
            "Spot max price too low",
            "medium",
            "ERROR",
            "DescribeSpotPriceHistory was denied: AccessDenied.",
            asg,
            evidence={"error": "AccessDenied", "operation": "ec2:DescribeSpotPriceHistory"},
        ),
        finding(
            "VPC-003",
            "VPC endpoint policy allows everything",
            "low",
            "SUPPRESSED",
            "vpce-0a1b2c3d4e5f60718 has no endpoint policy (full access).",
            ep,
            evidence={"PolicyDocument": None},
            suppression={
                "by": "mute list (.gpuaudit.yaml)",
                "reason": "legacy VPC, INFRA-123",
                "expires": "2099-12-31",
                "kind": "external",
            },
        ),
        finding(
            "EBS-001",
            "EBS storage not encrypted",
            "high",
            "PASS",
            "Volume is encrypted.",
            live("ec2.volume", "vol-0def", None, "volume/vol-0def"),
        ),
    ]
    return document(
        findings,
        inputs={"accounts": [acct], "regions": [region, "eu-west-1"]},
        errors=[
            {
                "kind": "aws",
                "path": f"{acct}/eu-west-1/ec2",
                "reason": "AccessDenied: ec2:DescribeVolumes (UnauthorizedOperation)",
            }
        ],
        coverage=[
            {"account": acct, "region": region, "service": "ec2", "status": "ok"},
            {
                "account": acct,
                "region": "eu-west-1",
                "service": "ec2",
                "status": "error",
                "error": "AccessDenied",
            },
        ],
        resources=42,
        catalog_note="prices are us-east-1 on-demand prices, used for eu-west-1 too",
    )


HOSTILE = {
    "script": "<script>alert('xss')</script>",
    "img": '"><img src=x onerror=alert(1)>',
    "js_url": "javascript:alert(document.cookie)",
    "rtl": "invoice\u202eexe.pdf",
    "ansi": "\x1b[2J\x1b[31mred\x1b[0m\x07",
    "markdown": "a|b `code` **bold** [link](javascript:alert(1))",
    "formula": '=HYPERLINK("http://evil.example/","click")',
    "cjk": "训练集群-ＧＰＵ-ノード-" + "長" * 40,
}


def hostile_doc() -> dict[str, Any]:
    h = HOSTILE
    res = {
        "kind": "ec2.instance",
        "id": h["img"],
        "name": h["script"],
        "address": None,
        "arn": h["js_url"],
        "account": "123456789012",
        "region": "us-east-1",
        "tags": {
            "Name": h["script"],
            h["img"]: h["js_url"],
            "owner": h["rtl"],
            "cost-center": h["formula"],
        },
    }
    findings = [
        finding(
            "VPC-004",
            f"Public IP {h['script']}",
            "critical",
            "FAIL",
            f"{h['script']} {h['img']} {h['rtl']} {h['ansi']} {h['markdown']}\nsecond line",
            res,
            evidence={
                "name": h["script"],
                "url": h["js_url"],
                h["img"]: [h["rtl"], 1],
                "nested": {"k": h["ansi"]},
            },
            remediation={
                "text": f"Fix {h['markdown']}",
                "terraform": h["script"],
                "cloudformation": h["img"],
            },
            savings={"usd_month": 12.5, "kind": "idle", "basis": h["formula"]},
        ),
        finding(
            "EBS-001",
            "EBS storage not encrypted",
            "high",
            "SUPPRESSED",
            h["cjk"],
            res | {"id": h["cjk"], "name": h["cjk"]},
            location={
                "file": f"stacks/{h['cjk']}/{h['rtl']}/main.tf",
                "start_line": 7,
                "end_line": 7,
            },
            suppression={
                "by": f"tag gpuaudit:skip {h['img']}",
                "reason": h["script"],
                "expires": None,
            },
        ),
        finding(
            "ASG-001",
            h["formula"],
            "info",
            "UNKNOWN",
            h["formula"],
            res | {"id": h["formula"]},
            location={"file": "a b/c|d`e.tf", "start_line": 1, "end_line": 2},
        ),
    ]
    return document(
        findings,
        inputs={"paths": [h["script"], h["rtl"]]},
        errors=[{"kind": "input", "path": h["img"], "reason": h["script"] + h["ansi"], "line": 1}],
        notices=[{"path": h["js_url"], "message": h["rtl"] + " " + h["markdown"]}],
    )


def empty_doc() -> dict[str, Any]:
    return document([], inputs={"paths": ["empty/"]})


SAMPLES = {"iac": iac_doc, "live": live_doc, "hostile": hostile_doc, "empty": empty_doc}


def sample(name: str) -> dict[str, Any]:
    """A fresh deep copy, so a renderer that mutates its input cannot affect other tests."""
    return copy.deepcopy(SAMPLES[name]())


class HtmlInspector(HTMLParser):
    """What a browser would see in an HTML page: its elements, attributes and text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ends: list[str] = []
        self.chunks: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.chunks.append(data)

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def handle_endtag(self, tag: str) -> None:
        self.ends.append(tag)

    def problems(self) -> list[str]:
        """Active content or anything that could load from elsewhere. Allowed: an inline script
        without ``src`` (its hash must be in the CSP: see ``scripts``), inline SVG shapes and
        text, and links whose ``href`` is a relative path (no scheme, no ``//``)."""
        out = []
        for tag, attrs in self.tags:
            if tag in (
                "img",
                "iframe",
                "object",
                "embed",
                "link",
                "base",
                "form",
                "video",
                "audio",
                "source",
                "image",
                "use",
                "foreignobject",
                "animate",
                "set",
                "meta" if (attrs.get("http-equiv") or "").lower() == "refresh" else "",
            ):
                out.append(f"<{tag}> element")
            if tag == "script" and "src" in attrs:
                out.append("<script src>")
            for name, value in attrs.items():
                if name.startswith("on") or name in ("src", "srcset", "action", "formaction",
                                                     "xlink:href", "style" if tag == "svg"
                                                     else ""):
                    out.append(f"<{tag} {name}={value!r}>")
                if name == "href" and (tag != "a" or not relative_href(value or "")):
                    out.append(f"<{tag} href={value!r}>")
                if (
                    name != "href"
                    and value
                    and re.search(r"(?i)(https?:|javascript:|//)", value)
                    and name != "content"
                ):
                    out.append(f"<{tag} {name}={value!r}>")
        return out


def relative_href(href: str) -> bool:
    """A link to a path relative to the page: no scheme (javascript:, file:, http:), no
    ``//host``, no absolute path."""
    return bool(href) and not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", href) and not (
        href.startswith(("/", "\\"))) and not re.search(r"[\x00-\x20]", href)


def inline_scripts(page: str) -> list[str]:
    """The text of each inline <script> of ``page``, exactly as a browser hashes it."""
    return re.findall(r"<script>(.*?)</script>", page, flags=re.S)
