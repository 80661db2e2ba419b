"""``DexterousHandController``: opens and closes a robot's two Inspire hands, for all slots at once.

Action (one env): ``(left, right)``, each ``'open'``, ``'close'``, a closure in ``[0, 1]`` (0 open,
1 closed) or ``None`` (keep that hand's last command); a single value commands both hands. The
six driven joints of a hand get servo targets between :data:`~.h1_with_hand_model.HAND_OPEN` and
:data:`~.h1_with_hand_model.HAND_CLOSED`; the other six follow them (the URDF's couplings). The
command stays in force until the next one.

Observation: ``closure`` ``(2,)`` (left, right) as measured: the driven joints' mean position as a
fraction of the way from open to closed; ``left_joint_positions`` and ``right_joint_positions``
``(12,)`` (:data:`~.h1_with_hand_model.HAND_JOINTS` order); ``fingertip_spread`` ``(2,)``: the mean
distance (m) from the thumb tip to the other four fingertips (from the poses at the start of the
last physics step).

>>> parse_hand_action(('close', None)).tolist(), parse_hand_action(0.25).tolist()
([1.0, nan], [0.25, 0.25])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.controller.base import BaseController
from internutopia_extension.robots.h1_with_hand_model import FINGERTIPS, HAND_CLOSED, HAND_OPEN, SIDES, hand_joint_names

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

_WORDS = {'open': 0.0, 'close': 1.0, 'closed': 1.0}


def _one_hand(value: Any, side: str) -> float:
    if value is None:
        return float('nan')
    if isinstance(value, str):
        if value in _WORDS:
            return _WORDS[value]
        raise ValueError(f"hand_controller: the {side} hand's command must be 'open', 'close', a closure in [0, 1] or None; got {value!r}")
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and 0.0 <= float(value) <= 1.0:
        return float(value)
    raise ValueError(f"hand_controller: the {side} hand's command must be 'open', 'close', a closure in [0, 1] or None; got {value!r}")


def parse_hand_action(action: Any) -> np.ndarray:
    """One env's hand command as ``(2,)`` closures (left, right), NaN where a hand keeps its command."""
    if isinstance(action, np.ndarray):
        action = action.tolist()
    if isinstance(action, (list, tuple)):
        if len(action) == 1:
            action = action[0]
        elif len(action) == 2:
            return np.array([_one_hand(action[0], 'left'), _one_hand(action[1], 'right')])
        else:
            raise ValueError(f'hand_controller expects (left, right) or one command for both hands; got {len(action)} values')
    value = _one_hand(action, 'both')
    return np.array([value, value])


@BaseController.register('DexterousHandController')
class DexterousHandController(BaseController):
    """See the module docstring. The robot provides ``hand_actuators`` ``(2, 6)``,
    ``hand_qposadr`` ``(2, 12)`` and ``fingertip_sites`` ``(2, 5)`` (left row first)."""

    def __init__(self, config, robot) -> None:
        super().__init__(config, robot)
        #: The closure each slot's hands were last told, ``(env_num, 2)``.
        self.command = np.zeros((self.env_num, 2))

    def bind(self, world: Pack) -> None:
        super().bind(world)
        self.world = world
        robot = self.robot
        if not len(robot.slots):
            return
        self.actuators = np.stack([robot.ids(robot.slots[:1], 'actuator', hand_joint_names(side, driven=True))[0] for side in SIDES])
        self.qposadr = np.stack([world.lookup.joints([robot.full_name(n) for n in hand_joint_names(side)]).qposadr
                                 for side in SIDES]).astype(np.intp)
        self.driven_columns = np.array([hand_joint_names(side).index(n) for side in SIDES
                                        for n in hand_joint_names(side, driven=True)][:len(HAND_OPEN)], dtype=np.intp)
        self.sites = np.stack([robot.ids(robot.slots[:1], 'site', [f'{prefix}_{tip}' for tip in FINGERTIPS])[0]
                               for prefix in SIDES.values()])

    def parse_action(self, action: Any) -> np.ndarray:
        return parse_hand_action(action)

    def apply(self, slots: np.ndarray, batch: np.ndarray) -> None:
        ctrl = self.world.data.ctrl
        for hand in range(2):
            given = ~np.isnan(batch[:, hand])
            if not np.any(given):
                continue
            rows, closure = slots[given], batch[given, hand]
            self.command[rows, hand] = closure
            ctrl[rows[:, None], self.actuators[hand]] = HAND_OPEN + closure[:, None] * (HAND_CLOSED - HAND_OPEN)

    def reset(self, slots: np.ndarray) -> None:
        super().reset(slots)
        self.command[slots] = 0.0

    def get_obs(self, slots: np.ndarray) -> dict[str, np.ndarray]:
        data, rows = self.world.data, slots[:, None]
        joints = [data.qpos[rows, self.qposadr[hand]] for hand in range(2)]
        closure = np.stack([((q[:, self.driven_columns] - HAND_OPEN) / (HAND_CLOSED - HAND_OPEN)).mean(axis=1) for q in joints], axis=1)
        site_xpos = self.world.field('site_xpos')
        spread = np.empty((len(slots), 2))
        for hand in range(2):
            tips = site_xpos[rows, self.sites[hand]]  # (k, 5, 3): thumb first
            spread[:, hand] = np.linalg.norm(tips[:, 1:] - tips[:, :1], axis=2).mean(axis=1)
        return {'closure': closure, 'left_joint_positions': joints[0], 'right_joint_positions': joints[1],
                'fingertip_spread': spread}


__all__ = ['DexterousHandController', 'parse_hand_action']
