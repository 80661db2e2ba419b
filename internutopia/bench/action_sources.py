"""What the Gymnasium benchmarks step with: random actions, or a walking id's shipped policy.

Random actions (issue 49's measure, the default) make a walking robot fall within a second or
so, so a walking id at 64 envs ends and restarts one or two episodes every vector step. A trained
policy keeps its robots up for the episodes' 20 s, as the later iterations of a training run do.
``policy`` steps a walking id with the policy its robot's walking controller ships (the same
network on the id's own observation, as the controller runs it: the mean of itself and its mirror
image); the network is called outside the timed step, since a user's policy is the user's cost.

A source gives each vector step's action as ``source.action``, made by ``source.prepare()``
before the step (untimed), and is told the step's observation by ``source.observe(obs)``:

>>> import gymnasium as gym
>>> import internutopia.envs  # (registers the ids)
>>> env = gym.make_vec('internutopia/H1Walk-v0', num_envs=2)
>>> obs, _ = env.reset(seed=0)
>>> source = action_source('policy', env, 'internutopia/H1Walk-v0', obs, warm_steps=2)
>>> source.prepare()
>>> source.action.shape, source.action.dtype
((2, 10), dtype('float32'))
>>> env.close()
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

import numpy as np

from internutopia.bench.random_actions import warmed_random_actions

__all__ = ['ACTION_KINDS', 'ActionSource', 'PolicyActions', 'RandomActions', 'action_source', 'policy_ids']

#: The kinds of action a Gymnasium benchmark can step with (``--actions``).
ACTION_KINDS = ('random', 'policy')


class ActionSource(Protocol):
    """Each vector step's action (see the module docstring)."""

    action: np.ndarray

    def prepare(self) -> None:
        """Make :attr:`action` for the coming vector step (not timed)."""

    def observe(self, obs: Any) -> None:
        """The observation the vector step returned (kept, not copied)."""


class RandomActions:
    """:func:`~internutopia.bench.random_actions.warmed_random_actions`, one after another."""

    def __init__(self, env: Any, warm_steps: int) -> None:
        self._actions = warmed_random_actions(env, warm_steps)
        self._count = 0
        self.action = self._actions[0]

    def prepare(self) -> None:
        self.action = self._actions[self._count % len(self._actions)]
        self._count += 1

    def observe(self, obs: Any) -> None:
        pass


class PolicyActions:
    """The shipped walking policy of ``env_id`` on the env's last observation ``obs``, after
    ``warm_steps`` vector steps with it."""

    def __init__(self, env: Any, env_id: str, obs: np.ndarray, warm_steps: int) -> None:
        self._policy = _walking_policy(env_id)
        self._dtype = env.action_space.dtype
        self._obs = obs
        self.action = self._act()
        for _ in range(warm_steps):
            self.prepare()
            self.observe(env.step(self.action)[0])

    def _act(self) -> np.ndarray:
        return self._policy(np.asarray(self._obs, dtype=np.float32)).astype(self._dtype)

    def prepare(self) -> None:
        self.action = self._act()

    def observe(self, obs: Any) -> None:
        self._obs = obs


def _walking_robots() -> dict[str, tuple[str, Any]]:
    """The walking robots the trainer knows, ``(name, WalkingRobot)`` by their Gymnasium id."""
    from internutopia_extension.robots.h1_locomotion.policy.walking_robots import ROBOTS

    return {robot.env_id: (name, robot) for name, robot in ROBOTS.items()}


def policy_ids() -> list[str]:
    """The ids ``--actions policy`` can step: those of the walking robots with a shipped policy."""
    return sorted(_walking_robots())


def _walking_policy(env_id: str) -> Any:
    """The walking controller's policy of ``env_id``'s robot (its ``OnnxPolicy``, symmetric)."""
    known = _walking_robots().get(env_id)
    if known is None:
        raise ValueError(f"--actions policy steps a walking id with its robot's shipped policy; {env_id!r} has none "
                         f'(walking ids: {policy_ids()})')
    from internutopia_extension.robots.h1_locomotion.walker import OnnxPolicy

    name, robot = known
    gait = importlib.import_module(robot.gait)
    walker = importlib.import_module(robot.gait.rpartition('.')[0] + '.walker')  # (its POLICY_PATH: the shipped file)
    return OnnxPolicy(walker.POLICY_PATH, gait_module=gait, robot=name.upper())


def action_source(kind: str, env: Any, env_id: str, obs: Any, warm_steps: int) -> ActionSource:
    """The source of ``kind`` (one of :data:`ACTION_KINDS`) for the reset vector env ``env`` of
    ``env_id``, whose reset gave ``obs``, warmed by ``warm_steps`` vector steps."""
    if kind == 'random':
        return RandomActions(env, warm_steps)
    if kind == 'policy':
        return PolicyActions(env, env_id, obs, warm_steps)
    raise ValueError(f'actions must be one of {list(ACTION_KINDS)}; got {kind!r}')
