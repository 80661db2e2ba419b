"""Which per-slot robot is being built: InternUtopia's ``IArticulation.create`` and
``IRigidBody.create`` are called inside a robot's ``__init__`` with an asset path, and here return
that robot's articulation or body in its slot, so they need to know which robot and slot that is.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot


@dataclass(frozen=True)
class SlotRobotContext:
    """The robot group, slot and slot origin of a per-slot robot being constructed."""

    group: BaseRobot
    slot: int
    origin: np.ndarray

    @property
    def entity_name(self) -> str:
        return self.group.name


BUILDING: ContextVar[SlotRobotContext | None] = ContextVar('internutopia_building_robot', default=None)


def building_robot(what: str) -> SlotRobotContext:
    """The per-slot robot under construction; ``ValueError`` outside a robot's ``__init__``."""
    context = BUILDING.get()
    if context is None:
        raise ValueError(f'{what} only works inside a per-slot robot\'s __init__: the robot in its env slot is '
                         'built by the env from its RobotCfg (see docs/extensions.md)')
    return context


__all__ = ['BUILDING', 'SlotRobotContext', 'building_robot']
