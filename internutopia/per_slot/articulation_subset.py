"""``ArticulationSubset``: some of a robot's joints, by name, in a fixed order (InternUtopia's class).

A controller that drives a few joints keeps one: it reads and writes those joints in its own
order and builds :class:`~internutopia.core.robot.articulation_action.ArticulationAction` objects
for them, whatever order the robot's joints have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from internutopia.per_slot.articulation import IArticulation
from internutopia.per_slot.articulation_action import ArticulationAction


def require_initialized(func: Any) -> Any:
    """Decorator of :class:`ArticulationSubset` methods (InternUtopia's): the joints are looked up first."""

    def wrapper(self: ArticulationSubset, *args: Any, **kwargs: Any) -> Any:
        _ = self.joint_indices
        return func(self, *args, **kwargs)

    return wrapper


class ArticulationSubset:
    """Joints ``joint_names`` of ``articulation`` (an :class:`IArticulation`), in that order."""

    articulation: IArticulation
    joint_names: list[str]

    def __init__(self, articulation: IArticulation, joint_names: Sequence[str]) -> None:
        self.articulation = articulation
        self.joint_names = list(joint_names)
        self._joint_indices: np.ndarray | None = None

    @property
    def is_initialized(self) -> bool:
        """Whether the joints were looked up (they are, on first use)."""
        return self._joint_indices is not None

    @property
    def num_joints(self) -> int:
        """Number of joints in the subset."""
        return len(self.joint_names)

    @property
    def joint_indices(self) -> np.ndarray:
        """Indices of the subset's joints among the robot's joints."""
        if self._joint_indices is None:
            self._joint_indices = np.array([self.articulation.get_dof_index(n) for n in self.joint_names], dtype=np.intp)
        return self._joint_indices

    def get_joint_subset_indices(self) -> np.ndarray:
        """The same as :attr:`joint_indices`."""
        return self.joint_indices

    def get_joint_positions(self) -> np.ndarray:
        """Positions of the subset's joints."""
        return self.articulation.get_joint_positions(self.joint_indices)

    def get_joint_velocities(self) -> np.ndarray:
        """Velocities of the subset's joints."""
        return self.articulation.get_joint_velocities(self.joint_indices)

    def get_joint_efforts(self) -> np.ndarray:
        """Torques applied to the subset's joints (``joint_efforts`` of the last actions)."""
        efforts = self.articulation.get_applied_action().joint_efforts
        return np.asarray(efforts, dtype=float)[self.joint_indices]

    def set_joint_positions(self, positions: Sequence[float]) -> None:
        """Teleport the subset's joints."""
        self.articulation.set_joint_positions(positions, self.joint_indices)

    def set_joint_velocities(self, velocities: Sequence[float]) -> None:
        """Set the subset's joint velocities."""
        self.articulation.set_joint_velocities(velocities, self.joint_indices)

    def set_joint_efforts(self, efforts: Sequence[float]) -> None:
        """Apply torques to the subset's joints."""
        self.articulation.apply_action(ArticulationAction(joint_efforts=efforts, joint_indices=self.joint_indices))

    def map_to_articulation_order(self, joint_values: Sequence[float]) -> np.ndarray:
        """Values of the subset's joints spread into a robot-wide array (``NaN`` for other joints)."""
        values = np.asarray(joint_values, dtype=float).reshape(-1)
        out = np.full(self.articulation.num_dof, np.nan)
        out[self.joint_indices] = values
        return out

    def make_articulation_action(self, joint_positions: Any, joint_velocities: Any) -> ArticulationAction:
        """An action for the subset's joints (either argument may be ``None``)."""
        return ArticulationAction(joint_positions=joint_positions, joint_velocities=joint_velocities,
                                  joint_indices=self.joint_indices)

    def apply_action(self, joint_positions: Any = None, joint_velocities: Any = None) -> None:
        """Send position and/or velocity targets to the subset's joints."""
        self.articulation.apply_action(self.make_articulation_action(joint_positions, joint_velocities))

    def get_applied_action(self) -> ArticulationAction:
        """The targets in force for the subset's joints."""
        applied = self.articulation.get_applied_action()
        positions, velocities, efforts = applied.joint_positions, applied.joint_velocities, applied.joint_efforts
        assert positions is not None and velocities is not None and efforts is not None  # all three reported
        pick = self.joint_indices.tolist()
        return ArticulationAction(joint_positions=[positions[i] for i in pick],
                                  joint_velocities=[velocities[i] for i in pick],
                                  joint_efforts=[efforts[i] for i in pick], joint_indices=self.joint_indices)


__all__ = ['ArticulationSubset', 'require_initialized']
