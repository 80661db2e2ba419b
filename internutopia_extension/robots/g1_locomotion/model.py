"""The G1 as an attachable MuJoCo spec matched to the policy, and the addresses of attached copies."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from internutopia_extension.robots.g1_locomotion.assets import _load_g1_spec

if TYPE_CHECKING:
    from internutopia_extension.robots.g1_locomotion.policy import G1LocomotionPolicy

#: Name of the root body of the robot (carries the free joint).
PELVIS_BODY_NAME = 'pelvis'
#: Name of the free joint of the pelvis in ``g1.xml``.
FREE_JOINT_NAME = 'floating_base_joint'
#: Pelvis height (m) at which the G1 in its default (policy) pose has its foot
#: contact spheres exactly on a ground plane at z=0 (with zero roll/pitch).
STANDING_PELVIS_HEIGHT = 0.757


def build_g1_spec(policy: G1LocomotionPolicy) -> mujoco.MjSpec:
    """Load ``g1.xml`` and turn it into an attachable, policy-matched G1 spec.

    Changes w.r.t. the Menagerie file:

    * all actuators are replaced by one PD servo per policy joint, in policy
      order, named after the joint: ``gainprm=[kp]``, ``biasprm=[0, -kp, -kd]``
      (affine bias), no control clamp, ``forcerange = +-effort_limit``;
    * joint ``armature`` set to the value implied by the policy gains, joint
      ``frictionloss`` set to 0 (both as in training);
    * lights, cameras, keyframes, worldbody-level geoms/sites and non-root
      bodies at world level are removed, so the spec can be attached many times
      (``frame.attach_body(spec.body("pelvis"), prefix, "")`` or
      ``world.attach(spec, prefix=..., frame=...)``).  MuJoCo 4 attaches *by
      reference* unless the **host** spec has ``world.copy_during_attach = True``
      (write-only flag); set it, or attach a fresh ``spec.copy()`` each time;
    * the child ``<option>`` is reset to MuJoCo defaults and marked unauthored,
      so attaching raises no option-conflict warning whatever the world uses;
    * the pelvis (root body, free joint ``floating_base_joint``) is placed at
      :data:`STANDING_PELVIS_HEIGHT` so ``qpos0`` of the free joint is a valid
      standing height (joint angles still need :attr:`default_joint_pos`).

    Timestep and integrator are therefore entirely the host world's choice
    (recommended: ``timestep = 1/240`` or ``1/200``, ``integrator = implicitfast``).
    Sensors of g1.xml (pelvis/torso IMU gyro + accelerometer) are kept (prefixed).
    """
    spec = _load_g1_spec()

    # The host world owns <option>: drop g1.xml's integrator="implicitfast" and mark
    # nothing as authored so that attaching raises no option conflict (and a
    # compiler.conflict="merge" world cannot inherit this file's settings).
    pristine = mujoco.MjSpec().option
    spec.option.integrator = pristine.integrator
    spec.option.timestep = pristine.timestep
    spec.authored.option = 0
    spec.authored.disableflags = 0
    spec.authored.enableflags = 0

    for key in list(spec.keys):
        spec.delete(key)
    for light in list(spec.lights):
        spec.delete(light)
    for camera in list(spec.cameras):
        spec.delete(camera)
    world = spec.worldbody
    for geom in list(world.geoms):
        spec.delete(geom)
    for site in list(world.sites):
        spec.delete(site)
    roots = [b for b in spec.bodies if b.parent is not None and b.parent.name == world.name and b.name]
    for body in roots:
        if body.name != PELVIS_BODY_NAME:
            spec.delete(body)

    pelvis = spec.body(PELVIS_BODY_NAME)
    if pelvis is None:
        raise RuntimeError("g1.xml has no 'pelvis' body")
    if not any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in pelvis.joints):
        raise RuntimeError('pelvis has no free joint')
    pelvis.pos = [0.0, 0.0, STANDING_PELVIS_HEIGHT]
    pelvis.quat = [1.0, 0.0, 0.0, 0.0]

    for actuator in list(spec.actuators):
        spec.delete(actuator)
    for i, name in enumerate(policy.joint_names):
        joint = spec.joint(name)
        if joint is None:
            raise KeyError(f'policy joint {name} missing from g1.xml')
        joint.armature = float(policy.armature[i])
        joint.frictionloss = 0.0
        joint.damping = np.zeros(len(joint.damping))
        act = spec.add_actuator()
        act.name = name
        act.target = name
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        gain = np.zeros(len(act.gainprm))
        gain[0] = policy.kp[i]
        bias = np.zeros(len(act.biasprm))
        bias[1] = -policy.kp[i]
        bias[2] = -policy.kd[i]
        act.gainprm = gain
        act.biasprm = bias
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-float(policy.effort_limit[i]), float(policy.effort_limit[i])]
    return spec


@dataclasses.dataclass(frozen=True)
class G1Indices:
    """Addresses of one attached G1 inside a compiled world model.

    Attributes:
        prefix: the attach prefix (e.g. ``"env0/"``).
        pelvis_body: body id of ``{prefix}pelvis``.
        root_qpos: qpos address of the free joint (``[x y z qw qx qy qz]``).
        root_qvel: qvel address of the free joint (``[v_world(3), w_local(3)]``).
        joint_qpos: ``(29,)`` qpos addresses, policy order.
        joint_qvel: ``(29,)`` qvel addresses, policy order.
        ctrl: ``(29,)`` actuator ids, policy order.
    """

    prefix: str
    pelvis_body: int
    root_qpos: int
    root_qvel: int
    joint_qpos: np.ndarray
    joint_qvel: np.ndarray
    ctrl: np.ndarray

    @classmethod
    def from_model(cls, model: mujoco.MjModel, prefix: str, joint_names: Sequence[str]) -> G1Indices:
        """Look up the addresses of robot ``prefix`` (joints in ``joint_names`` order)."""
        body = model.body(prefix + PELVIS_BODY_NAME).id
        free = model.joint(prefix + FREE_JOINT_NAME)
        jq = np.array([model.joint(prefix + n).qposadr[0] for n in joint_names], dtype=np.intp)
        jv = np.array([model.joint(prefix + n).dofadr[0] for n in joint_names], dtype=np.intp)
        ctrl = np.array([model.actuator(prefix + n).id for n in joint_names], dtype=np.intp)
        return cls(prefix, body, int(free.qposadr[0]), int(free.dofadr[0]), jq, jv, ctrl)


def gather_state(
    data: mujoco.MjData, robots: Sequence[G1Indices]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Read ``(quat_wxyz (n,4), ang_vel_local (n,3), q (n,29), qdot (n,29))``.

    MuJoCo free-joint conventions: ``qpos[adr+3:adr+7]`` is the world-frame
    orientation quaternion (w first); ``qvel[adr:adr+3]`` is the linear velocity
    in the world frame and ``qvel[adr+3:adr+6]`` the angular velocity in the
    *local body* frame, which is exactly the IMU-style ``base_ang_vel`` the
    policy expects.
    """
    qa = np.array([r.root_qpos for r in robots], dtype=np.intp)
    va = np.array([r.root_qvel for r in robots], dtype=np.intp)
    quat = data.qpos[qa[:, None] + np.arange(3, 7)]
    ang = data.qvel[va[:, None] + np.arange(3, 6)]
    q = data.qpos[np.stack([r.joint_qpos for r in robots])]
    dq = data.qvel[np.stack([r.joint_qvel for r in robots])]
    return quat, ang, q, dq


def standing_root_qpos(x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> np.ndarray:
    """Free-joint ``qpos`` (7,) for a robot standing at ``(x, y)`` facing ``yaw``.

    Positions are relative to the attach frame when written as ``qpos0`` and
    world coordinates when written into ``data.qpos``.
    """
    return np.array(
        [x, y, STANDING_PELVIS_HEIGHT, math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0)], dtype=np.float64
    )
