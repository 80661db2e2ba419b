"""One MuJoCo world holding every env slot, each under its own name prefix at its grid origin.

A slot is given as a list of :class:`SlotPart` (scene, robots, objects), each a standalone
``MjSpec``. :meth:`MujocoWorld.build` attaches every part under ``env{i}/<prefix>`` into a frame at
slot ``i``'s origin, shares identical assets between copies (``dedup_assets``), compiles, and
copies the state of the slots the caller wants kept from the previous model, so a structural
change in one slot leaves every other slot exactly where it was.

Slots never touch each other: each slot's colliding geoms get their own collision bit, so a robot
driven into a neighbour's cell passes through that neighbour's scene and robots. With more than 31
slots, bits repeat in a 5 x 6 tiling of the grid: slots sharing a bit are at least 5 rows or 6
columns apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from internutopia.core.config import SimConfig
from internutopia.core.grid import grid_columns, slot_origins

#: Per-slot index ranges kept for every compiled model, named after the MjData arrays they cut.
_RANGE_KINDS = ('qpos', 'qvel', 'act', 'ctrl', 'mocap', 'eq')


@dataclass
class SlotPart:
    """One piece of a slot's content: a standalone spec attached under ``env{i}/{prefix}``."""

    prefix: str
    spec: mujoco.MjSpec


def collision_bit(slot: int, env_num: int) -> int:
    """The contype/conaffinity bit of ``slot``: unique for up to 31 slots, tiled beyond."""
    if env_num <= 31:
        return 1 << slot
    cols = grid_columns(env_num)
    row, col = divmod(slot, cols)
    return 1 << ((row % 5) * 6 + (col % 6))


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


class MujocoWorld:
    """The compiled world: ``model``/``data`` plus, per slot, where its state lives in them."""

    def __init__(self, sim: SimConfig, env_num: int, env_offset_size: float) -> None:
        self.sim = sim
        self.env_num = env_num
        self.offset = env_offset_size
        self.origins = slot_origins(env_num, env_offset_size)
        self.model: mujoco.MjModel | None = None
        self.data: mujoco.MjData | None = None
        #: ``ranges[kind][i] = (start, stop)`` of slot ``i`` in ``data.<kind>``; (0, 0) when empty.
        self.ranges: dict[str, np.ndarray] = {kind: np.zeros((env_num, 2), dtype=np.intp) for kind in _RANGE_KINDS}
        self.body_slot = np.zeros(0, dtype=np.intp)
        self.compile_count = 0

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

    def _merge_static_planes(self, slots: list[list[SlotPart] | None]) -> None:
        # Every slot's scene usually brings its own infinite ground plane. MuJoCo pairs each
        # static plane with every body before the collision bits filter the pair out, so N
        # planes make the step grow with N squared. Identical planes (same plane equation and
        # contact parameters) are therefore merged into the first one, which collides with the
        # union of their slots' bits and is drawn over the whole grid. Contacts are unchanged.
        keepers: dict[tuple, mujoco.MjsGeom] = {}
        side = self.offset * grid_columns(self.env_num)
        for slot, parts in enumerate(slots):
            for part in parts or []:
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

    def build(self, slots: list[list[SlotPart] | None], keep: np.ndarray | None = None) -> None:
        """Compile a new world from each slot's parts, carrying over the state of ``keep`` slots.

        Args:
            slots: per slot, its parts (``None`` or ``[]`` for an empty slot). The parts' specs are
                consumed (attached), so pass fresh copies.
            keep: boolean mask of slots whose full state (positions, velocities, actuator and mocap
                state, warm start) is copied from the current world. Those slots must have the
                same structure as before.
        """
        if len(slots) != self.env_num:
            raise ValueError(f'expected parts for {self.env_num} slots, got {len(slots)}')
        spec = self._world_spec()
        for slot, parts in enumerate(slots):
            for part in parts or []:
                self._prepare_part(part.spec, collision_bit(slot, self.env_num))
        self._merge_static_planes(slots)
        for slot, parts in enumerate(slots):
            if not parts:
                continue
            frame = spec.worldbody.add_frame(name=f'env{slot}', pos=self.origins[slot].tolist())
            for part in parts:
                spec.attach(part.spec, prefix=f'env{slot}/{part.prefix}', frame=frame)
        spec.dedup_assets()
        model = spec.compile()
        data = mujoco.MjData(model)
        ranges, body_slot = self._slot_ranges(model)
        if keep is not None and self.data is not None:
            self._carry_state(self.model, self.data, self.ranges, model, data, ranges, np.flatnonzero(keep))
        self.spec = spec
        self.model, self.data, self.ranges, self.body_slot = model, data, ranges, body_slot
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
        """Put ``slot`` back to the model's rest state (qpos0, zero velocity, default mocap)."""
        model, data = self.model, self.data
        a, b = self.ranges['qpos'][slot]
        data.qpos[a:b] = model.qpos0[a:b]
        a, b = self.ranges['qvel'][slot]
        for field in ('qvel', 'qacc_warmstart', 'qacc', 'qfrc_applied'):
            getattr(data, field)[a:b] = 0.0
        a, b = self.ranges['act'][slot]
        data.act[a:b] = 0.0
        a, b = self.ranges['ctrl'][slot]
        data.ctrl[a:b] = 0.0
        a, b = self.ranges['mocap'][slot]
        if b > a:
            bodies = np.flatnonzero(model.body_mocapid >= 0)
            bodies = bodies[np.argsort(model.body_mocapid[bodies])][a:b]
            data.mocap_pos[a:b] = model.body_pos[bodies]
            data.mocap_quat[a:b] = model.body_quat[bodies]

    def slot_state(self, slot: int) -> dict[str, np.ndarray]:
        """A copy of every state array slice of ``slot`` (for checks and carry-over tests)."""
        out = {}
        for kind, fields in (('qpos', ('qpos',)), ('qvel', ('qvel',)), ('act', ('act',)), ('ctrl', ('ctrl',)),
                             ('mocap', ('mocap_pos', 'mocap_quat'))):
            a, b = self.ranges[kind][slot]
            for field in fields:
                out[field] = getattr(self.data, field)[a:b].copy()
        return out

    def step(self) -> None:
        """Advance the whole world by one physics step (``physics_dt``)."""
        mujoco.mj_step(self.model, self.data)

    def forward(self) -> None:
        """Recompute derived quantities (positions, contacts) after writing state."""
        mujoco.mj_forward(self.model, self.data)

    def close(self) -> None:
        """Drop the compiled model and data."""
        self.model = self.data = None
