"""Pick-and-place metrics: success, the object's final distance to its goal, and whether it was dropped.

They read the per-slot state the slot's :class:`~internutopia_extension.tasks.manipulation.ManipulationTask`
keeps (updated every step for all its slots), so they cost nothing per step. ``steps`` is the shared
:class:`~internutopia_extension.metrics.navigation.StepsMetric`.
"""

from __future__ import annotations

from internutopia.core.metric.base import BaseMetric


class _PlaceMetric(BaseMetric):
    """Reads the ManipulationTask of the slot; needs a pick-and-place episode."""

    def reset_slot(self, slot: int, task) -> None:
        if getattr(task, 'goal_position', None) is None:
            raise ValueError(f'{self.name} ({self.config.type}) needs a pick-and-place ManipulationTaskCfg '
                             f'(target naming an object and goal_position set); {task.type} has no goal_position')

    def _task(self, slot: int):
        return self.view.task(slot)


@BaseMetric.register('PickPlaceSuccessMetric')
class PickPlaceSuccessMetric(_PlaceMetric):
    """Whether the episode ended with the object resting at its goal and let go."""

    def calc(self, slot: int) -> bool:
        return bool(self._task(slot).success[slot])


@BaseMetric.register('ObjectDistanceToGoalMetric')
class ObjectDistanceToGoalMetric(_PlaceMetric):
    """Distance (m) from the object to its goal at the end of the episode."""

    def calc(self, slot: int) -> float:
        return float(self._task(slot).distance[slot])


@BaseMetric.register('DroppedMetric')
class DroppedMetric(_PlaceMetric):
    """Whether the object fell out of the closed gripper after being lifted."""

    def calc(self, slot: int) -> bool:
        return bool(self._task(slot).dropped[slot])
