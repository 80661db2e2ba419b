"""Gymnasium's vector API over :class:`internutopia.core.vec_env.Env`.

:class:`VectorEnv` is a :class:`gymnasium.vector.VectorEnv` whose sub-environments are the slots of
one ``vec_env.Env`` (one MuJoCo world), each slot running an episode with one robot. It turns the
InternUtopia per-slot lists and dicts into what Gymnasium users and RL libraries expect:

* **spaces** built from the robot's controllers and the episode's observations: the action space is
  the chosen controller's argument shape (``move_by_speed`` of a jetbot: ``Box((2,))`` =
  ``[forward m/s, yaw rad/s]``), the observation is a flat ``float32`` ``Box`` of named parts
  (``robot.position``, ``robot.orientation``, joint state, ``task.goal``, ...) or a ``Dict`` of them;
* **numpy batches** out (``(num_envs, ...)``), rewards ``float64``, terminations/truncations ``bool``;
* **info** as Gymnasium's dict of arrays with ``_key`` masks (``info['metrics']['success']`` on the
  step an episode ends);
* **autoreset** in all three of Gymnasium's modes (``metadata['autoreset_mode']``): ``NEXT_STEP``
  (default), ``SAME_STEP`` (``final_obs``/``final_info``) and ``DISABLED``
  (``reset(options={'reset_mask': mask})``);
* **an episode source that never runs dry**: ``config.task_configs`` cycled, any list cycled, or a
  sampler ``f(rng) -> TaskCfg | list[TaskCfg]`` drawing new episodes from a seeded generator;
  ``reset(seed=s)`` restarts that source, so the same seed gives the same episodes;
* ``call`` / ``get_attr`` / ``set_attr`` over per-slot views (:class:`SlotView`).

>>> import numpy as np
>>> from internutopia.core.config import Config, SimConfig
>>> from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
>>> from internutopia_extension.configs.tasks import FiniteStepTaskCfg
>>> task = FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()])
>>> envs = VectorEnv(Config(env_num=4, metrics_save_path='none', task_configs=[task]))
>>> envs.single_action_space
Box([-0.5 -3. ], [0.5 3. ], (2,), float32)
>>> obs, info = envs.reset(seed=0)
>>> obs.shape, obs.dtype, info['episode_index']
((4, 11), dtype('float32'), array([0, 1, 2, 3]))
>>> for _ in range(3): obs, reward, terminated, truncated, info = envs.step(np.zeros((4, 2)))
>>> truncated, info['steps']
(array([ True,  True,  True,  True]), array([3, 3, 3, 3]))
>>> obs, reward, terminated, truncated, info = envs.step(np.zeros((4, 2)))  # NEXT_STEP autoreset
>>> truncated, info['episode_index']
(array([False, False, False, False]), array([4, 5, 6, 7]))
>>> envs.close()

:class:`FlatEnv` is the one-slot ``gymnasium.Env`` with the same flat spaces (what
``gymnasium.make('internutopia/JetbotPointNav-v0')`` returns), and :func:`sb3_vec_env` bridges a
:class:`VectorEnv` to Stable-Baselines3's own ``VecEnv`` interface.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from internutopia.core.config import Config, TaskCfg
from internutopia.core.episode_queue import EpisodeQueue
from internutopia.core.vec_env import Env as InternVecEnv

__all__ = [
    'ACTION_SPACES', 'EmptyDict', 'EpisodeSource', 'FEATURES', 'Feature', 'FlatEnv', 'ObsLayout', 'ScalarBox', 'SlotView',
    'VectorEnv', 'controller_action_space', 'register_action_space', 'register_feature', 'sb3_vec_env',
    'space_from_value',
]

#: A sampler of episodes: called with the env's seeded generator, returns one ``TaskCfg`` or several.
EpisodeSampler = Callable[[np.random.Generator], Union[TaskCfg, Iterable[TaskCfg]]]


# ==================================================================================================
# Episode sources
class EpisodeSource:
    """A restartable stream of ``TaskCfg`` episodes for the Gymnasium envs.

    ``episodes`` may be:

    * ``None``: ``default`` (a config's ``task_configs``);
    * a list or tuple of ``TaskCfg``;
    * a sampler: a callable ``f(rng)`` returning one ``TaskCfg`` or an iterable of them, called
      again whenever the previous batch is used up (``rng`` is a ``numpy.random.Generator``);
    * any other iterable or iterator of ``TaskCfg`` (used as it is: it cannot be restarted).

    With ``endless=True`` lists are cycled, so the stream never runs dry. :meth:`stream` starts the
    sequence over (for lists and samplers), so the same seed gives the same episodes.
    """

    def __init__(self, episodes: Any, default: Sequence[TaskCfg] = (), endless: bool = True) -> None:
        self.endless = endless
        self._list: Optional[list[TaskCfg]] = None
        self._sampler: Optional[EpisodeSampler] = None
        self._iterator: Optional[Iterator[TaskCfg]] = None
        if episodes is None:
            episodes = list(default)
        if isinstance(episodes, TaskCfg):
            episodes = [episodes]
        if isinstance(episodes, (list, tuple)):
            if not episodes:
                raise ValueError('episodes must hold at least one TaskCfg')
            for index, task in enumerate(episodes):
                if not isinstance(task, TaskCfg):
                    raise TypeError(f'episodes[{index}] is a {type(task).__name__}, expected a TaskCfg')
            self._list = list(episodes)
        elif callable(episodes) and not hasattr(episodes, '__iter__'):
            self._sampler = episodes
        elif hasattr(episodes, '__iter__'):
            self._iterator = iter(episodes)
        else:
            raise TypeError('episodes must be a list of TaskCfg, an iterable of TaskCfg or a sampler f(rng) -> TaskCfg; '
                            f'got {type(episodes).__name__}')

    @property
    def restartable(self) -> bool:
        """Whether :meth:`stream` starts the sequence over (lists and samplers) or continues (iterators)."""
        return self._iterator is None

    @property
    def first(self) -> Optional[TaskCfg]:
        """The first episode of a list source (``None`` for samplers and iterators)."""
        return self._list[0] if self._list else None

    def stream(self, rng: np.random.Generator) -> Iterator[TaskCfg]:
        """A new iterator over the episodes; samplers draw from ``rng``."""
        if self._list is not None:
            return itertools.cycle(self._list) if self.endless else iter(self._list)
        if self._sampler is not None:
            return self._sample(self._sampler, rng)
        return self._iterator  # type: ignore[return-value]

    @staticmethod
    def _sample(sampler: EpisodeSampler, rng: np.random.Generator) -> Iterator[TaskCfg]:
        while True:
            drawn = sampler(rng)
            if isinstance(drawn, TaskCfg):
                yield drawn
                continue
            count = 0
            for task in drawn:
                count += 1
                yield task
            if not count:
                raise ValueError('the episode sampler returned no episodes')


def _seed_generator(seed: Any) -> np.random.Generator:
    if isinstance(seed, (list, tuple)):
        seed = [int(s) for s in seed if s is not None] or None
    return np.random.default_rng(seed)


# ==================================================================================================
# Spaces
class ScalarBox(spaces.Box):
    """A ``Box`` of shape ``()`` that also accepts numpy and Python scalars without a warning.

    The dict observations of ``vec_env`` hold numpy scalars for per-slot scalar readings (e.g. a
    controller's ``finished`` flag); a plain ``Box`` accepts them only with a casting warning.
    """

    def contains(self, x: Any) -> bool:
        if isinstance(x, (np.generic, bool, int, float)):
            x = np.asarray(x)
        return super().contains(x)


class EmptyDict(spaces.Space):
    """The space of an always-empty dict (e.g. ``'sensors': {}`` of a robot without sensors).

    Gymnasium's checker rejects an empty ``spaces.Dict``, so empty entries of the InternUtopia
    observation dict get this space instead.
    """

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        return {}

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and not x

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, EmptyDict)

    def __repr__(self) -> str:
        return 'EmptyDict()'


def _box_for(value: np.ndarray, key: str = '') -> spaces.Box:
    dtype = value.dtype
    shape = value.shape
    if dtype == np.bool_:
        low, high = 0, 1
    elif dtype == np.uint8:
        low, high = 0, 255
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        low, high = info.min, info.max
    elif np.issubdtype(dtype, np.floating):
        low, high = (-1.0, 1.0) if key.rsplit('.', 1)[-1] == 'orientation' else (-np.inf, np.inf)
    else:
        raise TypeError(f'observation {key!r} has dtype {dtype}, which no Box can hold')
    cls = ScalarBox if shape == () else spaces.Box
    return cls(low=low, high=high, shape=shape, dtype=dtype)


def space_from_value(value: Any, key: str = '') -> spaces.Space:
    """The space of an observation value: ``Dict`` for dicts, ``Box`` for arrays and scalars.

    Floats are unbounded (``orientation`` quaternions in ``[-1, 1]``), ``uint8`` images in
    ``[0, 255]``, booleans ``Box(False, True)``, integers their dtype's range.
    """
    if isinstance(value, dict):
        if not value:
            return EmptyDict()
        return spaces.Dict({k: space_from_value(v, f'{key}.{k}' if key else str(k)) for k, v in value.items()})
    if isinstance(value, (bool, np.bool_)):
        return _box_for(np.asarray(value, dtype=np.bool_), key)
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f'observation {key!r} is not numeric ({type(value).__name__}); no space can describe it')
    return _box_for(array, key)


#: Action spaces of controller types: ``type name -> f(controller, env) -> Box``. Extensions add
#: theirs with :func:`register_action_space` (or give the controller an ``action_space()`` method).
ACTION_SPACES: dict[str, Callable[[Any, Any], spaces.Box]] = {}


def register_action_space(*type_names: str) -> Callable[[Callable[[Any, Any], spaces.Box]], Callable[[Any, Any], spaces.Box]]:
    """Decorator registering ``f(controller, vec_env) -> Box`` as the action space of controller types.

    >>> @register_action_space('MyGripperController')
    ... def _gripper(controller, env):
    ...     return spaces.Box(0.0, 1.0, (1,), np.float32)
    >>> del ACTION_SPACES['MyGripperController']
    """

    def decorate(fn: Callable[[Any, Any], spaces.Box]) -> Callable[[Any, Any], spaces.Box]:
        for name in type_names:
            ACTION_SPACES[name] = fn
        return fn

    return decorate


def _box(low: Sequence[float], high: Sequence[float]) -> spaces.Box:
    return spaces.Box(np.asarray(low, dtype=np.float32), np.asarray(high, dtype=np.float32), dtype=np.float32)


@register_action_space('DifferentialDriveController')
def _differential_drive(controller: Any, env: Any) -> spaces.Box:
    # [forward m/s, yaw rate rad/s]; the jetbot tracks these without tipping over.
    return _box([-0.5, -3.0], [0.5, 3.0])


@register_action_space('HolonomicBaseController', 'H1MoveBySpeedController')
def _holonomic(controller: Any, env: Any) -> spaces.Box:
    # [forward m/s, lateral m/s, yaw rate rad/s]
    return _box([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0])


@register_action_space('G1MoveBySpeedController')
def _g1_velocity(controller: Any, env: Any) -> spaces.Box:
    policy = getattr(controller.robot, 'policy', None)
    low = getattr(policy, 'command_low', (-1.0, -1.0, -1.0))
    high = getattr(policy, 'command_high', (1.0, 1.0, 1.0))
    return _box(low, high)


@register_action_space('MoveToPointBySpeedController')
def _point(controller: Any, env: Any) -> spaces.Box:
    half = env.config.env_offset_size / 2
    return _box([-half, -half, -half], [half, half, half])


@register_action_space('MoveAlongPathPointsController')
def _path(controller: Any, env: Any) -> spaces.Box:
    # A one-waypoint path; the controller itself accepts any number of points.
    half = env.config.env_offset_size / 2
    return spaces.Box(-half, half, (1, 3), np.float32)


@register_action_space('RotateController')
def _rotate(controller: Any, env: Any) -> spaces.Box:
    # A wxyz quaternion (normalised by the controller).
    return _box([-1.0] * 4, [1.0] * 4)


@register_action_space('JointController')
def _joints(controller: Any, env: Any) -> spaces.Box:
    robot = controller.robot
    slot = int(robot.slots[0])
    world = env.runner.world
    model = world.shard(slot).model if hasattr(world, 'shard') else world.model
    actuators = controller.actuators[slot]
    limited = model.actuator_ctrllimited[actuators].astype(bool)
    ranges = model.actuator_ctrlrange[actuators]
    low = np.where(limited, ranges[:, 0], -np.pi)
    high = np.where(limited, ranges[:, 1], np.pi)
    return _box(low, high)


def controller_action_space(controller: Any, env: Any) -> spaces.Box:
    """The action space of a bound controller: its own ``action_space()``, else :data:`ACTION_SPACES`.

    Raises:
        ValueError: no space is known for the controller's type.
    """
    own = getattr(controller, 'action_space', None)
    if own is not None:
        space = own() if callable(own) and not isinstance(own, spaces.Space) else own
        if not isinstance(space, spaces.Box):
            raise TypeError(f'{type(controller).__name__}.action_space must be a gymnasium Box; got {type(space).__name__}')
        return space
    names = [controller.config.type] + [cls.__name__ for cls in type(controller).__mro__]
    for name in names:
        if name in ACTION_SPACES:
            return ACTION_SPACES[name](controller, env)
    raise ValueError(f'no action space is known for controller {controller.name!r} of type {controller.config.type!r}; '
                     f'known types: {sorted(ACTION_SPACES)}. Register one with '
                     'internutopia.core.gym_vector.register_action_space or pass action_space=')


# ==================================================================================================
# Observation layout
@dataclass(frozen=True)
class Feature:
    """A derived observation computed from a slot's observation dict.

    ``fn(slot_obs, robot_name) -> array``; ``applies(slot_obs, robot_name) -> bool`` says whether
    it can be computed for an episode (derived features are added by default only when they apply).
    """

    fn: Callable[[dict, str], np.ndarray]
    applies: Callable[[dict, str], bool]
    low: float = -np.inf
    high: float = np.inf
    doc: str = ''


def _yaw(quat: np.ndarray) -> float:
    w, x, y, z = quat
    return float(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


def _goal_vector(obs: dict, robot: str) -> np.ndarray:
    body = obs[robot]
    delta = np.asarray(obs['task']['goal'], dtype=float)[:2] - np.asarray(body['position'], dtype=float)[:2]
    yaw = _yaw(np.asarray(body['orientation'], dtype=float))
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([c * delta[0] + s * delta[1], -s * delta[0] + c * delta[1]])


def _heading(obs: dict, robot: str) -> np.ndarray:
    yaw = _yaw(np.asarray(obs[robot]['orientation'], dtype=float))
    return np.array([np.cos(yaw), np.sin(yaw)])


def _has_goal(obs: dict, robot: str) -> bool:
    return isinstance(obs.get('task'), dict) and 'goal' in obs['task']


#: Derived observations by name; usable in ``obs_keys``. Add yours with :func:`register_feature`.
FEATURES: dict[str, Feature] = {
    'goal_vector': Feature(_goal_vector, _has_goal,
                           doc="the task's goal relative to the robot's base, in the base's yaw frame (x ahead, y left), metres"),
    'heading': Feature(_heading, lambda obs, robot: True, -1.0, 1.0, doc="``[cos(yaw), sin(yaw)]`` of the robot's base"),
}


def register_feature(name: str, fn: Callable[[dict, str], np.ndarray], applies: Optional[Callable[[dict, str], bool]] = None,
                     low: float = -np.inf, high: float = np.inf, doc: str = '') -> None:
    """Register a derived observation ``name`` computed by ``fn(slot_obs, robot_name)``.

    With ``applies`` it is also added to the default observation of episodes it applies to.
    """
    FEATURES[name] = Feature(fn, applies or (lambda obs, robot: False), low, high, doc)


_NOT_FOUND = object()


def _lookup(obs: dict, key: str, robot: str) -> Any:
    parts = key.split('.')
    node: Any = obs.get(robot if parts[0] == 'robot' else parts[0], _NOT_FOUND)
    for part in parts[1:]:
        if not isinstance(node, dict) or part not in node:
            return _NOT_FOUND
        node = node[part]
    return node


def _numeric_leaves(node: Any, prefix: str) -> list[str]:
    if isinstance(node, dict):
        return [key for k, v in node.items() for key in _numeric_leaves(v, f'{prefix}.{k}')]
    array = np.asarray(node)
    if array.dtype == object or array.ndim > 1 or array.size == 0:
        return []
    return [prefix]


class ObsLayout:
    """Which parts of a slot's observation dict make up the Gymnasium observation, and their spaces.

    Keys are dotted paths into the slot's observation dict, where ``robot`` stands for the chosen
    robot (``robot.position``, ``robot.controllers.move_to_point.finished``,
    ``robot.sensors.camera.rgba``), other first parts are the task's own top-level entries
    (``task.goal``, ``task.distance_to_goal``, ``objects.box.position``), and plain names are
    derived :data:`FEATURES` (``goal_vector``, ``heading``).

    Default keys: ``robot.position``, ``robot.orientation``, ``robot.joint_positions``,
    ``robot.joint_velocities``, every numeric scalar or vector the task reports under ``task``,
    and every derived feature that applies (``goal_vector`` when the task has a goal).
    """

    ROBOT_DEFAULTS = ('robot.position', 'robot.orientation', 'robot.joint_positions', 'robot.joint_velocities')

    def __init__(self, sample: dict, robot: str, keys: Optional[Sequence[str]] = None) -> None:
        self.robot = robot
        if keys is None:
            keys = self.default_keys(sample, robot)
        elif isinstance(keys, str) or not keys:
            raise ValueError(f'obs_keys must be a non-empty list of observation keys; got {keys!r}')
        self.keys = list(keys)
        self.spaces: dict[str, spaces.Box] = {}
        for key in self.keys:
            value = self._value(sample, key)
            if key in FEATURES:
                feature = FEATURES[key]
                array = np.asarray(value, dtype=np.float64)
                self.spaces[key] = spaces.Box(feature.low, feature.high, array.shape, np.float64)
            else:
                space = space_from_value(value, key)
                if not isinstance(space, spaces.Box):
                    raise ValueError(f'observation key {key!r} names a dict, not a value; '
                                     f'pick one of its entries: {sorted(f"{key}.{k}" for k in value)}')
                self.spaces[key] = spaces.Box(space.low, space.high, space.shape, space.dtype)
        self.sizes = [int(np.prod(self.spaces[k].shape)) for k in self.keys]

    @classmethod
    def default_keys(cls, sample: dict, robot: str) -> list[str]:
        """The default keys for an episode whose slot observation looks like ``sample``."""
        keys = [k for k in cls.ROBOT_DEFAULTS if np.size(_lookup(sample, k, robot)) > 0
                and _lookup(sample, k, robot) is not _NOT_FOUND]
        if isinstance(sample.get('task'), dict):
            keys += _numeric_leaves(sample['task'], 'task')
        keys += [name for name, feature in FEATURES.items() if feature.applies(sample, robot)
                 and name not in ('heading',)]
        return keys

    def valid_keys(self, sample: dict) -> list[str]:
        """Every key that names a value in ``sample`` (for error messages)."""
        out = []
        for top, node in sample.items():
            prefix = 'robot' if top == self.robot else top
            out += _numeric_leaves(node, prefix) if isinstance(node, dict) else []
        return sorted(out) + sorted(FEATURES)

    def _value(self, obs: dict, key: str) -> Any:
        if key in FEATURES:
            return FEATURES[key].fn(obs, self.robot)
        value = _lookup(obs, key, self.robot)
        if value is _NOT_FOUND:
            raise ValueError(f'observation key {key!r} is not in the observation of robot {self.robot!r}; '
                             f'valid keys: {self.valid_keys(obs)}')
        return value

    # -- spaces -------------------------------------------------------------------------------
    def flat_space(self) -> spaces.Box:
        """One ``float32`` vector: the keys' values flattened and concatenated in order."""
        low = np.concatenate([np.broadcast_to(self.spaces[k].low, self.spaces[k].shape).ravel() for k in self.keys])
        high = np.concatenate([np.broadcast_to(self.spaces[k].high, self.spaces[k].shape).ravel() for k in self.keys])
        return spaces.Box(low.astype(np.float32), high.astype(np.float32), dtype=np.float32)

    def dict_space(self) -> spaces.Dict:
        """A ``Dict`` keyed by the observation keys, each value in its own dtype."""
        return spaces.Dict({k: self.spaces[k] for k in self.keys})

    def slices(self) -> dict[str, slice]:
        """Where each key lies in the flat vector."""
        bounds = np.cumsum([0] + self.sizes)
        return {k: slice(int(a), int(b)) for k, a, b in zip(self.keys, bounds[:-1], bounds[1:])}

    # -- values -------------------------------------------------------------------------------
    def flat(self, slot_obs: Sequence[dict]) -> np.ndarray:
        """``(len(slot_obs), D)`` float32 rows."""
        out = np.empty((len(slot_obs), sum(self.sizes)), dtype=np.float32)
        for row, obs in enumerate(slot_obs):
            out[row] = np.concatenate([np.asarray(self._value(obs, k), dtype=np.float32).ravel() for k in self.keys])
        return out

    def dict(self, slot_obs: Sequence[dict]) -> dict[str, np.ndarray]:
        """``{key: (len(slot_obs), *shape)}`` arrays in each key's dtype."""
        return {k: np.stack([np.asarray(self._value(o, k), dtype=self.spaces[k].dtype) for o in slot_obs]).reshape(
            (len(slot_obs), *self.spaces[k].shape)) for k in self.keys}

    def check(self, obs: dict, slot: int) -> None:
        """Raise ``ValueError`` if a new episode's observation does not fit the spaces."""
        for key in self.keys:
            try:
                value = np.asarray(self._value(obs, key))
            except ValueError as exc:
                raise ValueError(f'env {slot}: the new episode does not match the observation space ({exc})') from None
            if value.shape != self.spaces[key].shape:
                raise ValueError(f'env {slot}: observation {key!r} has shape {value.shape} in the new episode, '
                                 f'but the observation space was built with {self.spaces[key].shape}; every episode '
                                 'of a Gymnasium env must have the same robot layout')


# ==================================================================================================
# Per-slot views for call / get_attr / set_attr
class SlotView:
    """What ``get_attr``/``call``/``set_attr`` see of one sub-environment (env slot).

    Read-only: ``slot``, ``task_config`` (the running episode's ``TaskCfg``), ``episode_index``,
    ``steps`` (env steps of the running episode, physics steps), ``robot_name``. Any other attribute
    can be set with ``set_attr`` and read back with ``get_attr``.
    """

    _READ_ONLY = ('slot', 'task_config', 'episode_index', 'steps', 'robot_name')

    def __init__(self, env: 'VectorEnv', slot: int) -> None:
        object.__setattr__(self, '_env', env)
        object.__setattr__(self, '_slot', slot)

    @property
    def slot(self) -> int:
        """The slot index."""
        return self._slot

    @property
    def task_config(self) -> Optional[TaskCfg]:
        """The running (or just finished) episode's config."""
        episode = self._env.vec_env.runner.episodes[self._slot]
        return episode.config if episode is not None else None

    @property
    def episode_index(self) -> int:
        """Index of the running episode in the episode stream (since the last restart)."""
        episode = self._env.vec_env.runner.episodes[self._slot]
        return episode.index if episode is not None else -1

    @property
    def steps(self) -> int:
        """Physics steps the running episode has taken."""
        return int(self._env.vec_env.runner.steps[self._slot])

    @property
    def robot_name(self) -> str:
        """The robot the spaces are built for."""
        return self._env.robot_name

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._READ_ONLY:
            raise AttributeError(f'{name!r} of a sub-environment is read-only')
        object.__setattr__(self, name, value)


# ==================================================================================================
# The vector env
def _resolve_config(config: Union[Config, str, os.PathLike[str]], num_envs: Optional[int]) -> Config:
    if isinstance(config, (str, os.PathLike)):
        config = Config.from_yaml(config)
    if not isinstance(config, Config):
        raise TypeError(f'config must be an internutopia Config or the path of a YAML config; got {type(config).__name__}')
    if num_envs is not None and num_envs != config.env_num:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f'num_envs must be an int >= 1; got {num_envs!r}')
        config = config.update(env_num=int(num_envs))
    return config


def _autoreset_mode(mode: Union[AutoresetMode, str]) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        return mode
    for member in AutoresetMode:
        if mode in (member.value, member.name, member.name.lower()):
            return member
    raise ValueError(f'autoreset_mode must be one of {[m.value for m in AutoresetMode]}; got {mode!r}')


class VectorEnv(gym.vector.VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` whose sub-environments are the slots of one ``vec_env.Env``.

    Args:
        config: a :class:`~internutopia.core.config.Config` or the path of a YAML config. It is
            never modified; ``num_envs`` overrides its ``env_num`` in a copy.
        num_envs: number of sub-environments (default ``config.env_num``).
        episodes: the episode source (see :class:`EpisodeSource`); default ``config.task_configs``,
            cycled. Every episode must have one robot (or name the robot with ``robot=``) with the
            same controllers and observation layout.
        robot: the robot the spaces are built for (default: the episode's only robot).
        controller: the controller the action drives (default ``move_by_speed`` when the robot has
            it, else its first controller with a known action space).
        obs_mode: ``'flat'`` (one ``float32`` ``Box``) or ``'dict'`` (a ``Dict`` keyed by ``obs_keys``).
        obs_keys: which observations (see :class:`ObsLayout`); default :meth:`ObsLayout.default_keys`.
        action_repeat: physics steps per ``step()`` with the same action (rewards are summed; an
            episode that ends on an inner step ends there). ``1`` = InternUtopia's one step.
        action_space: override the controller's action space (a ``Box`` of its argument shape).
        autoreset_mode: Gymnasium's ``AutoresetMode`` (or its value): ``NEXT_STEP`` (default),
            ``SAME_STEP`` or ``DISABLED``.
        render_mode: ``None`` or ``'rgb_array'`` (an overview image of the whole grid).

    Actions outside the action space are clipped to it.
    """

    metadata = {'render_modes': ['rgb_array'], 'autoreset_mode': AutoresetMode.NEXT_STEP}

    def __init__(self, config: Union[Config, str, os.PathLike[str]], *, num_envs: Optional[int] = None,
                 episodes: Any = None, robot: Optional[str] = None, controller: Optional[str] = None,
                 obs_mode: str = 'flat', obs_keys: Optional[Sequence[str]] = None, action_repeat: int = 1,
                 action_space: Optional[spaces.Box] = None,
                 autoreset_mode: Union[AutoresetMode, str] = AutoresetMode.NEXT_STEP,
                 render_mode: Optional[str] = None) -> None:
        config = _resolve_config(config, num_envs)
        if obs_mode not in ('flat', 'dict'):
            raise ValueError(f"obs_mode must be 'flat' or 'dict'; got {obs_mode!r}")
        if isinstance(action_repeat, bool) or not isinstance(action_repeat, (int, np.integer)) or action_repeat < 1:
            raise ValueError(f'action_repeat must be an int >= 1; got {action_repeat!r}')
        if render_mode not in (None, 'rgb_array'):
            raise ValueError(f"render_mode must be None or 'rgb_array'; got {render_mode!r}")
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.metadata = {**type(self).metadata, 'autoreset_mode': self.autoreset_mode,
                         'render_fps': 1.0 / (config.simulator.physics_dt * int(action_repeat))}
        self.render_mode = render_mode
        self.num_envs = config.env_num
        self.obs_mode = obs_mode
        self.action_repeat = int(action_repeat)
        self.closed = False
        self._source = EpisodeSource(episodes, config.task_configs, endless=True)
        self._vec = InternVecEnv(config, episodes=self._source.stream(np.random.default_rng()))
        try:
            obs, info = self._vec.reset()
            self._check_reset(list(range(self.num_envs)), obs)
            self.robot_name = self._pick_robot(info[0], robot)
            for slot, task in enumerate(info):
                self._check_robot(slot, task)
            robot_group = self._vec.runner.slot_robots[0][self.robot_name]
            self.controller_name = self._pick_controller(robot_group, controller)
            if action_space is None:
                action_space = controller_action_space(robot_group.controllers[self.controller_name], self._vec)
            elif not isinstance(action_space, spaces.Box):
                raise TypeError(f'action_space must be a gymnasium Box; got {type(action_space).__name__}')
            self.layout = ObsLayout(obs[0], self.robot_name, obs_keys)
            for slot in range(1, self.num_envs):
                self.layout.check(obs[slot], slot)
        except BaseException:
            self._vec.close()
            raise
        self.single_action_space = action_space
        self.action_space = batch_space(action_space, self.num_envs)
        self.single_observation_space = self.layout.flat_space() if obs_mode == 'flat' else self.layout.dict_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._slot_obs: list[dict] = list(obs)
        self._ended = np.zeros(self.num_envs, dtype=bool)
        self._fresh: Optional[list] = list(info)  # the episodes of the construction-time reset
        self._views = [SlotView(self, i) for i in range(self.num_envs)]

    # -- properties ----------------------------------------------------------------------------
    @property
    def vec_env(self) -> InternVecEnv:
        """The ``vec_env.Env`` underneath (one world, ``num_envs`` slots)."""
        return self._vec

    @property
    def config(self) -> Config:
        """The config the world was built from."""
        return self._vec.config

    @property
    def obs_keys(self) -> list[str]:
        """The observation keys, in the order of the flat vector."""
        return list(self.layout.keys)

    # -- construction helpers ------------------------------------------------------------------
    def _check_reset(self, slots: list[int], obs: list) -> None:
        empty = [slot for slot, o in zip(slots, obs) if o is None]
        if empty:
            raise RuntimeError(f'the episode source ran out of episodes (env(s) {empty} got none); a Gymnasium env '
                               'needs an endless source: a list (it is cycled) or a sampler f(rng) -> TaskCfg')

    @staticmethod
    def _pick_robot(task: TaskCfg, robot: Optional[str]) -> str:
        names = [r.name for r in task.robots]
        if robot is not None:
            if robot not in names:
                raise ValueError(f'robot {robot!r} is not in the episode; its robots: {names}')
            return robot
        if len(names) != 1:
            raise ValueError(f'the episode has {len(names)} robots {names}; name the one to drive with robot=')
        return names[0]

    def _check_robot(self, slot: int, task: TaskCfg) -> None:
        names = [r.name for r in task.robots]
        if self.robot_name not in names:
            raise ValueError(f'env {slot}: its episode has no robot {self.robot_name!r} (robots: {names}); every episode '
                             'of a Gymnasium env must have the same robot')

    @staticmethod
    def _pick_controller(robot_group: Any, controller: Optional[str]) -> str:
        names = list(robot_group.controllers)
        if controller is not None:
            if controller not in names:
                raise ValueError(f'controller {controller!r} is not a controller of robot {robot_group.name!r}; '
                                 f'its controllers: {names}')
            return controller
        if not names:
            raise ValueError(f'robot {robot_group.name!r} has no controllers; give it one (e.g. move_by_speed) to act')
        if 'move_by_speed' in names:
            return 'move_by_speed'
        for name in names:
            c = robot_group.controllers[name]
            if getattr(c, 'action_space', None) is not None or any(
                    n in ACTION_SPACES for n in [c.config.type] + [k.__name__ for k in type(c).__mro__]):
                return name
        return names[0]

    # -- observations and infos ----------------------------------------------------------------
    def _batch_obs(self) -> Any:
        if self.obs_mode == 'flat':
            return self.layout.flat(self._slot_obs)
        return self.layout.dict(self._slot_obs)

    def _single_obs(self, slot_obs: dict) -> Any:
        if self.obs_mode == 'flat':
            return self.layout.flat([slot_obs])[0]
        return {k: np.array(v[0]) for k, v in self.layout.dict([slot_obs]).items()}

    @staticmethod
    def _reset_info(task: TaskCfg, index: int) -> dict[str, Any]:
        return {'episode_index': index, 'task_config': task}

    def _take(self, slots: list[int]) -> list[dict[str, Any]]:
        """Reset ``slots`` in ``vec_env``; update cached obs; return their reset infos."""
        obs, info = self._vec.reset(slots)
        self._check_reset(slots, obs)
        episodes = self._vec.runner.episodes
        out = []
        for slot, o, task in zip(slots, obs, info):
            self._check_robot(slot, task)
            self.layout.check(o, slot)
            self._slot_obs[slot] = o
            self._ended[slot] = False
            out.append(self._reset_info(task, episodes[slot].index))
        return out

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: Optional[Union[int, list[Optional[int]]]] = None,
              options: Optional[dict[str, Any]] = None) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-environment, or those of ``options['reset_mask']``.

        ``seed`` (an int, or a list of ints, one per env) seeds :attr:`np_random` and restarts the
        episode source, so the same seed gives the same episodes. ``options['reset_mask']``, a
        ``bool`` array of shape ``(num_envs,)``, resets only those envs; the others keep their
        observation. Info: ``episode_index`` and ``task_config`` of the envs that were reset.
        """
        self._check_open()
        if isinstance(seed, (list, tuple)) and len(seed) != self.num_envs:
            raise ValueError(f'If seeds are passed as a list the length must match num_envs={self.num_envs} '
                             f'but got length={len(seed)}.')
        options = dict(options or {})
        mask = options.pop('reset_mask', None)
        if mask is not None:
            if not isinstance(mask, np.ndarray):
                raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
            if mask.shape != (self.num_envs,):
                raise ValueError(f"`options['reset_mask']` must have shape `({self.num_envs},)`, got {mask.shape}")
            if mask.dtype != np.bool_:
                raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
            if not np.any(mask):
                raise ValueError("`options['reset_mask']` must contain a boolean array with at least one True value, "
                                 f'got reset_mask={mask}')
        if options:
            raise ValueError(f'unknown reset option(s) {sorted(options)}; valid options: [\'reset_mask\']')
        if seed is not None:
            first = seed if isinstance(seed, (int, np.integer)) else next((s for s in seed if s is not None), None)
            super().reset(seed=None if first is None else int(first))
            self._restart_source(_seed_generator(seed))
        slots = list(range(self.num_envs)) if mask is None else [int(i) for i in np.flatnonzero(mask)]
        if self._fresh is not None and seed is None and mask is None:
            # The construction-time reset already started these episodes: hand them out.
            episodes = self._vec.runner.episodes
            infos = [self._reset_info(task, episodes[slot].index) for slot, task in enumerate(self._fresh)]
        else:
            infos = self._take(slots)
        self._fresh = None
        info: dict[str, Any] = {}
        for slot, slot_info in zip(slots, infos):
            info = self._add_info(info, slot_info, slot)
        return self._batch_obs(), info

    def _restart_source(self, rng: np.random.Generator) -> None:
        if self._source.restartable:
            self._vec.runner.queue = EpisodeQueue(self._source.stream(rng))

    def _commands(self, actions: Any, slots: np.ndarray) -> list[Any]:
        commands: list[Any] = [None] * self.num_envs
        space = self.single_action_space
        for slot in slots:
            args = np.clip(actions[slot], space.low, space.high)
            commands[slot] = {self.robot_name: {self.controller_name: args}}
        return commands

    def _check_actions(self, actions: Any) -> np.ndarray:
        shape = (self.num_envs, *self.single_action_space.shape)
        try:
            array = np.asarray(actions, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f'actions must be numbers of shape {shape}; got {type(actions).__name__}') from None
        if array.shape != shape:
            raise ValueError(f'actions must have shape {shape} (num_envs, *single_action_space.shape); got {array.shape}')
        if not np.all(np.isfinite(array)):
            bad = sorted({int(i) for i in np.argwhere(~np.isfinite(array))[:, 0]})
            raise ValueError(f'actions of env(s) {bad} are not finite (NaN or inf)')
        return array

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply ``actions`` (shape ``(num_envs, *single_action_space.shape)``) for ``action_repeat`` physics steps.

        Returns batched ``(obs, rewards, terminations, truncations, info)``; see the class and
        module docs for what happens to envs whose episodes end in each autoreset mode.
        """
        self._check_open()
        if self._fresh is not None:
            raise RuntimeError('call reset() before step()')
        actions = self._check_actions(actions)
        n = self.num_envs
        if self.autoreset_mode == AutoresetMode.DISABLED and self._ended.any():
            ended = [int(i) for i in np.flatnonzero(self._ended)]
            raise RuntimeError(f'env(s) {ended} ended their episodes; with autoreset_mode=DISABLED call '
                               "reset(options={'reset_mask': mask}) for them before the next step()")
        to_reset = np.flatnonzero(self._ended) if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(0, np.intp)
        live = ~self._ended.copy()
        rewards = np.zeros(n, dtype=np.float64)
        terminated = np.zeros(n, dtype=np.bool_)
        truncated = np.zeros(n, dtype=np.bool_)
        step_info: list[Optional[dict]] = [None] * n
        commands = self._commands(actions, np.flatnonzero(live))
        for repeat in range(self.action_repeat):
            obs, reward, term, trunc, info = self._vec.step(commands)
            for slot in np.flatnonzero(live):
                self._slot_obs[slot] = obs[slot]
                rewards[slot] += reward[slot]
                step_info[slot] = info[slot]
                if term[slot] or trunc[slot]:
                    terminated[slot], truncated[slot] = term[slot], trunc[slot]
                    live[slot] = False
                    commands[slot] = None
            if not live.any():
                break
        ended = terminated | truncated
        infos: dict[str, Any] = {}
        for slot in range(n):
            if step_info[slot] is not None and not (self.autoreset_mode == AutoresetMode.SAME_STEP and ended[slot]):
                infos = self._add_info(infos, step_info[slot], slot)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and ended.any():
            slots = [int(i) for i in np.flatnonzero(ended)]
            for slot in slots:
                infos = self._add_info(infos, {'final_obs': self._single_obs(self._slot_obs[slot]),
                                               'final_info': step_info[slot]}, slot)
            for slot, reset_info in zip(slots, self._take(slots)):
                infos = self._add_info(infos, reset_info, slot)
            ended[:] = False
        if len(to_reset):
            slots = [int(i) for i in to_reset]
            for slot, reset_info in zip(slots, self._take(slots)):
                infos = self._add_info(infos, reset_info, slot)
        self._ended = ended
        return self._batch_obs(), rewards, terminated, truncated, infos

    def render(self) -> Optional[np.ndarray]:
        """With ``render_mode='rgb_array'``: one overview image ``(H, W, 3)`` of the whole grid (all envs)."""
        if self.render_mode == 'rgb_array':
            return self._vec.render()
        return None

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Per sub-environment: call ``name`` of its :class:`SlotView` (or return it if not callable).

        Names a slot view lacks fall back to this env's (non-callable) attributes, repeated per env.
        """
        results = []
        for view in self._views:
            try:
                value = getattr(view, name)
            except AttributeError:
                value = getattr(self, name, _NOT_FOUND)
                if value is _NOT_FOUND or callable(value):
                    raise AttributeError(f'sub-environments have no attribute {name!r}; they have '
                                         f'{sorted(SlotView._READ_ONLY)} and those set with set_attr') from None
            results.append(value(*args, **kwargs) if callable(value) else value)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """``name`` of every sub-environment (see :class:`SlotView`)."""
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set ``name`` on every sub-environment's :class:`SlotView`: one value each, or one for all."""
        if not isinstance(values, (list, tuple)):
            values = [values for _ in range(self.num_envs)]
        if len(values) != self.num_envs:
            raise ValueError('Values must be a list or tuple with length equal to the number of environments. '
                             f'Got `{len(values)}` values for {self.num_envs} environments.')
        for view, value in zip(self._views, values):
            setattr(view, name, value)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the world."""
        self._vec.close()

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError('this VectorEnv is closed')


# ==================================================================================================
# One slot as a gymnasium.Env with the same flat spaces
class FlatEnv(gym.Env):
    """A ``gymnasium.Env`` over a one-slot :class:`VectorEnv`: flat ``Box`` spaces, endless episodes.

    Takes the same arguments as :class:`VectorEnv` (without ``num_envs``/``autoreset_mode``).
    This is the flat-array counterpart of :class:`internutopia.core.gym_env.Env` (whose observations
    and actions are InternUtopia's dicts), for libraries that want arrays.
    """

    metadata = {'render_modes': ['rgb_array']}

    def __init__(self, config: Union[Config, str, os.PathLike[str], None] = None, render_mode: Optional[str] = None, *,
                 vector_env: Optional[VectorEnv] = None, **kwargs: Any) -> None:
        if vector_env is None:
            if config is None:
                raise TypeError('FlatEnv needs a config (a Config or the path of a YAML config) or vector_env=')
            for key in ('num_envs', 'autoreset_mode'):
                if key in kwargs:
                    raise TypeError(f'FlatEnv runs one slot without autoreset; {key}= is not an argument')
            vector_env = VectorEnv(config, num_envs=1, autoreset_mode=AutoresetMode.DISABLED, render_mode=render_mode, **kwargs)
        elif config is not None or kwargs:
            raise TypeError('pass either a config (and VectorEnv arguments) or vector_env=, not both')
        elif vector_env.num_envs != 1 or vector_env.autoreset_mode != AutoresetMode.DISABLED:
            raise ValueError('FlatEnv(vector_env=...) needs a VectorEnv with num_envs=1 and autoreset_mode=DISABLED; '
                             f'got num_envs={vector_env.num_envs}, autoreset_mode={vector_env.autoreset_mode.value}')
        self._envs = vector_env
        self.metadata = {**type(self).metadata, 'render_fps': vector_env.metadata['render_fps']}
        self.render_mode = vector_env.render_mode
        self.observation_space = vector_env.single_observation_space
        self.action_space = vector_env.single_action_space
        self._running = False

    @property
    def vector_env(self) -> VectorEnv:
        """The one-slot vector env underneath."""
        return self._envs

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> tuple[Any, dict]:
        """Start the next episode (``seed`` restarts the episode source)."""
        super().reset(seed=seed)
        obs, info = self._envs.reset(seed=seed, options=options)
        self._running = True
        return self._unbatch(obs), _unbatch_info(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """One ``step`` of the slot; reset after ``terminated or truncated``."""
        if not self._running:
            raise RuntimeError('the episode has ended (or reset() was not called); call reset() first')
        obs, reward, terminated, truncated, info = self._envs.step(np.asarray(action)[None])
        if terminated[0] or truncated[0]:
            self._running = False
        return self._unbatch(obs), float(reward[0]), bool(terminated[0]), bool(truncated[0]), _unbatch_info(info)

    def _unbatch(self, obs: Any) -> Any:
        if isinstance(obs, dict):
            return {k: np.array(v[0]) for k, v in obs.items()}
        return obs[0]

    def render(self) -> Optional[np.ndarray]:
        """The slot's overview image with ``render_mode='rgb_array'``."""
        return self._envs.render()

    def close(self) -> None:
        """Release the world (idempotent)."""
        self._envs.close()


def _unbatch_info(info: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in info.items():
        if key.startswith('_'):
            continue
        out[key] = _unbatch_info(value) if isinstance(value, dict) else (value[0].item() if isinstance(value[0], np.generic) else value[0])
    return out


# ==================================================================================================
# Stable-Baselines3 bridge
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

    class InternUtopiaSB3VecEnv(SB3VecEnv):
        """SB3's ``VecEnv`` interface over a Gymnasium ``SAME_STEP`` vector env."""

        def __init__(self, inner: gym.vector.VectorEnv) -> None:
            self.inner = inner
            self._actions: Any = None
            super().__init__(inner.num_envs, inner.single_observation_space, inner.single_action_space)
            self.render_mode = inner.unwrapped.render_mode

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
            values = self.inner.unwrapped.get_attr(attr_name)
            return [values[i] for i in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            views = self.inner.unwrapped._views
            for i in self._get_indices(indices):
                setattr(views[i], attr_name, value)

        def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
            values = self.inner.unwrapped.call(method_name, *method_args, **method_kwargs)
            return [values[i] for i in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False for _ in self._get_indices(indices)]

        def get_images(self) -> Any:
            image = self.inner.unwrapped.vec_env.render()
            return [image for _ in range(self.num_envs)]

    return InternUtopiaSB3VecEnv(env)
