"""The root of a scan outside any repository holds every file its findings point at: a local
module outside the scanned directory keeps a path relative to the root, never an absolute one;
inside a repository the repository decides."""

from __future__ import annotations

from pathlib import Path

from scanner.inputs.repo_root import repo_root


def test_a_module_outside_the_scanned_directory_widens_the_root(tmp_path: Path) -> None:
    (tmp_path / "envs" / "dev").mkdir(parents=True)
    (tmp_path / "modules" / "disk").mkdir(parents=True)
    module = tmp_path / "modules" / "disk" / "main.tf"
    module.write_text("")
    assert repo_root(["envs/dev"], cwd=tmp_path) == (tmp_path / "envs" / "dev").resolve()
    assert repo_root(["envs/dev"], cwd=tmp_path, files=[str(module)]) == tmp_path.resolve()


def test_inside_a_repository_the_repository_decides(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "envs").mkdir()
    elsewhere = tmp_path / "other" / "main.tf"
    elsewhere.parent.mkdir()
    elsewhere.write_text("")
    assert repo_root(["repo/envs"], cwd=tmp_path, files=[str(elsewhere)]) == repo.resolve()
