"""One slot's episode as a recording holds it until it ends: its frames so far and its latest observation."""

from __future__ import annotations

from typing import Any

__all__ = ['SlotEpisode']


class SlotEpisode:
    """One slot's episode as it is recorded: its rows so far and its latest observation's state."""

    def __init__(self, token: int, run_index: int, slot: int, task: str, robots: list[str]) -> None:
        self.token = token
        self.run_index = run_index
        self.slot = slot
        self.task = task
        self.robots = robots
        #: One tuple per frame (appended whole): state, environment state, action, reward, done,
        #: truncated. The action is ``None`` until the action columns are fixed (then ``NaN``s).
        self.rows: list[tuple[Any, Any, Any, float, bool, bool]] = []
        self.pending: Any = None  # the latest observation laid out (not yet a frame); None when skipped
        self.raw: Any = None  # its first observation as it came (a copy), until the layout exists
        self.skipped = False
        self.opened = False
        self.steps = 0  # the runner's step count of the episode at its latest observation
