"""Load a directory of declarative policies: every file validated against the published JSON
Schema (``policies/declarative/policy.schema.json``) and against the kind schema before any of them
is used; the first problem is an error naming the file and line."""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from policies.api import UserPolicy
from policies.base import Remediation
from policies.declarative.check import SELECTORS, make_check
from policies.declarative.conditions import OPERATORS, compile_condition
from policies.declarative.fields import FIELDS, TAGS, check_path, view_kinds
from policies.declarative.reader import FileProblem, Lines, line_of, read_policy_file
from scanner.model import Severity

SCHEMA_FILE = Path(__file__).resolve().parent / "policy.schema.json"
SUFFIXES = (".yaml", ".yml")
MAX_FILES = 500  # policy files in one directory
MAX_REGEX_PROGRAM = 2_000  # RE2 program size of one `matches` pattern


class PolicyFileError(Exception):
    """A policy file that cannot be used: ``file:line: reason``."""

    def __init__(self, path: Path | str, reason: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))


def policy_files(directory: Path) -> list[Path]:
    """The policy files of a directory: its own ``*.yaml`` / ``*.yml`` files (fixtures under
    ``tests/`` and other subdirectories are not policies)."""
    if not directory.is_dir():
        raise PolicyFileError(directory, "not a directory of policies")
    found = sorted(p for p in directory.iterdir()
                   if p.suffix.lower() in SUFFIXES and not p.name.startswith("."))
    if len(found) > MAX_FILES:
        raise PolicyFileError(directory, f"more than {MAX_FILES} policy files")
    return found


def load_policy_dir(directory: Path, *, taken: Collection[str] = (),
                    builtin: Collection[str] = ()) -> list[UserPolicy]:
    """Every policy of the directory, or PolicyFileError for the first file that is wrong."""
    out: list[UserPolicy] = []
    seen = dict.fromkeys(taken)
    origins: dict[str, str] = {}
    for path in policy_files(directory):
        pol = load_policy_file(path, taken=seen, builtin=builtin, origins=origins)
        seen[pol.id] = None
        origins[pol.id] = str(path)
        out.append(pol)
    return out


def load_policy_file(path: Path, *, taken: Collection[str] = (), builtin: Collection[str] = (),
                     origins: Mapping[str, str] | None = None) -> UserPolicy:
    try:
        doc, lines = read_policy_file(path)
    except FileProblem as exc:
        raise PolicyFileError(path, exc.reason, exc.line) from None
    try:
        return _build(path, doc, lines, taken, builtin, origins or {})
    except FileProblem as exc:
        raise PolicyFileError(path, exc.reason, exc.line) from None


def _build(path: Path, doc: Any, lines: Lines, taken: Collection[str],
           builtin: Collection[str], origins: Mapping[str, str]) -> UserPolicy:
    if not isinstance(doc, dict):
        raise FileProblem("a policy is a mapping (id, title, severity, …)", 1)
    if "condition" in doc:
        _check_condition_shape(doc["condition"], ("condition",), lines)
    if "kinds" not in doc and "compute" not in doc:
        raise FileProblem("a policy says what it judges: kinds (e.g. kinds: [ec2.instance]), "
                          "or a compute view selector (e.g. compute: {gpu: true})", 1)
    _validate(doc, lines)
    pid = doc["id"]
    if pid in builtin:
        raise FileProblem(f"id {pid} is a built-in policy's (or a plugin's): choose another "
                          "(an organisation prefix such as ORG-)", line_of(lines, ("id",)))
    if pid in taken:
        other = origins.get(pid)
        raise FileProblem(f"id {pid} is already declared" + (f" by {other}" if other else ""),
                          line_of(lines, ("id",)))
    selector: dict[str, bool] = dict(doc.get("compute") or {})
    kinds = _kinds(doc, lines, selector)
    reads_view = bool(selector) or _reads_view(doc["condition"])
    uses_view = reads_view or bool(set(kinds) & view_kinds())
    regexes: dict[str, Any] = {}
    _check_paths(doc["condition"], ("condition",), lines, kinds, regexes)
    node = compile_condition(doc["condition"], lambda pattern: regexes[pattern])
    rem = doc["remediation"]
    remediation = Remediation(rem) if isinstance(rem, str) else Remediation(
        rem["text"], rem.get("terraform", ""), rem.get("cloudformation", ""))
    needs = kinds
    if reads_view:  # what the views of its kinds read (their launch templates)
        from scanner.compute import reads_of

        needs = tuple(dict.fromkeys(kinds + reads_of(kinds)))
    from policies.base import _observable

    check = make_check(pid, node, selector, uses_view)
    return UserPolicy(
        id=pid,
        title=doc["title"],
        severity=Severity.parse(doc["severity"]),
        kinds=kinds,
        needs=needs,
        observed_needs=tuple(n for n in needs if _observable(n)),
        description=doc.get("description") or doc["title"],
        remediation=remediation,
        params={},
        enabled_by_default=bool(doc.get("enabled", True)),
        sources=_sources(kinds),
        check=check,
        category=doc["category"],
        docs_url=doc.get("docs_url", ""),
        compliance={k: tuple(v) for k, v in (doc.get("compliance") or {}).items()},
        origin=str(path),
    )


def _validate(doc: dict[str, Any], lines: Lines) -> None:
    import jsonschema

    errors = list(_validator().iter_errors(doc))
    if not errors:
        return
    err = jsonschema.exceptions.best_match(errors)
    where = tuple(err.absolute_path)
    key = ".".join(str(p) for p in where) or "(top level)"
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = sorted(err.schema.get("properties") or {})
        unknown = [str(k) for k in err.instance if k not in allowed]
        hints = []
        for name in unknown:
            near = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
            hints.append(f"{name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        line = line_of(lines, (*where, unknown[0])) if unknown else line_of(lines, where)
        raise FileProblem(f"key {key}: unknown key {', '.join(hints)}; valid keys: "
                          f"{', '.join(allowed)}", line)
    raise FileProblem(f"key {key}: {err.message}", line_of(lines, where))


def _check_condition_shape(cond: Any, where: tuple[Any, ...], lines: Lines,
                           depth: int = 0) -> None:
    """Clear words for a wrong condition before the schema's (its oneOf says little)."""
    line = line_of(lines, where)
    if depth > 24:
        raise FileProblem("condition nested deeper than 24 levels", line)
    if not isinstance(cond, dict):
        raise FileProblem("a condition is a mapping: all, any, not, or path and an operator",
                          line)
    groups = [k for k in ("all", "any", "not") if k in cond]
    if groups:
        if len(cond) != 1:
            raise FileProblem(f"{groups[0]} stands alone in its mapping (found "
                              f"{', '.join(sorted(cond))})", line)
        inner = cond[groups[0]]
        if groups[0] == "not":
            _check_condition_shape(inner, (*where, "not"), lines, depth + 1)
            return
        if not isinstance(inner, list) or not inner:
            raise FileProblem(f"{groups[0]} takes a list of conditions", line)
        for i, part in enumerate(inner):
            _check_condition_shape(part, (*where, groups[0], i), lines, depth + 1)
        return
    if "path" not in cond:
        words = [k for k in cond if k != "path"]
        near = difflib.get_close_matches(str(words[0]), ["all", "any", "not", "path"], n=1) \
            if words else []
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise FileProblem(f"a test needs a path (found {', '.join(map(str, words))}){hint}",
                          line)
    ops = [k for k in cond if k != "path"]
    for op in ops:
        if op not in OPERATORS:
            near = difflib.get_close_matches(str(op), OPERATORS, n=1, cutoff=0.5)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise FileProblem(f"unknown operator {op!r}{hint} (operators: "
                              f"{', '.join(OPERATORS)})", line_of(lines, (*where, op)))
    if len(ops) != 1:
        raise FileProblem(f"a test has one operator (found {', '.join(ops) or 'none'}); "
                          "combine tests with all / any", line)


def _kinds(doc: dict[str, Any], lines: Lines, selector: Mapping[str, bool]) -> tuple[str, ...]:
    from scanner.kinds import schema

    known = schema().kinds
    listed = list(doc.get("kinds") or [])
    for i, kind in enumerate(listed):
        if kind not in known:
            near = difflib.get_close_matches(kind, sorted(known), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise FileProblem(f"{kind!r} is not a kind{hint} (docs/resource-model.md)",
                              line_of(lines, ("kinds", i)))
    if selector:
        from scanner.compute import LAUNCHES, kinds_with

        launching = kinds_with(LAUNCHES)
        if not listed:
            return launching
        bad = [k for k in listed if k not in launching]
        if bad:
            raise FileProblem(f"compute: selects by the compute view, and {bad[0]} launches "
                              "no compute", line_of(lines, ("kinds",)))
    return tuple(listed)


def _reads_view(cond: Any) -> bool:
    if "path" in cond:
        return FIELDS.get(cond["path"]) is not None and FIELDS[cond["path"]].needs_view
    parts = cond.get("all") or cond.get("any") or [cond.get("not")]
    return any(_reads_view(p) for p in parts if isinstance(p, dict))


def _check_paths(cond: Any, where: tuple[Any, ...], lines: Lines, kinds: tuple[str, ...],
                 regexes: dict[str, Any]) -> None:
    for group in ("all", "any"):
        if group in cond:
            for i, part in enumerate(cond[group]):
                _check_paths(part, (*where, group, i), lines, kinds, regexes)
            return
    if "not" in cond:
        _check_paths(cond["not"], (*where, "not"), lines, kinds, regexes)
        return
    path = cond["path"]
    problem = check_path(path, kinds)
    if problem is not None:
        raise FileProblem(problem, line_of(lines, (*where, "path")))
    if path.startswith(TAGS) and "." in path[len(TAGS):]:
        pass  # a tag key may contain dots
    if "matches" in cond:
        regexes[cond["matches"]] = _regex(cond["matches"], line_of(lines, (*where, "matches")))


def _regex(pattern: str, line: int | None) -> Any:
    import re2

    options = re2.Options()
    options.max_mem = 1 << 20
    options.log_errors = False
    try:
        compiled = re2.compile(pattern, options=options)
    except re2.error as exc:
        raise FileProblem(f"matches: not a valid RE2 expression: {exc}", line) from None
    size = getattr(compiled, "programsize", 0) or 0
    if size > MAX_REGEX_PROGRAM:
        raise FileProblem(f"matches: the expression is too large ({size} > "
                          f"{MAX_REGEX_PROGRAM})", line)
    return compiled


def _sources(kinds: tuple[str, ...]) -> str:
    from scanner.kinds import schema

    s = schema()
    letters = ""
    if any(s.kinds[k].terraform for k in kinds):
        letters += "HP"
    if any(s.kinds[k].cloudformation for k in kinds):
        letters += "C"
    if any(s.kinds[k].live for k in kinds):
        letters += "L"
    return letters or "HPC"


def selector_fields() -> dict[str, str]:
    return dict(SELECTORS)


def view_kind_names() -> list[str]:
    return sorted(view_kinds())
