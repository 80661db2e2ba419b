"""The backend boundary: what the runner, robots, controllers, sensors, tasks, metrics and rewards
may ask of a physics backend, and all they may ask.

Outside ``internutopia/core/backend/`` nothing imports an engine or touches its objects: state is
read and written through a pack's :class:`~internutopia.core.backend.state.StateArrays`
(``pack.data``, numpy arrays ``(env_num, ...)`` with documented shapes), names are resolved
through its :class:`ModelLookup` (``pack.lookup``, frozen records of
:mod:`internutopia.core.backend.model`), and the few computations that need the engine (contacts,
a body's velocity, poses at the current state) are methods of the :class:`Pack`. ``docs/backend.md``
says what a new backend implements; the MuJoCo one is
:class:`~internutopia.core.backend.mujoco.world.MujocoWorld`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from internutopia.core.backend.model import (
    ActuatorRecord,
    BodyRecord,
    ChainRecord,
    ContactReadings,
    Contacts,
    GeomTable,
    JointRecord,
    SensorRecord,
)
from internutopia.core.backend.state import StateArrays

__all__ = ['ModelLookup', 'Pack', 'Rollout', 'World']


class ModelLookup(Protocol):
    """Names, ids, addresses and constants of a pack's compiled one-slot model (the same for every
    slot of the pack). Look up once, when binding, and keep the answers.

    Unknown names raise :class:`~internutopia.core.backend.model.UnknownName` (a ``KeyError`` and
    a ``ValueError``) naming the kind and listing the names the model has.
    """

    #: Sizes of the model (the ``n*`` of :class:`~internutopia.core.backend.state.StateArrays`' shapes).
    nq: int
    nv: int
    nu: int
    na: int
    nbody: int
    njnt: int
    ngeom: int
    nsite: int
    ncam: int
    nmocap: int
    nsensordata: int
    #: Seconds of one physics step of the model (``physics_dt / substeps``, see :attr:`Pack.substeps`).
    timestep: float

    def id(self, kind: str, name: str) -> int:
        """The id of element ``name`` of ``kind`` (one of :data:`~internutopia.core.backend.model.KINDS`)."""

    def find(self, kind: str, name: str) -> int:
        """The id of element ``name`` of ``kind``, or -1 when the model has none."""

    def ids(self, kind: str, names: Sequence[str]) -> np.ndarray:
        """Ids of ``names`` of ``kind``. Shape (len(names),), intp."""

    def names(self, kind: str) -> tuple[str, ...]:
        """Full names of every element of ``kind``, in id order (``''`` for an unnamed one)."""

    def body(self, name: str) -> BodyRecord:
        """Body ``name``: its id, parent, mocap row and free-joint addresses."""

    def joints(self, names: Sequence[str]) -> JointRecord:
        """Joints ``names``: types, ``qpos``/``qvel`` addresses, limits."""

    def actuators(self, names: Sequence[str] | None = None) -> ActuatorRecord:
        """Actuators ``names`` (every actuator when ``None``): columns of ``ctrl``, joints, gains, ranges."""

    def sensor(self, name: str) -> SensorRecord:
        """Sensor ``name``: where its readings are in ``sensordata``."""

    def geoms(self) -> GeomTable:
        """Every geom's body, shape and whether it is static."""

    def chain(self, base_body: str, frame: str) -> ChainRecord:
        """The serial chain from ``base_body`` down to ``frame`` (a site, else a body).

        Raises ``ValueError`` when ``frame`` is neither, is not below ``base_body``, or a body on the
        way has a joint other than one hinge or slide.
        """


class Pack(Protocol):
    """The slots of one structure (same scene, robots, objects): one compiled one-slot model, and
    a simulation per env slot stepped together. Robots, controllers and sensors get their pack in
    ``bind(world, ...)``; a group's ``world`` is its pack.

    A backend's pack may carry its engine's own objects too (the MuJoCo pack's ``model``,
    ``batch`` and ``mjdata``, and ``drawn_model``/``drawn_data`` for drawing: a world
    compiles ``model`` without its visual-only geoms, see
    :mod:`internutopia.core.backend.mujoco.visuals`), for the backend's renderer and its tests;
    code outside ``internutopia/core/backend/`` does not use them.
    """

    #: The structure key the pack was built for.
    key: str
    @property
    def data(self) -> StateArrays:
        """The ``(env_num, ...)`` arrays, row ``i`` being slot ``i`` (a backend may hand out a subclass)."""

    @property
    def lookup(self) -> ModelLookup:
        """Names, ids and constants of the pack's model."""

    #: The slots holding this structure, sorted. Shape (k,), intp.
    slots: np.ndarray
    #: Physics steps per env step (each ``lookup.timestep`` long).
    substeps: int

    def field(self, name: str) -> np.ndarray:
        """The ``(env_num, ...)`` array of a derived field bound on first use (an on-request field of
        :class:`~internutopia.core.backend.state.StateArrays`); also ``data.<name>`` from then on."""

    def forward(self, slots: np.ndarray) -> None:
        """Recompute the derived fields of ``slots`` after their state was written outside a step."""

    def contacts(self, slot: int) -> Contacts:
        """``slot``'s contact list at its current state (computed now; costs a collision pass)."""

    def contact_readings(self, prefix: str, slots: np.ndarray) -> ContactReadings:
        """The contact summary of the part attached under ``prefix`` (its ``contact_root`` subtree)
        for ``slots``, as the last step found it. Cheap: meant for every step."""

    def body_poses(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """Every body's env-local position ``(nbody, 3)`` and wxyz orientation ``(nbody, 4)`` at
        ``slot``'s current state (computed now; copies)."""

    def body_velocity(self, slot: int, body: int) -> np.ndarray:
        """Velocity of body ``body``'s frame in ``slot`` at its current state: angular then linear,
        world axes. Shape (6,)."""

    def set_servo_gains(self, actuators: np.ndarray, kp: np.ndarray | None = None, kv: np.ndarray | None = None) -> None:
        """Set position-servo stiffness ``kp`` and damping ``kv`` of ``actuators`` (ids; every slot
        of the pack shares them). ``None`` keeps that gain."""


class Rollout(Protocol):
    """What :meth:`World.rollout` recorded, and how to put some slots back."""

    @property
    def steps(self) -> int:
        """Physics steps of the call."""

    @property
    def fields(self) -> dict[str, np.ndarray]:
        """Each recorded field's ``(env_num, steps, ...)`` array, by slot: ``fields[name][slot, k]``
        is its value after the call's physics step ``k + 1``."""

    def rewind(self, slots: np.ndarray, steps: int) -> None:
        """Put ``slots`` where the call left them after its first ``steps`` physics steps, bit
        for bit, derived fields included (their inputs must be those of the call)."""

    def step(self, slots: np.ndarray, steps: int) -> None:
        """``steps`` more physics steps of ``slots`` alone, with the inputs they hold now."""

    def stop_at(self, steps: int) -> None:
        """End the call after its first ``steps`` physics steps: every slot and the world's
        clock put back there (as a repeat that stops early, with no episode left, leaves them)."""


class World(Protocol):
    """What the runner asks of a backend's world (the MuJoCo one: :class:`~internutopia.core.backend.mujoco.world.MujocoWorld`)."""

    env_num: int
    #: Grid origin of each slot. Shape (env_num, 3).
    origins: np.ndarray
    #: Changes whenever :meth:`place` moved slots between packs.
    version: int
    #: Simulated seconds since the world was built.
    time: float

    @property
    def built(self) -> bool:
        """True once the slots were placed."""

    def pack(self, slot: int) -> Pack | None:
        """The pack holding ``slot`` (``None`` for an empty slot): its model and ``(env_num, ...)`` state arrays."""

    def prepare(self, key: str, parts: Callable[[], list[Any]]) -> None:
        """Check that structure ``key`` can be placed (build what it needs ahead), changing no slot."""

    def place(self, assignments: dict[int, str | None], parts_of: Callable[[int], list[Any]]) -> set[str]:
        """Move each slot of ``assignments`` into the pack of its structure key; the keys of the packs changed."""

    def reset_slot_state(self, slot: int) -> None:
        """Put ``slot`` back to its model's rest state."""

    def slot_state(self, slot: int) -> dict[str, np.ndarray]:
        """A copy of ``slot``'s state arrays (``qpos``, ``qvel``, ``act``, ``ctrl``, ``mocap_pos``, ``mocap_quat``)."""

    def forward(self, slots: np.ndarray | None = None) -> None:
        """Recompute derived quantities after state writes for ``slots`` (all when ``None``)."""

    def step(self, steps: int = 1) -> None:
        """Advance every slot by ``steps`` physics steps in one call (nothing runs between them:
        the runner fuses the physics steps of an action repeat on which no controller, task or
        hook has anything to do)."""

    def rollout(self, steps: int, fields: tuple[str, ...]) -> Rollout | None:
        """:meth:`step`'s ``steps`` physics steps, recording the state ``fields`` (``'qpos'``)
        after each, with the same results; ``None`` where the backend does not (then nothing
        was advanced: step the usual way). For an action repeat whose tasks can read what
        happened on each of its steps afterwards (``CombinedStep.recorded``)."""

    def failed_slots(self) -> np.ndarray:
        """Slots whose simulation failed (diverged) in the last :meth:`step` call, each reported once, sorted."""

    def close(self) -> None:
        """Release everything the world holds."""
