"""Rate limits (questions, sign-ins, registrations)."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping


class RateLimiter:
    """At most `limit` events per key within any `per_seconds` window (sliding log). `take`
    checks several keys, each with its own quota, and records on all of them in one step under
    one lock: concurrent requests cannot all pass the check before any of them is counted."""

    _PRUNE_EVERY = 10_000  # calls; keys that fell out of every window are forgotten

    def __init__(self, limit: int, per_seconds: float, clock=time.monotonic) -> None:
        self.limit = limit
        self.per_seconds = per_seconds
        self.clock = clock
        self._log: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()
        self._calls = 0
        self._longest = per_seconds

    def hit(self, key: str) -> float | None:
        """Record one event; None if allowed, else seconds until the next one would be."""
        return self.take({key: (self.limit, self.per_seconds)})

    def wait(self, key: str) -> float | None:
        """Like `hit` without recording: is `key` over its limit now?"""
        return self.take({key: (self.limit, self.per_seconds)}, record=False)

    def take(self, quotas: Mapping[str, tuple[int, float]], record: bool = True) -> float | None:
        """One event on every key of `quotas` ({key: (limit, per_seconds)}) if none is over its
        quota (None); otherwise nothing is recorded and the longest wait is returned."""
        now = self.clock()
        with self._lock:
            self._maybe_prune(now)
            wait = 0.0
            for key, (limit, window) in quotas.items():
                self._longest = max(self._longest, window)
                log = self._log.get(key)
                if not log:
                    continue
                while log and log[0] <= now - window:
                    log.popleft()
                if len(log) >= limit:
                    wait = max(wait, log[len(log) - limit] + window - now)
            if wait > 0:
                return wait
            if record:
                for key in quotas:
                    self._log[key].append(now)
            return None

    def give_back(self, keys: Iterable[str]) -> None:
        """Undo one event on each key (an attempt that turned out not to count)."""
        with self._lock:
            for key in keys:
                log = self._log.get(key)
                if log:
                    log.pop()

    def _maybe_prune(self, now: float) -> None:
        self._calls += 1
        if self._calls % self._PRUNE_EVERY:
            return
        stale = [k for k, log in self._log.items() if not log or log[-1] <= now - self._longest]
        for key in stale:
            del self._log[key]
