"""``IRigidBody``: one body of a robot or object in one env slot (InternUtopia's interface).

InternUtopia wraps an Isaac Sim rigid prim; here an ``IRigidBody`` reads and writes a body of the
slot's own MuJoCo simulation: poses (:class:`~internutopia.core.util.pose_mixin.PoseMixin`: world,
env and local frames), velocities and mass. Get one from a per-slot scene (``scene.get(name)``:
an object or robot by name, or a body by its name) or from a per-slot robot
(``robot.get_robot_base()``). Only a free-floating root (a robot's or object's base) can be
teleported or given a velocity; a body inside a robot moves with its joints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from internutopia.core.backend.model import BodyRecord
from internutopia.core.util.math import quat_conjugate, quat_multiply, rotate_inverse
from internutopia.core.util.pose_mixin import PoseMixin
from internutopia.per_slot.building import building_robot

if TYPE_CHECKING:
    from internutopia.core.entity import Entity


class IRigidBody(PoseMixin):
    """Body ``body`` (its name in the entity's model; the base body when ``None``) of ``entity`` in ``slot``.

    Args:
        entity: the robot or object group (see :class:`~internutopia.core.entity.Entity`).
        slot: the env slot.
        body: a body name of the entity's model, or ``None`` for its base body.
        origin: the slot's origin in the world frame.
        name: the name this body goes by (default: ``entity/body``).
    """

    def __init__(self, entity: Entity, slot: int, body: str | None = None, origin: Any = None, name: str | None = None) -> None:
        self.entity = entity
        self.slot = int(slot)
        self.body = body or entity.base_body
        self.env_id = self.slot
        self.offset = np.zeros(3) if origin is None else np.asarray(origin, dtype=float)
        self.name = name or (entity.name if self.body == entity.base_body else f'{entity.name}/{self.body}')
        self.prim_path = f'/World/env_{self.slot}/{entity.name}' + ('' if self.body == entity.base_body else f'/{self.body}')
        self.status: Any = None

    # -- lookups -------------------------------------------------------------------------------
    @property
    def is_base(self) -> bool:
        """Whether this is the entity's base body (the one its ``position`` is)."""
        return self.body == self.entity.base_body

    def _record(self) -> BodyRecord:
        lookup = self.entity.bound_world.lookup
        try:
            return lookup.body(self.entity.full_name(self.body))
        except KeyError:
            prefix = f'{self.entity.name}/'
            names = sorted(name[len(prefix):] for name in lookup.names('body') if name.startswith(prefix))
            raise ValueError(f'{self.entity.name!r} in env {self.slot} has no body {self.body!r}; bodies: {names}') from None

    def _body_id(self) -> int:
        return self._record().id

    # -- poses ---------------------------------------------------------------------------------
    def _env_pose(self) -> tuple[np.ndarray, np.ndarray]:
        if self.is_base:
            position, orientation = self.entity.poses(np.array([self.slot], dtype=np.intp))
            return position[0], orientation[0]
        positions, orientations = self.entity.bound_world.body_poses(self.slot)
        body = self._body_id()
        return positions[body], orientations[body]

    def _set_env_pose(self, position: np.ndarray | None, orientation: np.ndarray | None) -> None:
        if not self.is_base:
            raise ValueError(f'body {self.name!r} is part of {self.entity.name!r}: only its base body can be moved')
        self.entity.teleport(self.slot, position, orientation)

    def _local_pose(self) -> tuple[np.ndarray, np.ndarray]:
        if self.is_base:
            return self._env_pose()
        record = self._record()
        positions, orientations = self.entity.bound_world.body_poses(self.slot)
        parent = orientations[record.parent]
        position = rotate_inverse(parent, positions[record.id] - positions[record.parent])
        inverse = quat_conjugate(parent)
        return position, quat_multiply(inverse, orientations[record.id])

    # -- velocities and mass ---------------------------------------------------------------------
    def get_linear_velocity(self) -> np.ndarray:
        """Linear velocity of the body's origin in the world frame, m/s. Shape (3,)."""
        return self._velocity()[3:]

    def get_angular_velocity(self) -> np.ndarray:
        """Angular velocity in the world frame, rad/s. Shape (3,)."""
        return self._velocity()[:3]

    def _velocity(self) -> np.ndarray:
        return self.entity.bound_world.body_velocity(self.slot, self._body_id())

    def set_linear_velocity(self, velocity: Sequence[float]) -> None:
        """Set the world-frame linear velocity of a free-floating base body."""
        self._set_root_velocity(np.asarray(velocity, dtype=float), slice(0, 3), 'linear')

    def set_angular_velocity(self, velocity: Sequence[float]) -> None:
        """Set the world-frame angular velocity of a free-floating base body."""
        self._set_root_velocity(np.asarray(velocity, dtype=float), slice(3, 6), 'angular')

    def _set_root_velocity(self, velocity: np.ndarray, part: slice, what: str) -> None:
        dof = int(self.entity.root_dofadr[self.slot])
        if not self.is_base or dof < 0:
            raise ValueError(f'{self.name!r} has no free joint: its {what} velocity follows its joints')
        if velocity.shape != (3,) or not np.all(np.isfinite(velocity)):
            raise ValueError(f'{what} velocity must be 3 finite numbers; got {velocity!r}')
        if part.start == 3:  # a free joint's angular velocity is in the body frame
            _, orientation = self._env_pose()
            velocity = rotate_inverse(np.asarray(orientation, dtype=float), velocity)
        self.entity.bound_world.data.qvel[self.slot, dof + part.start:dof + part.stop] = velocity
        self.entity.state_changed(self.slot)

    def get_mass(self) -> float:
        """The body's mass, kg."""
        return float(self._record().mass)

    def set_mass(self, mass: float) -> None:
        """Not supported: a mass is part of the compiled model every slot of the structure shares."""
        raise ValueError(f'{self.name!r}: masses are part of the model shared by every slot of the same structure; '
                         "set them in the robot's or object's config or model instead")

    # -- InternUtopia's status cache (Isaac Sim rebuilds its physics views on reset) ----------------
    def save_status(self) -> None:
        """Remember the pose (InternUtopia keeps it across a physics-view rebuild; nothing is rebuilt here)."""
        self.status = self.get_pose()

    def restore_status(self) -> None:
        """Nothing to restore: resetting one slot leaves every other slot's state as it was."""

    @classmethod
    def create(cls, prim_path: str, name: str, *args: Any, **kwargs: Any) -> IRigidBody:
        """A body of the robot being built (per-slot robots only; see ``IArticulation.create``).

        ``prim_path``'s last part names the body (``'.../torso_link'``).
        """
        robot = building_robot('IRigidBody.create')
        body: str | None = prim_path.rstrip('/').split('/')[-1]
        if body in ('', robot.entity_name):
            body = None
        return cls(robot.group, robot.slot, body, origin=robot.origin, name=name)

    def __repr__(self) -> str:
        return f'IRigidBody({self.name!r}, env {self.slot})'


__all__ = ['IRigidBody']
