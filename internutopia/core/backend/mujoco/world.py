"""The MuJoCo world: every env slot of the grid, stepped on every core by ``mujoco.batch``.

Slots whose episodes share a structure (same scene, robots and objects; see
:func:`internutopia.core.scene.structure_key`) share a :class:`Pack`: one compiled *one-slot*
model (the slot's parts attached at the local origin, each under its own name prefix) and one
``mujoco.batch.Batch`` with a simulation per env slot, simulation ``i`` being slot
``i``. The batch steps the pack's slots on a C thread pool over all cores, with no Python per
slot; its arrays are ``(env_num, ...)`` and every slot of a pack has the same model ids, so the
entities of a pack read and write them with one numpy index per step.

Slots are separate simulations, so they never touch each other whatever the robots do, and the
state of a slot is positions in its own frame: configs and observations are env-local (``docs/contract.md``)
with no offset arithmetic. The grid exists where it is seen: the overview render draws slot ``i``
at its origin (:func:`slot_origins`).

A new structure compiles one small model (cached, so a structure seen before costs no compile);
a slot changing structure moves from one pack to another, and no other slot is touched. A pack
no slot holds any more is parked, batch and all (up to a memory budget), and taken up again when
its structure comes back: episodes of mixed structures allocate nothing once each structure has
been seen, so the process's memory stays flat (``tests/test_soak.py``).
"""

from __future__ import annotations

import ctypes
import math
import weakref
from collections import OrderedDict
from collections.abc import Callable

import mujoco
import numpy as np

from internutopia.core.backend.mujoco.footprint import compile_peak_bytes, pack_bytes, pack_bytes_per_slot, pack_fixed_bytes, renderer_bytes
from internutopia.core.backend.mujoco.pack import _ALIVE, _PHYSICS_DT_FIELD, CONTACT_SLOTS, Pack, PackData, PackRollout, physics_dt_of
from internutopia.core.backend.mujoco.visuals import compile_physics, discarded_visuals, drawn_bytes, drawn_model, when_drawn
from internutopia.core.backend.parts import SlotPart
from internutopia.core.config import SimConfig
from internutopia.core.grid import grid_columns, slot_origins
from internutopia.core.util.cpus import usable_cpus
from internutopia.core.util.memory import check_slots_fit

__all__ = ['CONTACT_SLOTS', 'MujocoWorld', 'Pack', 'PackData', 'SlotPart', 'physics_dt_of']

#: Most compiled one-slot models kept for structures no slot holds any more.
_MODEL_CACHE_SIZE = 16
#: Bytes of batches kept for structures no slot holds any more (see :meth:`MujocoWorld.place`).
_PARKED_BYTES = 64 * 2 ** 20
_NO_SLOTS = np.zeros(0, dtype=np.intp)
_NO_SLOTS.flags.writeable = False


def _return_freed_memory() -> None:
    """Give the memory a compile freed back to the OS (glibc keeps it otherwise: about 120 MB for
    an H1, which matters when many single-slot processes run side by side)."""
    try:
        ctypes.CDLL('libc.so.6').malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _strip_part(spec: mujoco.MjSpec) -> None:
    """Drop a part's lights (the world has one sun).

    Planes keep their size: robot cameras draw a slot's ground to its own extent or the horizon,
    and the overview cuts it to the slot's cell when drawing (``render.scene.RenderModel``).
    """
    for light in list(spec.lights):
        spec.delete(light)


#: Up to this many slots, :meth:`MujocoWorld.forward` sorts them in Python.
_FEW_SLOTS = 16

def _weak_drawn_counter(world: MujocoWorld) -> Callable[[mujoco.MjModel], None]:
    """``world``'s count of a drawn model's compile, holding the world weakly: the hook is kept
    beside the model (a global table), and a strong reference there would keep a closed world
    and its packs alive until its model's looks were drawn, if ever."""
    world_ref = weakref.ref(world)

    def count(drawn: mujoco.MjModel) -> None:
        alive = world_ref()
        if alive is not None:
            alive._count_drawn_compile(drawn)

    return count


class MujocoWorld:
    """The whole grid: a :class:`Pack` per structure in use, and the pack of every slot."""

    def __init__(self, sim: SimConfig, env_num: int, env_offset_size: float, threads: int | None = None) -> None:
        self.sim = sim
        self.env_num = env_num
        self.offset = env_offset_size
        self.origins = slot_origins(env_num, env_offset_size)
        self.threads = max(1, threads if threads is not None else usable_cpus())
        #: Packs by structure key.
        self.packs: dict[str, Pack] = {}
        #: Structure key of every slot (``None``: empty).
        self.slot_keys: list[str | None] = [None] * env_num
        self.compile_count = 0
        #: Bumped by every :meth:`place`: caches of which slot is in which pack compare it.
        self.version = 0
        self.time = 0.0
        self._models: OrderedDict[str, mujoco.MjModel] = OrderedDict()
        #: Packs no slot holds, kept (most recent last) so a structure that comes back reuses its
        #: batch: mixed structures would otherwise allocate and free batches all the time.
        self._parked: OrderedDict[str, Pack] = OrderedDict()
        #: The most memory (bytes) the world's structures were estimated to take at once so far:
        #: compiled models, compiles' peaks, packs (see :mod:`~internutopia.core.backend.mujoco.footprint`).
        self.estimated_peak_bytes = 0.0
        self._renderer_bytes = 0.0
        #: Whether physics models keep their visual geoms whatever their structure (everything that
        #: draws, the interactive viewer included, draws the drawn model, so by default only a
        #: structure with a sensor that reads geometry does: :mod:`~internutopia.core.backend.mujoco.visuals`;
        #: tests set it to compare the two).
        self.keep_visuals = False

    def held_bytes_estimate(self) -> float:
        """Estimated bytes the world's structures hold now: the compiled models it keeps and the
        packs, in use or parked."""
        packs = [*self.packs.values(), *self._parked.values()]
        models = [*self._models.values(), *(pack.model for pack in packs)]
        models_bytes = sum(float(model.nbuffer) + drawn_bytes(model) for model in models)
        return self._renderer_bytes + models_bytes + sum(pack_bytes(pack.model, self.env_num, self.threads) for pack in packs)

    @property
    def built(self) -> bool:
        """True once the slots were placed (even if placed empty)."""
        return self.version > 0

    def pack(self, slot: int) -> Pack | None:
        """The pack holding ``slot`` (``None`` for an empty slot)."""
        key = self.slot_keys[slot]
        return self.packs[key] if key is not None else None

    # ----------------------------------------------------------------------------------------
    # building
    def _world_spec(self) -> mujoco.MjSpec:
        spec = mujoco.MjSpec()
        spec.modelname = 'internutopia_slot'
        spec.nuserdata = _ALIVE + 1
        spec.compiler.degree = False
        spec.option.timestep = self.sim.physics_dt
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        side = self.offset * grid_columns(self.env_num)
        spec.stat.extent = max(self.offset, 1.0)
        spec.stat.center = [0.0, 0.0, 0.0]
        spec.visual.global_.offwidth = 1280
        spec.visual.global_.offheight = 960
        spec.visual.map.zfar = 50.0 + 4 * side
        spec.visual.quality.shadowsize = 2048
        spec.worldbody.add_light(name='sun', pos=[0, 0, 50], dir=[0.3, 0.2, -1.0], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
                                 diffuse=[0.7, 0.7, 0.7], specular=[0.1, 0.1, 0.1], castshadow=False)
        return spec

    def compile_slot(self, parts: list[SlotPart]) -> mujoco.MjModel:
        """Compile one slot's parts into a one-slot model (each part's spec is consumed).

        The model steps ``physics_dt`` in the fewest equal substeps that respect every part's
        ``max_dt`` (so ``SimConfig(physics_dt=1/60)`` runs a G1 at 1/240 inside each env step).
        Its visual-only geoms are left out unless :attr:`keep_visuals` or the parts need them
        (:func:`~internutopia.core.backend.mujoco.visuals.compile_physics`); the full model that
        draws the structure is compiled now where a part draws from the first step (a camera
        sensor), else when something first draws.
        """
        spec = self._world_spec()
        # A part's own options are dropped by attach; its noslip iterations (a gripper that must
        # not let a held object creep) carry over: the most any part asks for.
        spec.option.noslip_iterations = max([spec.option.noslip_iterations, *(p.spec.option.noslip_iterations for p in parts)])
        limits = [part.max_dt for part in parts if part.max_dt is not None]
        substeps = max(1, math.ceil(self.sim.physics_dt / min(limits) - 1e-9)) if limits else 1
        spec.option.timestep = self.sim.physics_dt / substeps
        spec.add_numeric(name=_PHYSICS_DT_FIELD, data=[self.sim.physics_dt], size=1)
        frame = spec.worldbody.add_frame(name='slot')
        for part in parts:
            _strip_part(part.spec)
            spec.attach(part.spec, prefix=part.prefix, frame=frame)
            if part.contact_root is not None:
                self._add_contact_sensors(spec, part.prefix, part.contact_root)
        spec.dedup_assets()
        self.compile_count += 1
        held = self.held_bytes_estimate()
        model = compile_physics(spec, keep_visuals=self.keep_visuals)
        peak = compile_peak_bytes(model)
        if not discarded_visuals(model):
            self._note_peak(held + peak, renderer_bytes(model))
        elif any(part.draws for part in parts):
            # A camera draws it from the first step: compiled now, before the pack and the renderer,
            # which reuse what its compile frees (compiled at the first picture instead, an H1 with
            # a camera peaked 90 MB higher).
            self._note_peak(held + peak + compile_peak_bytes(drawn_model(model)), renderer_bytes(model))
        else:  # compiled when something first draws the structure, if anything does: counted then
            when_drawn(model, _weak_drawn_counter(self))
            self._note_peak(held + peak)
        return model

    def _note_peak(self, peak: float, renderer: float = 0.0) -> None:
        # The renderer's context arrives with the first frame, while the compile's memory is still
        # the process's (MuJoCo keeps decoded meshes in its asset cache): it adds to the peak.
        self._renderer_bytes += renderer
        self.estimated_peak_bytes = max(self.estimated_peak_bytes, peak + renderer)

    def _count_drawn_compile(self, drawn: mujoco.MjModel) -> None:
        """The memory a structure's drawn model took to compile, when it compiled (a first picture)."""
        self._note_peak(self.held_bytes_estimate() + compile_peak_bytes(drawn), renderer_bytes(drawn))

    @staticmethod
    def _add_contact_sensors(spec: mujoco.MjSpec, prefix: str, root: str) -> None:
        # Contacts are not among the batch's bound fields, so a robot's contacts are summarized by
        # two sensors: every contact of its subtree (count, and up to CONTACT_SLOTS normals), and
        # the count of those with static world geoms.
        data_found_normal = (1 << int(mujoco.mjtConDataField.mjCONDATA_FOUND)) | (1 << int(mujoco.mjtConDataField.mjCONDATA_NORMAL))
        data_found = 1 << int(mujoco.mjtConDataField.mjCONDATA_FOUND)
        common = dict(type=mujoco.mjtSensor.mjSENS_CONTACT, objtype=mujoco.mjtObj.mjOBJ_XBODY, objname=f'{prefix}{root}')
        spec.add_sensor(name=f'{prefix}contacts', intprm=[data_found_normal, 0, CONTACT_SLOTS], **common)
        spec.add_sensor(name=f'{prefix}static_contacts', reftype=mujoco.mjtObj.mjOBJ_BODY, refname='world',
                        intprm=[data_found, 0, CONTACT_SLOTS], **common)

    def _new_pack(self, key: str, model: mujoco.MjModel, slot: int) -> Pack:
        """A pack for structure ``key`` compiled as ``model`` (``slot``: the first slot to hold it,
        for error messages; a backend built on this world makes its own kind of pack here)."""
        return Pack(key, model, self.env_num, self.threads)

    def parked_pack_bytes(self, pack: Pack) -> float:
        """Estimated bytes ``pack`` holds while parked (counted against the parked budget)."""
        return pack_bytes(pack.model, self.env_num, self.threads)

    def _unpark_beyond(self, budget: float) -> None:
        """Free the batches of the least recently parked packs until the rest fit ``budget`` bytes;
        their compiled models stay cached for the next episode of their structure."""
        # A pack's whole estimate: its slots' state and the model buffer and threads' stacks it
        # holds whatever its slots (counting the slots alone, a small structure's pack looked a
        # few kB while it held over a MB, and the parked packs grew without bound).
        sizes = {key: self.parked_pack_bytes(pack) for key, pack in self._parked.items()}
        total = sum(sizes.values())
        freed = False
        while self._parked and total > budget:
            key, pack = self._parked.popitem(last=False)
            total -= sizes[key]
            self._models[key] = pack.model
            while len(self._models) > _MODEL_CACHE_SIZE:
                self._models.popitem(last=False)
            freed = True
        if freed:
            _return_freed_memory()  # the batch's memory goes back to the system

    def prepare(self, key: str, parts: Callable[[], list[SlotPart]]) -> None:
        """Make sure structure ``key`` can be placed, changing no slot: compile its model now (kept
        for :meth:`place`) unless the world has it, and check that its physics state for
        ``env_num`` slots fits in memory. ``parts()`` gives fresh parts of the structure.

        Raises:
            ValueError: the parts do not load or compile, or the state does not fit.
        """
        if key in self.packs or key in self._parked:
            return
        model = self._models.get(key)
        if model is None:
            model = self.compile_slot(parts())
            _return_freed_memory()
            self._models[key] = model
            while len(self._models) > _MODEL_CACHE_SIZE:
                self._models.popitem(last=False)
        else:
            self._models.move_to_end(key)
        check_slots_fit(self.env_num, pack_bytes_per_slot(model), 'the physics state of one structure',
                        pack_fixed_bytes(model, self.threads))

    def place(self, assignments: dict[int, str | None], parts_of: Callable[[int], list[SlotPart]]) -> set[str]:
        """Move each slot of ``assignments`` into the pack of its structure key (``None``: empty).

        ``parts_of(slot)`` gives fresh parts of the slot's new content; it is called only when the
        structure has no compiled model yet. Returns the keys of the packs whose slots changed.
        Every slot not in ``assignments`` keeps its state untouched.
        """
        changed: set[str] = set()
        new_keys = list(self.slot_keys)
        for slot, key in assignments.items():
            new_keys[slot] = key
        compiled = self.compile_count
        for key in {k for k in new_keys if k is not None} - set(self.packs):
            parked = self._parked.pop(key, None)
            if parked is not None:
                self.packs[key] = parked
                continue
            model = self._models.pop(key, None)
            slot = next(s for s, k in enumerate(new_keys) if k == key)
            if model is None:
                model = self.compile_slot(parts_of(slot))
            self.packs[key] = self._new_pack(key, model, slot)
            self.estimated_peak_bytes = max(self.estimated_peak_bytes, self.held_bytes_estimate())
        if self.compile_count != compiled:
            _return_freed_memory()  # the specs and compile buffers are gone by now
        for slot, key in assignments.items():
            if self.slot_keys[slot] != key:
                changed.update(k for k in (self.slot_keys[slot], key) if k is not None)
        self.slot_keys = new_keys
        for key in changed:
            self.packs[key].set_slots(np.array([s for s, k in enumerate(new_keys) if k == key], dtype=np.intp))
        for key in [k for k, pack in self.packs.items() if not len(pack.slots)]:
            self._parked[key] = self.packs.pop(key)
        self._unpark_beyond(_PARKED_BYTES)
        self.version += 1
        return changed

    # ----------------------------------------------------------------------------------------
    # state
    def reset_slot_state(self, slot: int) -> None:
        """Put ``slot`` back to its model's rest state (qpos0, at rest, default mocap) at the world time."""
        pack = self.pack(slot)
        if pack is None:
            return
        pack.batch.state[slot] = pack.rest_state()  # (what Batch.reset writes, without its thread round trip)
        pack.data.time[slot] = self.time
        pack.data.userdata[slot, _ALIVE] = 1.0

    def slot_state(self, slot: int) -> dict[str, np.ndarray]:
        """A copy of every state array of ``slot`` (for checks and carry-over tests); ``ValueError`` for an empty slot."""
        pack = self.pack(slot)
        if pack is None:
            raise ValueError(f'env {slot} is empty: it has no state')
        return {name: getattr(pack.data, name)[slot].copy() for name in ('qpos', 'qvel', 'act', 'ctrl', 'mocap_pos', 'mocap_quat')}

    def step(self, steps: int = 1) -> None:
        """Advance every slot by ``steps`` physics steps (``physics_dt`` each), each pack in one
        call on every core."""
        for pack in self.packs.values():
            pack.step(steps)
        self._advance_clock(steps)

    def _advance_clock(self, steps: int) -> None:
        """The world clock ``steps`` physics steps on (see :meth:`clock_after`)."""
        self.time = self.clock_after(steps)

    def clock_after(self, steps: int) -> float:
        """The world clock after ``steps`` more physics steps, added a step at a time: the same
        clock whether a repeat's steps ran in one call or one by one (``dt * steps`` added once
        rounds otherwise)."""
        time = self.time
        for _ in range(steps):
            time += self.sim.physics_dt
        return time

    def rollout(self, steps: int, fields: tuple[str, ...]) -> PackRollout | None:
        """:meth:`step` recording the state ``fields`` after each physics step (see
        :meth:`Pack.rollout`), where every slot is in one pack (the usual world); ``None``, with
        nothing advanced, where the slots are in several packs or a simulation's warning stopped
        the call: step the usual way then."""
        packs = [pack for pack in self.packs.values() if len(pack.slots)]
        if len(packs) != 1:
            return None
        began = self.time
        done = packs[0].rollout(steps, fields)
        if done is None:
            return None
        self._advance_clock(steps)

        def clock(ran: int) -> None:
            self.time = began
            self._advance_clock(ran)

        return done._replace(clock=clock)

    def failed_slots(self) -> np.ndarray:
        """Slots whose simulation MuJoCo found unstable in the last :meth:`step` (NaN, Inf or a huge
        value in positions, velocities or accelerations), sorted.

        MuJoCo answers such a state by resetting the simulation to its model's rest state and going
        on, with a warning on stderr and nothing else to see. The reset zeroes ``userdata``, where
        every placed slot carries a 1 (:data:`_ALIVE`): a slot found with a 0 has failed. Its mark
        and clock are set back, so it is reported once. Costs one comparison per pack per step.
        """
        failed = []
        for pack in self.packs.values():
            slots = pack.slots
            if len(slots):
                alive = pack._alive_column[slots] if pack._step_ids is not None else pack._alive_column
                if alive.tobytes() == pack._all_alive:
                    continue  # the usual step: every mark intact
                if alive.min() < 0.5:
                    hit = slots[alive < 0.5]
                    pack.data.userdata[hit, _ALIVE] = 1.0
                    pack.data.time[hit] = self.time
                    failed.append(hit)
        return np.sort(np.concatenate(failed)) if failed else _NO_SLOTS

    def forward(self, slots: np.ndarray | None = None) -> None:
        """Recompute derived quantities (positions, contacts) after writing the state of ``slots``
        (every slot when ``None``)."""
        if slots is None:
            slots = np.arange(self.env_num)
        elif len(slots) <= _FEW_SLOTS:  # (a reset's one or two slots: sorted in Python, not np.unique's passes)
            slots = np.array(sorted(set(np.asarray(slots, dtype=np.intp).tolist())), dtype=np.intp)
        else:
            slots = np.unique(np.asarray(slots, dtype=np.intp))
        for pack in self.packs.values():
            # (a pack of every slot, the usual world, holds them all: no membership test per reset)
            members = slots if len(pack.slots) == self.env_num else slots[np.isin(slots, pack.slots)]
            if len(members):
                pack.forward(members)

    def close(self) -> None:
        """Drop every pack and cached model."""
        self.packs.clear()
        self._models.clear()
        self._parked.clear()
        self.slot_keys = [None] * self.env_num
        _return_freed_memory()  # glibc keeps the freed batches otherwise
