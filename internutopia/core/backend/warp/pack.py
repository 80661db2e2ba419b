"""A pack on MuJoCo Warp: the slots of one structure as the worlds of one Warp ``Model``/``Data``.

World ``i`` of the pack's ``Data`` is env slot ``i`` (``nworld = env_num``, as the MuJoCo pack's
batch has a simulation per slot; worlds of slots in other packs idle at rest). The pack's
:class:`~internutopia.core.backend.state.StateArrays` are float64 host arrays of the documented
shapes, so every robot, controller and task works unchanged: before a step the state fields go to
the device (MuJoCo Warp computes in float32), after it the new state, the outputs and the bound
on-request fields come back. A reset of some slots writes their rows to the rest state on the host
and marks their worlds, which the next upload resets on the device in one masked call
(``mujoco_warp.reset_data``); no other world is touched.

What needs one slot at its current state (its contact list, body poses, a body's velocity, a
frame for the renderer) is computed on the host by CPU MuJoCo from the host copy of the slot's
state, as the MuJoCo pack does on a scratch ``MjData``.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import mujoco
import numpy as np

import internutopia.core.backend.state as state
from internutopia.core.backend.mujoco.lookup import MujocoLookup
from internutopia.core.backend.mujoco.visuals import DrawnState
from internutopia.core.backend.mujoco.world import Pack as MujocoPack
from internutopia.core.backend.mujoco.world import physics_dt_of
from internutopia.core.backend.warp.buffers import Buffers, buffer_overflow_mask, overflow_names, size_buffers
from internutopia.core.backend.warp.health import find_diverged
from internutopia.core.util.caller import caller_stacklevel
from internutopia.core.util.memory import check_slots_fit

__all__ = ['HostStates', 'UnsupportedFeature', 'WarpPack', 'WarpPackData', 'unsupported_message', 'warn_overflows']

#: State fields a step changes (brought back after it); the others only the user writes.
_STEPPED = ('qpos', 'qvel', 'act')
#: State fields moved to the device before a step (``time`` stays float64 on the host: float32
#: time would lose milliseconds within a day of simulated time).
_UPLOADED = ('qpos', 'qvel', 'act', 'ctrl', 'qfrc_applied', 'xfrc_applied', 'mocap_pos', 'mocap_quat')
#: Device arrays kept (the same allocations) when the buffers grow: those ``state_arrays()`` hands
#: out as views (``internutopia.core.backend.arrays.DEVICE_STATE_FIELDS``), and the time.
_KEPT_ON_GROWTH = (*_UPLOADED, 'sensordata', 'time')


class UnsupportedFeature(ValueError):
    """A slot's model uses a MuJoCo feature MuJoCo Warp does not have."""


class WarpPackData(state.StateArrays):
    """The :class:`~internutopia.core.backend.state.StateArrays` of a Warp pack: float64 host
    arrays, one row per env slot, copied to and from the device around each step."""

    __slots__ = ()


class WarpPack(MujocoPack):
    """The slots of one structure on MuJoCo Warp (the backend's
    :class:`~internutopia.core.backend.interface.Pack`).

    It shares the MuJoCo pack's host-side computations (:meth:`contacts`, :meth:`body_poses`,
    :meth:`body_velocity`, :meth:`contact_readings`), which read the host state; ``model`` is the
    host ``MjModel`` (for lookups and the CPU renderer), ``wmodel``/``wdata`` the device ones.
    """

    def __init__(self, key: str, model: mujoco.MjModel, env_num: int, warp: Any, mjw: Any, device: str, slot: int) -> None:
        # Not MujocoPack.__init__: that builds a CPU batch; this pack's simulations live on the device.
        check_slots_fit(env_num, _host_bytes_per_slot(model), 'the physics state of one structure')
        self.key = key
        self.model = model
        self.lookup = MujocoLookup(model)
        self.env_num = env_num
        self.device = device
        self._wp, self._mjw = warp, mjw
        self.substeps = max(1, int(model.opt.timestep and round(physics_dt_of(model) / model.opt.timestep)))
        self.physics_dt = physics_dt_of(model)
        self.slots = np.zeros(0, dtype=np.intp)
        self._step_ids = self.slots
        self._scratch: mujoco.MjData | None = None
        self._drawn: DrawnState | None = None  # see MujocoPack.drawn_data
        self._contact_columns: dict[str, tuple[int, int]] = {}
        #: The model's rest state (qpos0, at rest, mocap bodies where the model puts them).
        self._rest = mujoco.MjData(model)
        with warp.ScopedDevice(device):
            try:
                self.wmodel = mjw.put_model(model)
            except NotImplementedError as exc:
                raise UnsupportedFeature(unsupported_message(f'env {slot}', exc)) from exc
            self.wmodel.opt.warn_overflow = 0  # overflows are reported by the world, per slot
            self.buffers = size_buffers(model)
            self.wdata = self._make_data(self.buffers)
            self._diverged = warp.zeros(env_num, dtype=warp.int32)
            self._device_bytes: int | None = None  # (held_bytes: the device arrays' bytes, counted once)
            self._pending_reset = np.zeros(env_num, dtype=bool)
        #: The host states as the CPU renderer reads a MuJoCo batch (``get_data``): cameras, the
        #: overview and :meth:`mjdata` draw and measure a slot from its host copy.
        self.batch: Any = HostStates(self)
        self.data = WarpPackData()  # type: ignore[assignment]  # host arrays, not a batch's PackData
        for name in (*state.STATE_FIELDS, *state.OUTPUT_FIELDS):
            shape = (env_num,) if name == 'time' else (env_num, *getattr(self._rest, name).shape)
            self.data.bind(name, np.zeros(shape))
        self._bound: list[str] = list(state.OUTPUT_FIELDS)
        for name in _UPLOADED:
            getattr(self.data, name)[:] = getattr(self._rest, name)
        self.data.sensordata[:] = self._device(self.wdata.sensordata)

    def _make_data(self, buffers: Buffers) -> Any:
        return self._mjw.make_data(self.model, nworld=self.env_num, nconmax=buffers.nconmax, njmax=buffers.njmax)

    def _device(self, array: Any) -> np.ndarray:
        """A device array as a host array of the pack's per-slot shape (rotations flattened to 9)."""
        host = array.numpy()
        is_matrix = getattr(array.dtype, '_shape_', None) == (3, 3)  # a mat33 per element, not rows of 3-vectors
        return host.reshape(*host.shape[:-2], 9) if is_matrix else host

    def set_slots(self, slots: np.ndarray) -> None:
        """The pack holds ``slots`` from now on. The worlds of slots that left (their queue ran out,
        or they went to another structure's pack) are put at rest with no controls or applied
        forces, and idle there: MuJoCo Warp steps every world of the ``Data``, but each step starts
        a world that no slot of the pack holds from its host row, which stays at rest (only the
        pack's own slots' rows come back from the device)."""
        kept = np.asarray(sorted(int(s) for s in slots), dtype=np.intp)
        left = np.setdiff1d(self.slots, kept)
        self.slots = kept
        self._step_ids = None if len(self.slots) == self.env_num else self.slots
        if len(left):
            self._idle(left)

    def _idle(self, rows: np.ndarray) -> None:
        """Put the worlds of ``rows`` (no slot of the pack's) at rest, ``ctrl``, ``qfrc_applied``
        and ``xfrc_applied`` zero and mocap bodies where the model puts them, on the host and on
        the device (solver warm start and all), so views of the device state show them at rest too."""
        rest = self._rest  # (a fresh MjData: no controls, no applied forces)
        for name in _UPLOADED:
            getattr(self.data, name)[rows] = getattr(rest, name)
        self._pending_reset[rows] = True
        with self._wp.ScopedDevice(self.device):
            self._upload()

    # -- host <-> device ----------------------------------------------------------------------
    def reset_rows(self, slots: np.ndarray, time: float) -> None:
        """Put ``slots`` at the rest state: their host rows now, their device worlds (solver warm
        start and all) at the next upload, in one masked reset with every other slot reset with them."""
        rest = self._rest
        for name in _UPLOADED:
            getattr(self.data, name)[slots] = getattr(rest, name)
        self.data.time[slots] = time
        self._pending_reset[slots] = True

    def _upload(self) -> None:
        wp, data, host = self._wp, self.wdata, self.data
        if self._pending_reset.any():
            self._mjw.reset_data(self.wmodel, data, wp.array(self._pending_reset, dtype=wp.bool))
            self._pending_reset[:] = False
        for name in _UPLOADED:
            values = getattr(host, name)
            if values.size:
                getattr(data, name).assign(values.astype(np.float32, copy=False))
        data.time.assign(host.time.astype(np.float32))

    def _download(self, names: tuple[str, ...] | list[str], rows: np.ndarray | None = None) -> None:
        for name in names:
            values = self._device(getattr(self.wdata, name))
            target = getattr(self.data, name)
            if rows is None:
                target[...] = values.reshape(target.shape)
            else:
                target[rows] = values[rows].reshape(target[rows].shape)

    # -- the interface ------------------------------------------------------------------------
    def field(self, name: str) -> np.ndarray:
        """The ``(env_num, ...)`` host array of a derived ``Data`` field, bound on first use and
        brought back from the device after every step from then on."""
        array = self.data.bound(name)
        if array is None:
            source = getattr(self.wdata, name, None)
            if source is None:
                raise AttributeError(f'MuJoCo Warp data has no field {name!r}')
            array = np.array(self._device(source), dtype=np.float64)
            self.data.bind(name, array)
            self._bound.append(name)
            if len(self.slots):  # a field bound between steps describes the current state at once
                self.forward(self.slots)
        return array

    def step(self, steps: int = 1) -> None:
        """Advance every world by ``steps`` env steps (``substeps`` MuJoCo Warp steps each) on the device."""
        if not len(self.slots):
            return
        with self._wp.ScopedDevice(self.device):
            self._upload()
            for _ in range(self.substeps * steps):
                self._mjw.step(self.wmodel, self.wdata)
            find_diverged(self.wdata, self._diverged)
        # Only the pack's slots' rows come back: the others stay at rest on the host, and the next
        # upload starts their worlds from there again (they idle at rest, as on the MuJoCo backend).
        self._download(_STEPPED, rows=self._step_ids)
        self._download(self._bound, rows=self._step_ids)
        self.data.time[self.slots] += self.physics_dt * steps

    def forward(self, slots: np.ndarray) -> None:
        """Recompute the derived fields of ``slots`` at their current state (``mujoco_warp.forward``
        over every world; only the rows of ``slots`` come back)."""
        slots = np.unique(np.asarray(slots, dtype=np.intp))
        if not len(slots):
            return
        with self._wp.ScopedDevice(self.device):
            self._upload()
            self._mjw.forward(self.wmodel, self.wdata)
        self._download(self._bound, rows=slots)

    def device_arrays(self, names: tuple[str, ...] | list[str]) -> dict[str, Any]:
        """The device arrays of the state fields ``names`` (float32, a world per env slot), no copy
        made: the state as of the last step or forward pass (the env runs one after every reset,
        a slot's start after a divergence included). Writes to them are lost: each step starts
        from the host copy (``pack.data``)."""
        return {name: getattr(self.wdata, name) for name in names}

    def failed_rows(self) -> tuple[np.ndarray, dict[int, list[str]]]:
        """After a step: the pack's slots whose state diverged, and the slots whose step overflowed
        a buffer with the buffers' names. Clears the device's overflow flags."""
        flags = self._diverged.numpy()
        diverged = flags[self.slots] != 0
        if self._step_ids is not None and np.count_nonzero(flags) > np.count_nonzero(diverged):
            # A world no slot holds diverged (it idles at rest): start it over at the next upload.
            idle = np.ones(self.env_num, dtype=bool)
            idle[self.slots] = False
            self._pending_reset[idle & (flags != 0)] = True
        overflow = self.wdata.overflow.numpy()
        hit = self.slots[(overflow[self.slots] & buffer_overflow_mask()) != 0]
        overflows = {int(slot): overflow_names(int(overflow[slot])) for slot in hit}
        if overflow.any():
            self.wdata.overflow.zero_()
        return self.slots[diverged], overflows

    def grow_buffers(self) -> None:
        """Double the contact and constraint capacities: a new device ``Data`` holding every
        slot's current state (the solver's warm start starts over). The state arrays
        (:data:`_KEPT_ON_GROWTH`) are the old ``Data``'s, the same device allocations, so views
        of them (``Env.state_arrays``) taken before the growth follow the steps after it."""
        self.buffers = self.buffers.doubled()
        with self._wp.ScopedDevice(self.device):
            old, new = self.wdata, self._make_data(self.buffers)
            for name in _KEPT_ON_GROWTH:
                kept = getattr(old, name)
                if kept.shape == getattr(new, name).shape and kept.dtype == getattr(new, name).dtype:
                    setattr(new, name, kept)
            self.wdata = new
            del old
            self._device_bytes = None
            self._pending_reset[:] = False
            self._upload()

    def held_bytes(self) -> float:
        """Bytes the pack holds: its device arrays (MuJoCo Warp's ``Model`` and ``Data``, the
        health flags) and its host copies of the state, outputs and bound fields. 0 once released."""
        if not hasattr(self, 'wdata'):
            return 0.0
        if self._device_bytes is None:
            self._device_bytes = device_array_bytes(self.wdata, self.wmodel, self._diverged)
        names = dict.fromkeys((*state.STATE_FIELDS, *state.OUTPUT_FIELDS, *self._bound))
        host = sum(getattr(self.data, name).nbytes for name in names)
        return float(self._device_bytes + host + self._pending_reset.nbytes)

    def release(self) -> None:
        """Drop the pack's device objects (``wmodel``, ``wdata``, the health flags) and the
        renderer's view of its host states, so their memory is freed now, not when the last
        robot or controller that refers to the pack goes. The pack is unusable afterwards."""
        for name in ('wdata', 'wmodel', '_diverged'):
            self.__dict__.pop(name, None)
        self.batch = None  # (HostStates refers back to the pack: a reference cycle)
        self._scratch = None
        self._drawn = None
        self._device_bytes = 0

    def set_servo_gains(self, actuators: np.ndarray, kp: np.ndarray | None = None, kv: np.ndarray | None = None) -> None:
        """Set position-servo gains of ``actuators`` for every slot: on the host model (lookups,
        the renderer) and on the device model."""
        super().set_servo_gains(actuators, kp, kv)
        with self._wp.ScopedDevice(self.device):
            self.wmodel.actuator_gainprm.assign(self.model.actuator_gainprm[None].astype(np.float32))
            self.wmodel.actuator_biasprm.assign(self.model.actuator_biasprm[None].astype(np.float32))


class HostStates:
    """A Warp pack's host state rows, read the way the CPU renderer reads a ``mujoco.batch.Batch``."""

    def __init__(self, pack: WarpPack) -> None:
        self.pack = pack
        self.nsim = pack.env_num

    def get_data(self, slot: int, data: mujoco.MjData) -> None:
        """Write ``slot``'s state (time, positions, velocities, controls, mocap poses, applied
        forces) into ``data``, a host ``MjData`` of the pack's model."""
        host = self.pack.data
        data.time = float(host.time[slot])
        for name in _UPLOADED:
            getattr(data, name)[...] = getattr(host, name)[slot]


def unsupported_message(who: str, error: Exception, parts: list[str] | tuple[str, ...] = ()) -> str:
    """The error for a model MuJoCo Warp refuses (``put_model``'s ``NotImplementedError`` names the
    feature), naming the ``parts`` (prefixes) found to use it where they are known."""
    users = f"its part(s) {', '.join(repr(p) for p in parts)}" if parts else 'its scene, robots or objects'
    return (f"{who} cannot run on the warp backend: {users} use a MuJoCo feature MuJoCo Warp "
            f"lacks ({str(error).rstrip('.')}); run it with SimConfig(backend='mujoco')")


def device_array_bytes(*objects: Any) -> int:
    """Bytes of the distinct Warp arrays held by ``objects`` (Warp arrays, or MuJoCo Warp's
    ``Model``/``Data`` and the dataclasses within them, such as ``Data.contact``)."""
    import warp

    seen: set[int] = set()
    total = 0

    def visit(value: Any, depth: int) -> None:
        nonlocal total
        if isinstance(value, warp.array):
            if value.ptr and value.ptr not in seen:
                seen.add(value.ptr)
                total += int(value.capacity)
        elif depth < 3 and dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                visit(getattr(value, field.name, None), depth + 1)

    for value in objects:
        visit(value, 0)
    return total


def _host_bytes_per_slot(model: mujoco.MjModel) -> float:
    """Estimated host bytes per slot: the host copies of the state and outputs."""
    per_slot = 1 + 2 * model.nq + 3 * model.nv + model.na + model.nu + 6 * model.nbody + 7 * model.nmocap + model.nsensordata
    return 8.0 * per_slot


def warn_overflows(overflows: dict[int, list[str]], buffers: Buffers) -> None:
    """Say which slots' steps overflowed which buffers (those slots' episodes end as diverged)."""
    buffers_hit = sorted({name for names in overflows.values() for name in names})
    warnings.warn(f'warp backend: the step of env(s) {sorted(overflows)} overflowed MuJoCo Warp\'s {", ".join(buffers_hit)} '
                  f'(nconmax={buffers.nconmax}, njmax={buffers.njmax} per world); their episodes end as diverged and '
                  f'the buffers of their structure are doubled', RuntimeWarning, stacklevel=caller_stacklevel())
