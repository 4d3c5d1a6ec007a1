"""One botocore client class per service and data loader for the audit's clients.

botocore builds a new client class for every client it makes: a method, an operation model and a
docstring object for each of the service's operations (EC2 has about 750), 4-15 ms of CPU a
client. An audit makes one client per service, region and account (about 140 for one account
in every region, 14,000 for an organisation of a hundred), all of the same few classes. A class
holds nothing of the client it was made for: each client keeps its own region, endpoint,
credentials and service model (``client.meta``), which the class's methods read at call time.

botocore offers no way to pass a class in, so ``ClientCreator._create_client_class`` is
wrapped, once per process, and answers from the cache only inside ``shared_classes()`` (the
audit's ``ClientFactory``); everywhere else, and whenever botocore's method is not the one this
was written for (its name or arguments changed), botocore's own code runs unchanged.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from botocore.client import ClientCreator

_ATTR = "_create_client_class"
_MARK = "_gpuaudit_shares_classes"
_scope = threading.local()
_lock = threading.Lock()
# data loader -> (service name, API version) -> class; a loader that goes takes its classes
_classes: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], type]] = (
    weakref.WeakKeyDictionary()
)


def _wrap(original: Any) -> Any:
    def create_client_class(self: Any, *args: Any, **kwargs: Any) -> Any:
        loader = getattr(self, "_loader", None)
        if not getattr(_scope, "depth", 0) or kwargs or len(args) != 2 or loader is None:
            return original(self, *args, **kwargs)
        service_name, service_model = args
        key = (str(service_name), str(getattr(service_model, "api_version", "")))
        with _lock:
            known = _classes.setdefault(loader, {}).get(key)
        if known is not None:
            return known
        made = original(self, service_name, service_model)
        with _lock:  # two threads may have made one side by side: both keep the first
            return _classes[loader].setdefault(key, made)

    setattr(create_client_class, _MARK, True)
    return create_client_class


def _install() -> None:
    with _lock:
        original = getattr(ClientCreator, _ATTR, None)
        if original is not None and not getattr(original, _MARK, False):
            setattr(ClientCreator, _ATTR, _wrap(original))


@contextmanager
def shared_classes() -> Iterator[None]:
    """Clients made by this thread in the block share their service's class (when botocore
    has the method this wraps; without it the block changes nothing)."""
    _install()
    _scope.depth = getattr(_scope, "depth", 0) + 1
    try:
        yield
    finally:
        _scope.depth -= 1
