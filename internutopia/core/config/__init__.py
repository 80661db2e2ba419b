"""User-facing configuration: what to simulate, how many slots, and the queue of episodes.

Field names and defaults follow InternUtopia 2.x, so its scripts build the same objects here.
An unknown key is handled as InternUtopia handles it (ignored, or kept by ``ControllerCfg``,
``TaskCfg``, ``RewardCfg`` and ``DistributionCfg``) but never silently: each one is reported with an
``UnknownConfigKeyWarning`` naming the nearest declared key; :func:`strict_config` (or
``INTERNUTOPIA_STRICT_CONFIG=1``) makes it an error (see :mod:`.unknown_keys`).

>>> from internutopia.core.config import Config, SimConfig, TaskCfg
>>> cfg = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=4,
...              task_configs=[TaskCfg(type='SingleInferenceTask')])
>>> cfg.env_num, cfg.simulator.backend
(4, 'mujoco')

One module per part: :mod:`.config` (``Config``, ``DistributedConfig``), :mod:`.simulator`
(``SimConfig``, ``Simulator``), :mod:`.task` (``TaskCfg``, ``RewardCfg``), :mod:`.robot`
(``RobotCfg``, ``ControllerCfg``), :mod:`.sensor`, :mod:`.object`, :mod:`.metric`,
:mod:`.distribution` (Ray), :mod:`.base` (the base models, typed families), :mod:`.values` (numbers
and their ranges), :mod:`.unknown_keys` (the unknown-key policy and strict mode), :mod:`.files`
(``package://`` and relative file paths) and :mod:`.yaml_file` (reading YAML files).
"""

from internutopia.core.config.base import BaseCfg, Quat, Scale, TypedCfg, Vec3
from internutopia.core.config.config import Config, DistributedConfig
from internutopia.core.config.distribution import DistributionCfg, RayDistributionCfg
from internutopia.core.config.metric import MetricCfg
from internutopia.core.config.object import ObjectCfg
from internutopia.core.config.robot import ControllerCfg, RobotCfg
from internutopia.core.config.sensor import SensorCfg
from internutopia.core.config.simulator import SimConfig, Simulator, register_backend_name  # noqa: F401
from internutopia.core.config.task import TaskCfg
from internutopia.core.config.task.reward import RewardCfg
from internutopia.core.config.unknown_keys import UnknownConfigKeyWarning, set_strict_config, strict_config
from internutopia.core.config.yaml_file import ConfigFileError

__all__ = [
    'BaseCfg', 'Config', 'ConfigFileError', 'ControllerCfg', 'DistributedConfig', 'DistributionCfg', 'MetricCfg',
    'ObjectCfg', 'Quat', 'RayDistributionCfg', 'RewardCfg', 'RobotCfg', 'Scale', 'SensorCfg', 'SimConfig', 'Simulator',
    'TaskCfg', 'TypedCfg', 'UnknownConfigKeyWarning', 'Vec3', 'set_strict_config', 'strict_config',
]
