"""A MuJoCo pack: the env slots that share one structure, as one ``mujoco.batch.Batch``.

:class:`Pack` holds a structure's compiled one-slot model and a simulation per env slot (see
:mod:`internutopia.core.backend.mujoco.world`, which places slots in packs); :class:`PackData` is
its typed view of the batch's ``(env_num, ...)`` arrays.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple

import mujoco
import mujoco.batch
import numpy as np

import internutopia.core.backend.state as state
from internutopia.core.backend.model import ContactReadings, Contacts
from internutopia.core.backend.mujoco.footprint import pack_bytes_per_slot, pack_fixed_bytes
from internutopia.core.backend.mujoco.forked import guard_after_fork
from internutopia.core.backend.mujoco.lookup import MujocoLookup
from internutopia.core.backend.mujoco.visuals import DrawnState, drawn_model, pose_for_drawing
from internutopia.core.util.memory import check_slots_fit

__all__ = ['CONTACT_SLOTS', 'OUTPUT_FIELDS', 'STATE_FIELDS', 'Pack', 'PackData', 'PackRollout', 'physics_dt_of']

#: Batch state fields bound on every pack (live views of each slot's state row): the
#: backend-neutral ones (:data:`internutopia.core.backend.state.STATE_FIELDS`) and two of MuJoCo's own.
STATE_FIELDS = (*state.STATE_FIELDS, 'qacc_warmstart', 'userdata')
#: ``userdata[_ALIVE]`` of every placed slot is 1; MuJoCo zeroes it when it resets a simulation
#: that blew up (see :meth:`MujocoWorld.failed_slots`).
_ALIVE = 0
#: Derived fields bound on every pack (refreshed by the batch after each call); others are
#: bound on first use (:meth:`Pack.field`), since each bound field is copied out on every step.
OUTPUT_FIELDS = state.OUTPUT_FIELDS
#: Most slots a forward pass runs on the calling thread (see :meth:`Pack.forward`).
INLINE_FORWARD_SLOTS = 4
_INTEGRATION = mujoco.mjtState.mjSTATE_INTEGRATION
_TIME = int(mujoco.mjtState.mjSTATE_TIME)  # (a rollout records time as this state spec: it is no MjData array)
#: Contacts each robot's contact sensors report (see :meth:`MujocoWorld._add_contact_sensors`).
CONTACT_SLOTS = 8


class PackData(state.StateArrays):
    """The :class:`~internutopia.core.backend.state.StateArrays` of a MuJoCo pack: every field
    a live array of the pack's ``mujoco.batch.Batch`` (``Batch.bind``), plus two of MuJoCo's own
    state fields the world keeps (not for code outside the backend).

    Attributes:
        qacc_warmstart: the solver's warm start. Shape (env_num, nv).
        userdata: user data; column 0 is the world's divergence mark. Shape (env_num, nuserdata).

    Any other ``MjData`` field is bound on first use with :meth:`Pack.field` (each bound field is
    copied out on every step, so only what is read is bound), and then also read as an attribute.

    Reading a derived field (``sensordata``, the on-request fields, a backend field) as an
    attribute first runs the forward passes :meth:`Pack.forward` left pending, so what is read is
    always what an immediate forward pass would have written (see :meth:`Pack.forward`).
    """

    __slots__ = ('qacc_warmstart', 'userdata', '_pending')

    qacc_warmstart: np.ndarray
    userdata: np.ndarray

    def __init__(self, batch: mujoco.batch.Batch) -> None:
        #: The pack's flush of its pending forward passes while any are pending, else ``None``.
        self._pending: Callable[[], None] | None = None
        super().__init__()
        for name in (*STATE_FIELDS, *OUTPUT_FIELDS):
            setattr(self, name, batch.bind(name))

    def raw(self, name: str) -> np.ndarray | None:
        """The array of field ``name`` if it is bound, else ``None``, without running pending
        forward passes (the pack's own access, when it writes them)."""
        slot = _FIELD_SLOTS.get(name)
        if slot is None:
            return self._extra.get(name)
        try:
            return slot.__get__(self, PackData)
        except AttributeError:
            return None

    def __getattr__(self, name: str) -> np.ndarray:
        if not name.startswith('_') and self._pending is not None:
            self._pending()
        return super().__getattr__(name)


def _derived_field(name: str) -> property:
    """A derived field of :class:`PackData` read through its slot after the pending forward passes."""
    slot = _FIELD_SLOTS[name]

    def read(self: PackData) -> np.ndarray:
        if self._pending is not None:
            self._pending()
        return slot.__get__(self, PackData)

    return property(read, slot.__set__, doc=f'``{name}``, with any pending forward pass run first.')


#: The storage of each declared field of :class:`~internutopia.core.backend.state.StateArrays`.
_FIELD_SLOTS = {name: state.StateArrays.__dict__[name] for name in state.StateArrays.__slots__ if not name.startswith('_')}
for _name in (*OUTPUT_FIELDS, *state.ON_REQUEST_FIELDS):
    setattr(PackData, _name, _derived_field(_name))
del _name


class PackRollout(NamedTuple):
    """What :meth:`Pack.rollout` recorded: each field's ``(env_num, steps, ...)`` array, row by slot
    (``fields[name][slot, k]``: after the call's physics step ``k + 1``), and the start state of
    the pack's slots (for :meth:`rewind`); ``clock(steps)`` sets the world's clock to the call's
    start plus ``steps`` physics steps (for :meth:`stop_at`; the world's rollout gives it). The
    MuJoCo backend's :class:`~internutopia.core.backend.interface.Rollout`."""

    pack: Pack
    steps: int
    fields: dict[str, np.ndarray]
    start: np.ndarray
    clock: Callable[[int], None] | None = None

    def rewind(self, slots: np.ndarray, steps: int) -> None:
        """Put ``slots`` where the call left them after its first ``steps`` physics steps (see :meth:`Pack.rewind`)."""
        self.pack.rewind(self, slots, steps)

    def stop_at(self, steps: int) -> None:
        """End the call after its first ``steps`` physics steps: every slot rewound there, the world clock too."""
        if steps < self.steps:
            self.pack.rewind(self, self.pack.slots, steps)
        if self.clock is not None:
            self.clock(steps)

    def step(self, slots: np.ndarray, steps: int) -> None:
        """``steps`` more physics steps of ``slots`` alone, with the inputs they hold now."""
        self.pack.step_slots(slots, steps)


class Pack:
    """The slots that share one structure: a compiled one-slot model and their batch of states
    (the MuJoCo backend's :class:`~internutopia.core.backend.interface.Pack`).

    ``lookup`` (a :class:`~internutopia.core.backend.mujoco.lookup.MujocoLookup`) answers names,
    ids and constants of the model; ``data`` (a :class:`PackData`) holds ``(env_num, ...)``
    arrays, one row per env slot (rows of other packs' slots are unused): the state fields of :data:`STATE_FIELDS` are live views (a write is that slot's state
    at the next step), the fields of :data:`OUTPUT_FIELDS` are refreshed after each step; bind any
    other ``MjData`` field with :meth:`field`. ``slots`` are the slots holding this structure.

    A step is ``substeps`` calls of ``mj_step`` (one, unless a part of the slot asked for a
    shorter physics step than ``physics_dt``: the model's timestep is then ``physics_dt /
    substeps``), so, as with ``mj_step``, the state (``qpos``, ``qvel``, mocap poses)
    is the new one and derived fields (``xpos``, ``sensordata``, contacts) describe the state at the
    start of the step. Poses are therefore read from the state (free joints' ``qpos``, mocap poses),
    and :meth:`mjdata` recomputes kinematics for what is drawn and contacts where they are needed. (Making derived fields current
    would cost a second position stage per step whenever a controller moves a mocap body.)
    """

    #: Whether :meth:`forward` of a few slots waits for a read of a derived field (see there).
    defer_forward = True

    def __init__(self, key: str, model: mujoco.MjModel, env_num: int, threads: int) -> None:
        check_slots_fit(env_num, pack_bytes_per_slot(model), 'the physics state of one structure', pack_fixed_bytes(model, threads))
        self.key = key
        #: The compiled one-slot model (the backend's own; code outside the backend uses :attr:`lookup`).
        self.model = model
        self.lookup = MujocoLookup(model)
        # Not persistent: each thread loads a slot's state row into its one MjData, steps it and
        # saves it back, so the physics works in a cache-sized MjData per core (faster than one
        # MjData per slot, and far less memory). Derived fields are bound outputs or recomputed.
        self.batch = mujoco.batch.Batch(model, env_num, nthread=threads, persistent=False)
        self.data = PackData(self.batch)
        guard_after_fork(self)  # (a forked child never steps nor frees this batch: see .forked)
        self.slots = np.zeros(0, dtype=np.intp)
        self._step_ids: np.ndarray | None = self.slots
        #: Every slot's divergence mark (a view), and its bytes when every slot of the pack is
        #: alive: the per-step check compares bytes, which costs far less than a numpy reduction.
        self._alive_column = self.data.userdata[:, _ALIVE]
        self._all_alive = b''
        self._scratch: mujoco.MjData | None = None
        self._drawn: DrawnState | None = None  # see drawn_data
        self._rest: np.ndarray | None = None  # see rest_state
        self._derived: list[tuple[str, np.ndarray]] | None = None  # see _derived_fields
        self._forward_data: mujoco.MjData | None = None  # see run_pending
        #: Slot -> its state row when :meth:`forward` was called, for the passes not run yet.
        self._pending_rows: dict[int, np.ndarray] = {}
        self._pending_lock = threading.Lock()
        #: Per part prefix, the ``sensordata`` columns of its two contact sensors.
        self._contact_columns: dict[str, tuple[int, int]] = {}
        #: ``mj_step`` calls per env step (see :meth:`MujocoWorld.compile_slot`).
        self.substeps = max(1, int(model.opt.timestep and round(physics_dt_of(model) / model.opt.timestep)))

    @property
    def time(self) -> float:
        """Simulated time of this pack's slots (every slot keeps the one world clock)."""
        return float(self.data.time[self.slots[0]]) if len(self.slots) else 0.0

    def set_slots(self, slots: np.ndarray) -> None:
        self.slots = np.asarray(sorted(int(s) for s in slots), dtype=np.intp)
        # A call over every simulation takes no id list; a subset is passed as one.
        self._step_ids = None if len(self.slots) == self.batch.nsim else self.slots
        self._all_alive = np.ones(len(self.slots)).tobytes()

    def field(self, name: str) -> np.ndarray:
        """The ``(env_num, ...)`` array of any ``MjData`` field, bound on first use."""
        self.run_pending()  # (in the order they were asked for: those passes, then this one)
        array = self.data.raw(name)
        if array is None:
            array = self.batch.bind(name)
            self.data.bind(name, array)
            self._derived = None
            if len(self.slots):  # a derived field bound between calls is zero until the next call
                self.batch.forward(self.slots, stage=mujoco.mjtStage.mjSTAGE_VEL)
        return array

    def step(self, steps: int = 1) -> None:
        """Advance every slot of the pack by ``steps`` physics steps (``substeps`` calls of
        ``mj_step`` each) in one batch call, on every core."""
        if len(self.slots):
            self.drop_pending_forwards()
            self.batch.step(self._step_ids, nstep=self.substeps * steps)

    def drop_pending_forwards(self) -> None:
        """Forget the forward passes :meth:`forward` left pending: a step is coming, which
        computes every derived field of the pack's slots afresh (see :meth:`forward`)."""
        if self._pending_rows:
            with self._pending_lock:
                self._pending_rows.clear()
                self.data._pending = None

    def rollout(self, steps: int, fields: tuple[str, ...]) -> PackRollout | None:
        """:meth:`step`'s ``steps`` physics steps in one batch call that records the state fields
        ``fields`` (such as ``'qpos'``) after each: the same motion and derived fields as
        :meth:`step`, bit for bit.

        MuJoCo stops a simulation in a recorded call as soon as any of its warnings fires (where
        :meth:`step` goes on: a divergence, for one, resets it to rest). Then nothing of the call
        is kept: every slot is put back as it was, and ``None`` says to step the usual way (as
        for a pack of no slot, which has nothing to record).
        """
        if not len(self.slots):
            return None
        self.drop_pending_forwards()
        ids = self._step_ids
        start = self.batch.state[self.slots] if ids is not None else self.batch.state.copy()
        began = self.data.time[self.slots]  # (each slot's clock: a copy, rows in the record's order)
        substeps = self.substeps
        record = self.batch.rollout(substeps * steps, record=[_TIME, *fields], ids=ids)
        times = record[_TIME][..., 0]
        # (a simulation a warning stopped repeats its last record: its clock stands still)
        if not (times[:, 0] > began).all() or not (np.diff(times, axis=1) > 0).all():
            self.batch.state[self.slots] = start if ids is not None else start[self.slots]
            return None
        recorded = {}
        for name in fields:
            per_step = record[name][:, substeps - 1::substeps] if substeps > 1 else record[name]
            if ids is not None:  # (a pack of some slots: rows by slot, as every other array of the pack)
                by_slot = np.zeros((self.batch.nsim, *per_step.shape[1:]))
                by_slot[ids] = per_step
                per_step = by_slot
            recorded[name] = per_step
        return PackRollout(self, steps, recorded, start)

    def rewind(self, rollout: PackRollout, slots: np.ndarray, steps: int) -> None:
        """Put ``slots`` (of this pack, distinct) where ``rollout`` left them after its first
        ``steps`` physics steps: back to its start, then those steps again with the inputs they
        hold (unchanged since the call: then bit for bit the call's, derived fields included)."""
        ids = np.asarray(slots, dtype=np.intp)
        rows = np.searchsorted(self.slots, ids) if self._step_ids is not None else ids
        self.batch.state[ids] = rollout.start[rows]
        if steps:
            self.batch.step(ids, nstep=self.substeps * steps)

    def step_slots(self, slots: np.ndarray, steps: int) -> None:
        """:meth:`step` of ``slots`` alone (of this pack, distinct); the other slots stay as they are."""
        if steps:
            self.batch.step(np.asarray(slots, dtype=np.intp), nstep=self.substeps * steps)

    def rest_state(self) -> np.ndarray:
        """The model's rest state (``mj_resetData``) as a row of the batch's state (made once)."""
        if self._rest is None:
            data = mujoco.MjData(self.model)
            self._rest = np.empty(self.batch.nstate)
            mujoco.mj_getState(self.model, data, self._rest, mujoco.mjtState.mjSTATE_INTEGRATION)
        return self._rest

    def forward(self, slots: np.ndarray) -> None:
        """Recompute the derived fields of ``slots`` (distinct) after their state was written (``mj_forward``).

        A few slots (a reset's, usually one or two) are computed when first needed: their state
        rows are kept as they are now, and the forward passes of those rows run when a derived
        field is next read through :attr:`data` or :meth:`field`, and not at all when the next
        step comes first (a step computes every derived field of its slots afresh). A reset whose
        task and first observation read no derived field (the walking robots': state only) so
        costs no forward pass; whoever reads one reads what the forward pass at the call would
        have written, bit for bit, whatever was written to the state since. (An array of a
        derived field held from before the call is refreshed by such a read, or by the step.)

        These passes run on the calling thread: handing a few slots to the batch's pool wakes its
        threads, which costs more than their forward passes (about 10 us each for an H1), and far
        more on a machine whose other cores are busy (a pool thread then waits for one: 100-300 us
        measured). More slots than :data:`INLINE_FORWARD_SLOTS` (a whole world's first reset) go
        to the pool at once. The results are the batch's, bit for bit. ``defer_forward = False``
        (on the class or one pack) runs every pass at the call.
        """
        slots = np.asarray(slots, dtype=np.intp)  # (distinct and sorted: the world's forward passes them so)
        if len(slots) > INLINE_FORWARD_SLOTS:
            with self._pending_lock:
                for slot in slots.tolist():  # (their pending passes would compute an older state)
                    self._pending_rows.pop(slot, None)
                if not self._pending_rows:
                    self.data._pending = None
            self.batch.forward(slots)
            return
        state = self.batch.state
        with self._pending_lock:
            for slot in slots.tolist():
                self._pending_rows[slot] = state[slot].copy()
            self.data._pending = self.run_pending
        if not self.defer_forward:
            self.run_pending()

    def run_pending(self) -> None:
        """Run the forward passes :meth:`forward` left pending (see there), on the calling thread."""
        with self._pending_lock:
            if not self._pending_rows:
                return
            pending = self._pending_rows
            self._pending_rows = {}
            self.data._pending = None
            model = self.model
            if self._forward_data is None:  # (its own: the render threads use the other scratch)
                self._forward_data = mujoco.MjData(model)
            data = self._forward_data
            derived = self._derived_fields()
            for slot, row in pending.items():
                mujoco.mj_setState(model, data, row, _INTEGRATION)
                mujoco.mj_forward(model, data)
                for name, array in derived:
                    array[slot] = getattr(data, name)

    def _derived_fields(self) -> list[tuple[str, np.ndarray]]:
        """The bound fields a forward pass computes (every bound field but the state's), with writable views of their arrays."""
        if self._derived is None:
            names = [name for name in (*OUTPUT_FIELDS, *state.ON_REQUEST_FIELDS, *self.data.extra_names())
                     if name not in STATE_FIELDS]
            self._derived = [(name, _writable(array)) for name in names if (array := self.data.raw(name)) is not None]
        return self._derived

    def mjdata(self, slot: int, contacts: bool = False) -> mujoco.MjData:
        """A scratch ``MjData`` holding ``slot``'s state with body, geom, camera and light poses
        computed at it (what drawing reads is :meth:`drawn_data`), and with ``contacts`` its
        contact list too; overwritten by the next call for any slot of the pack.
        """
        if self._scratch is None:
            self._scratch = mujoco.MjData(self.model)
        data = self._scratch
        self.batch.get_data(int(slot), data)
        pose_for_drawing(self.model, data)
        if contacts:
            mujoco.mj_collision(self.model, data)
        return data

    @property
    def drawn_model(self) -> mujoco.MjModel:
        """The model that draws this pack's slots: :attr:`model`, or the full model where the
        physics model was compiled without its visuals (:mod:`~internutopia.core.backend.mujoco.visuals`)."""
        return drawn_model(self.model)

    def drawn_data(self, slot: int) -> mujoco.MjData:
        """``slot``'s state posed in :attr:`drawn_model`'s own ``MjData`` (what the overview
        draws; :class:`~internutopia.core.backend.mujoco.visuals.DrawnState`); overwritten by the
        next call for any slot of the pack."""
        drawn = self._drawn
        if drawn is None:
            drawn = self._drawn = DrawnState(self)
        return drawn.load(slot)

    # -- computations at one slot's current state (see interface.Pack) ------------------------------
    def contacts(self, slot: int) -> Contacts:
        """``slot``'s contact list at its current state (a collision pass on a scratch copy)."""
        data = self.mjdata(slot, contacts=True)
        n = data.ncon
        contact = data.contact
        return Contacts(geom=contact.geom[:n], normal=contact.frame[:n, :3], position=contact.pos[:n], distance=contact.dist[:n])

    def contact_readings(self, prefix: str, slots: np.ndarray) -> ContactReadings:
        """The contact summary of the part attached under ``prefix`` (its two contact sensors, see
        :meth:`MujocoWorld._add_contact_sensors`) for ``slots``, as the last step found it."""
        columns = self._contact_columns.get(prefix)
        if columns is None:
            columns = self._contact_columns[prefix] = (self.lookup.sensor(f'{prefix}contacts').adr,
                                                       self.lookup.sensor(f'{prefix}static_contacts').adr)
        every, static = columns
        readings = self.data.sensordata[slots]
        # Each of the CONTACT_SLOTS entries of the first sensor: the count found, then the normal.
        contacts = readings[:, every:every + 4 * CONTACT_SLOTS].reshape(len(readings), CONTACT_SLOTS, 4)
        return ContactReadings(count=contacts[:, 0, 0], static_count=readings[:, static], normal=contacts[:, :, 1:])

    def body_poses(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """Every body's env-local position ``(nbody, 3)`` and wxyz orientation ``(nbody, 4)`` at
        ``slot``'s current state (copies)."""
        data = self.mjdata(slot)
        return data.xpos.copy(), data.xquat.copy()

    def body_velocity(self, slot: int, body: int) -> np.ndarray:
        """Velocity of body ``body``'s frame in ``slot`` at its current state: angular then
        linear, world axes (``mj_objectVelocity``). Shape (6,)."""
        data = self.mjdata(slot)
        mujoco.mj_comVel(self.model, data)
        out = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, data, mujoco.mjtObj.mjOBJ_BODY, int(body), out, 0)
        return out

    def set_servo_gains(self, actuators: np.ndarray, kp: np.ndarray | None = None, kv: np.ndarray | None = None) -> None:
        """Set position-servo stiffness ``kp`` and damping ``kv`` of ``actuators`` (ids), for every
        slot of the pack (they share the model). ``None`` keeps that gain."""
        actuators = np.asarray(actuators, dtype=np.intp)
        if kp is not None:
            self.model.actuator_gainprm[actuators, 0] = kp
            self.model.actuator_biasprm[actuators, 1] = -np.asarray(kp, dtype=float)
        if kv is not None:
            self.model.actuator_biasprm[actuators, 2] = -np.asarray(kv, dtype=float)


def _writable(array: np.ndarray) -> np.ndarray:
    """A writable view of a batch's bound derived field (read-only to everyone else: only the
    batch, and :meth:`Pack.forward` in its place, write it)."""
    view = array.view()
    view.flags.writeable = True
    return view


#: Name of the numeric field recording a compiled slot model's env step (``physics_dt``).
_PHYSICS_DT_FIELD = 'internutopia_physics_dt'


def physics_dt_of(model: mujoco.MjModel) -> float:
    """The env step (``physics_dt``) a slot model was compiled for (its timestep without substeps)."""
    try:
        return float(model.numeric(_PHYSICS_DT_FIELD).data[0])
    except KeyError:
        return float(model.opt.timestep)

