"""Compliance frameworks: which controls of which framework version each policy checks.

The mapping is data (``frameworks/*.yaml``, one file per framework version, validated by
``framework.schema.json``), never code in the policy modules: :func:`controls_for` looks a
policy's controls up in the files and merges what the policy itself declares (a user policy's
``compliance:``). Every report format takes a finding's controls from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

FRAMEWORK_DIR = "frameworks"
SCHEMA_RESOURCE = "framework.schema.json"
COVERAGE = ("full", "partial")


class FrameworkError(Exception):
    """A framework file that is not valid (the message names the file and the key)."""


class UnknownFramework(LookupError):
    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        super().__init__(f"unknown compliance framework {name!r} (known: {', '.join(known)})")


@dataclass(frozen=True)
class PolicyMapping:
    policy: str
    coverage: str  # "full" | "partial"
    why: str


@dataclass(frozen=True)
class Control:
    id: str
    title: str
    mappings: tuple[PolicyMapping, ...] = ()

    @property
    def policies(self) -> tuple[str, ...]:
        return tuple(m.policy for m in self.mappings)

    @property
    def coverage(self) -> str:
        """``full`` when one policy checks the whole control, ``partial`` when policies check
        part of it, ``none`` when no policy maps to it."""
        if not self.mappings:
            return "none"
        return "full" if any(m.coverage == "full" for m in self.mappings) else "partial"


@dataclass(frozen=True)
class Framework:
    id: str
    name: str
    version: str
    url: str
    scope: str
    controls: tuple[Control, ...]

    @property
    def covered(self) -> tuple[Control, ...]:
        return tuple(c for c in self.controls if c.mappings)

    def control(self, control_id: str) -> Control | None:
        return next((c for c in self.controls if c.id == control_id), None)


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    text = resources.files(__name__).joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def check_framework(data: Any, name: str) -> None:
    """FrameworkError (naming ``name`` and the key) when ``data`` is not valid by the schema."""
    import jsonschema  # lazy: a scan reads the shipped files without it (tests validate them)

    validator = jsonschema.Draft202012Validator(schema())
    problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if problems:
        first = problems[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top)"
        raise FrameworkError(f"{name}: {where}: {first.message}")


def parse_framework(data: Any, name: str, *, validate: bool = True) -> Framework:
    """A framework from a loaded YAML document; FrameworkError naming ``name`` and the key.
    ``validate=False`` skips the schema (the shipped files, validated by the tests: 40 ms of
    jsonschema a scan does not pay), not the checks the parsing itself needs."""
    if validate:
        check_framework(data, name)
    try:
        return _parse(data, name)
    except (KeyError, TypeError, AttributeError) as exc:
        raise FrameworkError(f"{name}: not a framework file ({type(exc).__name__}: {exc}); "
                             "see framework.schema.json") from exc


def _parse(data: Any, name: str) -> Framework:
    controls: list[Control] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["controls"]):
        if raw["id"] in seen:
            raise FrameworkError(f"{name}: controls/{i}/id: control {raw['id']} is listed twice")
        seen.add(raw["id"])
        maps = tuple(PolicyMapping(m["policy"].upper(), m["coverage"], " ".join(m["why"].split()))
                     for m in raw.get("policies") or ())
        controls.append(Control(str(raw["id"]), " ".join(str(raw["title"]).split()), maps))
    return Framework(id=data["id"], name=data["name"], version=str(data["version"]),
                     url=data["url"], scope=" ".join(data["scope"].split()),
                     controls=tuple(controls))


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when there (5x faster)


@lru_cache(maxsize=2)
def frameworks(validate: bool = False) -> dict[str, Framework]:
    """Every shipped framework, by id (sorted); ``validate``: each file by the schema too."""
    out: dict[str, Framework] = {}
    folder = resources.files(__name__).joinpath(FRAMEWORK_DIR)
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".yaml"):
            continue
        name = f"{FRAMEWORK_DIR}/{entry.name}"
        try:
            data = yaml.load(entry.read_text(encoding="utf-8"), Loader=_LOADER)
        except yaml.YAMLError as exc:
            raise FrameworkError(f"{name}: not YAML: {exc}") from exc
        fw = parse_framework(data, name, validate=validate)
        if entry.name != f"{fw.id}.yaml":
            raise FrameworkError(f"{name}: id {fw.id!r} does not match the file name")
        out[fw.id] = fw
    return out


def framework(framework_id: str) -> Framework:
    known = frameworks()
    fw = known.get(framework_id.strip().lower())
    if fw is None:
        raise UnknownFramework(framework_id, known)
    return fw


@lru_cache(maxsize=1)
def _by_policy() -> dict[str, dict[str, tuple[str, ...]]]:
    out: dict[str, dict[str, list[str]]] = {}
    for fw in frameworks().values():
        for control in fw.controls:
            for pid in control.policies:
                ids = out.setdefault(pid, {}).setdefault(fw.id, [])
                if control.id not in ids:
                    ids.append(control.id)
    return {pid: {f: tuple(ids) for f, ids in m.items()} for pid, m in out.items()}


def _declared(extra: Any) -> dict[str, list[str]]:
    """A policy's own ``compliance:`` as {framework: [control ids]}: a mapping of framework id
    to a control id or a list of them; anything else in it is left out."""
    out: dict[str, list[str]] = {}
    if not isinstance(extra, Mapping):
        return out
    for fid, value in extra.items():
        if not isinstance(fid, str) or not fid.strip():
            continue
        values = [value] if isinstance(value, str | int | float) else value
        if not isinstance(values, list | tuple):
            continue
        ids = [str(v).strip() for v in values
               if isinstance(v, str | int | float) and not isinstance(v, bool) and str(v).strip()]
        if ids:
            out.setdefault(fid.strip().lower(), []).extend(ids)
    return out


def controls_for(policy_id: str, extra: Any = None) -> dict[str, list[str]]:
    """{framework id: [control ids]} of ``policy_id``: the framework files' mapping, merged with
    ``extra`` (the policy's own declared mapping). Frameworks sorted by id; controls in the
    framework's order, then declared ones the framework file does not list."""
    merged: dict[str, list[str]] = {f: list(ids)
                                    for f, ids in _by_policy().get(policy_id.upper(), {}).items()}
    for fid, ids in _declared(extra).items():
        target = merged.setdefault(fid, [])
        target.extend(i for i in ids if i not in target)
    known = frameworks()
    out: dict[str, list[str]] = {}
    for fid in sorted(merged):
        ids = merged[fid]
        fw = known.get(fid)
        if fw is not None:
            order = {c.id: i for i, c in enumerate(fw.controls)}
            ids = sorted(ids, key=lambda i: (order.get(i, len(order)), i))
        out[fid] = ids
    return out


def declared_mapping(policy_id: str) -> Any:
    """What a registered policy declares itself (a ``compliance`` attribute), if anything."""
    try:
        from policies import all_policies
    except ImportError:  # pragma: no cover - the package always ships policies
        return None
    policy = all_policies().get(policy_id)
    return policy.compliance if policy is not None else None


def policy_controls(policy_id: str) -> dict[str, list[str]]:
    """:func:`controls_for` a registered policy, with its own declared mapping."""
    return controls_for(policy_id, declared_mapping(policy_id))


def finding_controls(finding: Mapping[str, Any]) -> dict[str, list[str]]:
    """A finding's controls: what the report says (``compliance``), else (a report written
    before findings carried them) what the mapping says of its policy."""
    given = finding.get("compliance")
    if isinstance(given, Mapping):
        return {str(k): [str(c) for c in v] for k, v in given.items() if isinstance(v, list)}
    return policy_controls(str(finding.get("policy_id") or ""))


def with_controls(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The findings (report dicts), each a shallow copy with its ``compliance``, looked up once
    per policy. A finding that carries controls already (a report being merged, written where a
    user policy declared its own) keeps them, merged with the mapping."""
    cache: dict[str, dict[str, list[str]]] = {}
    out = []
    for f in findings:
        pid = str(f.get("policy_id") or "")
        if pid not in cache:
            cache[pid] = policy_controls(pid)
        given = f.get("compliance")
        if isinstance(given, Mapping) and given:
            own = _merge_lists(_declared(declared_mapping(pid)), _declared(given))
            controls = controls_for(pid, own)
        else:
            controls = {k: list(v) for k, v in cache[pid].items()}
        out.append({**f, "compliance": controls})
    return out


def _merge_lists(a: dict[str, list[str]], b: dict[str, list[str]]) -> dict[str, list[str]]:
    out = {k: list(v) for k, v in a.items()}
    for k, ids in b.items():
        out.setdefault(k, []).extend(i for i in ids if i not in out[k])
    return out


def short_label(controls: Mapping[str, list[str]]) -> str:
    """``cis-aws-foundations-3.0: 2.2.1; nist-800-53-r5: SC-28, SC-28(1)`` ("" without any)."""
    return "; ".join(f"{fid}: {', '.join(ids)}" for fid, ids in controls.items() if ids)
