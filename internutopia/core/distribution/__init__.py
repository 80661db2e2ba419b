"""Scale out on Ray: many worlds on many cores and machines, one episode queue.

>>> from internutopia.core.config import Config
>>> from internutopia.core.distribution import RayDistributionCfg
>>> from internutopia.core.vec_env import Env
>>> # env = Env(config.distribute(RayDistributionCfg(proc_num=2)))   # 2 * env_num slots

``Config.distribute(RayDistributionCfg(...))`` returns a :class:`DistributedConfig`;
``vec_env.Env`` given one starts ``proc_num`` runner actors (one physics world of ``env_num``
slots each) and one episode-queue actor they all pull from, and behaves as one env of
``proc_num * env_num`` slots (global slot id = ``runner_id * env_num + local id``).
See ``docs/distributed.md``. Ray is only imported when such an env is built (``pip install
'internutopia[ray]'``).
"""

from __future__ import annotations

from typing import Any

from internutopia.core.config import DistributedConfig, RayDistributionCfg

__all__ = ['DistributedConfig', 'DistributedEnv', 'RayDistributionCfg']


def __getattr__(name: str) -> Any:
    if name == 'DistributedEnv':
        from internutopia.core.distribution.env import DistributedEnv

        return DistributedEnv
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
