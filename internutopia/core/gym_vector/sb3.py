"""A Stable-Baselines3 ``VecEnv`` bridge for the vector env (``SAME_STEP`` autoreset).

SB3 builds one torch module per entry of a ``Dict`` observation (``MultiInputPolicy``), and a
module's name cannot hold a dot; its checker also wants every entry to have at least one axis.
The vector env's dict keys are dotted paths (``robot.joint_positions``) and its scalars have
shape ``()``, so the bridge hands SB3 :class:`SB3DictKeys`' space: each key with ``_`` for ``.``
(``robot_joint_positions``), scalars of shape ``(1,)``, the values unchanged.
:class:`SB3DictObservation` does the same for one ``gymnasium.Env`` (``FlatEnv(obs_mode='dict')``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from internutopia.core.gym_vector.vector_env import VectorEnv

__all__ = ['SB3DictKeys', 'SB3DictObservation', 'sb3_vec_env']


def _unbatch_info(info: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in info.items():
        if key.startswith('_'):
            continue
        out[key] = _unbatch_info(value) if isinstance(value, dict) else (value[0].item() if isinstance(value[0], np.generic) else value[0])
    return out


def _env_infos(info: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Gymnasium's vector info (arrays with ``_key`` masks) as one dict per env, as SB3 keeps them.

    >>> _env_infos({'episode_index': np.array([4, 0]), '_episode_index': np.array([True, False])}, 2)
    [{'episode_index': 4}, {}]
    """
    out: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in info.items():
        if key.startswith('_'):
            continue
        mask = info.get(f'_{key}', np.ones(num_envs, dtype=bool))
        rows = _env_infos(value, num_envs) if isinstance(value, dict) else None
        for env in np.flatnonzero(mask).tolist():
            item = value[env] if rows is None else rows[env]
            out[env][key] = item.item() if isinstance(item, np.generic) else item
    return out


class SB3DictKeys:
    """A ``Dict`` observation space as Stable-Baselines3 takes it, and the observations mapped to it.

    Each key's dots become ``_`` (``'robot.joint_positions'`` -> ``'robot_joint_positions'``;
    two keys that would meet are a ``ValueError`` naming them) and a ``Box`` of shape ``()``
    becomes one of shape ``(1,)``; every value is kept as it is (same numbers, same dtype).

    >>> keys = SB3DictKeys(spaces.Dict({'robot.position': spaces.Box(-1, 1, (3,)), 'task.distance': spaces.Box(0, 9, ())}))
    >>> keys.key_map
    {'robot_position': 'robot.position', 'task_distance': 'task.distance'}
    >>> keys.space['task_distance'].shape, keys.single({'robot.position': np.zeros(3), 'task.distance': np.float32(2.5)})['task_distance']
    ((1,), array([2.5], dtype=float32))
    """

    def __init__(self, space: spaces.Dict) -> None:
        #: ``{sb3_key: key of the wrapped space}``, in the wrapped space's order.
        self.key_map: dict[str, str] = {}
        out: dict[str, spaces.Space] = {}
        for key, sub in space.spaces.items():
            name = str(key).replace('.', '_')
            if name in self.key_map:
                raise ValueError(f'observation keys {self.key_map[name]!r} and {key!r} are both {name!r} for '
                                 'Stable-Baselines3 (whose Dict keys cannot hold a dot); leave one out of obs_keys')
            self.key_map[name] = key
            if isinstance(sub, spaces.Box) and sub.shape == ():
                sub = spaces.Box(np.reshape(sub.low, (1,)), np.reshape(sub.high, (1,)), (1,), sub.dtype)
            out[name] = sub
        self._shapes = {name: sub.shape for name, sub in out.items()}
        #: The space SB3 sees.
        self.space = spaces.Dict(out)

    def single(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        """One env's observation under the SB3 keys."""
        return {name: self._shaped(obs[key], self._shapes[name]) for name, key in self.key_map.items()}

    def batch(self, obs: Mapping[str, Any], num_envs: int) -> dict[str, Any]:
        """A batch of ``num_envs`` observations under the SB3 keys."""
        return {name: self._shaped(obs[key], None if (shape := self._shapes[name]) is None else (num_envs, *shape))
                for name, key in self.key_map.items()}

    @staticmethod
    def _shaped(value: Any, shape: tuple[int, ...] | None) -> Any:
        if shape is None or not isinstance(value, (np.ndarray, np.generic, int, float, bool)):
            return value
        array = np.asarray(value)
        return array if array.shape == shape else array.reshape(shape)


class SB3DictObservation(gym.ObservationWrapper):
    """A ``gymnasium.Env`` with a ``Dict`` observation (``FlatEnv(obs_mode='dict')``) under
    :class:`SB3DictKeys`' space: what Stable-Baselines3's ``check_env`` and ``MultiInputPolicy`` take.
    (:func:`sb3_vec_env` does this on its own.) ``key_map`` says which key is which."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not isinstance(env.observation_space, spaces.Dict):
            raise TypeError(f'SB3DictObservation wraps an env with a Dict observation space; got {env.observation_space}')
        self._keys = SB3DictKeys(env.observation_space)
        self.key_map = self._keys.key_map
        self.observation_space = self._keys.space

    def observation(self, observation: Any) -> Any:
        return self._keys.single(observation)


def _same(a: Any, b: Any) -> bool:
    """Whether two reset options are the same (arrays compared by value)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _one_options(options: Any, num_envs: int) -> dict[str, Any] | None:
    """SB3's per-env reset options (``VecEnv.set_options``) as the one dict the vector env's
    ``reset(options=...)`` takes: ``None`` when none is set."""
    if not isinstance(options, (list, tuple)) or len(options) != num_envs:
        raise ValueError(f'set_options: options must be a dict, or a list of {num_envs} dicts (one per env); got {options!r}')
    for index, entry in enumerate(options):
        if entry is not None and not isinstance(entry, dict):
            raise TypeError(f'set_options: options must be dicts (reset options of the VectorEnv, e.g. '
                            f"{{'reset_mask': mask}}); got {type(entry).__name__} {entry!r} for env {index}")
    if not any(options):
        return None
    first = options[0]
    if not all(entry is first or _same(entry or {}, first or {}) for entry in options):
        raise ValueError('set_options: the envs of one internutopia VectorEnv are reset together with one options dict; '
                         "got different options for different envs (to reset some envs only, give every env "
                         "{'reset_mask': mask})")
    return dict(first)


def sb3_vec_env(env: gym.vector.VectorEnv) -> Any:
    """Wrap a :class:`VectorEnv` (or a Gymnasium vector wrapper around one) as a Stable-Baselines3 ``VecEnv``.

    SB3 resets finished envs inside ``step_wait`` and wants the last observation in
    ``infos[i]['terminal_observation']``: that is Gymnasium's ``SAME_STEP`` autoreset, so ``env``
    must use ``autoreset_mode='SameStep'``. The info of each finished episode also carries
    ``metrics`` (all of the episode's metrics), ``is_success`` (its ``success`` metric, when it has
    one; SB3 logs the success rate from it) and ``TimeLimit.truncated``. Needs ``stable-baselines3``
    (``pip install 'internutopia[train]'``).

    SB3 works on numpy arrays: ``env`` must return them (``array_backend='numpy'``, the default).
    A ``Dict`` observation (``obs_mode='dict'``) is handed over under :class:`SB3DictKeys`' keys
    (``robot_joint_positions`` for ``robot.joint_positions``; ``venv.obs_key_map`` says which is
    which), so ``PPO('MultiInputPolicy', venv)`` takes it. Reset options set with SB3's
    ``venv.set_options({...})`` go to the vector env's next ``reset`` (one dict for every env).
    """
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as SB3VecEnv

    if not isinstance(env, gym.vector.VectorEnv) or not isinstance(env.unwrapped, VectorEnv):
        raise TypeError(f'sb3_vec_env wraps an internutopia VectorEnv (possibly inside Gymnasium vector wrappers); got {env!r}')
    if env.metadata.get('autoreset_mode') != AutoresetMode.SAME_STEP:
        raise ValueError("sb3_vec_env needs VectorEnv(..., autoreset_mode='SameStep') (SB3 resets within the step)")
    core: VectorEnv = env.unwrapped
    if core.array_backend != 'numpy':
        raise ValueError(f'sb3_vec_env needs a VectorEnv returning numpy arrays (Stable-Baselines3 works on numpy); '
                         f"got array_backend={core.array_backend!r}: make it with array_backend='numpy' (the default)")

    class InternUtopiaSB3VecEnv(SB3VecEnv):
        """SB3's ``VecEnv`` interface over a Gymnasium ``SAME_STEP`` vector env."""

        def __init__(self, inner: gym.vector.VectorEnv, core: VectorEnv) -> None:
            self.inner = inner
            self.core = core  # inner.unwrapped
            self._actions: Any = None
            space = inner.single_observation_space
            #: The renaming of a ``Dict`` observation for SB3 (``None`` for a ``Box``).
            self._keys = SB3DictKeys(space) if isinstance(space, spaces.Dict) else None
            #: ``{SB3 key: the vector env's key}`` of a ``Dict`` observation (``None`` for a ``Box``).
            self.obs_key_map = None if self._keys is None else dict(self._keys.key_map)
            super().__init__(inner.num_envs, space if self._keys is None else self._keys.space, inner.single_action_space)
            self.render_mode = core.render_mode

        def _obs(self, obs: Any) -> Any:
            return obs if self._keys is None else self._keys.batch(obs, self.num_envs)

        def reset(self) -> Any:
            seed = self._seeds[0] if any(s is not None for s in self._seeds) else None
            options = _one_options(self._options, self.num_envs)
            obs, info = self.inner.reset(seed=seed, options=options)
            for env, env_info in enumerate(_env_infos(info, self.num_envs)):
                if env_info:  # (SB3 keeps each env's reset info; envs a masked reset left keep theirs)
                    self.reset_infos[env] = env_info
            self._reset_seeds()
            self._reset_options()
            return self._obs(obs)

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
                    final = info['final_obs'][i]
                    infos[i] = {'terminal_observation': final if self._keys is None else self._keys.single(final),
                                'metrics': metrics,
                                'TimeLimit.truncated': bool(truncated[i] and not terminated[i])}
                    if 'success' in metrics:
                        infos[i]['is_success'] = bool(metrics['success'])
            return self._obs(obs), rewards.astype(np.float32), dones, infos

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
            return self.core.vec_env.render_envs()  # (a frame per env, each its slot alone)

        def render(self, mode: str | None = None) -> Any:
            # The world's overview already shows every env, at the size of one frame: SB3's own
            # render would tile get_images' num_envs frames into one image of many frames' size.
            if (mode or self.render_mode) == 'rgb_array' and self.render_mode == 'rgb_array':
                return self.core.vec_env.render()
            return super().render(mode)

    return InternUtopiaSB3VecEnv(env, core)
