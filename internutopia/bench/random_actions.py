"""The random actions the Gymnasium benchmarks step with, drawn before any timing.

>>> import gymnasium as gym
>>> import internutopia.envs  # (registers the ids)
>>> env = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=2)
>>> _ = env.reset(seed=0)
>>> actions = warmed_random_actions(env, 3)
>>> len(actions), actions[0].shape
(64, (2, 2))
>>> env.close()
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ['warmed_random_actions']

#: Vector actions drawn; step ``k`` takes ``actions[k % ACTIONS]``.
ACTIONS = 64


def warmed_random_actions(env: Any, warm_steps: int) -> list[np.ndarray]:
    """``ACTIONS`` vector actions of the reset vector env ``env``, uniform over its ``Box`` (seed 0),
    after ``warm_steps`` vector steps with them (the kernels compiled, the caches filled)."""
    space: Any = env.action_space
    rng = np.random.default_rng(0)
    actions = [rng.uniform(space.low, space.high).astype(space.dtype) for _ in range(ACTIONS)]
    for k in range(warm_steps):
        env.step(actions[k % ACTIONS])
    return actions
