"""What a recording reads from the env it records besides the step's results: one class per kind of env.

A :class:`~internutopia.recording.Recorder` lays out each slot's episode from the slot's robots and
each frame's action from the commands sent, parsed by the robots' controllers. A local
``vec_env.Env`` holds robots and controllers in its runner (:class:`LocalSlots`). A Ray-distributed
env's runners hold them in other processes (:class:`RemoteSlots`): while a recording is attached,
each step's runners send back that step's commands as their controllers parsed them, and a reset's
slots' robots are asked of their runners (one call each, all at once). Both read a slot's robots as
the runner describes them (``Runner.slot_controllers``).

Both answer the same questions, :class:`SlotSource`'s; :func:`slot_source` picks the one for an env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from internutopia.core.runner.reads import RobotDescription

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


def _as_parsed(command: Any) -> Any:
    """A command its runner's controller parsed already."""
    return command


class _DescribedSlots:
    """The robots of the slots whose episodes just started, as the runner describes them
    (``Runner.slot_controllers``: class name, each controller's fixed action shape), kept until the
    slot's next episode; subclasses say where the descriptions and the command parsers come from."""

    dt: float

    def __init__(self) -> None:
        self._described: dict[int, dict[str, RobotDescription]] = {}

    def _describe(self, slots: list[int]) -> list[dict[str, RobotDescription]]:
        raise NotImplementedError

    def _parser(self, slot: int, robot: str, controller: str) -> Callable[[Any], Any]:
        raise NotImplementedError

    def prepare(self, slots: list[int]) -> None:
        for slot in slots:  # (an earlier episode's description is never taken for this one's, should the call fail)
            self._described.pop(slot, None)
        if slots:
            self._described.update(zip(slots, self._describe(slots), strict=True))

    def robots(self, slot: int) -> list[str]:
        return list(self._described[slot])

    def robot_type(self, slot: int, robot: str) -> str:
        return self._described[slot][robot][0]

    def controllers(self, slot: int, robot: str) -> dict[str, Parser]:
        return {name: (self._parser(slot, robot, name), np.zeros(shape) if shape else None)
                for name, shape in self._described[slot][robot][1].items()}


class LocalSlots(_DescribedSlots):
    """A local ``vec_env.Env``: its runner's robots and controllers, read directly."""

    def __init__(self, env: Any) -> None:
        super().__init__()
        self._runner = env.runner
        self.dt = float(env.get_dt())

    def _describe(self, slots: list[int]) -> list[dict[str, RobotDescription]]:
        return self._runner.slot_controllers(slots)

    def _parser(self, slot: int, robot: str, controller: str) -> Callable[[Any], Any]:
        return self._runner.slot_robots[slot][robot].controllers[controller].parse_action

    def episode_index(self, slot: int) -> int:
        return int(self._runner.episodes[slot].index)

    def commands(self, action: list[Any]) -> list[Any]:
        return action

    def detach(self) -> None:
        pass


class RemoteSlots(_DescribedSlots):
    """A Ray-distributed env: its runners describe a reset's slots (one call each, all at once) and
    parse each step's commands."""

    def __init__(self, env: Any) -> None:
        super().__init__()
        self._env = env
        self.dt = float(env.config.simulator.physics_dt)
        env.ship_parsed_actions(True)

    def _describe(self, slots: list[int]) -> list[dict[str, RobotDescription]]:
        return self._env.slot_controllers(slots)

    def _parser(self, slot: int, robot: str, controller: str) -> Callable[[Any], Any]:
        return _as_parsed

    def episode_index(self, slot: int) -> int:
        index = self._env.slot_episodes[slot]
        if index is None:
            raise RuntimeError(f'slot {slot} runs no episode')
        return int(index)

    def commands(self, action: list[Any]) -> list[Any]:
        return self._env.parsed_actions

    def detach(self) -> None:
        self._env.ship_parsed_actions(False)  # (a flag of the driver's: no call to the runners)


def slot_source(env: Any) -> SlotSource:
    """The source of ``env`` (a ``vec_env.Env``; a Ray-distributed one answers ``is_remote``)."""
    return RemoteSlots(env) if getattr(env, 'is_remote', False) else LocalSlots(env)
