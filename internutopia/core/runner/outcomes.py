"""What one step of a runner produced, and its shapes for callers: the arrays of a step
(:class:`Advance`, :class:`ArrayStep`) and the contract's per-slot lists (:func:`per_slot_lists`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from internutopia.core.config import TaskCfg
from internutopia.core.episode_queue import Episode
from internutopia.core.runner.slots import SlotTable


@dataclass
class ArrayStep:
    """Result of :meth:`Runner.step_arrays` / ``vec_env.Env.step_arrays``: arrays over all slots.

    ``obs`` is ``{robot_name: {...}}`` with every leaf an array whose first axis is the slot id
    (rows of inactive slots are zeros); ``active`` marks the slots that ran an episode this step;
    ``metrics`` maps the slots whose episode ended on this step to that episode's metrics;
    ``diverged`` lists the slots whose episode ended because their simulation diverged;
    ``failed`` maps the slots whose episode failed on this step (an extension raised) to the error;
    ``started`` (a step given ``reset_list``) lists the configs of the episodes those slots started
    after the step, in that list's order (``None`` where the queue ran out); else ``None``.
    """

    obs: dict[str, Any]
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    active: np.ndarray
    metrics: dict[int, dict[str, Any]]
    diverged: tuple[int, ...] = ()
    failed: dict[int, str] = field(default_factory=dict)
    started: list[TaskCfg | None] | None = None


@dataclass
class Advance:
    """What one physics step did to the episodes: the slots that were active, reward, terminated
    and truncated as ``(env_num,)`` arrays (zero/False outside the active slots), the metrics of the
    episodes that ended, by slot, and the slots whose episode ended because their simulation diverged."""

    active: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    metrics: dict[int, dict[str, Any]]
    diverged: tuple[int, ...]
    failed: dict[int, str] = field(default_factory=dict)
    #: Whether any episode may have ended on this step (``False``: none did; callers skip the flags).
    any_ended: bool = True
    #: Physics steps advanced (more than one where an action repeat's quiet steps were fused).
    steps: int = 1


def per_slot_lists(obs: list[Any], done: Advance, table: SlotTable, internutopia: bool = False) -> tuple[list, list, list, list, list]:
    """The contract's five lists of length ``env_num`` (``None`` where a slot was not active);
    with ``internutopia``, ``terminated`` is ``True`` where an episode ended or none runs."""
    active, n = done.active, table.env_num
    episodes = table.episodes
    steps = table.steps.tolist()
    ended = done.terminated | done.truncated if internutopia else done.terminated
    if len(active) == n:  # every slot active: the per-slot lists are the rows themselves
        running: list[Episode] = episodes  # type: ignore[assignment]  # every slot active: each holds one
        infos: list[dict[str, Any]] = [{'episode_index': episode.index, 'steps': count} for episode, count in zip(running, steps, strict=True)]
        for slot, values in done.metrics.items():
            infos[slot]['metrics'] = values
        for slot in done.diverged:
            infos[slot]['diverged'] = True
        for slot, error in done.failed.items():
            infos[slot]['failed'] = error
        return obs, done.reward.tolist(), ended.tolist(), done.truncated.tolist(), infos
    reward, terminated, truncated = done.reward[active].tolist(), ended[active].tolist(), done.truncated[active].tolist()
    obs_out: list = [None] * n
    reward_out: list = [None] * n
    terminated_out: list = [True if internutopia else None] * n
    truncated_out: list = [None] * n
    info_out: list = [None] * n
    for row, slot in enumerate(active.tolist()):
        obs_out[slot] = obs[row]
        reward_out[slot] = reward[row]
        terminated_out[slot] = terminated[row]
        truncated_out[slot] = truncated[row]
        info = {'episode_index': episodes[slot].index, 'steps': steps[slot]}
        if slot in done.metrics:
            info['metrics'] = done.metrics[slot]
        info_out[slot] = info
    for slot in done.diverged:
        info_out[slot]['diverged'] = True
    for slot, error in done.failed.items():
        info_out[slot]['failed'] = error
    return obs_out, reward_out, terminated_out, truncated_out, info_out


__all__ = ['Advance', 'ArrayStep', 'per_slot_lists']
