"""Rewards one slot at a time: InternUtopia's reward API next to our vectorized rewards.

An upstream-style reward class (``cls(task, settings)`` with ``calc()`` returning the step's
reward of one episode) is run by a :class:`SlotRewardAdapter`: one instance per slot and
episode, made with that slot's per-slot task object and the config's ``reward_settings``. As
InternUtopia, ``calc()`` is not called on the step the episode's task ends it (``terminated`` or
``truncated``, whether the task is upstream-style or one of this package's, as the runner tells
the adapter through its ``episodes_ending`` hook): that step's reward from it is 0.0.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.reward.base import BaseReward
from internutopia.core.runner.failures import each_slot
from internutopia.core.task.base import BaseTask
from internutopia.core.view import EnvView
from internutopia.per_slot.style import instance_class, is_per_slot

#: How a per-slot reward class is told apart (see :func:`~internutopia.per_slot.style.is_per_slot`).
REWARD_MARKS = (('init_setting', '_calc_next_state'), ('calc', 'reset'), ('settings', 'task'))

#: ``task_in_slot(task, slot)``: the per-slot task object (given by the task module, which builds on this one).
TaskInSlot = Callable[[BaseTask, int], Any]


class SlotReward:
    """InternUtopia's per-instance reward: one slot's episode, built as ``cls(task, settings)``."""

    # Set by __init__, as InternUtopia's rewards have them.
    task: Any
    state: Any
    settings: dict[str, Any]

    def __init__(self, task: Any, settings: dict[str, Any]) -> None:
        self.state: Any = None
        self.task = task
        self.settings = settings
        self.init_setting()

    def init_setting(self) -> None:
        """Read ``self.settings`` (called by ``__init__``)."""

    def reset(self) -> None:
        """Start a new episode."""
        self.state = None

    def _calc_next_state(self) -> Any:
        raise NotImplementedError(f'{type(self).__name__}._calc_next_state is not implemented')

    def calc(self) -> Any:
        """This step's reward (a float)."""
        raise NotImplementedError(f'{type(self).__name__}.calc is not implemented')


class SlotRewardAdapter(BaseReward):
    """Runs the upstream-style reward class ``instance_class`` for every slot whose task config names it."""

    def __init__(self, config: Any, view: EnvView, instance_class: type, task_in_slot: TaskInSlot) -> None:
        super().__init__(config, view)
        self.instance_class = instance_class
        self._task_in_slot = task_in_slot
        self.instances: dict[int, Any] = {}
        #: The slots whose episode ends on the step being run (see :meth:`episodes_ending`).
        self._ending: np.ndarray | None = None

    def reset_slot(self, slot: int, task: Any) -> None:
        task_object = self._task_in_slot(self.view.task(slot), slot)
        made: Any = getattr(task_object, 'reward', None)
        if type(made) is not self.instance_class:  # (an upstream-style task made it in its __init__, as InternUtopia's)
            made = self.instance_class(task_object, dict(self.settings))
        made.reset()
        self.instances[slot] = made
        task_object.reward = made  # InternUtopia's task.reward: the same object

    def episode_ended(self, slot: int) -> None:
        """``slot``'s episode is over: its instance goes."""
        self.instances.pop(slot, None)

    def episodes_ending(self, ending: np.ndarray) -> None:
        """The runner's hook, before each step's rewards: ``ending[slot]``, whether ``slot``'s task
        ended its episode on this step (terminated or truncated)."""
        self._ending = ending

    def calc(self, slots: np.ndarray) -> np.ndarray:
        out = np.zeros(len(slots))  # (a slot whose calc() raises keeps 0)
        ending = self._ending

        def one(index: int, slot: int) -> None:
            if ending is not None and ending[slot]:
                return  # (InternUtopia calls no reward on the step its task ends the episode: 0.0 here)
            instance = self.instances[slot]
            out[index] = _as_reward(instance.calc(), instance, slot)

        each_slot(slots, one, out)
        return out


def _as_reward(value: Any, instance: Any, slot: int) -> float:
    """``value``, returned by ``instance.calc()`` in ``slot``, as a float: a number (``None`` is 0.0)
    or an array of one; anything else is a ``TypeError`` naming the class and env."""
    if value is None:
        return 0.0
    if isinstance(value, numbers.Real) or isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in 'biuf':
        return float(value.reshape(()) if isinstance(value, np.ndarray) else value)
    shape = f' of shape {value.shape}' if isinstance(value, np.ndarray) else ''
    raise TypeError(f'{type(instance).__name__}.calc() in env {slot} returned {type(value).__name__}{shape}; expected a number')


def reward_class(cls: type) -> type:
    """The class of the per-slot objects of the upstream-style reward class ``cls``."""
    return instance_class(cls, SlotReward, BaseReward, REWARD_MARKS)


def check_slot_reward(reward_config: Any) -> None:
    """``ValueError`` unless the reward type of ``reward_config`` is written per slot (what a per-slot task needs)."""
    if not is_per_slot(BaseReward.registry.get(reward_config.type), BaseReward, *REWARD_MARKS):
        raise ValueError(f'reward {reward_config.type!r} serves every slot of its own task type at once; an '
                         'upstream-style (per-slot) task needs a per-slot reward class (calc() returning a float)')


def create_reward(reward_config: Any, task: Any) -> Any:
    """A per-slot reward object (``cls(task, settings)``) for a per-slot task object ``task``
    (InternUtopia's ``internutopia.core.task.reward.create_reward``).

    Raises:
        ValueError: the type is not registered, or its class serves every slot at once (a reward
            of this package needs its own task type; give a per-slot task a per-slot reward).
    """
    check_slot_reward(reward_config)
    return reward_class(BaseReward.registry.get(reward_config.type))(task, dict(reward_config.reward_settings or {}))


__all__ = ['SlotReward', 'SlotRewardAdapter', 'check_slot_reward', 'create_reward']
