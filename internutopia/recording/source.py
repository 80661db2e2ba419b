"""What a recording reads from the env it records besides the step's results: one class per kind of env.

A :class:`~internutopia.recording.Recorder` lays out each slot's episode from the slot's robots and
each frame's action from the commands sent, parsed by the robots' controllers. A local
``vec_env.Env`` holds robots and controllers in its runner (:class:`LocalSlots`). A Ray-distributed
env's runners hold them in other processes (:class:`RemoteSlots`): while a recording is attached,
each step's runners send back that step's commands as their controllers parsed them, and a slot's
robots are asked of its runner when an episode starts there.

Both answer the same questions, :class:`SlotSource`'s; :func:`slot_source` picks the one for an env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

__all__ = ['LocalSlots', 'RemoteSlots', 'SlotSource', 'slot_source']

#: A controller's command parser and an example command sizing its columns (``None``: no fixed size).
Parser = tuple[Callable[[Any], Any], Any]


class SlotSource(Protocol):
    """The questions a recording asks of its env."""

    #: Seconds of simulated time one env step advances.
    dt: float

    def prepare(self, slots: list[int]) -> None:
        """Episodes just started in ``slots``: what :meth:`robots` will be asked about them."""

    def robots(self, slot: int) -> list[str]:
        """Names of the robots of the episode that just started in ``slot`` (after :meth:`prepare`)."""

    def episode_index(self, slot: int) -> int:
        """Queue index of the episode running in ``slot``."""

    def robot_type(self, slot: int, robot: str) -> str:
        """Class name of ``robot`` in ``slot`` (the dataset's ``robot_type``)."""

    def controllers(self, slot: int, robot: str) -> dict[str, Parser]:
        """``robot``'s controllers in ``slot``: ``{name: (parse, example)}``."""

    def commands(self, action: list[Any]) -> list[Any]:
        """A step's per-slot action list, in the form :meth:`controllers`' parsers take."""

    def detach(self) -> None:
        """The recording stops: undo what attaching asked of the env."""


def _action_example(shape: tuple[int, ...] | None) -> np.ndarray | None:
    return np.zeros(shape) if shape else None


class LocalSlots:
    """A local ``vec_env.Env``: its runner's robots and controllers, read directly."""

    def __init__(self, env: Any) -> None:
        self._runner = env.runner
        self.dt = float(env.get_dt())

    def prepare(self, slots: list[int]) -> None:
        pass

    def robots(self, slot: int) -> list[str]:
        return list(self._runner.slot_robots[slot])

    def episode_index(self, slot: int) -> int:
        return int(self._runner.episodes[slot].index)

    def robot_type(self, slot: int, robot: str) -> str:
        return type(self._runner.slot_robots[slot][robot]).__name__

    def controllers(self, slot: int, robot: str) -> dict[str, Parser]:
        group = self._runner.slot_robots[slot][robot]
        return {name: (controller.parse_action, _action_example(tuple(getattr(controller, 'action_shape', ()))))
                for name, controller in group.controllers.items()}

    def commands(self, action: list[Any]) -> list[Any]:
        return action

    def detach(self) -> None:
        pass


def _as_parsed(command: Any) -> Any:
    """A command its runner's controller parsed already."""
    return command


class RemoteSlots:
    """A Ray-distributed env: its runners parse each step's commands and name a slot's robots."""

    def __init__(self, env: Any) -> None:
        self._env = env
        self.dt = float(env.config.simulator.physics_dt)
        #: Each slot's robots as its runner named them when its episode started.
        self._asked: dict[int, dict[str, tuple[str, dict[str, tuple[int, ...] | None]]]] = {}
        env.ship_parsed_actions(True)

    def prepare(self, slots: list[int]) -> None:
        for slot in slots:  # (an earlier episode's answer is never taken for this one's, should the call fail)
            self._asked.pop(slot, None)
        if slots:  # (one call to each runner concerned, all at once)
            self._asked.update(zip(slots, self._env.slot_controllers(slots), strict=True))

    def robots(self, slot: int) -> list[str]:
        return list(self._asked[slot])

    def episode_index(self, slot: int) -> int:
        index = self._env.slot_episodes[slot]
        if index is None:
            raise RuntimeError(f'slot {slot} runs no episode')
        return int(index)

    def robot_type(self, slot: int, robot: str) -> str:
        return self._asked[slot][robot][0]

    def controllers(self, slot: int, robot: str) -> dict[str, Parser]:
        return {name: (_as_parsed, _action_example(shape)) for name, shape in self._asked[slot][robot][1].items()}

    def commands(self, action: list[Any]) -> list[Any]:
        return self._env.parsed_actions

    def detach(self) -> None:
        if not self._env.closed:
            self._env.ship_parsed_actions(False)


def slot_source(env: Any) -> SlotSource:
    """The source of ``env`` (a ``vec_env.Env``; a Ray-distributed one answers ``is_remote``)."""
    return RemoteSlots(env) if getattr(env, 'is_remote', False) else LocalSlots(env)
