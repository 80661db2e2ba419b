"""A Stable-Baselines3 ``VecEnv`` bridge for the vector env (``SAME_STEP`` autoreset)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from internutopia.core.gym_vector.vector_env import VectorEnv


def _unbatch_info(info: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in info.items():
        if key.startswith('_'):
            continue
        out[key] = _unbatch_info(value) if isinstance(value, dict) else (value[0].item() if isinstance(value[0], np.generic) else value[0])
    return out

def sb3_vec_env(env: gym.vector.VectorEnv) -> Any:
    """Wrap a :class:`VectorEnv` (or a Gymnasium vector wrapper around one) as a Stable-Baselines3 ``VecEnv``.

    SB3 resets finished envs inside ``step_wait`` and wants the last observation in
    ``infos[i]['terminal_observation']``: that is Gymnasium's ``SAME_STEP`` autoreset, so ``env``
    must use ``autoreset_mode='SameStep'``. The info of each finished episode also carries
    ``metrics`` (all of the episode's metrics), ``is_success`` (its ``success`` metric, when it has
    one; SB3 logs the success rate from it) and ``TimeLimit.truncated``. Needs ``stable-baselines3``
    (``pip install 'internutopia[train]'``).
    """
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as SB3VecEnv

    if not isinstance(env, gym.vector.VectorEnv) or not isinstance(env.unwrapped, VectorEnv):
        raise TypeError(f'sb3_vec_env wraps an internutopia VectorEnv (possibly inside Gymnasium vector wrappers); got {env!r}')
    if env.metadata.get('autoreset_mode') != AutoresetMode.SAME_STEP:
        raise ValueError("sb3_vec_env needs VectorEnv(..., autoreset_mode='SameStep') (SB3 resets within the step)")
    core: VectorEnv = env.unwrapped

    class InternUtopiaSB3VecEnv(SB3VecEnv):
        """SB3's ``VecEnv`` interface over a Gymnasium ``SAME_STEP`` vector env."""

        def __init__(self, inner: gym.vector.VectorEnv, core: VectorEnv) -> None:
            self.inner = inner
            self.core = core  # inner.unwrapped
            self._actions: Any = None
            super().__init__(inner.num_envs, inner.single_observation_space, inner.single_action_space)
            self.render_mode = core.render_mode

        def reset(self) -> Any:
            seed = self._seeds[0] if any(s is not None for s in self._seeds) else None
            obs, _ = self.inner.reset(seed=seed)
            self._reset_seeds()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = actions

        def step_wait(self) -> Any:
            obs, rewards, terminated, truncated, info = self.inner.step(self._actions)
            dones = terminated | truncated
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            if dones.any():
                final_info = info.get('final_info', {})
                all_metrics = final_info.get('metrics', {})
                for i in np.flatnonzero(dones):
                    metrics = {k: v[i] for k, v in all_metrics.items() if not k.startswith('_') and all_metrics[f'_{k}'][i]}
                    infos[i] = {'terminal_observation': info['final_obs'][i], 'metrics': metrics,
                                'TimeLimit.truncated': bool(truncated[i] and not terminated[i])}
                    if 'success' in metrics:
                        infos[i]['is_success'] = bool(metrics['success'])
            return obs, rewards.astype(np.float32), dones, infos

        def close(self) -> None:
            self.inner.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            values = self.core.get_attr(attr_name)
            return [values[i] for i in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            views = self.core._views
            for i in self._get_indices(indices):
                setattr(views[i], attr_name, value)

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
            values = self.core.call(method_name, *method_args, **method_kwargs)
            return [values[i] for i in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False for _ in self._get_indices(indices)]

        def get_images(self) -> Any:
            image = self.core.vec_env.render()
            return [image for _ in range(self.num_envs)]

    return InternUtopiaSB3VecEnv(env, core)
