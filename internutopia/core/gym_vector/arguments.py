"""Checks of what a user passes to :class:`~internutopia.core.gym_vector.vector_env.VectorEnv`:
its constructor's arguments and ``reset``'s options.

Each check raises before anything changes, naming the argument and what it accepts:

>>> from internutopia.core.gym_vector.arguments import parse_autoreset_mode
>>> parse_autoreset_mode('same_step')
<AutoresetMode.SAME_STEP: 'SameStep'>
>>> parse_autoreset_mode('later')
Traceback (most recent call last):
...
ValueError: autoreset_mode must be one of ['NextStep', 'SameStep', 'Disabled']; got 'later'
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from internutopia.core.config import Config, DistributedConfig

__all__ = ['check_action_repeat', 'parse_autoreset_mode', 'refuse_distributed', 'reset_mask', 'resolve_config']


def resolve_config(config: Config | str | os.PathLike[str], num_envs: int | None) -> Config:
    """The config to build the world from: ``config`` itself or read from its YAML path, in a copy
    with ``env_num=num_envs`` where ``num_envs`` is given and differs (the user's is never changed)."""
    if isinstance(config, (str, os.PathLike)):
        config = Config.from_yaml(config)
    if not isinstance(config, Config):
        raise TypeError(f'config must be an internutopia Config or the path of a YAML config; got {type(config).__name__}')
    refuse_distributed(config, 'the Gymnasium VectorEnv')
    if num_envs is not None and num_envs != config.env_num:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f'num_envs must be an int >= 1; got {num_envs!r}')
        config = config.update(env_num=int(num_envs))
    return config


def refuse_distributed(config: Config, adapter: str) -> None:
    """A ``ValueError`` for a :class:`~internutopia.core.config.DistributedConfig`: the Gymnasium
    adapters step the world's arrays in this process, which a Ray-distributed env keeps in its
    runners' processes (they failed deep inside with an unrelated error)."""
    if isinstance(config, DistributedConfig):
        raise ValueError(f'{adapter} runs its world in this process; a DistributedConfig (Ray, '
                         f'distribution_config.proc_num={config.distribution_config.proc_num}) is not supported: pass '
                         'config.base_config() (the same slots in one world here), or step vec_env.Env(config) on Ray '
                         'with reset()/step()')


def parse_autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    """``mode`` as Gymnasium's ``AutoresetMode``: a member, its value, its name or its name in lower case."""
    if isinstance(mode, AutoresetMode):
        return mode
    for member in AutoresetMode:
        if mode in (member.value, member.name, member.name.lower()):
            return member
    raise ValueError(f'autoreset_mode must be one of {[m.value for m in AutoresetMode]}; got {mode!r}')


def check_action_repeat(repeat: Any) -> int:
    """``repeat`` (physics steps per ``step()``) as an int >= 1."""
    if isinstance(repeat, bool) or not isinstance(repeat, (int, np.integer)) or repeat < 1:
        raise ValueError(f'action_repeat must be an int >= 1; got {repeat!r}')
    return int(repeat)


def reset_mask(options: dict[str, Any] | None, num_envs: int) -> np.ndarray | None:
    """The envs ``reset(options=...)`` resets: ``options['reset_mask']`` checked as Gymnasium's own
    vector envs check it (a ``bool`` array of shape ``(num_envs,)`` with a True), ``None`` for every
    env. Any other option is a ``ValueError`` naming the valid ones. ``options`` is not changed."""
    options = dict(options or {})
    mask = options.pop('reset_mask', None)
    if mask is not None:
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
        if mask.shape != (num_envs,):
            raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
        if mask.dtype != np.bool_:
            raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
        if not np.any(mask):
            raise ValueError("`options['reset_mask']` must contain a boolean array with at least one True value, "
                             f'got reset_mask={mask}')
    if options:
        raise ValueError(f'unknown reset option(s) {sorted(options)}; valid options: [\'reset_mask\']')
    return mask
