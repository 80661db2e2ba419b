"""An rsl-rl ``VecEnv`` bridge for the vector env: batched torch tensors in and out, no per-env Python.

`rsl-rl-lib <https://github.com/leggedrobotics/rsl_rl>`_ (the legged-robotics PPO of ETH Zurich
and NVIDIA) steps its envs through a small interface (``rsl_rl.env.VecEnv``): ``step(actions)``
takes a ``(num_envs, num_actions)`` tensor and returns ``(obs, rewards, dones, extras)``, where
``obs`` is a ``TensorDict`` of observation groups, ``dones`` marks every env whose episode ended
on the step (its observation is already the next episode's first one) and
``extras['time_outs']`` the ones among them that ran out of time rather than reaching a terminal
state (PPO bootstraps their return from the critic instead of cutting it at zero).

That is Gymnasium's ``SAME_STEP`` autoreset with ``dones = terminated | truncated`` and
``time_outs = truncated & ~terminated``, so :class:`RslRlVecEnv` wraps a :class:`VectorEnv`
(or a Gymnasium vector wrapper around one) made with ``autoreset_mode='SameStep'`` and a flat
``Box`` observation. The observation is one group, ``'policy'``, which the actor and the critic
both read (rsl-rl's default ``obs_groups``). Observations are copied into fresh tensors: rsl-rl
keeps the previous step's observation until it stores the transition, and the vector env may
reuse its arrays. The vector env may return numpy arrays or torch tensors (``array_backend``
``'numpy'`` or ``'torch'``: a torch observation goes to ``device`` without a stop on the host);
Warp arrays are refused.

Finished episodes are kept, as arrays, for whoever reports progress: :meth:`RslRlVecEnv.take_episodes`
returns their returns, lengths (env steps) and every metric the episodes recorded, and forgets
them.

>>> import gymnasium
>>> import internutopia.envs  # registers the ids
>>> vector = gymnasium.make_vec('internutopia/H1Walk-v0', num_envs=2, autoreset_mode='SameStep')
>>> envs = RslRlVecEnv(vector, seed=0)
>>> envs.num_envs, envs.num_actions, envs.get_observations()['policy'].shape
(2, 10, torch.Size([2, 44]))
>>> obs, rewards, dones, extras = envs.step(torch.zeros(2, 10))
>>> rewards.dtype, dones.dtype, extras['time_outs'].shape
(torch.float32, torch.int64, torch.Size([2]))
>>> envs.close()

Needs ``rsl-rl-lib`` (``pip install 'internutopia[train]'``) only to train; the bridge itself uses
torch and ``tensordict`` (both come with it).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from internutopia.core.gym_vector.vector_env import VectorEnv

try:
    import torch
    from tensordict import TensorDict
except ImportError as exc:  # pragma: no cover - depends on the optional extra
    raise ImportError(f"the rsl-rl bridge needs torch and tensordict: pip install 'internutopia[train]' ({exc})") from None

__all__ = ['OBS_GROUP', 'RslRlVecEnv']

#: The observation group the actor and the critic read.
OBS_GROUP = 'policy'


def _host(values: Any) -> np.ndarray:
    """``values`` (a numpy array or a torch tensor) as a numpy array on the host."""
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)


class RslRlVecEnv:
    """rsl-rl's ``VecEnv`` interface (duck-typed: rsl-rl checks no base class) over a ``SAME_STEP``
    vector env of this project; see the module docstring.

    Args:
        env: a :class:`VectorEnv` (or a Gymnasium vector wrapper around one) with
            ``autoreset_mode='SameStep'``, a flat ``Box`` observation and ``array_backend``
            ``'numpy'`` or ``'torch'``.
        seed: the seed of the first reset (``None``: unseeded).
        device: where the tensors go (the vector env's numpy arrays, or its torch tensors, are moved there).
    """

    def __init__(self, env: gym.vector.VectorEnv, seed: int | None = None, device: str | torch.device = 'cpu') -> None:
        if not isinstance(env, gym.vector.VectorEnv) or not isinstance(env.unwrapped, VectorEnv):
            raise TypeError(f'RslRlVecEnv wraps an internutopia VectorEnv (possibly inside Gymnasium vector wrappers); got {env!r}')
        if env.metadata.get('autoreset_mode') != AutoresetMode.SAME_STEP:
            raise ValueError("RslRlVecEnv needs autoreset_mode='SameStep' (rsl-rl's dones are the episodes that ended "
                             'on the step, whose observation is already the next episode\'s)')
        backend = getattr(env.unwrapped, 'array_backend', 'numpy')
        if backend not in ('numpy', 'torch'):
            raise ValueError(f"RslRlVecEnv needs a VectorEnv returning numpy arrays or torch tensors (array_backend='numpy' "
                             f"or 'torch'); got array_backend={backend!r}")
        space = env.single_observation_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) != 1:
            raise ValueError(f"RslRlVecEnv needs a flat Box observation (obs_mode='flat'); got {space}")
        self.env = env
        self.core: VectorEnv = env.unwrapped
        self.num_envs = int(env.num_envs)
        self._action_shape: tuple[int, ...] = tuple(env.single_action_space.shape or ())
        self.num_actions = int(np.prod(self._action_shape))
        self.device = torch.device(device)
        #: rsl-rl reads ``cfg`` (to log it) and the two below only for ``init_at_random_ep_len``,
        #: which this env does not support (an episode's length is its task's).
        self.cfg: dict[str, Any] = {'id': getattr(getattr(env, 'spec', None), 'id', None), 'num_envs': self.num_envs}
        self.max_episode_length = 0
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self._returns = np.zeros(self.num_envs, dtype=np.float64)
        self._finished: list[dict[str, np.ndarray]] = []
        obs, _ = env.reset(seed=seed)
        self._obs = self._observations(obs)

    def _observations(self, obs: np.ndarray | torch.Tensor) -> TensorDict:
        # A copy: rsl-rl holds the previous observation until it stores the transition.
        if isinstance(obs, torch.Tensor):
            tensor = obs.detach().to(self.device, torch.float32, copy=True)
        else:
            tensor = torch.tensor(obs, dtype=torch.float32, device=self.device)
        return TensorDict({OBS_GROUP: tensor}, batch_size=[self.num_envs], device=self.device)

    def get_observations(self) -> TensorDict:
        """The current observations (``{'policy': (num_envs, obs_size)}``)."""
        return self._obs

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """Step every env with ``actions`` ``(num_envs, num_actions)``; returns ``(obs, rewards,
        dones, extras)`` as rsl-rl expects (see the module docstring)."""
        array = actions.detach().to('cpu', torch.float32).numpy().reshape(self.num_envs, *self._action_shape)
        obs, rewards, terminated, truncated, info = self.env.step(array)
        # (rewards and flags, one number per env, are booked on the host whatever the array backend)
        rewards, terminated, truncated = _host(rewards), _host(terminated), _host(truncated)
        dones = terminated | truncated
        self._returns += rewards
        self.episode_length_buf += 1
        if dones.any():
            self._keep_finished(dones, info)
        self._obs = self._observations(obs)
        extras = {'time_outs': torch.as_tensor(truncated & ~terminated, device=self.device)}
        return (self._obs, torch.as_tensor(rewards, dtype=torch.float32, device=self.device),
                torch.as_tensor(dones, dtype=torch.long, device=self.device), extras)

    def _keep_finished(self, dones: np.ndarray, info: dict[str, Any]) -> None:
        """Record the episodes that ended (returns, lengths, metrics) and restart their counters."""
        rows = np.flatnonzero(dones)
        record = {'reward': self._returns[rows].copy(), 'length': self.episode_length_buf.cpu().numpy()[rows].copy()}
        metrics = info.get('final_info', {}).get('metrics', {})
        for key, values in metrics.items():
            if key.startswith('_'):
                continue
            # A metric some finished episodes lack (another task's) is NaN for them.
            present = metrics.get(f'_{key}', np.ones(self.num_envs, dtype=bool))[rows]
            column = np.full(len(rows), np.nan)
            column[present] = np.asarray(values, dtype=float)[rows][present]
            record[key] = column
        self._finished.append(record)
        self._returns[rows] = 0.0
        self.episode_length_buf[torch.as_tensor(rows, device=self.device)] = 0

    def take_episodes(self) -> dict[str, np.ndarray]:
        """The episodes that ended since the last call: ``reward`` (return), ``length`` (env steps)
        and each metric they recorded (``fell``, ``seconds``, ...; NaN where one lacks it), as
        arrays of one row per episode."""
        finished, self._finished = self._finished, []
        keys = dict.fromkeys(key for record in finished for key in record)
        return {key: np.concatenate([record.get(key, np.full(len(record['reward']), np.nan)) for record in finished])
                for key in keys}

    def close(self) -> None:
        """Close the vector env."""
        self.env.close()
