"""``ArticulationAction``: joint targets for one robot in one slot (InternUtopia's class).

Upstream-style controllers return one from ``action_to_control(action)`` and robots pass it to
``self.articulation.apply_action(control)``
(:class:`~internutopia.per_slot.articulation.IArticulation`): ``joint_positions`` go to the
joints' position servos, ``joint_velocities`` to their velocity servos and ``joint_efforts`` are
applied as joint torques; ``None`` entries (or a ``None`` array) leave a joint alone, and
``joint_indices`` picks the joints the arrays refer to (all of the robot's joints, in
``dof_names`` order, when ``None``).

>>> action = ArticulationAction(joint_positions=[0.1, None], joint_indices=[3, 5])
>>> action.get_dof_action(0), action.get_dof_action(1), action.get_length()
({'position': 0.1}, {}, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

ArrayLike = Sequence[Any] | np.ndarray | None


class ArticulationAction:
    """Joint position, velocity and effort targets (any of them ``None``), for ``joint_indices``."""

    joint_positions: ArrayLike
    joint_velocities: ArrayLike
    joint_efforts: ArrayLike
    joint_indices: ArrayLike

    def __init__(self, joint_positions: ArrayLike = None, joint_velocities: ArrayLike = None,
                 joint_efforts: ArrayLike = None, joint_indices: ArrayLike = None) -> None:
        self.joint_positions = joint_positions
        self.joint_velocities = joint_velocities
        self.joint_efforts = joint_efforts
        self.joint_indices = joint_indices

    def get_dof_action(self, index: int) -> dict[str, Any]:
        """The targets of the ``index``-th joint of this action: ``{'effort': e}`` when an effort is
        given (it wins), else any of ``{'position': p, 'velocity': v}``."""
        if self.joint_efforts is not None and self.joint_efforts[index] is not None:
            return {'effort': self.joint_efforts[index]}
        out = {}
        if self.joint_velocities is not None and self.joint_velocities[index] is not None:
            out['velocity'] = self.joint_velocities[index]
        if self.joint_positions is not None and self.joint_positions[index] is not None:
            out['position'] = self.joint_positions[index]
        return out

    def get_dict(self) -> dict[str, Any]:
        """The targets as plain lists (``None`` where not given)."""

        def plain(value: ArrayLike) -> Any:
            return value.tolist() if isinstance(value, np.ndarray) else value

        return {'joint_positions': plain(self.joint_positions), 'joint_velocities': plain(self.joint_velocities),
                'joint_efforts': plain(self.joint_efforts)}

    def get_length(self) -> int | None:
        """How many joints the action addresses (``None`` when it holds no targets)."""
        for value in (self.joint_positions, self.joint_velocities, self.joint_efforts):
            if value is not None:
                return len(value)
        return None

    def __str__(self) -> str:
        return str(self.get_dict())

    def __repr__(self) -> str:
        return f'ArticulationAction({self.get_dict()}, joint_indices={self.joint_indices!r})'


__all__ = ['ArticulationAction']
