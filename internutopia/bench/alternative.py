"""The common alternative ours is compared with: ``gymnasium.vector.AsyncVectorEnv``.

``env_num`` single-robot ``gym_env.Env`` processes doing the same control as ours, which is what a
Python loop over envs (InternUtopia's vec env) or a process pool amounts to.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from internutopia.bench.cases import get_case

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


def measure_async(case: str, env_num: int, cameras: str, steps: int, user_config: str | None = None) -> float:
    """Env-steps/s of ``AsyncVectorEnv`` over ``env_num`` single-robot envs doing the same control."""
    import gymnasium as gym

    # A fork server starts each env from a clean process (no GL state inherited from this one).
    context = 'forkserver' if sys.platform.startswith('linux') else 'spawn'
    vector = gym.vector.AsyncVectorEnv([_SingleRobotEnv(case, cameras, user_config)] * env_num, context=context)
    try:
        vector.reset()
        actions = np.zeros(env_num, dtype=np.int64)
        for _ in range(max(5, steps // 20)):
            vector.step(actions)
        count = max(20, steps // 4)
        began = time.perf_counter()
        for _ in range(count):
            vector.step(actions)
        return env_num * count / (time.perf_counter() - began)
    finally:
        vector.close()
