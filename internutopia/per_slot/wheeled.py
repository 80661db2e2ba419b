"""``WheeledArticulation``: one wheeled robot in one env slot, with Isaac Sim's ``WheeledRobot`` API.

InternUtopia's Jetbot holds a ``WheeledRobot`` (Isaac Sim's class, which InternUtopia's
``internutopia_extension/robots/jetbot.py`` copies): an articulation whose wheel joints are named,
with getters, setters and an ``apply_wheel_actions`` that address the wheels only. Here a robot
group that names its wheel joints (``wheel_dof_names``, a class attribute of the built-in robot:
the Jetbot's ``left_wheel_joint``, ``right_wheel_joint``) gets a :class:`WheeledArticulation` as
the ``articulation`` of its per-slot robot objects (:func:`slot_articulation`), an
:class:`~internutopia.per_slot.articulation.IArticulation` with these methods added:

- ``wheel_dof_indices``: the wheels' indices among the articulation's joints (``dof_names``);
- ``get_wheel_positions()`` / ``get_wheel_velocities()``: a list with one entry per wheel, in
  ``wheel_dof_names`` order (as Isaac's: a list, not an array), the joints' state now;
- ``set_wheel_positions(p)`` / ``set_wheel_velocities(v)``: set the wheel joints' state (a teleport,
  as Isaac's ``set_joint_positions``/``set_joint_velocities``; other joints keep theirs); the servo
  targets do not change, so a stopped wheel servo brakes a wheel set spinning;
- ``apply_wheel_actions(ArticulationAction)``: the action's entries are the wheels' targets, in
  wheel order (its ``joint_indices`` is ignored, as Isaac's ignores it): ``joint_velocities`` to
  the wheels' velocity servos, ``joint_positions`` to position servos (the Jetbot's wheels have
  none: a ``ValueError`` naming the wheel), ``joint_efforts`` as wheel torques; a ``None`` or NaN
  entry keeps that wheel's target (Isaac's articulation controller keeps it), other joints are
  left alone (Isaac's ``WheeledRobot`` gives them 0 targets; the Jetbot has no other joints);
- ``get_articulation_controller_properties()``: ``(wheel_dof_names, wheel_dof_indices)``;
- ``initialize()`` and ``post_reset()``: accepted (Isaac's look the wheels up and switch the
  drives to velocity control; here both are done already).

Every input is checked before anything is written: a wrong number of values, or a value that is not
a finite number where a number is needed (a NaN or infinite wheel state, an infinite target), is a
``ValueError`` naming the robot, the env and the wheels.

How long an applied wheel target lasts is the robot group's rule (see the Jetbot's): targets
applied between env steps stay until another command replaces them, as Isaac's drive targets do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.per_slot.articulation import IArticulation
from internutopia.per_slot.articulation_action import ArticulationAction

if TYPE_CHECKING:
    from internutopia.core.robot.base import BaseRobot

#: The fields of an ArticulationAction, as they are called in messages.
_FIELDS = ('joint_positions', 'joint_velocities', 'joint_efforts')


class WheeledArticulation(IArticulation):
    """Robot ``group`` in ``slot``, its wheels the joints ``wheel_dof_names`` (or, as in Isaac Sim,
    the joints at ``wheel_dof_indices``); see the module docstring.

    Raises:
        ValueError: neither is given, a name is not one of the robot's joints, or an index is out of range.
    """

    def __init__(self, group: BaseRobot, slot: int, origin: Any = None, wheel_dof_names: Sequence[str] | None = None,
                 wheel_dof_indices: Sequence[int] | None = None) -> None:
        super().__init__(group, slot, origin)
        self._wheel_dof_names = list(wheel_dof_names) if wheel_dof_names is not None else None
        self._wheel_dof_indices = list(wheel_dof_indices) if wheel_dof_indices is not None else None
        self.initialize()

    # -- structure -----------------------------------------------------------------------------
    def initialize(self, physics_sim_view: Any = None) -> None:
        """Look the wheels up among the joints (Isaac's ``initialize``; done when the object is made)."""
        if self._wheel_dof_names is not None:
            self._wheel_dof_indices = [self.get_dof_index(name) for name in self._wheel_dof_names]
        elif self._wheel_dof_indices is not None:
            self._wheel_dof_indices = self._indices(self._wheel_dof_indices).tolist()
        else:
            raise ValueError(f'the wheeled articulation of robot {self.group.name!r} needs wheel_dof_names or wheel_dof_indices')
        self._num_wheel_dof = len(self._wheel_dof_indices)
        self._wheel_index_array = np.asarray(self._wheel_dof_indices, dtype=np.intp)

    def post_reset(self) -> None:
        """Accepted (Isaac's switches the drives to velocity control: the wheels' servos are velocity servos here)."""

    @property
    def wheel_dof_indices(self) -> list[int]:
        """The wheels' indices among the joints (``dof_names``), in wheel order."""
        return list(self._wheel_dof_indices or [])

    @property
    def wheel_names(self) -> list[str]:
        """The wheels' joint names, in wheel order (whether they were given by name or by index)."""
        return [self.dof_names[i] for i in self.wheel_dof_indices]

    def get_articulation_controller_properties(self) -> tuple[list[str] | None, list[int]]:
        """``(wheel_dof_names, wheel_dof_indices)``, as Isaac's (the names ``None`` when the wheels were given by index)."""
        return (list(self._wheel_dof_names) if self._wheel_dof_names is not None else None), self.wheel_dof_indices

    # -- state ---------------------------------------------------------------------------------
    def get_wheel_positions(self) -> list[float]:
        """The wheel joints' angles (rad), one per wheel, as a list (Isaac's type)."""
        return list(self.get_joint_positions(self._wheel_index_array))

    def get_wheel_velocities(self) -> list[float]:
        """The wheel joints' angular velocities (rad/s), one per wheel, as a list (Isaac's type)."""
        return list(self.get_joint_velocities(self._wheel_index_array))

    def set_wheel_positions(self, positions: Sequence[float]) -> None:
        """Set the wheel joints' angles (rad), one per wheel; the other joints keep theirs."""
        self.set_joint_positions(self._wheel_values(positions, 'set_wheel_positions').tolist(), self._wheel_index_array)

    def set_wheel_velocities(self, velocities: Sequence[float]) -> None:
        """Set the wheel joints' angular velocities (rad/s), one per wheel: their state now, not
        their servos' targets (use :meth:`apply_wheel_actions` to drive)."""
        self.set_joint_velocities(self._wheel_values(velocities, 'set_wheel_velocities').tolist(), self._wheel_index_array)

    # -- commands ------------------------------------------------------------------------------
    def apply_wheel_actions(self, actions: ArticulationAction) -> None:
        """Apply ``actions``' targets to the wheels, entry ``i`` to wheel ``i`` (see the module docstring).

        Raises:
            ValueError: ``actions`` is not an ArticulationAction, a field has not one entry per
                wheel, a target is infinite or not a number, or a wheel has no servo of the kind
                targeted; nothing is applied then.
        """
        if actions is None:
            raise ValueError(f'{self._where("apply_wheel_actions")} takes an ArticulationAction; got None')
        fields = {}
        for field in _FIELDS:
            if not hasattr(actions, field):
                raise ValueError(f'{self._where("apply_wheel_actions")} takes an ArticulationAction; '
                                 f'got {type(actions).__name__}')
            fields[field] = getattr(actions, field)
        for field, values in fields.items():
            if values is None:
                continue
            count = _length(values)
            if count != self._num_wheel_dof:
                has = f'has {count} entries' if count is not None else f'is not a sequence ({values!r})'
                raise ValueError(f'{self._where("apply_wheel_actions")}: {field} {has} for the {self._num_wheel_dof} '
                                 f'wheels {self.wheel_names}; ArticulationAction passed should be the same length as '
                                 'the number of wheels')
        self.apply_action(ArticulationAction(joint_indices=self._wheel_index_array, **fields))

    # -- helpers -------------------------------------------------------------------------------
    def _where(self, what: str) -> str:
        return f'{what} for robot {self.group.name!r} in env {self.slot}'

    def _wheel_values(self, values: Any, what: str) -> np.ndarray:
        """``values`` as one finite float per wheel; ``ValueError`` naming the wheels otherwise."""
        wheels = self.wheel_names
        where = self._where(what)
        count = _length(values)
        if count != len(wheels):
            got = f'{count} values' if count is not None else 'no sequence'
            raise ValueError(f'{where} takes {len(wheels)} values, one per wheel {wheels}; got {got}: {values!r}')
        try:
            array = np.asarray([np.nan if v is None else v for v in values], dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f'{where} takes numbers, one per wheel {wheels}; got {values!r}') from None
        if array.shape != (len(wheels),):
            raise ValueError(f'{where} takes {len(wheels)} numbers, one per wheel {wheels}; got {values!r}')
        bad = ~np.isfinite(array)
        if bad.any():
            named = ', '.join(f'{wheel!r}: {value}' for wheel, value, b in zip(wheels, array.tolist(), bad.tolist(), strict=True) if b)
            raise ValueError(f'{where} takes finite numbers, one per wheel {wheels}; got {named}')
        return array

    def __repr__(self) -> str:
        return f'WheeledArticulation({self.group.name!r}, env {self.slot}, wheels {self.wheel_names})'


def _length(values: Any) -> int | None:
    """How many entries ``values`` has (a scalar or an unsized object: ``None``)."""
    if isinstance(values, np.ndarray):
        return int(values.shape[0]) if values.ndim else None
    try:
        return len(values)
    except TypeError:
        return None


def slot_articulation(group: BaseRobot, slot: int, origin: Any = None) -> IArticulation:
    """The articulation of robot ``group`` in ``slot`` for its per-slot robot objects: a
    :class:`WheeledArticulation` where the group names its wheel joints (``wheel_dof_names``),
    else an :class:`~internutopia.per_slot.articulation.IArticulation`."""
    wheels = getattr(group, 'wheel_dof_names', None)
    if wheels:
        return WheeledArticulation(group, slot, origin=origin, wheel_dof_names=wheels)
    return IArticulation(group, slot, origin=origin)


__all__ = ['WheeledArticulation', 'slot_articulation']
