"""What a pack's compiled model answers, as frozen records of plain arrays (no engine types).

Every slot of a pack shares one compiled model, so an id or address looked up once serves every
slot and every step: code looks its records up when it binds (``bind(world, slots)``) and keeps
them. Records are frozen dataclasses whose arrays are read-only; copy an array to change it.
Names are the compiled model's full names (a robot's elements carry its prefix, ``'h1/pelvis'``).
Ids are 0-based, and ``-1`` (:data:`NO_ID`) means "none". Enumerations follow MuJoCo's numbering,
which MuJoCo Warp shares; another engine's backend translates to it.

The lookups themselves are methods of :class:`~internutopia.core.backend.interface.ModelLookup`
(``pack.lookup``).

>>> JointType.HINGE == 3, GeomType.PLANE == 0
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import IntEnum

import numpy as np

__all__ = ['KINDS', 'NO_ID', 'ActuatorRecord', 'BodyRecord', 'ChainRecord', 'ContactReadings', 'Contacts', 'GeomTable',
           'GeomType', 'JointRecord', 'JointType', 'SensorRecord', 'ServoKind', 'UnknownName']

#: "No such element" in an id or address field.
NO_ID = -1
#: Kinds of named model elements :meth:`ModelLookup.id` and :meth:`ModelLookup.names` know.
KINDS = ('body', 'joint', 'actuator', 'site', 'geom', 'sensor', 'camera')


class JointType(IntEnum):
    """Joint types (MuJoCo's ``mjtJoint``): qpos width 7, 4, 1, 1; qvel width 6, 3, 1, 1."""

    FREE = 0
    BALL = 1
    SLIDE = 2
    HINGE = 3


class GeomType(IntEnum):
    """Geom shapes (MuJoCo's ``mjtGeom``)."""

    PLANE = 0
    HFIELD = 1
    SPHERE = 2
    CAPSULE = 3
    ELLIPSOID = 4
    CYLINDER = 5
    BOX = 6
    MESH = 7
    SDF = 8


class ServoKind(IntEnum):
    """What an actuator on a joint is: a position servo (``kp``, optional ``kv``), a velocity servo
    (``kv``) or a motor (``ctrl`` is a torque or force scaled by its gain)."""

    MOTOR = 0
    POSITION = 1
    VELOCITY = 2


class UnknownName(KeyError, ValueError):
    """A name the model does not have; the message names the kind and the names it has.

    Both a ``KeyError`` (what MuJoCo's own lookups raise) and a ``ValueError`` (what config
    errors are here), so either ``except`` catches it.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ''


class _Record:
    """Frozen dataclass records whose array fields are made read-only."""

    def __post_init__(self) -> None:
        for item in fields(self):  # type: ignore[arg-type]
            value = getattr(self, item.name)
            if isinstance(value, np.ndarray):
                value = np.array(value)  # a private copy, so no live model array is frozen
                value.flags.writeable = False
                object.__setattr__(self, item.name, value)


@dataclass(frozen=True)
class BodyRecord(_Record):
    """One body.

    Attributes:
        id: the body's id (rows of ``xpos``, ``xquat``, ``xfrc_applied``).
        name: its full name.
        parent: its parent body's id (0: the world body).
        mocap: its row in ``mocap_pos``/``mocap_quat``, or -1 when it is not a mocap body.
        root_qposadr: when the body's first joint is a free joint, that joint's first column of
            ``qpos`` (position 3 then wxyz 4), else -1.
        root_dofadr: that free joint's first column of ``qvel`` (linear 3 then angular 3), else -1.
        mass: kg.
        static: True when the body is welded to the world (no joint between them, not mocap).
    """

    id: int
    name: str
    parent: int
    mocap: int
    root_qposadr: int
    root_dofadr: int
    mass: float
    static: bool


@dataclass(frozen=True)
class JointRecord(_Record):
    """Joints, in the order they were asked for (``n`` of them).

    Attributes:
        names: full names. Length n.
        ids: joint ids. Shape (n,).
        type: :class:`JointType` values. Shape (n,).
        qposadr: first column of each joint in ``qpos``. Shape (n,).
        dofadr: first column of each joint in ``qvel``. Shape (n,).
        body: the body each joint moves. Shape (n,).
        limited: whether the joint has limits. Shape (n,).
        lower: lower limits (-inf when unlimited). Shape (n,).
        upper: upper limits (+inf when unlimited). Shape (n,).
        qpos0: the reference position of each joint's first coordinate. Shape (n,).
        axis: joint axes in the body frame. Shape (n, 3).
        pos: joint anchors in the body frame. Shape (n, 3).
    """

    names: tuple[str, ...]
    ids: np.ndarray
    type: np.ndarray
    qposadr: np.ndarray
    dofadr: np.ndarray
    body: np.ndarray
    limited: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    qpos0: np.ndarray
    axis: np.ndarray
    pos: np.ndarray


@dataclass(frozen=True)
class ActuatorRecord(_Record):
    """Actuators, in the order they were asked for (``n`` of them).

    Attributes:
        names: full names. Length n.
        ids: actuator ids (columns of ``ctrl``). Shape (n,).
        joint: the joint each drives, or -1 when its transmission is not a joint. Shape (n,).
        kind: :class:`ServoKind` values. Shape (n,).
        gain: the control gain (``gainprm[0]``: a position servo's ``kp``, a velocity servo's ``kv``). Shape (n,).
        kp: position stiffness of an affine bias (``-biasprm[1]``; 0 unless a position servo). Shape (n,).
        kv: velocity damping of an affine bias (``-biasprm[2]``). Shape (n,).
        force_limited: whether the force is clamped to ``force_range``. Shape (n,).
        force_range: the force range as the model states it (also where it is not enforced). Shape (n, 2).
        ctrl_limited: whether ``ctrl`` is clamped to ``ctrl_range``. Shape (n,).
        ctrl_range: the control range as the model states it. Shape (n, 2).
    """

    names: tuple[str, ...]
    ids: np.ndarray
    joint: np.ndarray
    kind: np.ndarray
    gain: np.ndarray
    kp: np.ndarray
    kv: np.ndarray
    force_limited: np.ndarray
    force_range: np.ndarray
    ctrl_limited: np.ndarray
    ctrl_range: np.ndarray


@dataclass(frozen=True)
class SensorRecord(_Record):
    """One sensor: its readings are ``data.sensordata[:, adr:adr + dim]``.

    Attributes:
        id: the sensor's id.
        name: its full name.
        adr: its first column of ``sensordata``.
        dim: its number of values.
    """

    id: int
    name: str
    adr: int
    dim: int


@dataclass(frozen=True)
class GeomTable(_Record):
    """Every geom of the model (``ngeom`` of them).

    Attributes:
        body: the body each geom belongs to. Shape (ngeom,).
        type: :class:`GeomType` values. Shape (ngeom,).
        static: whether the geom's body is welded to the world. Shape (ngeom,).
    """

    body: np.ndarray
    type: np.ndarray
    static: np.ndarray


@dataclass(frozen=True)
class ChainRecord(_Record):
    """The bodies from a base body (excluded) down to an end frame (``m`` bodies, ``n`` joints),
    and the constants forward kinematics needs (see ``internutopia_extension/controllers/kinematics.py``).

    Attributes:
        body_pos: each body's position in its parent. Shape (m, 3).
        body_quat: each body's wxyz orientation in its parent. Shape (m, 4).
        body_joint: index of each body's joint among the chain's joints, or -1. Shape (m,).
        joint_type: :class:`JointType` values (hinge or slide only). Shape (n,).
        joint_axis: joint axes in their body's frame. Shape (n, 3).
        joint_pos: joint anchors in their body's frame. Shape (n, 3).
        joint_ref: each joint's reference position (``qpos0``). Shape (n,).
        qposadr: each joint's column of ``qpos``. Shape (n,).
        dofadr: each joint's column of ``qvel``. Shape (n,).
        lower: lower limits (-inf when unlimited). Shape (n,).
        upper: upper limits (+inf when unlimited). Shape (n,).
        frame_pos: the end frame's position in the last body. Shape (3,).
        frame_quat: the end frame's wxyz orientation in the last body. Shape (4,).
    """

    body_pos: np.ndarray
    body_quat: np.ndarray
    body_joint: np.ndarray
    joint_type: np.ndarray
    joint_axis: np.ndarray
    joint_pos: np.ndarray
    joint_ref: np.ndarray
    qposadr: np.ndarray
    dofadr: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    frame_pos: np.ndarray
    frame_quat: np.ndarray


@dataclass(frozen=True)
class Contacts(_Record):
    """One slot's contact list at its current state (``n`` contacts).

    Attributes:
        geom: the two geoms of each contact. Shape (n, 2).
        normal: contact normals, world axes, pointing from the first geom to the second. Shape (n, 3).
        position: contact points, env-local. Shape (n, 3).
        distance: signed distances (negative: penetration), m. Shape (n,).
    """

    geom: np.ndarray
    normal: np.ndarray
    position: np.ndarray
    distance: np.ndarray


@dataclass(slots=True)
class ContactReadings:
    """A summary of the contacts of one part's subtree (its ``contact_root``), for ``k`` slots, as
    the last step found them (at the state it started from). Made on every step, so a plain
    record (a frozen one costs three times as much to make); its arrays are views of one gather
    made for it.

    Attributes:
        count: contacts of the subtree with anything. Shape (k,).
        static_count: those of them with geoms welded to the world. Shape (k,).
        normal: the normals (world axes) of the first ``min(count, c)`` contacts; ``c`` is the
            backend's capacity (``normal.shape[1]``) and rows past ``count`` are undefined.
            Shape (k, c, 3).
    """

    count: np.ndarray
    static_count: np.ndarray
    normal: np.ndarray
