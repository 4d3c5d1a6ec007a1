"""The audit's deadline (``--timeout``): after it nothing new is sent, and what is unread is a gap.

One ``Deadline`` per audit, shared by the client factory (every request checks it before it is
sent) and the fan-out over (account, region) pairs (which stops waiting at the deadline and turns
what was not read into ERROR). A request already in flight at the deadline is not waited for.
"""

from __future__ import annotations

import time


class DeadlineExceeded(Exception):
    """The audit's deadline passed before this request could be sent (nothing was sent)."""


class Deadline:
    """``seconds`` from now (None or 0: no deadline)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds if seconds and seconds > 0 else None
        self._at = None if self.seconds is None else time.monotonic() + self.seconds
        # Set when the audit stopped waiting at the deadline (``expired``), and when it left
        # work in flight (``abandoned``: threads that end when their request times out).
        self.expired = False
        self.abandoned = False

    def remaining(self) -> float | None:
        """Seconds left (0 when passed); None without a deadline."""
        if self._at is None:
            return None
        return max(0.0, self._at - time.monotonic())

    def passed(self) -> bool:
        return self._at is not None and time.monotonic() >= self._at

    @property
    def reason(self) -> str:
        if self.seconds is None:
            return "the audit deadline passed first"
        return f"the audit deadline passed first (--timeout {self.seconds:g} s)"

    def check(self) -> None:
        if self.passed():
            raise DeadlineExceeded(f"not sent: {self.reason}")
