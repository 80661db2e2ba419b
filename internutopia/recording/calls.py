"""The env's calls as the recorder reads them: one slot's part of an array call, and the checks on
what a step says of each slot's episode.

The recorder keeps one buffer per slot and reads each call per slot (a frame is one slot's row).
``env.step``/``env.reset`` hand it per-slot lists already; ``env.step_arrays``/``env.reset_arrays``
(the array API, and so every Gymnasium vector env) hand it arrays over all slots, which
:func:`array_step_lists` and :func:`started_rows` turn into the same per-slot form (a slot's
row of a tree: ``internutopia.core.util.trees.row``). That per-slot work
runs only while a recorder is attached; an unrecorded run's array step has none.

>>> import numpy as np
>>> tree = {'arm': {'position': np.arange(6.0).reshape(2, 3), 'render': np.array([True, False]),
...                 'controllers': {'ik': {'done': np.array([False, True])}}}}
>>> row = started_rows(tree, [1], ['a task'])[0]
>>> row['arm']['position'].tolist(), bool(row['arm']['render']), bool(row['arm']['controllers']['ik']['done'])
([3.0, 4.0, 5.0], False, True)
>>> slot_actions({'arm': {'ik': np.array([[1.0, 2.0], [3.0, 4.0]])}}, np.array([1]), env_num=2)
[None, {'arm': {'ik': array([3., 4.])}}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from internutopia.core.util.trees import row as slot_row

__all__ = ['array_step_lists', 'moved_unseen', 'slot_actions', 'started_rows', 'success_of', 'task_text', 'vec_env_of']


def started_rows(tree: Mapping[str, Any], slots: list[int], tasks: list[Any]) -> list[Any]:
    """The first observation of each of ``slots`` that started an episode (its task config in
    ``tasks``, aligned), ``None`` for one that got none (the queue ran out)."""
    return [slot_row(tree, slot) if task is not None else None for slot, task in zip(slots, tasks, strict=True)]


def slot_actions(action: Mapping[str, Mapping[str, Any]], slots: np.ndarray, env_num: int) -> list[Any]:
    """The per-slot action list (``env.step``'s form) of a batched action: each of ``slots``
    gets ``{robot: {controller: its row}}``, every other slot ``None``."""
    out: list[Any] = [None] * env_num
    for slot in slots.tolist():
        out[slot] = {robot: {name: rows[slot] for name, rows in (controllers or {}).items()}
                     for robot, controllers in action.items()}
    return out


def array_step_lists(action: Mapping[str, Mapping[str, Any]], result: Any, runner: Any
                     ) -> tuple[list[Any], tuple[list, list, list, list, list]]:
    """An ``env.step_arrays`` call (its batched ``action`` and its ``ArrayStep`` ``result``) as
    ``env.step`` would give it with ``flags='gymnasium'``: the per-slot action list and
    ``(obs, reward, terminated, truncated, info)`` lists, ``None`` for slots that did not run.

    ``info`` of a slot that ran holds its episode's index and step count (read from ``runner``
    after the call) and, for an episode that ended, its ``metrics`` and ``failed``/``diverged``;
    a slot whose episode failed gets ``obs`` ``None`` (as ``env.step`` gives it).
    """
    env_num = len(result.reward)
    ran = np.flatnonzero(result.active)
    actions = slot_actions(action, ran, env_num)
    obs: list[Any] = [None] * env_num
    reward: list[Any] = [None] * env_num
    terminated: list[Any] = [None] * env_num
    truncated: list[Any] = [None] * env_num
    info: list[Any] = [None] * env_num
    episodes, steps = runner.episodes, runner.steps
    for slot in ran.tolist():
        failed = slot in result.failed
        slot_info: dict[str, Any] = {'episode_index': int(episodes[slot].index), 'steps': int(steps[slot])}
        ended = failed or bool(result.terminated[slot]) or bool(result.truncated[slot]) or slot in result.diverged
        if ended:
            slot_info['metrics'] = result.metrics.get(slot, {})
            if failed:
                slot_info['failed'] = result.failed[slot]
            if slot in result.diverged:
                slot_info['diverged'] = True
        obs[slot] = None if failed else slot_row(result.obs, slot)
        reward[slot] = float(result.reward[slot])
        terminated[slot] = ended and not bool(result.truncated[slot])
        truncated[slot] = bool(result.truncated[slot])
        info[slot] = slot_info
    return actions, (obs, reward, terminated, truncated, info)


def moved_unseen(run_index: int, steps_seen: int, info: Any, repeat: int) -> bool:
    """Whether a step's ``info`` of a recorded episode's slot says another episode runs there, that
    none runs (``info`` ``None``: the episode ended out of the recording's sight), or that it ran
    steps the recorder did not see: more than ``repeat`` since the ``steps_seen`` it last saw
    (its frames would have gaps, or another episode's frames)."""
    if not isinstance(info, dict):
        return True
    index, steps = info.get('episode_index'), info.get('steps')
    if index is not None and int(index) != run_index:
        return True
    if info.get('failed') or info.get('diverged'):  # (its count may stop where it failed: dropped anyway)
        return False
    return steps is not None and not 0 < int(steps) - steps_seen <= repeat


def task_text(task_cfg: Any) -> str:
    """An episode's task text: its ``prompt`` (or ``instruction``), else its task type."""
    for field in ('prompt', 'instruction', 'task_description'):
        text = getattr(task_cfg, field, None)
        if isinstance(text, str) and text:
            return text
    return str(getattr(task_cfg, 'type', 'task'))


def success_of(value: Any) -> tuple[bool | None, bool]:
    """An episode's ``success`` metric as a bool, and whether it could be read as one: ``None`` (no
    such metric) stays ``None``; a number or a numpy scalar is true when non-zero; anything else (a
    string, an array of several values, NaN) is ``(False, False)``.

    >>> success_of(np.False_), success_of(2), success_of(None), success_of('yes')
    ((False, True), (True, True), (None, True), (False, False))
    """
    if value is None:
        return None, True
    if not isinstance(value, (str, bytes)):
        try:
            array = np.asarray(value)
        except Exception:  # noqa: BLE001 - not a number: unreadable
            return False, False
        if array.ndim == 0 and array.dtype.kind in 'biuf' and not (array.dtype.kind == 'f' and np.isnan(array)):
            return bool(array), True
    return False, False


def vec_env_of(env: Any) -> Any:
    """The ``vec_env.Env`` a recorder attaches to: ``env`` itself, or the one under a Gymnasium env
    of this project (``unwrapped.vec_env``, through wrappers; a single env's ``vector_env``) or an
    SB3/rsl-rl bridge (``core``); ``env`` unchanged when it is none of these (``Recorder.attach``
    refuses it then)."""
    unwrapped = getattr(env, 'unwrapped', None)
    for candidate in (env, unwrapped, getattr(unwrapped, 'vector_env', None), getattr(env, 'core', None)):
        if hasattr(candidate, 'add_observer'):
            return candidate
        inner = getattr(candidate, 'vec_env', None)
        if hasattr(inner, 'add_observer'):
            return inner
    return env
