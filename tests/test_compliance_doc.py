"""docs/compliance.md is what the framework files generate."""

from __future__ import annotations

from pathlib import Path

from scanner.compliance import doc, frameworks


def test_docs_compliance_is_not_stale() -> None:
    assert not doc.stale(), "docs/compliance.md is stale: python -m scanner.compliance.doc --write"


def test_the_doc_shows_each_frameworks_coverage(tmp_path: Path) -> None:
    text = doc.render()
    for fw in frameworks().values():
        assert f"`{fw.id}` | {fw.version} | {len(fw.covered)} / {len(fw.controls)} |" in text
    assert "| 2.2.1 | Ensure EBS Volume Encryption is Enabled in all Regions | full | " in text
    old = tmp_path / "compliance.md"
    old.write_text(text.replace("1 / 62", "2 / 62"), encoding="utf-8")
    assert doc.stale(old)
    assert doc.stale(tmp_path / "missing.md")
