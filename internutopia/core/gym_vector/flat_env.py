"""One slot as a plain ``gymnasium.Env`` with the vector env's flat spaces."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from internutopia.core.config import Config
from internutopia.core.gym_vector.sb3 import _unbatch_info
from internutopia.core.gym_vector.vector_env import VectorEnv
from internutopia.core.runner.guard import held_interrupts


class FlatEnv(gym.Env):
    """A ``gymnasium.Env`` over a one-slot :class:`VectorEnv`: flat ``Box`` spaces, endless episodes.

    Takes the same arguments as :class:`VectorEnv` (without ``num_envs``/``autoreset_mode``).
    ``reset()`` after ``close()`` builds the world again from those arguments (Stable-Baselines3's
    ``check_env`` closes an env after its render check and goes on using it).
    This is the flat-array counterpart of :class:`internutopia.core.gym_env.Env` (whose observations
    and actions are InternUtopia's dicts), for libraries that want arrays.
    """

    metadata = {'render_modes': ['rgb_array']}

    def __init__(self, config: Config | str | os.PathLike[str] | None = None, render_mode: str | None = None, *,
                 vector_env: VectorEnv | None = None, **kwargs: Any) -> None:
        self._reopen: Callable[[], VectorEnv] | None = None
        if vector_env is None:
            if config is None:
                raise TypeError('FlatEnv needs a config (a Config or the path of a YAML config) or vector_env=')
            for key in ('num_envs', 'autoreset_mode'):
                if key in kwargs:
                    raise TypeError(f'FlatEnv runs one slot without autoreset; {key}= is not an argument')
            if kwargs.get('array_backend', 'numpy') != 'numpy':
                raise ValueError(f"FlatEnv returns numpy arrays (single-env libraries expect them); got "
                                 f"array_backend={kwargs['array_backend']!r}: use VectorEnv(array_backend=...) for torch or Warp arrays")
            self._reopen = lambda: VectorEnv(config, num_envs=1, autoreset_mode=AutoresetMode.DISABLED,
                                             render_mode=render_mode, **kwargs)
            vector_env = self._reopen()
        elif config is not None or kwargs:
            raise TypeError('pass either a config (and VectorEnv arguments) or vector_env=, not both')
        elif vector_env.array_backend != 'numpy':
            raise ValueError(f'FlatEnv(vector_env=...) needs a VectorEnv returning numpy arrays; got array_backend={vector_env.array_backend!r}')
        elif vector_env.num_envs != 1 or vector_env.autoreset_mode != AutoresetMode.DISABLED:
            raise ValueError('FlatEnv(vector_env=...) needs a VectorEnv with num_envs=1 and autoreset_mode=DISABLED; '
                             f'got num_envs={vector_env.num_envs}, autoreset_mode={vector_env.autoreset_mode.value}')
        self._envs = vector_env
        self.metadata = {**type(self).metadata, 'render_fps': vector_env.metadata['render_fps']}
        self.render_mode = vector_env.render_mode
        self.observation_space = vector_env.single_observation_space
        self.action_space = vector_env.single_action_space
        self._running = False
        #: The end (final observation, flags) of an episode whose ending step raised
        #: ``KeyboardInterrupt`` (a Ctrl-C): the caller never saw it, so the next step reports it.
        self._unseen_end: tuple[Any, bool, bool] | None = None

    @classmethod
    def of(cls, make: Callable[[], VectorEnv]) -> FlatEnv:
        """The ``FlatEnv`` over the one-slot :class:`VectorEnv` that ``make()`` builds; ``reset()``
        after ``close()`` calls ``make()`` again for a new world, as a ``FlatEnv`` of a config does
        (``gymnasium.make('internutopia/...')`` builds its env this way)."""
        env = cls(vector_env=make())
        env._reopen = make
        return env

    @property
    def vector_env(self) -> VectorEnv:
        """The one-slot vector env underneath."""
        return self._envs

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """Start the next episode (``seed`` restarts the episode source); after :meth:`close`, the
        first episode of a world built again."""
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict (of VectorEnv's reset options) or None; got {type(options).__name__} {options!r}")
        if self._envs.closed:
            if self._reopen is None:
                raise RuntimeError('this FlatEnv is closed, and it was given vector_env= so it cannot build its world again')
            self._envs = self._reopen()
        with held_interrupts():  # (a Ctrl-C is raised once the episode that started is booked)
            super().reset(seed=seed)
            obs, info = self._envs.reset(seed=seed, options=options)
            self._running = True
            self._unseen_end = None
        return self._unbatch(obs), _unbatch_info(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One ``step`` of the slot; reset after ``terminated or truncated``.

        A step whose ``KeyboardInterrupt`` (Ctrl-C) cut off the return of the step that ended the
        episode does not step: it returns that end again (the final observation, reward ``0.0``,
        the same ``terminated``/``truncated``, info ``{}``), so the loop resets as usual.
        """
        if not self._running:
            unseen = self._unseen_end
            if unseen is not None:
                self._unseen_end = None
                return unseen[0], 0.0, unseen[1], unseen[2], {}
            raise RuntimeError('the episode has ended (or reset() was not called); call reset() first')
        # Ctrl-C held over the step and its books (raised once both are done): a step that ended the
        # episode is booked as its end, to be reported again if the Ctrl-C kept it from the caller.
        with held_interrupts():
            try:
                obs, reward, terminated, truncated, info = self._envs.step(np.asarray(action)[None])
            except ValueError:
                self._check_running()
                self._check_action(action)  # (a bad action named as the one action it is, not a batch of one)
                raise
            except BaseException:
                self._check_running()  # (a step that raised after its episode ended, e.g. episode_errors='raise')
                raise
            result = (self._unbatch(obs), float(reward[0]), bool(terminated[0]), bool(truncated[0]), _unbatch_info(info))
            if result[2] or result[3]:
                self._running = False
                self._unseen_end = (result[0], result[2], result[3])
        self._unseen_end = None  # (returned: seen)
        return result

    def _check_action(self, action: Any) -> None:
        """After a step that raised ``ValueError``: the action's own error, worded for one env's action
        of ``action_space``'s shape (the vector env's names the batch of one made of it); nothing when
        the action is fine (the step's error was another)."""
        try:
            self._envs.action_layout.check(action, 1, one=True)
        except ValueError as exc:
            raise exc from None

    def _check_running(self) -> None:
        """After a step that raised: the episode is over when the slot no longer runs it (the next
        step asks for a reset instead of stepping a slot without an episode)."""
        try:
            if not self._envs.closed and not self._envs.vec_env.active_slots:
                self._running = False
        except Exception:  # noqa: BLE001 - (the step's own error is the one raised)
            pass

    def _unbatch(self, obs: Any) -> Any:
        if isinstance(obs, dict):
            return {k: np.array(v[0]) for k, v in obs.items()}
        return obs[0]

    def render(self) -> np.ndarray | None:
        """The env's frame ``uint8 (480, 640, 3)`` with ``render_mode='rgb_array'``."""
        frames = self._envs.render()
        return frames[0] if frames is not None else None

    def close(self) -> None:
        """Release the world (idempotent)."""
        self._envs.close()
