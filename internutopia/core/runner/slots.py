"""The slot table: what each env slot holds now, one row per slot.

Every per-slot fact the runner keeps lives here, side by side, so one place says what a slot is
running: its status, its episode and that episode's structure, its step count and start time, the
robot and object groups its episode uses, and the task and metric objects serving it.

>>> import numpy as np
>>> table = SlotTable(3)
>>> table.set_status(1, SlotStatus.ACTIVE)
>>> table.active_slots().tolist(), table.status.tolist()
([1], [0, 1, 0])
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.episode_queue import Episode

if TYPE_CHECKING:
    from internutopia.core.entity import Entity
    from internutopia.core.metric.base import BaseMetric
    from internutopia.core.object.base import BaseObject
    from internutopia.core.robot.base import BaseRobot
    from internutopia.core.task.base import BaseTask


class SlotStatus(IntEnum):
    """Lifecycle of an env slot."""

    EMPTY = 0
    ACTIVE = 1
    DONE = 2


#: Up to this many slots, step counts are advanced item by item (see :meth:`SlotTable.count_step`).
_ITEMWISE_SLOTS = 4
_ACTIVE = int(SlotStatus.ACTIVE)  # a plain int for per-step comparisons (enum lookups are slow)

#: Bytes a slot costs beside its physics state: the table's rows (about 260 for a one-robot task)
#: and its share of a step's per-slot results (observation dicts, lists). Measured with 100,000
#: Jetbot slots stepped once: a peak of 1.85 kB per slot in all, 1.74 kB estimated with this figure and
#: the world's physics estimate (docs/reliability.md).
BYTES_PER_SLOT = 640


class SlotTable:
    """Per-slot episode state of the runner, one row per env slot.

    Attributes:
        env_num: number of slots (rows).
        status: each slot's :class:`SlotStatus`. Shape (env_num,), int8.
        episodes: each slot's current or last :class:`~internutopia.core.episode_queue.Episode` (``None`` if never one).
        structures: the structure key of each slot's episode (``None`` for an empty slot).
        steps: env steps of each slot's episode, the current one included. Shape (env_num,), int64.
        started_at: ``time.perf_counter()`` when each slot's episode started. Shape (env_num,).
        slot_robots: each slot's robot groups by robot name.
        slot_objects: each slot's object groups by object name.
        slot_task: the task object running each slot's episode (``None`` once the slot is re-placed).
        slot_metrics: the metric objects of each slot's episode.
    """

    def __init__(self, env_num: int) -> None:
        self.env_num = env_num
        self.status = np.full(env_num, SlotStatus.EMPTY, dtype=np.int8)
        self.episodes: list[Episode | None] = [None] * env_num
        self.structures: list[str | None] = [None] * env_num
        self.steps = np.zeros(env_num, dtype=np.int64)
        self.started_at = np.zeros(env_num)
        self.slot_robots: list[dict[str, BaseRobot]] = [{} for _ in range(env_num)]
        self.slot_objects: list[dict[str, BaseObject]] = [{} for _ in range(env_num)]
        self.slot_task: list[BaseTask | None] = [None] * env_num
        self.slot_metrics: list[list[BaseMetric]] = [[] for _ in range(env_num)]
        self._active: np.ndarray | None = None  # ids of the active slots; None when stale
        self._one_step = np.ones(env_num, dtype=np.int64)
        # A few slots count faster through a memoryview (Python ints, no ufunc call): at one slot
        # the in-place add is about 8,600 instructions, the view's item about 300.
        self._steps_items = self.steps.data if env_num <= _ITEMWISE_SLOTS else None

    def active_slots(self) -> np.ndarray:
        """Ids of the slots running an episode, sorted. Shape (k,), read-only: one array is shared by
        every reader until a status changes."""
        if self._active is None:
            self._active = (self.status == _ACTIVE).nonzero()[0]  # (flatnonzero's, without its two Python calls)
            self._active.flags.writeable = False
        return self._active

    def set_status(self, slot: int, status: SlotStatus) -> None:
        """Set ``slot``'s status."""
        self.status[slot] = status
        self._active = None

    def count_step(self, active: np.ndarray, steps: int = 1) -> None:
        """``steps`` more steps for the episodes of ``active`` (an :meth:`active_slots` array)."""
        items = self._steps_items
        if items is not None:
            for slot in active.tolist():
                items[slot] += steps
        elif len(active) == self.env_num and steps == 1:
            self.steps += self._one_step  # (an array: adding a Python int costs a scalar conversion)
        else:
            self.steps[active] += steps

    def held_slots(self) -> list[int]:
        """Slots holding an episode: running, or ended and not yet reset."""
        return [slot for slot, task in enumerate(self.slot_task) if task is not None and self.episodes[slot] is not None]

    def entities_of(self, slot: int) -> dict[str, Entity]:
        """Robots and objects present in ``slot``, by name."""
        return {**self.slot_objects[slot], **self.slot_robots[slot]}

    def record(self, slot: int, **fields: Any) -> dict[str, Any]:
        """The results record of ``slot``'s episode: index, slot, task type, scene, steps, and ``fields``."""
        episode = self.episodes[slot]
        assert episode is not None  # (a slot that ran an episode)
        return {'episode_index': episode.index, 'slot': slot, 'task_type': episode.config.type,
                'scene': episode.config.scene_asset_path, **fields}


__all__ = ['BYTES_PER_SLOT', 'SlotStatus', 'SlotTable']
