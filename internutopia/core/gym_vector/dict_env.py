"""``gym_env.Env``: a ``gymnasium.Env`` over one env slot with one robot, with dict spaces.

InternUtopia imports it as ``internutopia.core.gym_env.Env``; it lives here, with the other Gymnasium adapters.

Actions are ``{controller_name: args}`` for that robot, observations its obs dict, as in
InternUtopia's gym env (an episode without robots observes ``{}`` and ignores actions). Episodes
come from ``config.task_configs`` in order; once the queue is empty, ``reset`` returns
``(None, None)`` (InternUtopia's value) and :attr:`Env.finished` is true.

Episode ends are reported as InternUtopia's loops expect: ``terminated`` is ``True`` on the step an
episode ends, whatever ended it, and ``truncated`` is also ``True`` when a step limit ended it.
(``FlatEnv`` and the registered Gymnasium ids keep Gymnasium's meaning: a step limit is
``truncated`` only.)

Spaces (built from the first episode, when the env is constructed):

* ``observation_space``: a ``Dict`` mirroring the robot's observation dict (``position``,
  ``orientation``, ``joint_positions``, ``joint_velocities``, ``controllers``, ``sensors``, ...);
* ``action_space``: a ``Dict`` ``{controller_name: Box}`` of the controllers whose argument shape is
  known (``move_by_speed``, ``move_to_point``, ``rotate``, ``joint_controller``, a one-waypoint
  ``move_along_path``; see :func:`internutopia.core.gym_vector.controller_action_space`). An action
  may name any subset of the controllers, as in InternUtopia.

``reset(seed=s)`` seeds :attr:`np_random` and starts the episode sequence over, so the same seed
gives the same episode. With ``endless=True`` the episodes are cycled and the env passes
``gymnasium.utils.env_checker.check_env``. For flat ``numpy`` arrays (one ``Box`` observation, one
controller as a ``Box`` action) use :class:`internutopia.core.gym_vector.FlatEnv` instead.

>>> from internutopia.core.config import Config
>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
>>> env = Env(Config(metrics_save_path='none', task_configs=[FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()])]))
>>> obs, info = env.reset()
>>> sorted(obs)[:3], info['task_config'].type
(['controllers', 'joint_positions', 'joint_velocities'], 'FiniteStepTask')
>>> obs in env.observation_space, sorted(env.action_space.spaces)
(True, ['move_along_path', 'move_by_speed', 'move_to_point', 'rotate'])
>>> for _ in range(3): obs, reward, terminated, truncated, info = env.step({'move_by_speed': [0.2, 0.0]})
>>> terminated, truncated, env.reset()
(True, True, (None, None))
>>> env.close()
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from internutopia.core.config import Config
from internutopia.core.episode_queue import EpisodeQueue
from internutopia.core.gym_vector.arguments import refuse_distributed
from internutopia.core.gym_vector.episodes import _queue_seed, unseeded_env
from internutopia.core.runner.failures import step_result_of
from internutopia.core.runner.guard import held_interrupts
from internutopia.core.vec_env import Env as VecEnv


class Env(gym.Env):
    """One slot of a :class:`~internutopia.core.vec_env.Env`, seen as a Gymnasium env.

    Args:
        config: the run's config (``env_num`` must be 1; each episode must have one robot).
        render_mode: ``None`` or ``'rgb_array'``.
        episodes: optional replacement for ``config.task_configs``: a list of ``TaskCfg``, a sampler
            ``f(rng) -> TaskCfg`` or any iterable (see :class:`internutopia.core.gym_vector.EpisodeSource`).
        endless: cycle the list of episodes instead of running it once.
    """

    metadata = {'render_modes': ['rgb_array']}
    #: Key of the episode's ``TaskCfg`` in the info dict ``reset`` returns.
    RESET_INFO_TASK_CONFIG = 'task_config'

    def __init__(self, config: Config, render_mode: str | None = None, episodes: Any = None, endless: bool = False) -> None:
        from internutopia.core.gym_vector import EpisodeSource

        refuse_distributed(config, 'gym_env.Env')
        if config.env_num != 1:
            raise ValueError(f'gym_env.Env runs one env slot; config.env_num must be 1, got {config.env_num} '
                             '(use internutopia.core.vec_env.Env for more)')
        if render_mode not in (None, 'rgb_array'):
            raise ValueError(f"render_mode must be None or 'rgb_array'; got {render_mode!r}")
        for index, task in enumerate(config.task_configs):
            if len(task.robots) > 1:
                raise ValueError(f'gym_env.Env drives one robot; task_configs[{index}] has {len(task.robots)}')
        self.render_mode = render_mode
        # One step() is one physics step: the env's control rate is 1 / physics_dt.
        self.metadata = {**type(self).metadata, 'render_fps': 1.0 / config.simulator.physics_dt}
        self._source = EpisodeSource(episodes, config.task_configs, endless=endless)
        self._vec_env = unseeded_env(VecEnv, config, self._source)
        self._robot_name: str | None = None
        self._running = False
        self._last: tuple[Any, bool] | None = None  # (obs, truncated) of the step that ended the episode
        self._pending: tuple[Any, dict | None] | None = None
        #: Set when a step raised without its books (an error, or a ``KeyboardInterrupt`` raised by
        #: code): the next step first checks that the slot still runs the episode (:meth:`_book_slot`).
        self._unbooked = False
        try:
            results = self._vec_env.runner.results
            kept, before = results.keep_records, len(results.records)
            results.keep_records = True  # (for the first start only: what failed, if it did)
            try:
                self._pending = first = self._start(seed=None)
            finally:
                results.keep_records = kept
                started = results.records[before:]
                if not kept:
                    del results.records[before:]
            if first[0] is None:
                failed = [r for r in started if r.get('outcome') == 'failed']
                if failed:
                    last = failed[-1]
                    raise RuntimeError(f"gym_env.Env: no episode started: {len(failed)} failed to start; the last, episode "
                                       f"{last.get('episode_index')}, after {last.get('attempts')} attempt(s): "
                                       f"{last.get('error_type')}: {last.get('error')} (Config.episode_errors='raise' "
                                       'raises the error itself)')
                raise ValueError('gym_env.Env: the episode source has no episodes')
            self.observation_space = self._observation_space(first[0])
            self.action_space = self._action_space()
        except BaseException:
            self._vec_env.close()
            raise

    @property
    def simulation_app(self) -> Any:
        """The app handle scripts loop on (``is_running()`` until ``close()``)."""
        return self._vec_env.simulation_app

    @property
    def finished(self) -> Any:
        """Whether every episode of the queue has been run; call it (``env.finished()``, as in
        InternUtopia) or read it as a truth value."""
        from internutopia.core.vec_env import Finished

        return Finished(self._pending is None and bool(self._vec_env.finished))

    @property
    def env_num(self) -> int:
        """Number of env slots: 1."""
        return 1

    @property
    def runner(self) -> Any:
        """The runner behind the env (the same object as ``vec_env.runner``)."""
        return self._vec_env.runner

    @property
    def is_render(self) -> None:
        """InternUtopia's render flag of the env; it is never set there, so it is always ``None``."""
        return None

    @property
    def active_task_configs(self) -> dict[int, Any]:
        """``{0: TaskCfg}`` while an episode is in the slot, ``{}`` otherwise."""
        return self._vec_env.active_task_configs

    def get_dt(self) -> float:
        """Seconds of simulated time one :meth:`step` advances (``physics_dt``)."""
        return self._vec_env.get_dt()

    def get_observations(self) -> Any:
        """The robot's current observation without stepping (``{}`` without an episode or robot)."""
        if not self._running:
            return {} if self._last is None else self._last[0]
        obs = self._vec_env.get_observations()[0]
        if obs is None or self._robot_name is None:
            return {}
        return obs[self._robot_name]

    def warm_up(self, steps: int = 10, render: bool = True, physics: bool = True) -> None:
        """Let the world settle without commands; see :meth:`internutopia.core.vec_env.Env.warm_up`."""
        self._vec_env.warm_up(steps, render, physics)

    @property
    def vec_env(self) -> VecEnv:
        """The one-slot vectorized env underneath."""
        return self._vec_env

    def _observation_space(self, obs: Any) -> spaces.Space:
        from internutopia.core.gym_vector import space_from_value

        return space_from_value(obs)

    def _action_space(self) -> spaces.Space:
        from internutopia.core.gym_vector import EmptyDict, controller_action_space

        if self._robot_name is None:
            return EmptyDict()
        robot = self._vec_env.runner.slot_robots[0][self._robot_name]
        out: dict[str, spaces.Space] = {}
        for name, controller in robot.controllers.items():
            try:
                out[name] = controller_action_space(controller, self._vec_env)
            except ValueError:
                continue  # a controller without a known argument shape still accepts actions
        return spaces.Dict(out) if out else EmptyDict()

    def _start(self, seed: int | None) -> tuple[Any, dict | None]:
        if seed is not None and self._source.restartable:
            self._vec_env.runner.queue = EpisodeQueue(self._source.stream(np.random.default_rng(seed)), seed=_queue_seed(seed))
        obs, info = self._vec_env.reset([0])
        self._last = None
        if obs[0] is None:
            self._running = False
            return None, None
        task = info[0]
        self._robot_name = task.robots[0].name if task.robots else None
        self._running = True
        robot_obs = obs[0][self._robot_name] if self._robot_name is not None else {}
        episode = self._vec_env.runner.episodes[0]
        assert episode is not None  # the slot got one: it has an observation
        return robot_obs, {self.RESET_INFO_TASK_CONFIG: task, 'episode_index': episode.index}

    # (Gymnasium's info is always a dict; InternUtopia's is None with the observation when the queue is empty.)
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict | None]:  # type: ignore[override]
        """Start the next episode; ``(robot_obs, {'task_config': TaskCfg, ...})``, or ``(None, None)``
        when the queue has no episode left (InternUtopia's value).

        ``seed`` seeds :attr:`np_random` and starts the episode sequence over. ``options`` must be
        ``None`` or a dict (this env takes no options; InternUtopia's ignores them too).
        """
        if options is not None and not isinstance(options, dict):
            raise TypeError(f'options must be a dict or None; got {type(options).__name__} {options!r}')
        # Ctrl-C held over the reset and its books (raised once both are done): an episode the
        # slot started is booked as running, whether or not the return reaches the caller.
        with held_interrupts():
            super().reset(seed=seed)
            if self._pending is not None and seed is None:
                out, self._pending = self._pending, None  # the episode started when the env was built
                return out
            self._pending = None
            return self._start(seed)

    def step(self, action: dict[str, Any] | None) -> tuple[Any, float, bool, bool, dict]:
        """Apply ``{controller_name: args}`` to the robot and advance one physics step.

        After the episode has ended (and before the next :meth:`reset`), a step moves nothing and
        returns the final observation again with ``terminated=True``, as InternUtopia does (so a
        loop whose step that ended the episode was cut short by Ctrl-C sees the end on its next step).
        """
        if self._unbooked:
            self._book_slot()
        if self._pending is None and not self._running and self._last is None:
            if self.finished:
                raise RuntimeError('no episode to step: every episode of the queue has been run (reset() returned '
                                   '(None, None)); build a new Env for more episodes, or reset(seed=...) to start a '
                                   'generated sequence over')
            raise RuntimeError('call reset() before step()')
        if self._pending is not None:
            raise RuntimeError('call reset() before step()')
        if action is not None and not isinstance(action, dict):
            raise ValueError(f'action must be a dict {{controller_name: args}} or None; got {type(action).__name__}')
        if not self._running:
            assert self._last is not None  # the episode ended: its last observation is kept
            final_obs, final_truncated = self._last
            return final_obs, 0.0, True, final_truncated, {}
        command = {self._robot_name: action} if action and self._robot_name is not None else None
        # Ctrl-C held over the step and its books (raised once both are done): a step that ended
        # the episode is booked as its end, so the next step reports it again (instead of stepping
        # a slot that runs no episode).
        with held_interrupts():
            try:
                obs, reward, terminated, truncated, info = self._vec_env.step([command])
            except BaseException as exc:
                done = step_result_of(exc)  # (a complete step raised after: Config(episode_errors='raise'))
                if done is not None and done[2][0]:
                    self._end(done[0][0], done[3][0])
                else:
                    self._unbooked = True
                raise
            robot_obs = self._end(obs[0], truncated[0]) if terminated[0] else self._robot_obs(obs[0])
        return robot_obs, reward[0], terminated[0], truncated[0], info[0]

    def _robot_obs(self, slot_obs: Any) -> Any:
        """The robot's observation in the slot's ``slot_obs`` (``{}`` without a robot or observation)."""
        if self._robot_name is None or slot_obs is None:
            return {}
        return slot_obs[self._robot_name]

    def _end(self, slot_obs: Any, truncated: Any) -> Any:
        """Book the episode's end (the step returns its final observation from now on); its robot observation."""
        robot_obs = self._robot_obs(slot_obs)
        self._running = False
        self._last = (robot_obs, bool(truncated))
        return robot_obs

    def _book_slot(self) -> None:
        """After a step that raised without its books: an episode the slot no longer runs is ended
        (the next steps report ``terminated``, so the loop resets)."""
        self._unbooked = False
        if self._running and not self._vec_env.active_slots:
            self._end(None, False)

    def render(self, mode: str | None = None) -> Any:
        """The overview image (``uint8 (H, W, 3)``) for ``mode='rgb_array'`` (or ``render_mode='rgb_array'``
        when no mode is given); ``None`` for ``mode='human'`` or without a render mode."""
        if mode is None:
            mode = self.render_mode
        if mode not in (None, 'rgb_array', 'human'):
            raise ValueError(f"render mode must be 'rgb_array' or 'human'; got {mode!r}")
        if mode == 'rgb_array':
            return self._vec_env.render()
        return None

    def close(self) -> None:
        """Release the simulation."""
        self._vec_env.close()
