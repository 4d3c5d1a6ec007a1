"""`gpuaudit policies test DIR` and `gpuaudit policies paths`: the commands of policies written
by users (docs/user-policies.md). Thin: parse, call policies.declarative, exit code."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from scanner.run.pipeline import EXIT_ERROR, EXIT_FINDINGS


def policy_dir_option() -> click.Option:
    return click.option("--policy-dir", "policy_dirs", multiple=True,
                        type=click.Path(path_type=Path, file_okay=False),
                        help="Also the declarative policies of this directory (repeatable).")


def load_or_exit(policy_dirs: tuple[Path, ...]) -> None:
    """Use these policy directories (each file validated); exit 2 naming the first bad one."""
    from policies.discovery import PolicyLoadError, check_plugins, use_policy_dirs

    try:
        check_plugins()
        use_policy_dirs(policy_dirs)
    except PolicyLoadError as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)


@click.command("test")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False, exists=True))
def policies_test(directory: Path) -> None:
    """Run a policy directory's own fixtures: tests/<ID>/pass|fail|unknown/<fixture> must give
    PASS, FAIL or UNKNOWN (exit 1 on a mismatch, naming the fixture)."""
    from policies.declarative import PolicyFileError
    from policies.discovery import PolicyLoadError
    from scanner.run.policy_tests import run_fixtures

    try:
        cases, without = run_fixtures(directory, click.echo)
    except (PolicyLoadError, PolicyFileError, ValueError) as exc:
        click.echo(f"gpuaudit: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    for pid in without:
        click.echo(f"note: {pid} has no fixtures (tests/{pid}/pass, fail or unknown)")
    failed = [c for c in cases if not c.ok]
    click.echo(f"{len(cases) - len(failed)} passed, {len(failed)} failed")
    if failed:
        sys.exit(EXIT_FINDINGS)


@click.command("paths")
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              help="Only the attribute paths of this kind (repeatable).")
def policies_paths(kinds: tuple[str, ...]) -> None:
    """Every path a declarative policy may read: the compute view fields, tags and identity
    (every kind), then each kind's attribute paths."""
    from policies.declarative.fields import FIELDS, kind_paths, view_kinds
    from scanner.kinds import schema

    known = schema().kinds
    bad = [k for k in kinds if k not in known]
    if bad:
        click.echo(f"gpuaudit: error: {bad[0]!r} is not a kind (known: {', '.join(known)})",
                   err=True)
        sys.exit(EXIT_ERROR)
    click.echo("# every kind")
    for name, fld in FIELDS.items():
        if not fld.needs_view:
            click.echo(f"{name:<28} {fld.doc}")
    click.echo(f"{'tags.KEY':<28} the value of tag KEY; UNKNOWN when the tags are not known")
    click.echo(f"\n# kinds with a compute view: {', '.join(sorted(view_kinds()))}")
    for name, fld in FIELDS.items():
        if fld.needs_view:
            click.echo(f"{name:<28} {fld.doc}")
    for kind in kinds or sorted(known):
        click.echo(f"\n# {kind}")
        for path in kind_paths(kind):
            click.echo(path)


def user_policy_lines(pol: object) -> list[str]:
    """What `policies show` adds for a policy that is not built in."""
    origin = getattr(pol, "origin", "")
    if not origin:
        return []
    out = [f"category: {getattr(pol, 'category', '')}   declared in: {origin}"]
    if getattr(pol, "docs_url", ""):
        out.append(f"docs: {pol.docs_url}")  # type: ignore[attr-defined]
    for framework, controls in (getattr(pol, "compliance", None) or {}).items():
        out.append(f"compliance: {framework}: {', '.join(controls)}")
    return [*out, ""]
