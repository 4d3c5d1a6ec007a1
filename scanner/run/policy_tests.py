"""`gpuaudit policies test DIR`: a policy directory's own fixtures, run like conftest's verify.

Layout (docs/user-policies.md)::

    DIR/<policy>.yaml
    DIR/tests/<POLICY-ID>/pass/<fixture>      every result PASS (at least one)
    DIR/tests/<POLICY-ID>/fail/<fixture>      at least one FAIL, no UNKNOWN or ERROR
    DIR/tests/<POLICY-ID>/unknown/<fixture>   at least one UNKNOWN, no FAIL or PASS

A fixture is what ``gpuaudit scan`` reads: a file (.tf, plan JSON, template, manifest) or a
directory (a Terraform root module).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scanner.model import Status

EXPECTATIONS = ("pass", "fail", "unknown")
MAX_FIXTURES = 2_000  # fixtures in one policy directory


@dataclass
class Case:
    policy_id: str
    expect: str
    fixture: Path
    ok: bool
    said: str


def _judge(expect: str, counts: Counter[str]) -> bool:
    if expect == "pass":
        return counts["PASS"] > 0 and sum(counts.values()) == counts["PASS"]
    if expect == "fail":
        return counts["FAIL"] + counts["SUPPRESSED"] > 0 and not (counts["UNKNOWN"]
                                                                  or counts["ERROR"])
    return counts["UNKNOWN"] > 0 and not (counts["FAIL"] or counts["PASS"] or counts["ERROR"])


def fixtures(directory: Path, policy_ids: list[str]) -> list[tuple[str, str, Path]]:
    out: list[tuple[str, str, Path]] = []
    root = directory / "tests"
    for pid in policy_ids:
        for expect in EXPECTATIONS:
            folder = root / pid / expect
            if folder.is_dir():
                out.extend((pid, expect, f) for f in sorted(folder.iterdir())
                           if not f.name.startswith("."))
    if len(out) > MAX_FIXTURES:
        raise ValueError(f"{root}: more than {MAX_FIXTURES} fixtures")
    return out


def unclaimed(directory: Path, policy_ids: list[str]) -> list[Path]:
    """Fixture folders under tests/ that name no policy of the directory (a typo)."""
    root = directory / "tests"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name not in policy_ids)


def run_fixtures(directory: Path, echo: Callable[[str], None]) -> tuple[list[Case], list[str]]:
    """Each fixture scanned and judged by its policy alone; (cases, policies without any)."""
    from policies.declarative import load_policy_dir
    from policies.discovery import use_policy_dirs
    from scanner.engine.evaluate import run
    from scanner.sources.scan import ScanOptions, scan_paths

    use_policy_dirs([directory])
    ids = [p.id for p in load_policy_dir(directory, builtin=())]
    cases: list[Case] = []
    for pid, expect, fixture in fixtures(directory, ids):
        result = scan_paths([fixture], ScanOptions())
        evaluation = run(result.resources, policy_ids=[pid], gaps=result.gaps)
        counts = Counter(f.status.value for f in evaluation.findings)
        if result.errors:
            first = result.errors[0]
            ok, said = False, f"could not be read: {first.path}: {first.reason}"
        else:
            ok = _judge(expect, counts)
            said = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no result"
            if not ok:
                wrong = [f for f in evaluation.findings
                         if f.status is not _WANTED[expect]][:3]
                said += "".join(f"; {f.resource['id']}: {f.status.value} {f.message}"
                                for f in wrong)
        case = Case(pid, expect, fixture, ok, said)
        cases.append(case)
        echo(f"{'ok  ' if ok else 'FAIL'} {pid} {expect}: {fixture} ({said})")
    for folder in unclaimed(directory, ids):
        cases.append(Case(folder.name, "?", folder, False,
                          "names no policy of this directory"))
        echo(f"FAIL {folder}: names no policy of this directory ({', '.join(ids)})")
    have = {c.policy_id for c in cases}
    return cases, [pid for pid in ids if pid not in have]


_WANTED = {"pass": Status.PASS, "fail": Status.FAIL, "unknown": Status.UNKNOWN}
