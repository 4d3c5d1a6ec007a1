"""What a collector is, and the per-(account, region) context it runs in.

A collector declares the operations it calls and, for each, the resource kinds that operation
feeds. The context hands out clients restricted to those operations, paginates, and turns every
failed call into an ``InputError`` plus a ``Gap`` for exactly the kinds that call would have fed,
so a denied list is never mistaken for "no resources".
"""

from __future__ import annotations

import builtins
import copy
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore import xform_name
from botocore.client import BaseClient

from scanner.aws import faults, pages
from scanner.aws.clients import ClientFactory
from scanner.model import Gap, InputError, Notice, Resource, SourceResult


@dataclass(frozen=True)
class Call:
    """A declared operation and the kinds it feeds (a failure leaves a Gap for those kinds)."""

    service: str
    operation: str
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class Collector:
    """One service family: its name (coverage rows use it), its calls, its run function, the
    collectors whose output its requests need (``after``: they finish before it starts when they
    run in the same region; the others run side by side with it), and ``finish``, an in-memory
    join of what other collectors fetched, run once every collector of the region is done (so
    that a join never holds a request back)."""

    name: str
    calls: tuple[Call, ...]
    run: Callable[[RegionContext], None]
    after: tuple[str, ...] = ()
    finish: Callable[[RegionContext], None] | None = None

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(k for c in self.calls for k in c.kinds)

    def operations(self, service: str) -> tuple[str, ...]:
        return tuple(c.operation for c in self.calls if c.service == service)

    def call(self, service: str, operation: str) -> Call:
        for c in self.calls:
            if c.service == service and c.operation == operation:
                return c
        raise KeyError(f"{self.name} did not declare {service}:{operation}")


# A walk of ``RegionContext.lists``: (operation, key) or (operation, key, build); ``build`` makes
# the Resource of one item (None: leave the item out).
Build = Callable[["RegionContext", dict[str, Any]], "Resource | None"]
Walk = tuple[str, str] | tuple[str, str, Build]


@dataclass
class Coverage:
    calls: int = 0
    errors: list[str] = field(default_factory=list)


class RegionContext:
    """Everything the collectors of one (account, region) share; ``bind(collector)`` gives the
    view one collector runs with. Collectors of a region may run side by side (threads): the
    shared state is guarded, and the first call to each service goes alone (see ``_gate``)."""

    def __init__(
        self,
        *,
        account: str,
        region: str,
        session: boto3.Session,
        factory: ClientFactory,
        wanted: Collection[str],
        result: SourceResult,
        collectors: Sequence[Collector] = (),
    ) -> None:
        self.account = account
        self.region = region
        self.scope = f"{account}/{region}"
        self.session = session
        self.factory = factory
        self.wanted = frozenset(wanted)
        self.result = result
        self.collector: Collector | None = None
        self.coverage: dict[str, Coverage] = {}
        # One client per service for this (account, region), restricted to the operations the
        # collectors that run here declared (building a botocore client is the costly part).
        self._declared: dict[str, set[str]] = {}
        for c in collectors:
            for call in c.calls:
                self._declared.setdefault(call.service, set()).add(call.operation)
        self._clients: dict[str, BaseClient] = {}
        self._broken: dict[str, str] = {}  # service -> why its endpoint is unusable here
        # Calls whose outcome is in the result: their items added, or their failure recorded.
        # At the audit's deadline every wanted call not settled becomes a gap (see ``close``).
        self.settled: set[tuple[str, str]] = set()
        # Past the deadline nothing more enters the result (shared by every ``bind`` view).
        self._closed = threading.Event()
        self.shared: dict[str, Any] = {}  # in-memory joins between collectors of this region
        self._lock = threading.RLock()
        # Who is told about each call (a client is shared by the collectors of its service).
        self._owner: dict[tuple[str, str], str] = {}
        # The first collector (in run order) to use a service sends its first call alone; the
        # others wait for that answer, so that a service-wide refusal or an unreachable
        # endpoint stops the service's other calls exactly as if the collectors ran in turn.
        self._gates: dict[str, tuple[str, threading.Event]] = {}
        for c in collectors:
            for call in c.calls:
                self._owner.setdefault((call.service, call.operation), c.name)
                self._gates.setdefault(call.service, (c.name, threading.Event()))

    def bind(self, collector: Collector) -> RegionContext:
        """The view ``collector`` runs with: its own ``collector``, everything else shared."""
        view = copy.copy(self)
        view.collector = collector
        return view

    def release(self, collector: Collector) -> None:
        """``collector`` is done: the services it had to open first are open."""
        for first, gate in self._gates.values():
            if first == collector.name:
                gate.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def settle(self, *calls: tuple[str, str]) -> None:
        """These calls' outcome is in the result (a collector that returned settles all its
        calls; a walk of ``lists`` with a builder settles itself as soon as it is added)."""
        with self._lock:
            self.settled.update(calls)

    def close(self, reason: str, collectors: Sequence[Collector]) -> SourceResult:
        """The audit's deadline: nothing more enters the result; a copy of what is in it, with
        an error and a gap for every wanted call of ``collectors`` not settled yet."""
        with self._lock:
            self._closed.set()
            out = SourceResult(
                resources=list(self.result.resources),
                errors=list(self.result.errors),
                notices=list(self.result.notices),
                gaps=list(self.result.gaps),
            )
            unsettled: dict[str, list[Call]] = {}
            for collector in collectors:
                for call in collector.calls:
                    key = (call.service, call.operation)
                    if key in self.settled or not set(call.kinds) & self.wanted:
                        continue
                    unsettled.setdefault(collector.name, []).append(call)
                    self.settled.add(key)
            for name, calls in unsettled.items():
                cov = self.coverage.setdefault(name, Coverage())
                for call in calls:
                    what = f"{call.service}:{call.operation}"
                    why = f"not read: {reason}"
                    cov.errors.append(f"{what}: {why}")
                    self._record(out, what, why, call.kinds)
        return out

    def _gate(self, service: str) -> None:
        entry = self._gates.get(service)
        if entry is None or entry[1].is_set():
            return
        assert self.collector is not None
        if self.collector.name != entry[0]:
            entry[1].wait()

    # -- selection -----------------------------------------------------------------------------

    def wants(self, *kinds: str) -> bool:
        return any(k in self.wanted for k in kinds)

    def wants_call(self, service: str, operation: str) -> bool:
        assert self.collector is not None
        return self.wants(*self.collector.call(service, operation).kinds)

    # -- calls ---------------------------------------------------------------------------------

    def _cov(self) -> Coverage:
        assert self.collector is not None
        with self._lock:
            return self.coverage.setdefault(self.collector.name, Coverage())

    def client(self, service: str) -> BaseClient:
        assert self.collector is not None
        with self._lock:
            if service not in self._clients:
                declared = self._declared.get(service) or set(self.collector.operations(service))
                self._clients[service] = self.factory.client(
                    self.session,
                    service,
                    sorted(declared),
                    region=self.region,
                    on_call=self._on_call,
                )
            return self._clients[service]

    def _on_call(self, service: str, operation: str) -> None:
        name = self._owner.get((service, operation))
        with self._lock:
            if name is None:
                self._cov().calls += 1
            else:
                self.coverage.setdefault(name, Coverage()).calls += 1

    def call(self, service: str, operation: str, **params: Any) -> dict[str, Any] | None:
        """One unpaginated call; None (with the failure recorded) when it fails."""
        self._gate(service)
        if self._skipped(service, operation):
            return None
        try:
            method = getattr(self.client(service), _snake(operation))
            answer = dict(method(**params))
            pages.check_region(answer, self.region, operation)
            return answer
        except Exception as exc:
            self.fail(service, operation, exc)
            return None
        finally:
            self._opened(service)

    def list(
        self, service: str, operation: str, key: str, **params: Any
    ) -> list[dict[str, Any]] | None:
        """Every item of a list call, walking all pages, each resource once and all of them of
        this region (``scanner.aws.pages``); None when any page fails or the answer is not one
        about this region, or has two different copies of a resource."""
        self._gate(service)
        if self._skipped(service, operation):
            return None
        try:
            items = pages.one_copy_each(key, self._pages(service, operation, key, params))
            for item in items:
                pages.check_region(item, self.region, operation)
            return items
        except Exception as exc:
            self.fail(service, operation, exc)
            return None
        finally:
            self._opened(service)

    # builtins.list: in this class `list` is the method above
    def lists(self, service: str,
              *walks: Walk) -> builtins.list[builtins.list[dict[str, Any]] | None]:
        """Several independent list calls (``(operation, key)``, or ``(operation, key, build)``
        to add ``build(ctx, item)`` of each item as soon as that walk has answered: then what
        one walk read is in the result even if another never answers), sent side
        by side: a region then waits one round trip for all of them, not one each. The result
        of each is ``list``'s; a walk whose declared kinds are not wanted is not sent (None).
        When this collector opens the service (see ``_gate``), its first walk goes alone, so
        that a service-wide refusal still stops the others."""
        todo = [(i, w) for i, w in enumerate(walks) if self.wants_call(service, w[0])]
        out: list[list[dict[str, Any]] | None] = [None] * len(walks)
        if todo and self._opens(service):
            i, walk = todo.pop(0)
            out[i] = self._walk(service, walk)
        if len(todo) == 1:
            i, walk = todo[0]
            out[i] = self._walk(service, walk)
        elif todo:
            with ThreadPoolExecutor(max_workers=len(todo)) as pool:
                futures = {i: pool.submit(self._walk, service, walk) for i, walk in todo}
            for i, future in futures.items():
                out[i] = future.result()
        return out

    def _walk(self, service: str, walk: Walk) -> builtins.list[dict[str, Any]] | None:
        operation, key = walk[0], walk[1]
        items = self.list(service, operation, key)
        if items is not None and len(walk) > 2:
            build = walk[2]
            for item in items:
                resource = build(self, item)
                if resource is not None:
                    self.add(resource)
            self.settle((service, operation))
        return items

    def _opens(self, service: str) -> bool:
        """This collector sends the service's first call here and it has no answer yet."""
        entry = self._gates.get(service)
        assert self.collector is not None
        return entry is not None and entry[0] == self.collector.name and not entry[1].is_set()

    def _opened(self, service: str) -> None:
        """The service's first call has its answer (or its failure is recorded): open the gate."""
        entry = self._gates.get(service)
        if entry is not None and self.collector is not None and self.collector.name == entry[0]:
            entry[1].set()

    def _pages(
        self, service: str, operation: str, key: str, params: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        client = self.client(service)
        name = _snake(operation)
        if client.can_paginate(name):
            for page in client.get_paginator(name).paginate(**params):
                yield from page.get(key) or []
        else:
            yield from getattr(client, name)(**params).get(key) or []

    def _skipped(self, service: str, operation: str) -> bool:
        """After an unreachable endpoint or a region/credential-wide refusal, the service's
        other calls in this region are not sent (each would wait through its retries), but each
        is still reported with the Gap of its own kinds."""
        reason = self._broken.get(service)
        if reason is None:
            return False
        assert self.collector is not None
        self.record_failure(
            f"{service}:{operation}",
            f"not attempted after an earlier failure: {reason}",
            self.collector.call(service, operation).kinds,
        )
        self.settle((service, operation))
        return True

    def fail(
        self,
        service: str,
        operation: str,
        exc: BaseException,
        kinds: tuple[str, ...] | None = None,
    ) -> None:
        assert self.collector is not None
        reason = faults.describe(exc)
        if faults.service_wide(exc):
            self._broken[service] = reason
        if kinds is None:
            kinds = self.collector.call(service, operation).kinds
        self.record_failure(f"{service}:{operation}", reason, kinds)
        self.settle((service, operation))

    def record_failure(self, what: str, reason: str, kinds: tuple[str, ...]) -> None:
        with self._lock:
            if self.closed:
                return
            self._cov().errors.append(f"{what}: {reason}")
            self._record(self.result, what, reason, kinds)

    def _record(self, result: SourceResult, what: str, reason: str,
                kinds: tuple[str, ...]) -> None:
        result.errors.append(InputError(path=f"{self.scope}/{what}", reason=reason, kind="aws"))
        gap_kinds = tuple(sorted(k for k in kinds if k in self.wanted)) or tuple(sorted(kinds))
        result.gaps.append(
            Gap(
                scope=self.scope,
                kinds=gap_kinds,
                reason=f"{what}: {reason}",
                account=self.account,
                region=self.region,
            )
        )

    # -- output --------------------------------------------------------------------------------

    def add(self, resource: Resource) -> None:
        with self._lock:
            if not self.closed:
                self.result.resources.append(resource)

    def notice(self, path: str, message: str) -> None:
        with self._lock:
            if not self.closed:
                self.result.notices.append(Notice(path=f"{self.scope}/{path}", message=message))


def _snake(operation: str) -> str:
    return str(xform_name(operation))
