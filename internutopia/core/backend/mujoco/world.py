"""The MuJoCo world holding every env slot, each under its own name prefix at its grid origin.

A slot is given as a list of :class:`SlotPart` (scene, robots, objects), each a standalone
``MjSpec``. Every part is attached under ``env{i}/<prefix>`` into a frame at slot ``i``'s grid
origin, identical assets are shared between copies (``dedup_assets``), and the result compiled.

The grid is one world, cut into *shards* so that every core steps physics: a shard is one
compiled ``MjModel``/``MjData`` holding a contiguous run of slots at their grid origins, and the
shards step in parallel threads (MuJoCo releases the GIL while it steps). With few slots there is
one shard. Rebuilding after a structural change recompiles only the shards whose slots changed,
and copies the state of every other slot of those shards from the old model, so a new episode in
one slot leaves every other slot exactly where it was.

Slots never touch each other: slots of different shards live in different ``MjData``, and within a
shard (at most 32 slots) each slot's colliding geoms get their own collision bit, so a robot driven
into a neighbour's cell passes through that neighbour's scene and robots.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

import mujoco
import numpy as np

from internutopia.core.config import SimConfig
from internutopia.core.grid import grid_columns, slot_origins

#: Per-slot index ranges kept for every compiled model, named after the MjData arrays they cut.
_RANGE_KINDS = ('qpos', 'qvel', 'act', 'ctrl', 'mocap', 'eq')
#: Most slots one shard holds: each needs its own bit of the 32-bit contype/conaffinity masks.
MAX_SLOTS_PER_SHARD = 32
#: Below this many slots per thread, stepping in threads costs more than it saves.
_MIN_SLOTS_PER_THREAD = 8


@dataclass
class SlotPart:
    """One piece of a slot's content: a standalone spec attached under ``env{i}/{prefix}``."""

    prefix: str
    spec: mujoco.MjSpec


def shard_layout(env_num: int, threads: Optional[int] = None) -> list[np.ndarray]:
    """Split slots ``0..env_num-1`` into contiguous shards: a multiple of the thread count, each
    with at most :data:`MAX_SLOTS_PER_SHARD` slots. ``threads=None`` picks one per core in use."""
    if threads is None:
        threads = max(1, min(os.cpu_count() or 1, env_num // _MIN_SLOTS_PER_THREAD))
    count = threads * math.ceil(env_num / (MAX_SLOTS_PER_SHARD * threads))
    return [part for part in np.array_split(np.arange(env_num), min(count, env_num)) if len(part)]


@dataclass
class Shard:
    """A compiled piece of the world: the slots ``slots`` (global ids) in one model and data.

    Entities bound to a shard read ``model``, ``data`` and ``origins`` (indexed by global slot id).
    """

    index: int
    slots: np.ndarray
    origins: np.ndarray
    model: Optional[mujoco.MjModel] = None
    data: Optional[mujoco.MjData] = None
    #: ``ranges[kind][i] = (start, stop)`` of global slot ``i`` in ``data.<kind>``; (0, 0) when absent.
    ranges: dict[str, np.ndarray] = field(default_factory=dict)

    def collision_bit(self, slot: int) -> int:
        """The contype/conaffinity bit of ``slot`` within this shard (as a signed 32-bit int)."""
        bit = int(slot - self.slots[0])
        return 1 << bit if bit < 31 else -(1 << 31)


def _plane_key(geom: mujoco.MjsGeom, origin: np.ndarray) -> tuple | None:
    """Plane equation and contact parameters of a static plane geom placed at ``origin``."""
    if geom.type != mujoco.mjtGeom.mjGEOM_PLANE or geom.parent.name != 'world' or not (geom.contype or geom.conaffinity):
        return None
    pos, quat = np.array(geom.pos, dtype=float), np.array(geom.quat, dtype=float)
    frame = geom.frame
    while frame is not None:
        turned = np.zeros(3)
        mujoco.mju_rotVecQuat(turned, pos * np.asarray(frame.scale if hasattr(frame, 'scale') else 1.0), np.array(frame.quat, dtype=float))
        pos = turned + np.array(frame.pos, dtype=float)
        combined = np.zeros(4)
        mujoco.mju_mulQuat(combined, np.array(frame.quat, dtype=float), quat)
        quat = combined
        frame = frame.frame
    normal = np.zeros(3)
    mujoco.mju_rotVecQuat(normal, np.array([0.0, 0.0, 1.0]), quat / np.linalg.norm(quat))
    return (tuple(np.round(normal, 9)), round(float(normal @ (pos + origin)), 9), tuple(geom.friction), tuple(geom.solref),
            tuple(geom.solimp), float(geom.solmix), float(geom.margin), float(geom.gap), int(geom.condim), int(geom.priority))


def _advance(shard: Shard) -> None:
    mujoco.mj_step2(shard.model, shard.data)
    mujoco.mj_step1(shard.model, shard.data)


class MujocoWorld:
    """The whole grid: its shards, and for every slot the shard and index ranges that hold it."""

    def __init__(self, sim: SimConfig, env_num: int, env_offset_size: float, threads: Optional[int] = None) -> None:
        self.sim = sim
        self.env_num = env_num
        self.offset = env_offset_size
        self.origins = slot_origins(env_num, env_offset_size)
        self.shards = [Shard(k, slots, self.origins) for k, slots in enumerate(shard_layout(env_num, threads))]
        #: Index into :attr:`shards` of every slot.
        self.shard_of = np.zeros(env_num, dtype=np.intp)
        for shard in self.shards:
            self.shard_of[shard.slots] = shard.index
        self.compile_count = 0
        self._pool = ThreadPoolExecutor(len(self.shards) - 1, thread_name_prefix='physics') if len(self.shards) > 1 else None

    # ----------------------------------------------------------------------------------------
    # one-shard views, for code written against a single model (tools, tests, small worlds)
    def _only_shard(self) -> Shard:
        if len(self.shards) != 1:
            raise AttributeError(f'this world is split into {len(self.shards)} shards; '
                                 'use world.shard(slot).model / .data for the slot you need')
        return self.shards[0]

    @property
    def model(self) -> Optional[mujoco.MjModel]:
        """The compiled model, when the world is a single shard."""
        return self._only_shard().model

    @property
    def data(self) -> Optional[mujoco.MjData]:
        """The simulation data, when the world is a single shard."""
        return self._only_shard().data

    @property
    def built(self) -> bool:
        """True once every shard has been compiled."""
        return all(shard.model is not None for shard in self.shards)

    @property
    def time(self) -> float:
        """Simulated time in seconds (the same in every shard)."""
        return float(self.shards[0].data.time) if self.shards[0].data is not None else 0.0

    def shard(self, slot: int) -> Shard:
        """The shard that holds ``slot``."""
        return self.shards[self.shard_of[slot]]

    # ----------------------------------------------------------------------------------------
    # building
    def _world_spec(self) -> mujoco.MjSpec:
        spec = mujoco.MjSpec()
        spec.modelname = 'internutopia_world'
        spec.compiler.degree = False
        spec.option.timestep = self.sim.physics_dt
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        side = self.offset * grid_columns(self.env_num)
        spec.stat.extent = max(side, 1.0)
        spec.stat.center = [side / 2 - self.offset / 2, side / 2 - self.offset / 2, 0.0]
        spec.visual.global_.offwidth = 1280
        spec.visual.global_.offheight = 960
        spec.visual.map.zfar = 50.0 + 4 * side
        spec.visual.quality.shadowsize = 2048
        spec.worldbody.add_light(name='sun', pos=[0, 0, 50], dir=[0.3, 0.2, -1.0], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
                                 diffuse=[0.7, 0.7, 0.7], specular=[0.1, 0.1, 0.1], castshadow=False)
        return spec

    def _prepare_part(self, spec: mujoco.MjSpec, bit: int) -> None:
        for geom in spec.geoms:
            if geom.contype or geom.conaffinity:
                geom.contype = bit if geom.contype else 0
                geom.conaffinity = bit if geom.conaffinity else 0
            if geom.type == mujoco.mjtGeom.mjGEOM_PLANE:
                # Planes collide infinitely; draw each slot's plane only over its own cell.
                half = self.offset / 2
                geom.size = [half if geom.size[0] <= 0 else min(geom.size[0], half),
                             half if geom.size[1] <= 0 else min(geom.size[1], half),
                             geom.size[2] if geom.size[2] > 0 else 0.5]
        for light in list(spec.lights):
            spec.delete(light)

    def _merge_static_planes(self, shard: Shard, parts_of: dict[int, list[SlotPart]]) -> None:
        # Every slot's scene usually brings its own infinite ground plane. MuJoCo pairs each
        # static plane with every body before the collision bits filter the pair out, so N
        # planes make the step grow with N squared. Identical planes (same plane equation and
        # contact parameters) are therefore merged into the first one, which collides with the
        # union of their slots' bits and is drawn over the whole grid. Contacts are unchanged.
        keepers: dict[tuple, mujoco.MjsGeom] = {}
        side = self.offset * grid_columns(self.env_num)
        for slot, parts in parts_of.items():
            for part in parts:
                for geom in list(part.spec.geoms):
                    key = _plane_key(geom, self.origins[slot])
                    if key is None:
                        continue
                    keeper = keepers.get(key)
                    if keeper is None:
                        keepers[key] = geom
                        geom.size = [side, side, geom.size[2]]
                    else:
                        keeper.contype |= geom.contype
                        keeper.conaffinity |= geom.conaffinity
                        part.spec.delete(geom)

    def build(self, parts_of: Callable[[int], Optional[list[SlotPart]]], dirty: np.ndarray,
              keep: Optional[np.ndarray] = None) -> list[int]:
        """Recompile every shard holding a ``dirty`` slot; return the rebuilt shards' indices.

        Args:
            parts_of: the parts of a slot (``None`` or ``[]`` for an empty slot); called only for
                the slots of rebuilt shards, and each part's spec is consumed (pass fresh copies).
            dirty: boolean mask of slots whose structure changed (or that were never built).
            keep: boolean mask of slots whose full state (positions, velocities, actuator and
                mocap state, warm start) is copied from the old model of a rebuilt shard. Those
                slots must have the same structure as before.
        """
        rebuilt = []
        for shard in self.shards:
            if shard.model is not None and not dirty[shard.slots].any():
                continue
            self._build_shard(shard, {int(s): parts_of(int(s)) or [] for s in shard.slots}, keep)
            rebuilt.append(shard.index)
        return rebuilt

    def _build_shard(self, shard: Shard, parts_of: dict[int, list[SlotPart]], keep: Optional[np.ndarray]) -> None:
        clock = next((other.data.time for other in self.shards if other.data is not None), 0.0)
        spec = self._world_spec()
        for slot, parts in parts_of.items():
            for part in parts:
                self._prepare_part(part.spec, shard.collision_bit(slot))
        self._merge_static_planes(shard, parts_of)
        for slot, parts in parts_of.items():
            if not parts:
                continue
            frame = spec.worldbody.add_frame(name=f'env{slot}', pos=self.origins[slot].tolist())
            for part in parts:
                spec.attach(part.spec, prefix=f'env{slot}/{part.prefix}', frame=frame)
        spec.dedup_assets()
        model = spec.compile()
        data = mujoco.MjData(model)
        data.time = clock  # every shard keeps the one world clock
        ranges, _ = self._slot_ranges(model)
        if keep is not None and shard.data is not None:
            carried = shard.slots[keep[shard.slots]]
            self._carry_state(shard.model, shard.data, shard.ranges, model, data, ranges, carried)
        # The spec is not kept: it holds a full copy of every slot's meshes (hundreds of MB).
        shard.model, shard.data, shard.ranges = model, data, ranges
        self.compile_count += 1
        mujoco.mj_forward(model, data)

    def _slot_ranges(self, model: mujoco.MjModel) -> tuple[dict[str, np.ndarray], np.ndarray]:
        body_slot = np.full(model.nbody, -1, dtype=np.intp)
        for body in range(1, model.nbody):
            name = model.body(body).name
            if name.startswith('env'):
                head = name[3:].split('/', 1)[0]
                if head.isdigit():
                    body_slot[body] = int(head)
        joint_slot = body_slot[model.jnt_bodyid]
        dof_slot = body_slot[model.dof_bodyid]
        actuator_slot = np.array([self._actuator_slot(model, a, body_slot) for a in range(model.nu)], dtype=np.intp)
        mocap_bodies = np.flatnonzero(model.body_mocapid >= 0)
        mocap_slot = np.empty(model.nmocap, dtype=np.intp)
        mocap_slot[model.body_mocapid[mocap_bodies]] = body_slot[mocap_bodies]
        eq_slot = np.array([body_slot[self._eq_body(model, e)] for e in range(model.neq)], dtype=np.intp)
        qpos_slot = np.repeat(joint_slot, np.diff(np.append(model.jnt_qposadr, model.nq)))
        act_slot = actuator_slot[model.actuator_actadr >= 0].repeat(model.actuator_actnum[model.actuator_actadr >= 0])
        per_kind = {'qpos': qpos_slot, 'qvel': dof_slot, 'act': act_slot, 'ctrl': actuator_slot,
                    'mocap': mocap_slot, 'eq': eq_slot}
        ranges = {}
        for kind, owner in per_kind.items():
            table = np.zeros((self.env_num, 2), dtype=np.intp)
            for slot in range(self.env_num):
                where = np.flatnonzero(owner == slot)
                if where.size:
                    if where[-1] - where[0] + 1 != where.size:
                        raise RuntimeError(f'slot {slot} {kind} entries are not contiguous in the compiled model')
                    table[slot] = (where[0], where[-1] + 1)
            ranges[kind] = table
        return ranges, body_slot

    @staticmethod
    def _actuator_slot(model: mujoco.MjModel, actuator: int, body_slot: np.ndarray) -> int:
        target = model.actuator_trnid[actuator, 0]
        trntype = int(model.actuator_trntype[actuator])
        if trntype in (int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT)):
            return int(body_slot[model.jnt_bodyid[target]])
        if trntype == mujoco.mjtTrn.mjTRN_SITE:
            return int(body_slot[model.site_bodyid[target]])
        if trntype == mujoco.mjtTrn.mjTRN_BODY:
            return int(body_slot[target])
        name = model.actuator(actuator).name
        head = name[3:].split('/', 1)[0] if name.startswith('env') else ''
        return int(head) if head.isdigit() else -1

    @staticmethod
    def _eq_body(model: mujoco.MjModel, eq: int) -> int:
        if model.eq_objtype[eq] == mujoco.mjtObj.mjOBJ_BODY:
            return int(model.eq_obj1id[eq])
        if model.eq_objtype[eq] == mujoco.mjtObj.mjOBJ_SITE:
            return int(model.site_bodyid[model.eq_obj1id[eq]])
        return int(model.jnt_bodyid[model.eq_obj1id[eq]])

    @staticmethod
    def _carry_state(old_model, old_data, old_ranges, model, data, ranges, slots) -> None:
        per_kind_fields = {
            'qpos': ('qpos',), 'qvel': ('qvel', 'qacc_warmstart', 'qacc', 'qfrc_applied'),
            'act': ('act',), 'ctrl': ('ctrl',), 'mocap': ('mocap_pos', 'mocap_quat'), 'eq': ('eq_active',),
        }
        for kind, fields in per_kind_fields.items():
            for slot in slots:
                (a, b), (c, d) = old_ranges[kind][slot], ranges[kind][slot]
                if b - a != d - c:
                    raise RuntimeError(f'slot {slot} changed structure ({kind}: {b - a} -> {d - c}) but was kept')
                for field in fields:
                    getattr(data, field)[c:d] = getattr(old_data, field)[a:b]
        data.time = old_data.time

    # ----------------------------------------------------------------------------------------
    # state
    def reset_slot_state(self, slot: int) -> None:
        """Put ``slot`` back to its model's rest state (qpos0, zero velocity, default mocap)."""
        shard = self.shard(slot)
        model, data, ranges = shard.model, shard.data, shard.ranges
        a, b = ranges['qpos'][slot]
        data.qpos[a:b] = model.qpos0[a:b]
        a, b = ranges['qvel'][slot]
        for name in ('qvel', 'qacc_warmstart', 'qacc', 'qfrc_applied'):
            getattr(data, name)[a:b] = 0.0
        a, b = ranges['act'][slot]
        data.act[a:b] = 0.0
        a, b = ranges['ctrl'][slot]
        data.ctrl[a:b] = 0.0
        a, b = ranges['mocap'][slot]
        if b > a:
            bodies = np.flatnonzero(model.body_mocapid >= 0)
            bodies = bodies[np.argsort(model.body_mocapid[bodies])][a:b]
            data.mocap_pos[a:b] = model.body_pos[bodies]
            data.mocap_quat[a:b] = model.body_quat[bodies]

    def slot_state(self, slot: int) -> dict[str, np.ndarray]:
        """A copy of every state array slice of ``slot`` (for checks and carry-over tests)."""
        shard = self.shard(slot)
        out = {}
        for kind, names in (('qpos', ('qpos',)), ('qvel', ('qvel',)), ('act', ('act',)), ('ctrl', ('ctrl',)),
                            ('mocap', ('mocap_pos', 'mocap_quat'))):
            a, b = shard.ranges[kind][slot]
            for name in names:
                out[name] = getattr(shard.data, name)[a:b].copy()
        return out

    def step(self) -> None:
        """Advance the whole world by one physics step (``physics_dt``), shards in parallel.

        Each shard runs ``mj_step2`` (integrate with this step's controls) then ``mj_step1``
        (positions, velocities and contacts at the new state), so observations read after a step
        describe the state it reached, at the cost of one ``mj_step``.
        """
        running = [self.start_step(shard) for shard in range(1, len(self.shards))]
        self.step_shard(0)
        for future in running:
            future.result()

    def start_step(self, shard: int) -> Future:
        """Start stepping shard ``shard`` on a physics thread; wait on the returned future."""
        return self._pool.submit(_advance, self.shards[shard])

    def step_shard(self, shard: int) -> None:
        """Step shard ``shard`` on the calling thread."""
        _advance(self.shards[shard])

    def forward(self, slots: Optional[np.ndarray] = None) -> None:
        """Recompute derived quantities (positions, contacts) after writing state, for the shards
        holding ``slots`` (all shards when ``None``)."""
        shards = self.shards if slots is None else [self.shards[k] for k in np.unique(self.shard_of[np.asarray(slots, dtype=np.intp)])]
        for shard in shards:
            mujoco.mj_forward(shard.model, shard.data)

    def close(self) -> None:
        """Drop the compiled models and data, and stop the physics threads."""
        for shard in self.shards:
            shard.model = shard.data = None
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
