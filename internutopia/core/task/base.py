"""Tasks: one object per task type, holding per-slot state in arrays indexed by slot id.

``reset_slot`` runs when a slot takes an episode (per slot, rare); ``step`` runs every env step
for all active slots of this task type at once and returns reward, terminated and truncated
arrays. The reward of the task's config (``TaskCfg.reward``, a :class:`~internutopia.core.reward.base.BaseReward`)
is added by the env after the task's step, and can read the arrays the step updated.
A task reads the env through its :class:`~internutopia.core.view.EnvView` (``self.view``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from internutopia.core.config import TaskCfg
from internutopia.core.registry import Registry
from internutopia.core.view import EnvView


class RecordedSteps(NamedTuple):
    """Physics steps that ran in one call, recorded (an action repeat's; see ``CombinedStep.recorded``).

    Attributes:
        qpos: every slot's ``qpos`` after each of the steps, ``(env_num, physics_steps, nq)``:
            ``qpos[slot, k]`` after step ``k + 1`` (what a tracker reads with
            :meth:`~internutopia.core.view.EntityTracker.recorded_positions`).
        steps_before: each slot's step count before the call, ``(env_num,)`` (read-only): on the
            call's step ``k + 1`` a task's ``view.steps`` would read ``steps_before + k + 1``.
        physics_steps: the physics steps of the call.
    """

    qpos: np.ndarray
    steps_before: np.ndarray
    physics_steps: int


class CombinedStep(NamedTuple):
    """A task's step that also does the work of some of its slots' rewards and metrics
    (:meth:`BaseTask.combined_step`).

    Attributes:
        step: ``step(slots)``, as :meth:`BaseTask.step`, with ``rewards``' ``calc(slots)`` added
            to the reward it returns and ``metrics``' ``update(slots)`` done.
        rewards: the reward objects it covers (of those offered).
        metrics: the metric objects it covers (of those offered).
        recorded: optional: ``recorded(slots, steps)``, ``step`` over the physics steps of an
            action repeat that ran in one call (:class:`RecordedSteps`), each slot up to the step
            its episode ends on (included) or through all of them: per slot (arrays of
            ``len(slots)``), the sum of its rewards (added in step order to 0.0, as a repeat
            adds them), terminated and truncated (on its last step), and the steps it ran. It
            leaves every per-slot array as ``step`` would after the slot's last step, and gives
            the same numbers to the bit. With it, the runner advances an action repeat's physics
            in one call (when the robots' controllers and hooks allow, see
            ``Runner.step_arrays_repeated``). It must not raise: one that does raises the step's
            ``RuntimeError`` naming the task (the repeat's physics put back), as no slot can
            fail alone in a pass that ran for them all.
    """

    step: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
    rewards: tuple[Any, ...] = ()
    metrics: tuple[Any, ...] = ()
    recorded: Callable[[np.ndarray, RecordedSteps], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] | None = None


class BaseTask:
    """All slots currently running episodes of one task type.

    Classes written InternUtopia's way (one object per slot and episode, ``is_done()``) subclass
    it too; the per-slot layer (:mod:`internutopia.per_slot`) runs them.

    Args:
        view: what the task sees of the env (slots, their robots and objects, step counts).

    Attributes:
        view: the :class:`~internutopia.core.view.EnvView` given at construction.
        env_num: number of env slots (length of per-slot arrays).
        configs: the ``TaskCfg`` of each slot's episode of this task, by slot (``None`` elsewhere).
    """

    registry: Registry[type[BaseTask]] = Registry('task')
    #: InternUtopia's name of the registry table.
    tasks = registry.table
    #: Whether the array API (``step_arrays``) can serve the task: its observations are arrays.
    array_api = True

    def __init__(self, view: EnvView) -> None:
        self.view = view
        self.env_num = view.env_num
        self.configs: list[TaskCfg | None] = [None] * self.env_num

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseTask]], type[BaseTask]]:
        """Class decorator registering a task type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, type_name: str, view: EnvView, where: str = '') -> BaseTask:
        """The task object serving ``type_name`` episodes."""
        return cls.registry.maker(type_name, where)(view)

    def reset_slot(self, slot: int, config: TaskCfg) -> None:
        """Start ``config``'s episode in ``slot`` (robots are already at their start poses)."""
        self.configs[slot] = config

    def reset_slots(self, slots: np.ndarray, configs: Sequence[TaskCfg]) -> None:
        """Start the episodes ``configs`` in ``slots`` (distinct; their robots at their start
        poses): :meth:`reset_slot` for each, in order. A task that overrides it starts all the
        slots of one reset in one call (the runner then calls it instead of :meth:`reset_slot`);
        it must leave each slot as :meth:`reset_slot` would, in the same order."""
        for slot, config in zip(slots.tolist(), configs, strict=True):
            self.reset_slot(slot, config)

    def step(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reward (float), terminated and truncated (bool) arrays, shape (len(slots),), after a physics step."""
        zeros = np.zeros(len(slots))
        return zeros, zeros.astype(bool), zeros.astype(bool)

    def quiet_steps(self, slots: np.ndarray, limit: int) -> int:
        """Optional: how many of the next calls of :meth:`step` with ``slots`` (each after one
        more physics step; at most ``limit``) are known now to pay nothing, end nothing and
        change nothing. The runner then advances those physics steps and the one after in one
        call and skips those calls (the next :meth:`step` sees the step count moved on by all
        of them). By default 0: every step is called."""
        return 0

    def combined_step(self, rewards: Sequence[Any], metrics: Sequence[Any]) -> CombinedStep | None:
        """Optional: one step for this task and some of ``rewards`` and ``metrics`` (objects that
        serve exactly the slots this task steps), or ``None`` (the default: each runs on its own).

        After every physics step the runner calls the task's ``step``, then each reward's
        ``calc``, then each metric's ``update``. A task whose step can do some of that work in
        the same pass (one compiled loop instead of three) returns a :class:`CombinedStep`
        naming the objects it covers; the runner then calls its ``step`` instead and skips
        those. Asked again whenever the slots or their episodes change. The results must be
        the separate calls' (the point-nav task's compiled pass gives the same numbers to the
        bit, ``tests/test_point_nav_kernels.py``); if the combined step raises, the runner
        runs the task slot by slot and the covered objects on their own, as usual.
        """
        return None

    def warm_up_step(self, slots: np.ndarray) -> None:
        """Optional: one physics step of ``slots`` outside their episodes (``Env.warm_up``) has
        happened. By default nothing: the episodes' steps, rewards and metrics do not see it."""

    def get_observations(self, slots: np.ndarray) -> dict[str, Any]:
        """Task-level observations (e.g. the goal), arrays with a leading ``len(slots)`` axis."""
        return {}

    def episode_metrics(self, slot: int, metrics: dict[str, Any]) -> Any:
        """What the record of the episode ending in ``slot`` holds as its metrics, given the
        values of the episode's metric objects (``metrics``, by name): those, unless the task
        computes its own."""
        return metrics
