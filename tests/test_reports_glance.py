"""Reports a reviewer reads at a glance: the table's row a finding with its fix and its policy's
page, PASS rows only when asked, and saving and exposure in separate Markdown columns."""

from __future__ import annotations

from reports import RenderContext, render
from reports.table import ellipsize, text_width
from tests.report_samples import sample

DOCS = "https://github.com/gpuaudit/gpuaudit/blob/main/docs/policies/"


def test_each_finding_has_its_fix_and_its_policy_page_on_one_line_each() -> None:
    out = render("table", sample("iac"), context=RenderContext(width=120))
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("high") and "EBS-001" in line)
    assert lines[row + 1].startswith("  fix: ") and text_width(lines[row + 1]) <= 120
    assert lines[row + 2] == f"  docs: {DOCS}EBS-001.md"
    assert "\x1b" not in out  # plain text off a terminal: no OSC 8 link, no colour


def test_exposure_and_saving_are_told_apart_in_the_table() -> None:
    out = render("table", sample("iac"), context=RenderContext(width=200))
    spot = out[out.index("SPOT-001"):]
    spot = spot.splitlines()[1]
    assert "exposure up to $21,535/mo (not a saving)" in spot and "saving $" not in spot


def test_on_a_terminal_the_policy_id_is_a_hyperlink_and_no_docs_line() -> None:
    out = render("table", sample("iac"), context=RenderContext(width=120, links=True))
    assert f"\x1b]8;;{DOCS}EBS-001.md\x1b\\EBS-001\x1b]8;;\x1b\\" in out
    assert "docs: https://" not in out


def test_pass_rows_only_with_include_passed() -> None:
    doc = sample("iac")
    assert any(f["status"] == "PASS" for f in doc["findings"])
    plain = render("table", doc)
    assert not any(line.split()[1:2] == ["PASS"] for line in plain.splitlines() if line)
    listed = render("table", doc, context=RenderContext(passed=True))
    assert any(line.split()[1:2] == ["PASS"] for line in listed.splitlines() if line)


def test_ellipsize_cuts_to_the_width_and_says_so() -> None:
    assert ellipsize("short", 10) == "short"
    cut = ellipsize("a long message " * 10, 30)
    assert cut.endswith("...") and text_width(cut) <= 30
    wide = ellipsize("訓練" * 20, 11)
    assert wide.endswith("...") and text_width(wide) <= 11


def test_markdown_has_an_exposure_column_apart_from_the_saving() -> None:
    out = render("markdown", sample("iac"))
    header = next(line for line in out.splitlines() if line.startswith("| Severity"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[5:7] == ["Saving/mo", "Exposure/mo"]
    spot = next(line for line in out.splitlines() if line.startswith("| medium | SPOT-001"))
    row = [c.strip() for c in spot.strip("|").split("|")]
    assert row[5] == "" and row[6] == "$21,534.60"  # exposure, not a saving


def test_what_a_change_is_answerable_for_is_never_cut_off_the_message() -> None:
    from reports.table import ellipsize_tagged

    text = ("aws_ebs_volume.data: EBS storage not encrypted: root (from the AMI) and more "
            "[new with this change, caused by gpu/terraform.tfvars]")
    cut, tag = ellipsize_tagged(text, 80)
    assert tag is None and cut.endswith("... [new with this change, caused by "
                                        "gpu/terraform.tfvars]") and text_width(cut) <= 80
    cut, tag = ellipsize_tagged(text, 40)  # too narrow for both: the tag on its own line
    assert tag == "[new with this change, caused by gpu/terraform.tfvars]"
    assert text_width(cut) <= 40
    assert ellipsize_tagged("short [tag]", 80) == ("short [tag]", None)
