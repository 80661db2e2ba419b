"""Connecting a ``DistributedEnv`` to Ray: a private local instance, or the cluster it names."""

from __future__ import annotations

import logging
import math
import os
from typing import Any

from internutopia.core.config import DistributedConfig
from internutopia.core.runner.guard import held_interrupts
from internutopia.core.util.caller import caller_stacklevel
from internutopia.core.util.cpus import usable_cpus

logger = logging.getLogger('internutopia.core.distribution.runners')

#: Tries at starting a private local Ray before giving up.
_LOCAL_START_ATTEMPTS = 3


def connect(ray: Any, config: DistributedConfig) -> tuple[bool, float]:
    """Connect this process to Ray as ``config.distribution_config`` says.

    Returns ``(owns_ray, gpus_per_proc)``: whether this call started or connected Ray (and
    so the env shuts it down on close), and the GPUs each runner reserves (none where the
    machine has fewer than asked for and the MuJoCo backend runs on CPU anyway).

    Raises:
        ValueError: ``working_dir`` while Ray is already initialized here; GPUs asked for that a
            GPU backend cannot do without.
        RuntimeError: a local Ray that did not start in ``_LOCAL_START_ATTEMPTS`` tries.
    """
    dist = config.distribution_config
    gpus_per_proc = dist.gpu_num_per_proc
    owns = False
    working_dir = dist.working_dir
    if ray.is_initialized():
        if working_dir is not None:
            raise ValueError('working_dir is applied when the env connects to Ray itself; Ray is already '
                             f'initialized here: pass runtime_env={{"working_dir": {working_dir!r}}} to your '
                             'ray.init, or leave working_dir unset')
        return False, gpus_per_proc
    common: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    if working_dir is not None:
        common['runtime_env'] = {'working_dir': os.path.abspath(working_dir)}
    if dist.head_address is None:
        need = math.ceil(dist.proc_num * dist.cpu_num_per_proc)
        # address='local': a private instance even where RAY_ADDRESS names a cluster. A cold
        # first start on a loaded machine can time out waiting for Ray's own agent processes
        # (the raylet gives its dashboard agent a fixed 15 s); a second start is warm.
        for attempt in range(_LOCAL_START_ATTEMPTS):
            try:
                _init(ray, address='local', num_cpus=max(usable_cpus(), need), **common)
                break
            except Exception as exc:
                if ray.is_initialized():
                    ray.shutdown()
                if attempt + 1 == _LOCAL_START_ATTEMPTS:
                    raise RuntimeError(f'a local Ray did not start ({_LOCAL_START_ATTEMPTS} attempts): {exc}') from exc
                logger.warning('a local Ray did not start (%s); starting it again', exc)
        owns = True
        have = ray.cluster_resources().get('GPU', 0)
        if dist.gpu_num_per_proc and have < dist.proc_num * dist.gpu_num_per_proc:
            if config.simulator.backend != 'mujoco':
                raise ValueError(f'gpu_num_per_proc={dist.gpu_num_per_proc} for proc_num={dist.proc_num} needs '
                                 f'{dist.proc_num * dist.gpu_num_per_proc} GPUs; this machine has {have}')
            import warnings

            warnings.warn(f'gpu_num_per_proc={dist.gpu_num_per_proc} for proc_num={dist.proc_num} asks for '
                          f'{dist.proc_num * dist.gpu_num_per_proc} GPUs and this machine has {have}; the MuJoCo '
                          'backend runs on CPU, so the runners reserve none', stacklevel=caller_stacklevel())
            gpus_per_proc = 0.0
    else:
        if dist.head_address.startswith('ray://'):
            common.pop('include_dashboard')
        _init(ray, address=dist.head_address, **common)
        owns = True
    return owns, gpus_per_proc


def _init(ray: Any, **kwargs: Any) -> None:
    """``ray.init(**kwargs)``, whole: a Ctrl-C during it is held until it returns (a ``ray.init``
    interrupted half-way leaves the Ray processes it started running, and ``ray.shutdown`` does not
    stop them), then Ray is shut down again and the ``KeyboardInterrupt`` raised."""
    try:
        with held_interrupts():
            ray.init(**kwargs)
    except KeyboardInterrupt:
        with held_interrupts():  # (a second Ctrl-C does not cut the shutdown short either)
            if ray.is_initialized():
                ray.shutdown()
        raise
