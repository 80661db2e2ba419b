"""Distribution configs (InternUtopia's ``internutopia.core.config.distribution``).

>>> from internutopia.core.config import Config, TaskCfg
>>> from internutopia.core.config.distribution import RayDistributionCfg
>>> cfg = Config(env_num=4, task_configs=[TaskCfg(type='SingleInferenceTask')])
>>> dist = cfg.distribute(RayDistributionCfg(proc_num=2))
>>> type(dist).__name__, dist.env_num, dist.distribution_config.proc_num
('DistributedConfig', 4, 2)
>>> RayDistributionCfg(proc_num=0)
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for RayDistributionCfg
proc_num
  Input should be greater than or equal to 1 [type=greater_than_equal, input_value=0, input_type=int]
...
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator

from internutopia.core.config.base import BaseCfg


class DistributionCfg(BaseCfg):
    """Base of the distribution configs (InternUtopia's ``DistributionCfg``): a ``type`` and how
    many runner processes; :class:`RayDistributionCfg` (``type='ray'``) is the one that runs."""

    # As InternUtopia's, unknown keys are kept (with a warning); values are strict.
    model_config = ConfigDict(extra='allow', strict=True, validate_assignment=True, protected_namespaces=())

    type: str
    proc_num: int = Field(1, ge=1)
    gpu_num_per_proc: float = Field(0.0, ge=0)


class RayDistributionCfg(DistributionCfg):
    """How to spread a run over Ray workers (InternUtopia's ``RayDistributionCfg``, same fields).

    Strict values: strings for numbers and bools for ints are errors. Unknown keys are kept with
    a warning, as InternUtopia keeps them (an error in strict mode).

    Args:
        proc_num: number of runner actors (worker processes); each owns one physics world of
            ``env_num`` slots, so the env has ``proc_num * env_num`` slots in all.
        gpu_num_per_proc: GPUs Ray reserves for each runner (fractions allowed). The MuJoCo
            backend runs on CPU, so the default is 0; a request the cluster cannot meet makes
            ``Env(...)`` fail after ``startup_timeout_s``.
        head_address: an existing cluster: ``'auto'`` (a ``ray start --head`` on this machine or
            the one ``RAY_ADDRESS`` names), ``'host:6379'``, or a Ray Client address
            ``'ray://host:10001'``. ``None`` (default): the env starts a private local Ray and
            shuts it down in ``close()``.
        working_dir: a local directory Ray uploads to every worker and puts on its ``sys.path``
            (code, assets and data the workers need on other machines).
        cpu_num_per_proc: CPUs Ray reserves for each runner (default 1: one physics loop).
        startup_timeout_s: how long to wait for a runner actor to come up before failing.
        step_timeout_s: how long a runner may take over one step (default 60 s); one that takes
            longer is taken as hung: it is restarted and its running episodes requeued.
        reset_timeout_s: the same for a reset, which may load scenes and compile models (default 600 s).
        type: always ``'ray'`` (InternUtopia's field; the only distribution here).
    """

    type: Literal['ray'] = 'ray'
    #: ``type=None`` is ``'ray'`` (InternUtopia never reads it: the class is what picks Ray).
    _none_means: ClassVar[Mapping[str, Any]] = {'type': 'ray'}
    head_address: str | None = None
    working_dir: str | None = None
    cpu_num_per_proc: float = Field(1.0, gt=0)
    startup_timeout_s: float = Field(120.0, gt=0)
    step_timeout_s: float = Field(60.0, gt=0)
    reset_timeout_s: float = Field(600.0, gt=0)

    @field_validator('working_dir')
    @classmethod
    def _working_dir_exists(cls, value: str | None) -> str | None:
        if value is not None and not os.path.isdir(value):
            raise ValueError(f'working_dir must be an existing local directory; got {value!r}')
        return value

    @field_validator('head_address')
    @classmethod
    def _address_not_empty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("head_address must be None (start a local Ray), 'auto', 'host:port' or 'ray://host:port'")
        return value


__all__ = ['DistributionCfg', 'RayDistributionCfg']
