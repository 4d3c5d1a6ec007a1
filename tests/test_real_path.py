"""real_path gives os.path.realpath's answer, symbolic links and missing paths included."""

from __future__ import annotations

import os
from pathlib import Path

from scanner.inputs.real_path import forget, real_path
from scanner.inputs.sizes import exceeds


def test_real_path_matches_realpath(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "main.tf").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "a" / "b")
    (tmp_path / "a" / "b" / "alias.tf").symlink_to("main.tf")
    (tmp_path / "out").symlink_to("/")
    monkeypatch.chdir(tmp_path)
    forget()
    paths = [f"{tmp_path}/a/b/main.tf", f"{tmp_path}/link/main.tf", f"{tmp_path}/link/alias.tf",
             f"{tmp_path}/link/../a", f"{tmp_path}//a//b/", "link/main.tf", "a/./b", ".", "/",
             f"{tmp_path}/missing/x.tf", f"{tmp_path}/out/etc", f"{tmp_path}/link"]
    for path in paths * 2:  # the second time from what was remembered
        assert real_path(path) == os.path.realpath(path), path
    assert real_path(f"{tmp_path}/link/main.tf") != f"{tmp_path}/link/main.tf"


def test_a_path_created_later_is_looked_at_then(tmp_path: Path) -> None:
    forget()
    later = tmp_path / "later"
    assert real_path(str(later)) == str(later)
    later.symlink_to(tmp_path / "elsewhere")
    assert real_path(str(later)) == os.path.realpath(later) == str(tmp_path / "elsewhere")


def test_exceeds_counts_as_written() -> None:
    value = {"ab": ["xyz", {"k": "v"}], "n": 1}
    # nodes: dict 1, "ab" 3, list 1, "xyz" 4, dict 1, "k" 2, "v" 2, "n" 2, 1 -> 1 = 17
    assert not exceeds(value, 17)
    assert exceeds(value, 16)
    deep: list = []
    cur = deep
    for _ in range(100):
        cur.append([])
        cur = cur[0]
    assert exceeds(deep, 10**9)  # nested past MAX_DEPTH
