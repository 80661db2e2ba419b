"""A per-slot robot object's episode: started once, ended once, whoever asks first.

InternUtopia calls a robot's ``post_reset()`` from its task's ``post_reset`` and its
``cleanup()`` from its task's ``cleanup``; here a per-slot robot is also started when it is built
for a slot (outside an upstream-style task's start) and ended by the reset that ends its episode.
:func:`start_robot` and :func:`end_robot` make each happen once per slot and episode.
"""

from __future__ import annotations

import contextvars
import warnings
from typing import Any


def end_robot(robot: Any) -> None:
    """``robot.cleanup()`` unless its episode is over for it already (its cleanup ran, or its
    task's did): once per slot and episode, whoever asks first (its task's ``cleanup``, the reset
    that ends the episode)."""
    if getattr(robot, '_slot_ended', False):
        return
    mark_ended(robot)
    robot.cleanup()


def mark_ended(robot: Any) -> None:
    """The episode is over for ``robot`` (a per-slot robot object): :func:`end_robot` does nothing more."""
    robot._slot_ended = True


#: True while an upstream-style task starts its episode: the robots it builds get their
#: ``post_reset`` from the task's (InternUtopia's order), not when they are built.
_TASK_STARTS: contextvars.ContextVar[bool] = contextvars.ContextVar('internutopia_task_starts', default=False)


def start_robot(robot: Any) -> None:
    """``robot.post_reset()`` unless it ran already for this slot and episode: once per episode,
    whoever asks first (the robot's building, its task's ``post_reset``).

    A ``post_reset`` that raises leaves the robot not started, and no longer the slot's: the
    episode's start failed (its error, unchanged, ends or retries it), and the next asker (a retry
    of the start) gets a robot built afresh, whose ``post_reset`` runs again.
    """
    if robot._slot_started:
        return
    robot._slot_started = True  # (before the call: a post_reset asking for its own robot does not start it again)
    try:
        robot.post_reset()
    except BaseException:
        robot._slot_started = False
        try:
            robot._forget_slot()
        except Exception as cleanup_error:  # (the start's error is the one raised and recorded)
            warnings.warn(f'robot {getattr(robot, "name", "?")!r} in env {robot._slot}: its cleanup after a failed start '
                          f'raised {type(cleanup_error).__name__}: {cleanup_error}', stacklevel=2)
        raise


def robots_start_with_task() -> contextvars.Token:
    """From now until :func:`robots_started` is given the token, robots built are started by their task."""
    return _TASK_STARTS.set(True)


def robots_started(token: contextvars.Token) -> None:
    """End what :func:`robots_start_with_task` began."""
    _TASK_STARTS.reset(token)


def built_robots_start() -> bool:
    """Whether a robot built now starts at once (not inside an upstream-style task's start,
    whose ``post_reset`` starts it: :func:`robots_start_with_task`)."""
    return not _TASK_STARTS.get()


__all__ = ['built_robots_start', 'end_robot', 'mark_ended', 'robots_start_with_task', 'robots_started', 'start_robot']
