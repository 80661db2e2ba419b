"""The top-level config: :class:`Config` (simulator, slot count and spacing, the episode queue; YAML in
and out) and :class:`DistributedConfig` (a ``Config`` run on several Ray workers)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import yaml
from pydantic import Field, SerializeAsAny, field_validator

from internutopia.core.config.base import BaseCfg
from internutopia.core.config.distribution import RayDistributionCfg
from internutopia.core.config.simulator import SimConfig
from internutopia.core.config.task import TaskCfg
from internutopia.core.config.values import MAX_OFFSET_M
from internutopia.core.plugins import load_extensions


class Config(BaseCfg):
    """Everything one ``vec_env.Env`` runs: simulator, slot count, spacing and the episode queue."""

    simulator: SimConfig = Field(default_factory=SimConfig)
    env_num: int = 1
    env_offset_size: float = 5.0
    metrics_save_path: str = 'console'
    #: How a results line is written: ``'records'`` (one record per episode, whatever its outcome)
    #: or ``'upstream'`` (InternUtopia's: the finished episode's metric dict); docs/reliability.md.
    metrics_save_format: Literal['records', 'upstream'] = 'records'
    #: Tries an episode gets to load and start before it is recorded as failed.
    episode_attempts: int = Field(3, ge=1, le=1000)
    #: An episode that fails (its task, metrics, reward, controllers or observations raise):
    #: ``'record'`` writes its failure record and goes on; ``'raise'`` also raises the error once the
    #: call is complete and consistent.
    episode_errors: Literal['record', 'raise'] = 'record'
    task_configs: list[SerializeAsAny[TaskCfg]]
    #: ``metrics_save_path=None`` is ``'none'``: no results written (InternUtopia's documented
    #: meaning: "``None`` or ``'none'``: do not save").
    _none_means: ClassVar[Mapping[str, Any]] = {'metrics_save_path': 'none'}

    @field_validator('env_num')
    @classmethod
    def _env_num_positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f'env_num must be >= 1; got {value}')
        return value

    @field_validator('env_offset_size')
    @classmethod
    def _offset_positive(cls, value: float) -> float:
        if not 0 < value <= MAX_OFFSET_M:
            raise ValueError(f'env_offset_size must be > 0 and at most {MAX_OFFSET_M:g} metres (the spacing of the '
                             f'slots on the grid); got {value}')
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
        so the types they register resolve. File paths are found as
        :mod:`internutopia.core.config.files` says (``package://`` paths; relative ones from the
        current directory, else from the YAML file's folder or its parent), as ``internutopia run`` does.

        Unknown keys are handled as in the Python constructors (kept or ignored, each with an
        :class:`~internutopia.core.config.unknown_keys.UnknownConfigKeyWarning` that carries its
        ``file:line``; errors in strict mode).

        Raises:
            ConfigFileError: (a ``ValueError``) every problem of the file at once, each as
                ``'file:line: path: message'`` (duplicate keys, bad values, unknown keys in strict
                mode, YAML errors, aliases that expand too far; see
                :mod:`internutopia.core.config.yaml_file`).
        """
        load_extensions()
        from internutopia.core.config.files import with_resolved_files
        from internutopia.core.config.yaml_file import load_yaml_config

        config, _ = with_resolved_files(load_yaml_config(path, model=cls), os.path.dirname(os.path.abspath(path)))
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


__all__ = ['Config', 'DistributedConfig']
