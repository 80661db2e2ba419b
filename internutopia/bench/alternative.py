"""The common alternative ours is compared with: ``gymnasium.vector.AsyncVectorEnv``.

``env_num`` single-robot ``gym_env.Env`` processes doing the same control as ours, which is what a
Python loop over envs (InternUtopia's vec env) or a process pool amounts to. The pool runs in a
process of its own, so its whole process tree (driver, fork server, workers) is measured, and
killed with one signal (:mod:`internutopia.bench.processes`). How many workers it gets is
decided beforehand from its memory (:mod:`internutopia.bench.baseline`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from internutopia.bench.cases import get_case
from internutopia.bench.fresh import DEFAULT_TIMEOUT_S, run_in_fresh_process
from internutopia.bench.pool import async_vector_env, pool_memory

__all__ = ['measure_async']


class _SingleRobotEnv:
    """Picklable factory of one single-robot gymnasium env of a case (for AsyncVectorEnv)."""

    def __init__(self, case: str, cameras: str, user_config: str | None) -> None:
        self.args = (case, cameras, user_config)

    def __call__(self) -> Any:
        import gymnasium as gym

        from internutopia.core.gym_env import Env as GymEnv
        from internutopia_extension import import_extensions

        case_name, cameras, user_config = self.args
        import_extensions()
        case = get_case(case_name, user_config)
        config = case.config(1, cameras)
        inner = GymEnv(config.model_copy(update={'task_configs': config.task_configs[:1]}))
        entry = case.dict_actions(1)[0]
        command = entry[case.robot] if entry and case.robot else None

        class Wrapped(gym.Env):
            observation_space = gym.spaces.Box(-np.inf, np.inf, (3,))
            action_space = gym.spaces.Discrete(1)

            def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
                obs, _ = inner.reset()
                return obs['position'].astype(np.float32), {}

            def step(self, action: Any) -> tuple:
                obs, reward, terminated, truncated, info = inner.step(command)
                return obs['position'].astype(np.float32), reward, terminated, truncated, {}

        return Wrapped()


def _measure_async(case: str, workers: int, cameras: str, steps: int, user_config: str | None) -> dict[str, Any]:
    vector = async_vector_env([_SingleRobotEnv(case, cameras, user_config)] * workers)
    try:
        vector.reset()
        actions = np.zeros(workers, dtype=np.int64)
        for _ in range(max(5, steps // 20)):
            vector.step(actions)
        count = max(20, steps // 4)
        began = time.perf_counter()
        for _ in range(count):
            vector.step(actions)
        rate = workers * count / (time.perf_counter() - began)
        return {'env_steps_per_s': rate, 'workers': workers} | pool_memory(vector)
    finally:
        vector.close()


def measure_async(case: str, workers: int, cameras: str, steps: int, user_config: str | None = None,
                  timeout_s: float | None = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
    """``AsyncVectorEnv`` over ``workers`` single-robot envs doing the same control, in a fresh
    process (its driver) that leads a process group: ``env_steps_per_s``, ``workers``, and the
    peak memory of its largest worker (``worker_peak_mb``) and of its whole process tree
    (``tree_peak_mb``: driver, fork server and workers; ``processes``)."""
    return run_in_fresh_process(_measure_async, case, workers, cameras, steps, user_config,
                                what=f'AsyncVectorEnv of {case} with {workers} workers, cameras {cameras}',
                                timeout_s=timeout_s)
