"""Numbered records the server's request threads share: the request log's entries
and the fault switches. Each record gets the next number (1, 2, ...) as it comes;
hold ``_lock`` to read or change ``_records``."""
from __future__ import annotations

import itertools
import threading


class NumberedRecords:
    def __init__(self):
        self._lock = threading.Lock()
        self._records: list = []
        self._numbers = itertools.count(1)

    def _next_number(self) -> int:
        return next(self._numbers)

    def clear(self) -> None:
        """Forget the records; numbering goes on, so a number never means two records."""
        with self._lock:
            self._records.clear()
