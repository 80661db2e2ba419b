"""The Warp world: every env slot of the grid, packs of slots stepped by MuJoCo Warp on one device.

It is the MuJoCo world (``internutopia/core/backend/mujoco/world.py``) with another kind of
pack: slots are grouped by structure exactly as there (one compiled one-slot ``MjModel`` per
structure, parked and reused the same way), and each pack holds one MuJoCo Warp ``Model`` and one
``Data`` with a world per env slot (:class:`~internutopia.core.backend.warp.pack.WarpPack`).
Building, placing, the grid and the slots' env-local frames are the MuJoCo world's; stepping,
resets and the health check run on the device.

A structure whose model uses a MuJoCo feature MuJoCo Warp lacks fails when it is placed (or
prepared), with an error naming the feature and the slot; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.world import MujocoWorld, Pack
from internutopia.core.backend.parts import SlotPart
from internutopia.core.backend.warp.engine import load_engine, resolve_device
from internutopia.core.backend.warp.pack import UnsupportedFeature, WarpPack, unsupported_message, warn_overflows
from internutopia.core.config import SimConfig

__all__ = ['WarpWorld']

_NO_SLOTS = np.zeros(0, dtype=np.intp)


class WarpWorld(MujocoWorld):
    """The whole grid on MuJoCo Warp: a :class:`WarpPack` per structure in use, on ``sim.device``."""

    def __init__(self, sim: SimConfig, env_num: int, env_offset_size: float) -> None:
        super().__init__(sim, env_num, env_offset_size, threads=1)
        self._wp, self._mjw = load_engine()
        self.device = resolve_device(self._wp, getattr(sim, 'device', None))
        #: Slots found diverged (or overflowing a buffer) by the last step, not reported yet.
        self._failed: list[np.ndarray] = []
        #: Structures whose model MuJoCo Warp took: checked once, not once per slot (an upload to
        #: the device each time, about 27 ms on an H100: 4,096 slots of one structure spent 110 s).
        self._supported: set[str] = set()

    def _new_pack(self, key: str, model: mujoco.MjModel, slot: int) -> Pack:
        return WarpPack(key, model, self.env_num, self._wp, self._mjw, self.device, slot)

    def parked_pack_bytes(self, pack: Pack) -> float:
        """Bytes ``pack`` holds while parked: its device arrays (MuJoCo Warp's ``Model`` and
        ``Data``, contact and constraint buffers included, sized for every env slot) and its host
        copies, as allocated (the MuJoCo pack's CPU-batch estimate counts a fraction of them)."""
        if isinstance(pack, WarpPack):
            return pack.held_bytes()
        return super().parked_pack_bytes(pack)

    def prepare(self, key: str, parts: Callable[[], list[SlotPart]]) -> None:
        """As the MuJoCo world's, and check that MuJoCo Warp supports every feature of the model.

        Raises:
            ValueError: the parts do not load or compile, the state does not fit, or the model
                uses a feature MuJoCo Warp lacks (:class:`UnsupportedFeature`, naming it).
        """
        super().prepare(key, parts)
        model = self._models.get(key)
        if model is None or key in self._supported:
            return
        try:
            with self._wp.ScopedDevice(self.device):
                self._mjw.put_model(model)
        except NotImplementedError as exc:
            raise UnsupportedFeature(unsupported_message('this episode', exc, self._parts_lacking(parts))) from exc
        self._supported.add(key)

    def _parts_lacking(self, parts: Callable[[], list[SlotPart]]) -> list[str]:
        """The prefixes of the parts (scene, robots, objects) whose own model MuJoCo Warp refuses
        (only called once the whole model was refused, to say where the feature is)."""
        lacking = []
        for part in parts():
            try:
                model = part.spec.compile()
            except Exception:  # noqa: BLE001 - a part that needs the others to compile: not named
                continue
            try:
                with self._wp.ScopedDevice(self.device):
                    self._mjw.put_model(model)
            except NotImplementedError:
                lacking.append(part.prefix)
        return lacking

    def reset_slot_state(self, slot: int) -> None:
        """Put ``slot`` back to its model's rest state at the world time (its device world is
        reset with the next step or forward pass, together with every other slot reset by then)."""
        pack = self.pack(slot)
        if isinstance(pack, WarpPack):
            pack.reset_rows(np.array([slot]), self.time)

    def rollout(self, steps: int, fields: tuple[str, ...]) -> None:
        """Not on the device: ``None`` (the runner steps the usual way; a recorded call would
        copy every step's state back to the host)."""
        return None

    def step(self, steps: int = 1) -> None:
        """Advance every slot by ``steps`` physics steps on the device; diverged slots and slots
        whose step overflowed a buffer are reset to rest and kept for :meth:`failed_slots`."""
        for pack in self.packs.values():
            if not isinstance(pack, WarpPack) or not len(pack.slots):
                continue
            pack.step(steps)
            diverged, overflows = pack.failed_rows()
            if overflows:
                warn_overflows(overflows, pack.buffers)
                pack.grow_buffers()
            hit = np.union1d(diverged, np.fromiter(overflows, dtype=np.intp, count=len(overflows)))
            if len(hit):
                pack.reset_rows(hit, self.clock_after(steps))
                self._failed.append(hit)
        self._advance_clock(steps)

    def failed_slots(self) -> np.ndarray:
        """Slots whose simulation diverged (NaN, Inf or beyond ``mjMAXVAL`` in positions,
        velocities or accelerations, found on the device) or overflowed a contact or constraint
        buffer in the last :meth:`step`, sorted, each reported once; they were reset to rest."""
        if not self._failed:
            return _NO_SLOTS
        failed = np.unique(np.concatenate(self._failed))
        self._failed.clear()
        return failed

    def close(self) -> None:
        """Drop every pack and cached model, and free every pack's device arrays now: robots,
        controllers and sensors still refer to the packs while the env is held, so each pack
        lets go of its ``wdata``, ``wmodel`` and device scratch itself (:meth:`WarpPack.release`)."""
        for pack in [*self.packs.values(), *self._parked.values()]:
            if isinstance(pack, WarpPack):
                pack.release()
        self._failed.clear()
        self._supported.clear()
        super().close()
