"""A large plan's resources translated part by part, the parts shared out among forked
processes (:func:`scanner.inputs.workers.shared_out`), with the result of reading them one by
one in order.

A part's translation (its values resolved against the whole plan, then translated) depends only
on the part and on what every process knows before the fork (the plan's index and
configuration, where the ``.tf`` files are). What depends on the order, it gives back apart and
:func:`translate_in_parts` joins in order: the values known only after apply (how many, the first
one), the notices of a bad ``gpuaudit:skip`` (each said once, for its first resource). Plans that
hold Kubernetes manifests (their text shares one budget in order) are read in one process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scanner.model import InputError, Notice, Resource, SourceResult
from scanner.sources.terraform.plan.planned import PlannedResources

MIN_SHARED = 4000  # planned resources: fewer are read in one process (a fork costs ~50 ms)

# (module, planned resource, where its errors and notices go) -> its Resources
TranslateOne = Callable[[str, dict[str, Any], SourceResult], list[Resource]]


@dataclass
class PartResult:
    """What translating one part gave, as the reader's state would have taken it in order."""

    resources: list[Resource]
    errors: list[InputError]
    notices: list[Notice]
    sensitive: set[str]
    unknown: int  # values known only after apply
    example: str  # the first of them, said in the notice
    # the notices of bad `gpuaudit:skip` comments, under (file, line): said once for the plan
    skip_notices: list[tuple[tuple[str, int], Notice]] = field(default_factory=list)


class Ordered:
    """The order-dependent state a part's translation keeps: the plan's unknown count and
    example, the bad skip comments already said. Each part starts afresh."""

    def __init__(self, plan: Any, where: Any) -> None:
        self.plan = plan
        self.where = where

    def start(self) -> None:
        self.plan.unknown, self.plan.example = 0, ""
        self.where.bad_skips_seen = set()
        self.where.said = []

    def state(self) -> tuple[int, str, set[tuple[str, int]], list[Any] | None]:
        return (self.plan.unknown, self.plan.example, self.where.bad_skips_seen,
                self.where.said)

    def restore(self, saved: tuple[int, str, set[tuple[str, int]], list[Any] | None]) -> None:
        (self.plan.unknown, self.plan.example, self.where.bad_skips_seen,
         self.where.said) = saved


def shareable(planned: PlannedResources, manifest_types: frozenset[str]) -> int:
    """How many processes translate these resources (1: this one, in order)."""
    from scanner.inputs.workers import worker_count

    if not planned.parts or planned.part is None or planned.parts < 2 \
            or planned.index.types & manifest_types:
        return 1
    return worker_count(planned.index.count, MIN_SHARED)


def translate_in_parts(planned: PlannedResources, one: TranslateOne, ordered: Ordered,
                       workers: int, result: SourceResult) -> list[Resource]:
    """The Resources of every planned resource, translated part by part in ``workers``
    processes; the parts' errors, notices and secrets go to ``result`` in order, and the plan's
    unknown count and example are as one pass in order leaves them. A part that raises raises
    here (the caller reads the plan in one pass again, which says the same)."""
    from scanner.inputs.workers import shared_out

    part = planned.part
    assert part is not None
    saved = ordered.state()

    def translate_part(i: int) -> PartResult:
        ordered.start()
        out = SourceResult()
        resources: list[Resource] = []
        for module, r in part(i):
            resources.extend(one(module, r, out))
        plan, where = ordered.plan, ordered.where
        return PartResult(resources, out.errors, out.notices, out.sensitive, plan.unknown,
                          plan.example, where.said)

    try:
        done, _ = shared_out(translate_part, planned.parts, workers)
    finally:
        ordered.restore(saved)
    resources: list[Resource] = []
    said: set[tuple[str, int]] = set(ordered.where.bad_skips_seen)
    for i in range(planned.parts):
        p = done[i]
        resources.extend(p.resources)
        again = {id(n) for key, n in p.skip_notices if key in said}
        said.update(key for key, _ in p.skip_notices)
        result.errors.extend(p.errors)
        result.notices.extend(n for n in p.notices if id(n) not in again)
        result.sensitive.update(p.sensitive)
        ordered.plan.unknown += p.unknown
        if not ordered.plan.example:
            ordered.plan.example = p.example
    ordered.where.bad_skips_seen = said
    return resources
