"""Progress of a live audit per (account, region, service), for a person watching a terminal.

The collectors report each service they finish with :func:`service_done` (one call, from any
thread); that is a no-op unless a listener is installed, and ``gpuaudit audit`` installs one
only when stderr is a terminal. Nothing here knows how the progress is drawn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# listener(account, region, service, status): status "ok" or "error"
Listener = Callable[[str, str, str, str], None]

_lock = threading.Lock()
_listener: Listener | None = None


def service_done(account: str, region: str, service: str, status: str = "ok") -> None:
    """A collector finished ``service`` in (account, region). Cheap when nobody listens."""
    listener = _listener
    if listener is None:
        return
    with _lock:  # listeners draw on one stream: one line at a time
        listener(account, region, service, status)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Install ``listener`` for the duration of the block (None: stay silent)."""
    global _listener
    previous = _listener
    _listener = listener
    try:
        yield
    finally:
        _listener = previous
