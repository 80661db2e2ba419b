"""Where finished episodes are reported: ``'console'``, ``'none'``, or a JSON-lines file path."""

from __future__ import annotations

import json
import os
from typing import Any, Optional, TextIO


class ResultsWriter:
    """Writes one record per finished episode to the console, nowhere, or a JSON-lines file."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.records: list[dict[str, Any]] = []
        self._stream: Optional[TextIO] = None

    def write(self, record: dict[str, Any]) -> None:
        """Report one finished episode."""
        self.records.append(record)
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

    def close(self) -> None:
        """Close the file, if one was opened."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def _jsonable(value: Any) -> Any:
    if hasattr(value, 'tolist'):
        return value.tolist()
    raise TypeError(f'metric value of type {type(value).__name__} is not JSON-serializable')
