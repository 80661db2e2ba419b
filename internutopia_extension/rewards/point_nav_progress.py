"""PointNavProgressReward: reward for getting closer to a point goal.

``reward = scale * (previous distance - current distance) + success_bonus * success - step_penalty``
per env step, with xy distances in metres (``reward_settings`` keys; defaults in
``internutopia_extension.configs.tasks.POINT_NAV_REWARD_DEFAULTS``). It reads the per-slot arrays
``prev_distance``, ``distance`` and ``success`` of the task that owns the slot (``PointNavTask``,
or any task exposing the same arrays), updated by that task just before it asks for rewards.
"""

from __future__ import annotations

import numpy as np

from internutopia.core.reward.base import BaseReward
from internutopia.core.robot.base import rows_of
from internutopia_extension.configs.tasks import POINT_NAV_REWARD_DEFAULTS
from internutopia_extension.tasks.point_nav import PointNavTask
from internutopia_extension.tasks.point_nav_kernels import progress_kernel

#: What the reward reads of the task of its slots, per slot (a ``PointNavTask``'s arrays).
_TASK_ARRAYS = ('prev_distance', 'distance', 'success')


@BaseReward.register('PointNavProgressReward')
class PointNavProgressReward(BaseReward):
    """Progress towards the goal, a bonus on success, a constant per-step penalty."""

    def __init__(self, config, view) -> None:
        super().__init__(config, view)
        unknown = sorted(set(self.settings) - set(POINT_NAV_REWARD_DEFAULTS))
        if unknown:
            raise ValueError(f'PointNavProgressReward: unknown reward_settings key(s) {unknown}; '
                             f'valid keys: {sorted(POINT_NAV_REWARD_DEFAULTS)}')
        values = {**POINT_NAV_REWARD_DEFAULTS, **self.settings}
        self.scale = float(values['scale'])
        self.success_bonus = float(values['success_bonus'])
        self.step_penalty = float(values['step_penalty'])
        self._kernel = progress_kernel.compiled_or(None)  # (warmed by the task)

    def reset_slot(self, slot: int, task) -> None:
        # Checked here, at the start, so that a task without the arrays fails its start (recorded,
        # with a warning) rather than its first step.
        task_object = self.view.task(slot)
        missing = [name for name in _TASK_ARRAYS if not hasattr(task_object, name)]
        if missing:
            raise ValueError(f'{self.config.type} (the reward) needs a task with a goal that keeps the per-slot '
                             f'arrays {list(_TASK_ARRAYS)} (a PointNavTask: PointNavTaskCfg); task {task.type} '
                             f'({type(task_object).__name__}) has no {", ".join(missing)}')

    def calc(self, slots: np.ndarray) -> np.ndarray:
        task = self.view.task(int(slots[0]))  # every slot of one call belongs to the same task object
        if self._kernel is not None and isinstance(task, PointNavTask):  # (its arrays' types are known)
            out = np.empty(len(slots))
            self._kernel(slots, task.prev_distance, task.distance, task.success, self.scale, self.success_bonus,
                         self.step_penalty, out)
            return out
        rows = rows_of(slots, self.env_num)
        progress = task.prev_distance[rows] - task.distance[rows]
        return self.scale * progress + self.success_bonus * task.success[rows] - self.step_penalty
