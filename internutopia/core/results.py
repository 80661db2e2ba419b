"""Where finished episodes are reported: ``'console'``, ``'none'``, or a JSON-lines file path."""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any, Optional, TextIO


class ResultsWriter:
    """Writes one record per finished episode to the console, nowhere, or a JSON-lines file."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.records: list[dict[str, Any]] = []
        self._stream: Optional[TextIO] = None
        self.started_at = time.perf_counter()
        self.last_write_at: Optional[float] = None

    def write(self, record: dict[str, Any]) -> None:
        """Report one finished episode."""
        self.records.append(record)
        self.last_write_at = time.perf_counter()
        if self.target == 'none':
            return
        line = json.dumps(record, default=_jsonable)
        if self.target == 'console':
            print(f'[internutopia] episode finished: {line}', flush=True)
            return
        if self._stream is None:
            directory = os.path.dirname(os.path.abspath(self.target))
            os.makedirs(directory, exist_ok=True)
            self._stream = open(self.target, 'a', encoding='utf-8')
        self._stream.write(line + '\n')
        self._stream.flush()

    def summary(self) -> dict[str, Any]:
        """Aggregates over the episodes reported so far.

        ``episodes``; ``success`` and ``spl``: means of the metrics of those names (``None`` when no
        episode reported them); ``metrics_mean``: the mean of every numeric (or bool) metric, over
        the episodes that reported it; ``wall_time_s``: from the writer's creation (the env's) to
        the last finished episode; ``episodes_per_second``: ``episodes / wall_time_s``.
        """
        sums: dict[str, list[float]] = {}
        for record in self.records:
            for name, value in (record.get('metrics') or {}).items():
                if isinstance(value, (bool, int, float)) and not (isinstance(value, float) and math.isnan(value)):
                    sums.setdefault(name, []).append(float(value))
        means = {name: sum(values) / len(values) for name, values in sums.items()}
        wall = (self.last_write_at - self.started_at) if self.last_write_at is not None else 0.0
        return {
            'episodes': len(self.records),
            'success': means.get('success'),
            'spl': means.get('spl'),
            'metrics_mean': means,
            'wall_time_s': wall,
            'episodes_per_second': len(self.records) / wall if wall > 0 else 0.0,
        }

    def close(self) -> None:
        """Close the file, if one was opened."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def _jsonable(value: Any) -> Any:
    if hasattr(value, 'tolist'):
        return value.tolist()
    raise TypeError(f'metric value of type {type(value).__name__} is not JSON-serializable')
