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
"""

from __future__ import annotations

import math
import os
from enum import Enum
from typing import Any, ClassVar

import numpy as np
import yaml
from pydantic import Field, SerializeAsAny, field_validator

from internutopia.core.config.base import BaseCfg, Quat, Scale, TypedCfg, Vec3
from internutopia.core.config.distribution import DistributionCfg, RayDistributionCfg
from internutopia.core.config.metric import MetricCfg
from internutopia.core.config.object import ObjectCfg
from internutopia.core.config.robot import ControllerCfg, RobotCfg
from internutopia.core.config.sensor import SensorCfg
from internutopia.core.config.task import TaskCfg
from internutopia.core.config.task.reward import RewardCfg
from internutopia.core.plugins import load_extensions

#: Names ``SimConfig.backend`` accepts; :func:`internutopia.core.backend.register_backend` adds to it.
_BACKEND_NAMES: set[str] = {'mujoco'}


def register_backend_name(name: str) -> None:
    """Accept ``name`` as a ``SimConfig.backend`` (called by ``internutopia.core.backend.register_backend``)."""
    _BACKEND_NAMES.add(name)


def _positive_seconds(value: Any, field: str) -> float:
    """A step length in seconds: a finite number > 0, or text such as ``'0.01'`` or ``'1/240'``
    (InternUtopia accepts both)."""
    if isinstance(value, str):
        numerator, slash, denominator = value.partition('/')
        try:
            seconds = float(numerator) / float(denominator) if slash else float(numerator)
        except (ValueError, ZeroDivisionError):
            raise ValueError(f'{field} must be a number of seconds or a fraction like "1/240"; got {value!r}') from None
    elif isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f'{field} must be a number of seconds or a fraction like "1/240"; got {value!r}')
    else:
        seconds = float(value)
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f'{field} must be a finite number of seconds > 0; got {value!r}')
    return seconds


class Simulator(Enum):
    """Physics backends by name (InternUtopia's enum; ``SimConfig.backend`` takes the value of a
    registered one)."""

    MUJOCO = 'mujoco'
    #: InternUtopia's only backend; not available in this package (see docs/contract.md).
    ISAACSIM = 'isaac_sim'


class SimConfig(BaseCfg):
    """Simulator settings. ``backend`` picks the physics engine: ``'mujoco'`` (built in) or one an
    extension registered (``internutopia.core.backend.register_backend``).

    ``physics_dt`` is the simulated time of one env step (InternUtopia's default, 1/60 s); robots
    that need finer physics (the G1's servos) run that step in substeps. ``rendering_dt`` and
    ``rendering_interval`` set how often cameras render.

    ``rendering_lod`` draws cameras and the overview with decimated visual meshes (rendering only;
    physics always uses the full model; see ``docs/rendering.md``). ``rendering_threads`` is the
    number of render threads (GL contexts) per camera image size; ``None`` picks one per core.
    """

    physics_dt: float = 1 / 60
    rendering_dt: float = 1 / 60
    rendering_interval: int | None = None
    use_fabric: bool = False
    headless: bool = True
    native: bool = False
    webrtc: bool = False
    backend: str = 'mujoco'
    rendering_lod: bool = True
    rendering_threads: int | None = None
    _text_numbers: ClassVar[tuple[str, ...]] = ('physics_dt', 'rendering_dt')

    @field_validator('physics_dt', 'rendering_dt', mode='before')
    @classmethod
    def _dt_positive(cls, value: Any, info: Any) -> float:
        return _positive_seconds(value, info.field_name)

    @field_validator('backend')
    @classmethod
    def _backend_known(cls, value: str) -> str:
        if value not in _BACKEND_NAMES:
            load_extensions()  # an extension may register it
        if value not in _BACKEND_NAMES:
            raise ValueError(f'unknown physics backend {value!r}; registered backends: {sorted(_BACKEND_NAMES)}')
        return value

    @field_validator('rendering_interval')
    @classmethod
    def _interval_positive(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError(f'rendering_interval must be >= 0 (render every N physics steps; 0, as in InternUtopia, '
                             f'every step) or None; got {value}')
        return value

    @field_validator('rendering_threads')
    @classmethod
    def _threads_positive(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= 64:
            raise ValueError(f'rendering_threads must be 1..64 render threads, or None (one per core); got {value}')
        return value


class Config(BaseCfg):
    """Everything one ``vec_env.Env`` runs: simulator, slot count, spacing and the episode queue."""

    simulator: SimConfig = Field(default_factory=SimConfig)
    env_num: int = 1
    env_offset_size: float = 5.0
    metrics_save_path: str = 'console'
    task_configs: list[SerializeAsAny[TaskCfg]]

    @field_validator('env_num')
    @classmethod
    def _env_num_positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f'env_num must be >= 1; got {value}')
        return value

    @field_validator('env_offset_size')
    @classmethod
    def _offset_positive(cls, value: float) -> float:
        if not value > 0:
            raise ValueError(f'env_offset_size must be > 0 metres; got {value}')
        return value

    @field_validator('task_configs')
    @classmethod
    def _tasks_not_empty(cls, value: list[TaskCfg]) -> list[TaskCfg]:
        if not value:
            raise ValueError('task_configs must hold at least one episode')
        return value

    def to_yaml(self, path: str | os.PathLike[str]) -> None:
        """Write this config as YAML; :meth:`from_yaml` reads back an equal config."""
        with open(path, 'w', encoding='utf-8') as stream:
            yaml.safe_dump(self.model_dump(mode='json'), stream, sort_keys=False)

    @classmethod
    def from_yaml(cls, path: str | os.PathLike[str]) -> Config:
        """Read a config written by :meth:`to_yaml` (or by hand); ``type`` fields pick the classes.

        Installed extensions are loaded first (:func:`internutopia.core.plugins.load_extensions`),
        so the types they register resolve. Relative file paths (scenes, USD files) are found as
        :mod:`internutopia.core.config.files` says: from the current directory, else from the YAML
        file's folder or its parent, as ``internutopia run`` does.
        """
        load_extensions()
        with open(path, encoding='utf-8') as stream:
            data = yaml.safe_load(stream)
        if not isinstance(data, dict):
            raise ValueError(f'{path}: expected a mapping of Config fields at the top level, got {type(data).__name__}')
        from internutopia.core.config.files import with_resolved_files

        config, _ = with_resolved_files(cls.model_validate(data), os.path.dirname(os.path.abspath(path)))
        return config

    def distribute(self, distribution_config: RayDistributionCfg) -> DistributedConfig:
        """Run this config on several Ray workers; see :mod:`internutopia.core.distribution`."""
        # Field values as they are (not a dump): the user's config objects keep their classes.
        values = {name: getattr(self, name) for name in Config.model_fields}
        return DistributedConfig(**values, distribution_config=distribution_config)


class DistributedConfig(Config):
    """A :class:`Config` plus how to distribute it.

    Built by :meth:`Config.distribute`; ``vec_env.Env(distributed_config)`` returns a
    :class:`~internutopia.core.distribution.env.DistributedEnv` with
    ``distribution_config.proc_num * env_num`` slots.
    """

    distribution_config: RayDistributionCfg

    def base_config(self, **changes: object) -> Config:
        """This config without ``distribution_config``, as a plain :class:`Config` (with ``changes``)."""
        values = {name: getattr(self, name) for name in Config.model_fields}
        values.update(changes)
        return Config(**values)


__all__ = [
    'BaseCfg', 'Config', 'ControllerCfg', 'DistributedConfig', 'DistributionCfg', 'MetricCfg', 'ObjectCfg', 'Quat',
    'RayDistributionCfg', 'RewardCfg', 'RobotCfg', 'Scale', 'SensorCfg', 'SimConfig', 'Simulator', 'TaskCfg', 'TypedCfg',
    'Vec3',
]
