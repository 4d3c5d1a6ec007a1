"""docs/compliance.md, generated from the framework files: each framework's coverage table.

``python -m scanner.compliance.doc --write`` rewrites it; tests/test_compliance_doc.py fails
when it is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scanner.compliance import Framework, frameworks

DOC = Path(__file__).resolve().parents[2] / "docs" / "compliance.md"

INTRO = """\
# Compliance frameworks

Every gpuaudit policy is mapped, as data, to the controls of the frameworks it checks (files
`scanner/compliance/frameworks/*.yaml`, one per framework version, validated by
`scanner/compliance/framework.schema.json`). Only what a policy truly checks is mapped, and
each mapping says why. *Coverage* `full`: the policy checks what the control asks;
`partial`: the policy checks part of it, so its results are evidence for the control, never
its whole proof. A framework control no policy checks is listed as *not covered*.

- `gpuaudit compliance list` lists the frameworks, `gpuaudit compliance show ID` their
  controls with the policies and why.
- Every finding carries its controls in every report format: JSON `compliance`
  (`{framework: [control ids]}`), SARIF result `properties.compliance`, ASFF
  `Compliance.RelatedRequirements` (`framework/control`), OCSF `compliance.requirements`, and
  a compact line in HTML, Markdown and JUnit.
- `gpuaudit report compliance report.json --framework ID --format markdown|html|json`: the
  status of each control in a report. FAIL when a policy that checks it failed, ERROR when one
  could not evaluate, UNKNOWN when one could not decide, none was evaluated (no resource in
  scope, or the policy did not run) or the report has input errors; else PASS (suppressed
  findings are counted as accepted exceptions). `scan` / `audit --compliance ID` add the same
  section to the run's reports.
- A user policy may declare its own `compliance:` (`{framework: [control ids]}`); it is merged
  with the files (`scanner.compliance.controls_for`).

## Security Hub

`--format asff` writes the findings in the AWS Security Finding Format (2018-10-08) for a
custom integration (`ProductArn arn:aws:securityhub:REGION:ACCOUNT:product/ACCOUNT/default`),
`--format ocsf` as OCSF Compliance Finding events (class 2003; `pip install 'gpuaudit[ocsf]'`).
`gpuaudit report send-securityhub report.json [--region R]` imports them with
BatchImportFindings, 100 a request, with botocore's retries. Ids are stable per policy and
resource, so sending a report again updates the same findings. A PASS finding (a report
written with `--include-passed`) is sent as `PASSED`, `Workflow RESOLVED`, `RecordState
ARCHIVED`: a finding fixed since the last send is resolved. UNKNOWN is sent as `WARNING`,
ERROR as `NOT_AVAILABLE`.

It is the only gpuaudit command that writes to AWS, and it needs its own permission,
`securityhub:BatchImportFindings` (`gpuaudit iam-policy --send` prints that policy). The audit
stays read-only: its clients refuse every write, and the send command's client refuses every
operation but that one (and `sts:GetCallerIdentity`).
"""


def _table(fw: Framework) -> list[str]:
    out = [f'<a id="{fw.id}"></a>', "", f"## {fw.name} {fw.version} (`{fw.id}`)", "",
           f"{len(fw.covered)} of the {len(fw.controls)} controls listed are covered. "
           f"Scope: {fw.scope} Source: <{fw.url}>", "",
           "| Control | Title | Coverage | Policies |", "|---|---|---|---|"]
    for c in fw.controls:
        policies = ", ".join(f"[{m.policy}](policies/{m.policy}.md) ({m.coverage})"
                             for m in c.mappings) or "not covered"
        title = c.title.replace("|", "\\|")
        out.append(f"| {c.id} | {title} | {c.coverage} | {policies} |")
    return out


def render() -> str:
    lines = [INTRO.rstrip("\n"), "", "## Coverage", "",
             "| Framework | Version | Controls covered |", "|---|---|---|"]
    lines += [f"| [{fw.name}](#{fw.id}) `{fw.id}` | {fw.version} | "
              f"{len(fw.covered)} / {len(fw.controls)} |" for fw in frameworks().values()]
    for fw in frameworks().values():
        lines += ["", *_table(fw)]
    return "\n".join(lines) + "\n"


def stale(path: Path = DOC) -> bool:
    return not path.is_file() or path.read_text(encoding="utf-8") != render()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"rewrite {DOC}")
    args = parser.parse_args(argv)
    if args.write:
        DOC.write_text(render(), encoding="utf-8")
        return 0
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
