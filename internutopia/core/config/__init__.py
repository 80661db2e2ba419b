"""User-facing configuration: what to simulate, how many slots, and the queue of episodes.

Field names and defaults follow InternUtopia 2.x, so its scripts build the same objects here.
Every class rejects unknown fields (see :mod:`internutopia.core.config.base`).

>>> from internutopia.core.config import Config, SimConfig, TaskCfg
>>> cfg = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=4,
...              task_configs=[TaskCfg(type='SingleInferenceTask')])
>>> cfg.env_num, cfg.simulator.backend
(4, 'mujoco')
>>> SimConfig(physcs_dt=0.01)
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for SimConfig
physcs_dt
  Extra inputs are not permitted [type=extra_forbidden, input_value=0.01, input_type=float]
...

One module per part: :mod:`.config` (``Config``, ``DistributedConfig``), :mod:`.simulator`
(``SimConfig``, ``Simulator``), :mod:`.task` (``TaskCfg``, ``RewardCfg``), :mod:`.robot`
(``RobotCfg``, ``ControllerCfg``), :mod:`.sensor`, :mod:`.object`, :mod:`.metric`,
:mod:`.distribution` (Ray), :mod:`.base` (strict models, typed families) and :mod:`.files` (file
paths of YAML configs).
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

__all__ = [
    'BaseCfg', 'Config', 'ControllerCfg', 'DistributedConfig', 'DistributionCfg', 'MetricCfg', 'ObjectCfg', 'Quat',
    'RayDistributionCfg', 'RewardCfg', 'RobotCfg', 'Scale', 'SensorCfg', 'SimConfig', 'Simulator', 'TaskCfg', 'TypedCfg',
    'Vec3',
]
