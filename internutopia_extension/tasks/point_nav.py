"""PointNavTask: drive a robot's base to an env-local goal; vectorized over slots.

State lives in arrays indexed by slot id. Per env step, for all active slots of the task at once:
the xy distance from the robot's base to the goal, success (``distance < success_distance``,
``terminated``), the time limit (``truncated`` at ``max_steps``, unless it succeeded on that step)
and the reward of each slot's reward config (default ``PointNavProgressReward``).

Observations, next to the robots' own dicts::

    obs[i]['task']    = {'goal': (3,) env-local xyz, 'distance_to_goal': float (xy, m)}
    obs[i]['objects'] = {object_name: {'position', 'orientation', ...}}   (see ObjectObservationsMixin)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from internutopia.core.metric.base import BaseMetric
from internutopia.core.reward.base import BaseReward
from internutopia.core.robot.base import rows_of
from internutopia.core.task.base import BaseTask, CombinedStep, RecordedSteps
from internutopia.core.view import EnvView
from internutopia_extension.objects.observations import ObjectObservationsMixin
from internutopia_extension.tasks import point_nav_kernels


def xy_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise xy distance between ``(k, >=2)`` arrays."""
    return np.hypot(a[:, 0] - b[:, 0], a[:, 1] - b[:, 1])


@BaseTask.register('PointNavTask')
class PointNavTask(ObjectObservationsMixin, BaseTask):
    """All slots running ``PointNavTaskCfg`` episodes.

    Per-slot arrays that rewards and metrics read, shape (env_num,) unless noted: ``goal``
    (env_num, 3) env-local, ``distance`` (xy, m, after the last step), ``prev_distance`` (one step
    earlier), ``success``. ``robot`` is an :class:`~internutopia.core.view.EntityTracker` of the
    navigating robot of each slot.
    """

    def __init__(self, view: EnvView) -> None:
        super().__init__(view)
        n = self.env_num
        self.goal = np.zeros((n, 3))
        self.success_distance = np.zeros(n)
        self.max_steps = np.zeros(n, dtype=np.int64)
        self.distance = np.zeros(n)
        self.prev_distance = np.zeros(n)
        self.success = np.zeros(n, dtype=bool)
        self.robot = view.tracker()  # the navigating robot of each slot
        #: The compiled step (``None``: numpy), resolved once (see :mod:`.point_nav_kernels`).
        self._step_kernel = point_nav_kernels.combined_kernel.compiled_or(None)
        if self._step_kernel is not None:
            point_nav_kernels.warm()

    def reset_slot(self, slot: int, config: Any) -> None:
        super().reset_slot(slot, config)
        self.goal[slot] = config.goal
        self.success_distance[slot] = config.success_distance
        self.max_steps[slot] = config.max_steps
        self.robot.track(slot, config.nav_robot_name())
        distance = xy_distance(self.robot.positions(np.array([slot])), self.goal[[slot]])[0]
        self.distance[slot] = self.prev_distance[slot] = distance
        self.success[slot] = False

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._step_kernel is not None:  # (the same arithmetic as below, in one call)
            return self._compiled_pass(slots, None, None)
        rows = rows_of(slots, self.env_num)  # every physics step: views, not gathers, when all slots run
        distance = xy_distance(self.robot.positions(slots), self.goal[rows])
        self.prev_distance[rows] = self.distance[rows]
        self.distance[rows] = distance
        success = distance < self.success_distance[rows]
        self.success[rows] = success
        truncated = ~success & (self.view.steps[rows] >= self.max_steps[rows])
        # The reward of each slot's config is added by the env after this step, from these arrays.
        return np.zeros(len(slots)), success, truncated

    def combined_step(self, rewards: Sequence[Any], metrics: Sequence[Any]) -> CombinedStep | None:
        """With numba: the step, a ``PointNavProgressReward`` and an ``SPLMetric`` among those
        offered, in one compiled pass (the same numbers as apart; see :mod:`.point_nav_kernels`).
        Only for these classes themselves: a subclass that overrides the task's step, or a
        subclass of the reward or metric, runs on its own."""
        if type(self).step is not _POINT_NAV_STEP:
            return None  # (a subclass's own step: the pass below would skip it)
        progress_class = BaseReward.registry.table.get('PointNavProgressReward')
        spl_class = BaseMetric.registry.table.get('SPLMetric')
        progress: Any = next((reward for reward in rewards if type(reward) is progress_class), None)
        spl: Any = next((metric for metric in metrics if type(metric) is spl_class), None)
        if self._step_kernel is None or (progress is None and spl is None):
            return None
        # (the recorded pass reads the robots' positions from a rollout's qpos: free roots only)
        recordable = self.robot.position_column() is not None and (spl is None or spl.robot.position_column() is not None)
        return CombinedStep(functools.partial(self._compiled_pass, progress=progress, spl=spl),
                            (progress,) if progress is not None else (), (spl,) if spl is not None else (),
                            recorded=functools.partial(self._recorded_pass, progress=progress, spl=spl) if recordable else None)

    def _compiled_pass(self, slots: np.ndarray, progress: Any, spl: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The compiled step of ``slots``, with a progress reward's terms added and an SPL
        metric's update done when they are given (``None``: not)."""
        kernel = self._step_kernel
        assert kernel is not None  # (only called with numba)
        count = len(slots)
        reward, terminated, truncated = np.empty(count), np.empty(count, dtype=bool), np.empty(count, dtype=bool)
        positions = point_nav_kernels.positions_by_slot(self.robot, slots, self.env_num)
        terms = (True, progress.scale, progress.success_bonus, progress.step_penalty) if progress is not None else _NO_PROGRESS
        travel = ((True, point_nav_kernels.positions_by_slot(spl.robot, slots, self.env_num), spl.last_xy, spl.travelled)
                  if spl is not None else (False, positions, *_NO_TRAVEL))
        kernel(slots, positions, self.goal, self.success_distance, self.view.steps, self.max_steps, self.distance,
               self.prev_distance, self.success, terminated, truncated, reward, *terms, *travel)
        return reward, terminated, truncated

    def _recorded_pass(self, slots: np.ndarray, recorded: RecordedSteps, progress: Any, spl: Any
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_compiled_pass` over the steps of a recorded call (``CombinedStep.recorded``)."""
        positions = self.robot.recorded_positions(recorded.qpos)
        travel = spl.robot.recorded_positions(recorded.qpos) if spl is not None else positions
        count = len(slots)
        reward, terminated, truncated = np.empty(count), np.empty(count, dtype=bool), np.empty(count, dtype=bool)
        ran = np.empty(count, dtype=np.intp)
        terms = (True, progress.scale, progress.success_bonus, progress.step_penalty) if progress is not None else _NO_PROGRESS
        travelled = (True, travel, spl.last_xy, spl.travelled) if spl is not None else (False, positions, *_NO_TRAVEL)
        point_nav_kernels.recorded_kernel(slots, positions, self.goal, self.success_distance, recorded.steps_before, self.max_steps,
                                          self.distance, self.prev_distance, self.success, terminated, truncated, reward, ran,
                                          *terms, *travelled)
        return reward, terminated, truncated, ran

    def get_observations(self, slots: np.ndarray) -> dict[str, Any]:
        return {
            'task': {'goal': self.goal[slots].copy(), 'distance_to_goal': self.distance[slots].copy()},
            **self.object_observations(slots),
        }


_POINT_NAV_STEP = PointNavTask.step  # (what combined_step does in one pass)
_NO_PROGRESS = (False, 0.0, 0.0, 0.0)  # (the reward terms of a pass without one)
_NO_TRAVEL = np.zeros((0, 2)), np.zeros(0)  # (the SPL arrays of a pass without one)
