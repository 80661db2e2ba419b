"""The MuJoCo backend's :class:`~internutopia.core.backend.interface.ModelLookup`: names, ids and
constants of a compiled ``MjModel`` as frozen records (:mod:`internutopia.core.backend.model`).

>>> import mujoco
>>> model = mujoco.MjModel.from_xml_string(
...     '<mujoco><worldbody><body name="r/base"><freejoint name="r/root"/><geom size=".1"/>'
...     '<body name="r/arm"><joint name="r/hinge" range="-1 1"/><geom size=".1"/></body></body></worldbody></mujoco>')
>>> lookup = MujocoLookup(model)
>>> lookup.body('r/base').root_qposadr, lookup.joints(['r/hinge']).qposadr.tolist()
(0, [7])
>>> lookup.id('joint', 'r/elbow')
Traceback (most recent call last):
...
internutopia.core.backend.model.UnknownName: the model has no joint 'r/elbow'; joints under 'r/': ['r/hinge', 'r/root']
"""

from __future__ import annotations

from collections.abc import Sequence

import mujoco
import numpy as np

from internutopia.core.backend.model import (
    KINDS,
    NO_ID,
    ActuatorRecord,
    BodyRecord,
    ChainRecord,
    GeomTable,
    JointRecord,
    JointType,
    SensorRecord,
    ServoKind,
    UnknownName,
)

__all__ = ['MujocoLookup']

_OBJECTS = {
    'body': (mujoco.mjtObj.mjOBJ_BODY, 'nbody'),
    'joint': (mujoco.mjtObj.mjOBJ_JOINT, 'njnt'),
    'actuator': (mujoco.mjtObj.mjOBJ_ACTUATOR, 'nu'),
    'site': (mujoco.mjtObj.mjOBJ_SITE, 'nsite'),
    'geom': (mujoco.mjtObj.mjOBJ_GEOM, 'ngeom'),
    'sensor': (mujoco.mjtObj.mjOBJ_SENSOR, 'nsensor'),
    'camera': (mujoco.mjtObj.mjOBJ_CAMERA, 'ncam'),
}
assert tuple(_OBJECTS) == KINDS
#: Most names an unknown-name error lists.
_LISTED = 40


class MujocoLookup:
    """Lookups in one compiled ``MjModel`` (a pack's ``lookup``; see :class:`~internutopia.core.backend.interface.ModelLookup`)."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self._model = model
        self.nq, self.nv, self.nu, self.na = model.nq, model.nv, model.nu, model.na
        self.nbody, self.njnt, self.ngeom, self.nsite = model.nbody, model.njnt, model.ngeom, model.nsite
        self.ncam, self.nmocap, self.nsensordata = model.ncam, model.nmocap, model.nsensordata
        self.timestep = float(model.opt.timestep)
        self._names: dict[str, tuple[str, ...]] = {}
        self._ids: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}
        self._geoms: GeomTable | None = None

    # -- names -----------------------------------------------------------------------------------
    def _object(self, kind: str) -> tuple[mujoco.mjtObj, int]:
        try:
            obj, count = _OBJECTS[kind]
        except KeyError:
            raise ValueError(f'unknown kind of model element {kind!r}; kinds: {list(KINDS)}') from None
        return obj, getattr(self._model, count)

    def names(self, kind: str) -> tuple[str, ...]:
        """Full names of every element of ``kind``, in id order (``''`` for an unnamed one)."""
        found = self._names.get(kind)
        if found is None:
            obj, count = self._object(kind)
            found = self._names[kind] = tuple(mujoco.mj_id2name(self._model, obj, i) or '' for i in range(count))
        return found

    def find(self, kind: str, name: str) -> int:
        """The id of element ``name`` of ``kind``, or -1 when the model has none."""
        return int(mujoco.mj_name2id(self._model, self._object(kind)[0], name))

    def id(self, kind: str, name: str) -> int:
        """The id of element ``name`` of ``kind``; :class:`~internutopia.core.backend.model.UnknownName` otherwise."""
        found = self.find(kind, name)
        if found < 0:
            raise self._unknown(kind, name)
        return found

    def ids(self, kind: str, names: Sequence[str]) -> np.ndarray:
        """Ids of ``names`` of ``kind``. Shape (len(names),), intp; a new array each call."""
        key = (kind, tuple(names))
        found = self._ids.get(key)
        if found is None:  # (looked up once per model: a robot's reset asks for the same names every episode)
            found = self._ids[key] = np.array([self.id(kind, name) for name in names], dtype=np.intp)
        return found.copy()

    def _unknown(self, kind: str, name: str) -> UnknownName:
        prefix = name[:name.rfind('/') + 1]
        known = sorted(n for n in self.names(kind) if n and n.startswith(prefix))
        where = f' under {prefix!r}' if prefix else ''
        listed = known[:_LISTED] + (['...'] if len(known) > _LISTED else [])
        plural = 'bodies' if kind == 'body' else f'{kind}s'
        return UnknownName(f'the model has no {kind} {name!r}; {plural}{where}: {listed}')

    # -- records ---------------------------------------------------------------------------------
    def body(self, name: str) -> BodyRecord:
        """Body ``name``: its id, parent, mocap row and free-joint addresses."""
        model = self._model
        body = self.id('body', name)
        qposadr = dofadr = NO_ID
        if model.body_jntnum[body] and int(model.jnt_type[model.body_jntadr[body]]) == JointType.FREE:
            joint = model.body_jntadr[body]
            qposadr, dofadr = int(model.jnt_qposadr[joint]), int(model.jnt_dofadr[joint])
        return BodyRecord(id=body, name=name, parent=int(model.body_parentid[body]), mocap=int(model.body_mocapid[body]),
                          root_qposadr=qposadr, root_dofadr=dofadr, mass=float(model.body_mass[body]),
                          static=bool(model.body_weldid[body] == 0))

    def joints(self, names: Sequence[str]) -> JointRecord:
        """Joints ``names``: types, ``qpos``/``qvel`` addresses, limits."""
        model = self._model
        ids = self.ids('joint', names)
        limited = model.jnt_limited[ids].astype(bool)
        ranges = model.jnt_range[ids].reshape(len(ids), 2)
        qposadr = model.jnt_qposadr[ids].astype(np.intp)
        return JointRecord(names=tuple(names), ids=ids, type=model.jnt_type[ids].astype(np.intp), qposadr=qposadr,
                           dofadr=model.jnt_dofadr[ids].astype(np.intp), body=model.jnt_bodyid[ids].astype(np.intp),
                           limited=limited, lower=np.where(limited, ranges[:, 0], -np.inf),
                           upper=np.where(limited, ranges[:, 1], np.inf), qpos0=model.qpos0[qposadr],
                           axis=model.jnt_axis[ids].reshape(len(ids), 3), pos=model.jnt_pos[ids].reshape(len(ids), 3))

    def actuators(self, names: Sequence[str] | None = None) -> ActuatorRecord:
        """Actuators ``names`` (every actuator when ``None``): columns of ``ctrl``, joints, gains, ranges."""
        model = self._model
        ids = np.arange(model.nu, dtype=np.intp) if names is None else self.ids('actuator', names)
        n = len(ids)
        bias = model.actuator_biasprm[ids].reshape(n, -1)
        on_joint = model.actuator_trntype[ids] == int(mujoco.mjtTrn.mjTRN_JOINT)
        kind = np.where(bias[:, 1] != 0, ServoKind.POSITION, np.where(bias[:, 2] != 0, ServoKind.VELOCITY, ServoKind.MOTOR))
        return ActuatorRecord(
            names=tuple(names) if names is not None else tuple(self.names('actuator')),
            ids=ids, joint=np.where(on_joint, model.actuator_trnid[ids].reshape(n, 2)[:, 0], NO_ID).astype(np.intp),
            kind=kind.astype(np.intp), gain=model.actuator_gainprm[ids].reshape(n, -1)[:, 0], kp=-bias[:, 1], kv=-bias[:, 2],
            force_limited=model.actuator_forcelimited[ids].astype(bool), force_range=model.actuator_forcerange[ids].reshape(n, 2),
            ctrl_limited=model.actuator_ctrllimited[ids].astype(bool), ctrl_range=model.actuator_ctrlrange[ids].reshape(n, 2))

    def sensor(self, name: str) -> SensorRecord:
        """Sensor ``name``: where its readings are in ``sensordata``."""
        sensor = self.id('sensor', name)
        return SensorRecord(id=sensor, name=name, adr=int(self._model.sensor_adr[sensor]), dim=int(self._model.sensor_dim[sensor]))

    def geoms(self) -> GeomTable:
        """Every geom's body, shape and whether it is static (its body welded to the world)."""
        if self._geoms is None:
            model = self._model
            body = model.geom_bodyid.astype(np.intp)
            self._geoms = GeomTable(body=body, type=model.geom_type.astype(np.intp), static=model.body_weldid[body] == 0)
        return self._geoms

    def chain(self, base_body: str, frame: str) -> ChainRecord:
        """The serial chain from ``base_body`` down to ``frame`` (a site, else a body); see
        :class:`~internutopia.core.backend.model.ChainRecord`.

        Raises:
            ValueError: ``frame`` is neither a site nor a body, is not below ``base_body``, or a body
                on the way has a joint that is neither a hinge nor a slide, or more than one.
        """
        model = self._model
        base = self.id('body', base_body)
        site = self.find('site', frame)
        if site >= 0:
            end = int(model.site_bodyid[site])
            frame_pos, frame_quat = model.site_pos[site], model.site_quat[site]
        else:
            end = self.find('body', frame)
            if end < 0:
                raise ValueError(f'kinematic frame {frame!r} is neither a site nor a body of the model')
            frame_pos, frame_quat = np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
        path: list[int] = []
        body = end
        while body != base:
            if body == 0:
                raise ValueError(f'kinematic frame {frame!r} is not below body {base_body!r}')
            path.append(body)
            body = int(model.body_parentid[body])
        bodies = np.asarray(path[::-1], dtype=np.intp)
        body_joint: list[int] = []
        joints: list[int] = []
        for body in bodies.tolist():
            count = int(model.body_jntnum[body])
            if count > 1:
                raise ValueError(f'body {self.names("body")[body]!r} of the chain to {frame!r} has {count} joints; one at most')
            if count:
                joint = int(model.body_jntadr[body])
                if int(model.jnt_type[joint]) not in (JointType.HINGE, JointType.SLIDE):
                    raise ValueError(f'joint {self.names("joint")[joint]!r} of the chain to {frame!r} is not a hinge or slide')
                body_joint.append(len(joints))
                joints.append(joint)
            else:
                body_joint.append(-1)
        joints_arr = np.asarray(joints, dtype=np.intp)
        qposadr = model.jnt_qposadr[joints_arr].astype(np.intp)
        limited = model.jnt_limited[joints_arr].astype(bool)
        ranges = model.jnt_range[joints_arr]
        return ChainRecord(
            body_pos=model.body_pos[bodies], body_quat=model.body_quat[bodies],
            body_joint=np.asarray(body_joint, dtype=np.intp), joint_type=model.jnt_type[joints_arr].astype(np.intp),
            joint_axis=model.jnt_axis[joints_arr], joint_pos=model.jnt_pos[joints_arr], joint_ref=model.qpos0[qposadr],
            qposadr=qposadr, dofadr=model.jnt_dofadr[joints_arr].astype(np.intp),
            lower=np.where(limited, ranges[:, 0], -np.inf), upper=np.where(limited, ranges[:, 1], np.inf),
            frame_pos=frame_pos, frame_quat=frame_quat)
