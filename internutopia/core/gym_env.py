"""``gym_env.Env``: a ``gymnasium.Env`` over one env slot with one robot.

Actions are ``{controller_name: args}`` for that robot, observations its obs dict, as in
InternUtopia's gym env. Episodes come from ``config.task_configs`` in order; once the queue is
empty, ``reset`` returns ``(None, {})`` and :attr:`Env.finished` is true.

>>> from internutopia.core.config import Config
>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
>>> env = Env(Config(metrics_save_path='none', task_configs=[FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()])]))
>>> obs, info = env.reset()
>>> sorted(obs)[:3], info['task_config'].type
(['controllers', 'joint_positions', 'joint_velocities'], 'FiniteStepTask')
>>> for _ in range(3): obs, reward, terminated, truncated, info = env.step({'move_by_speed': [0.2, 0.0]})
>>> truncated, env.reset()
(True, (None, {}))
>>> env.close()
"""

from __future__ import annotations

from typing import Any, Optional

import gymnasium as gym

from internutopia.core.config import Config
from internutopia.core.vec_env import Env as VecEnv


class Env(gym.Env):
    """One slot of a :class:`~internutopia.core.vec_env.Env`, seen as a Gymnasium env."""

    metadata = {'render_modes': ['rgb_array']}

    def __init__(self, config: Config, render_mode: Optional[str] = None) -> None:
        if config.env_num != 1:
            raise ValueError(f'gym_env.Env runs one env slot; config.env_num must be 1, got {config.env_num} '
                             '(use internutopia.core.vec_env.Env for more)')
        if render_mode not in (None, 'rgb_array'):
            raise ValueError(f"render_mode must be None or 'rgb_array'; got {render_mode!r}")
        for index, task in enumerate(config.task_configs):
            if len(task.robots) != 1:
                raise ValueError(f'gym_env.Env drives one robot; task_configs[{index}] has {len(task.robots)}')
        self.render_mode = render_mode
        self._vec_env = VecEnv(config)
        self._robot_name: Optional[str] = None
        self._running = False

    @property
    def simulation_app(self) -> Any:
        """The app handle scripts loop on (``is_running()`` until ``close()``)."""
        return self._vec_env.simulation_app

    @property
    def finished(self) -> bool:
        """True when every episode of the queue has been run."""
        return self._vec_env.finished

    @property
    def vec_env(self) -> VecEnv:
        """The one-slot vectorized env underneath."""
        return self._vec_env

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[Any, dict]:
        """Start the next episode; ``(robot_obs, {'task_config': TaskCfg, ...})`` or ``(None, {})``."""
        super().reset(seed=seed)
        obs, info = self._vec_env.reset([0])
        if obs[0] is None:
            self._running = False
            return None, {}
        task = info[0]
        self._robot_name = task.robots[0].name
        self._running = True
        return obs[0][self._robot_name], {'task_config': task, 'episode_index': self._vec_env.runner.episodes[0].index}

    def step(self, action: Optional[dict[str, Any]]) -> tuple[Any, float, bool, bool, dict]:
        """Apply ``{controller_name: args}`` to the robot and advance one physics step."""
        if not self._running:
            raise RuntimeError('the episode has ended (or reset() was not called); call reset() first')
        if action is not None and not isinstance(action, dict):
            raise ValueError(f'action must be a dict {{controller_name: args}} or None; got {type(action).__name__}')
        obs, reward, terminated, truncated, info = self._vec_env.step([{self._robot_name: action} if action else None])
        if terminated[0] or truncated[0]:
            self._running = False
        return obs[0][self._robot_name], reward[0], terminated[0], truncated[0], info[0]

    def render(self) -> Any:
        """The overview image when ``render_mode='rgb_array'``."""
        if self.render_mode == 'rgb_array':
            return self._vec_env.render()
        return None

    def close(self) -> None:
        """Release the simulation."""
        self._vec_env.close()
