"""Which observation values make up the flat observation vector, and derived features."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from internutopia.core.gym_vector.spaces import is_annotation, space_from_value
from internutopia.core.util.math import quat_to_yaw
from internutopia.core.util.yaw_frame import goal_in_yaw_frame, goals_in_yaw_frame
from internutopia.core.util.yaw_frame import warm as warm_yaw_frame


@dataclass(frozen=True)
class Feature:
    """A derived observation computed from a slot's observation dict.

    ``fn(slot_obs, robot_name) -> array``; ``applies(slot_obs, robot_name) -> bool`` says whether
    it can be computed for an episode (derived features are added by default only when they apply).
    ``batch_fn(obs_arrays, robot_name) -> (env_num, ...) array``, when given, computes the same
    numbers for every slot at once from the array observation tree (the vector env's fast path);
    without it, a layout that uses the feature steps through per-slot dicts. ``reads``, when
    given, names the observation keys the feature reads (``'robot.position'``, ``'task.goal'``):
    a vector env then gathers only those and its other keys' entries; without it, everything.
    ``warm()``, when given, prepares ``batch_fn`` ahead of a first step (compiles its kernel).
    """

    fn: Callable[[dict, str], np.ndarray]
    applies: Callable[[dict, str], bool]
    low: float = -np.inf
    high: float = np.inf
    doc: str = ''
    batch_fn: Callable[[dict, str], np.ndarray] | None = None
    reads: tuple[str, ...] | None = None
    warm: Callable[[], None] | None = None

def _goal_vector(obs: dict, robot: str) -> np.ndarray:
    body = obs[robot]
    return np.array(goal_in_yaw_frame(obs['task']['goal'], body['position'], body['orientation']))

def _heading(obs: dict, robot: str) -> np.ndarray:
    yaw = float(quat_to_yaw(obs[robot]['orientation']))
    return np.array([np.cos(yaw), np.sin(yaw)])

def _goal_vector_rows(obs: dict, robot: str) -> np.ndarray:
    """:func:`_goal_vector` of every row at once (the same float64 operations, in one compiled pass)."""
    body = obs[robot]
    return goals_in_yaw_frame(obs['task']['goal'], body['position'], body['orientation'])

def _heading_rows(obs: dict, robot: str) -> np.ndarray:
    yaw = np.asarray(quat_to_yaw(obs[robot]['orientation']), dtype=float)
    return np.stack([np.cos(yaw), np.sin(yaw)], axis=1)

def _has_goal(obs: dict, robot: str) -> bool:
    return isinstance(obs.get('task'), dict) and 'goal' in obs['task']

#: Derived observations by name; usable in ``obs_keys``. Add yours with :func:`register_feature`.
FEATURES: dict[str, Feature] = {
    'goal_vector': Feature(_goal_vector, _has_goal,
                           doc="the task's goal relative to the robot's base, in the base's yaw frame (x ahead, y left), metres",
                           batch_fn=_goal_vector_rows, reads=('robot.position', 'robot.orientation', 'task.goal'),
                           warm=warm_yaw_frame),
    'heading': Feature(_heading, lambda obs, robot: True, -1.0, 1.0, doc="``[cos(yaw), sin(yaw)]`` of the robot's base",
                       batch_fn=_heading_rows, reads=('robot.orientation',)),
}

def register_feature(name: str, fn: Callable[[dict, str], np.ndarray], applies: Callable[[dict, str], bool] | None = None,
                     low: float = -np.inf, high: float = np.inf, doc: str = '',
                     batch_fn: Callable[[dict, str], np.ndarray] | None = None,
                     reads: Sequence[str] | None = None) -> None:
    """Register a derived observation ``name`` computed by ``fn(slot_obs, robot_name)``.

    With ``applies`` it is also added to the default observation of episodes it applies to; with
    ``batch_fn(obs_arrays, robot_name)`` (the same numbers for all slots at once) vector envs
    that use it keep their array fast path; with ``reads`` (the observation keys the functions
    read, e.g. ``['robot.position', 'task.goal']``) they gather only what their keys read.
    """
    FEATURES[name] = Feature(fn, applies or (lambda obs, robot: False), low, high, doc, batch_fn,
                             None if reads is None else tuple(reads))

_NOT_FOUND = object()

def _lookup(obs: dict, key: str, robot: str) -> Any:
    parts = key.split('.')
    node: Any = obs.get(robot if parts[0] == 'robot' else parts[0], _NOT_FOUND)
    for part in parts[1:]:
        if not isinstance(node, dict) or part not in node:
            return _NOT_FOUND
        node = node[part]
    return node

def _annotation_image(value: Any) -> Any:
    """A camera annotation whose data is an image (a segmentation) stands for that image."""
    if is_annotation(value):
        data = np.asarray(value['data'])
        if data.dtype.names is None and data.dtype != object:
            return data
    return value

def key_is_annotation(sample: dict, key: str, robot: str) -> bool:
    """Whether ``key`` names a camera annotation (or its ``data``) in ``sample``: per-slot dicts only."""
    raw, parent = _lookup(sample, key, robot), _lookup(sample, key.rpartition('.')[0], robot)
    return bool(is_annotation(raw) or (key.endswith('.data') and is_annotation(parent)))

def _leaves(space: spaces.Space) -> list[spaces.Space]:
    if isinstance(space, spaces.Dict):
        return [leaf for sub in space.spaces.values() for leaf in _leaves(sub)]
    return [space]

def _numeric_leaves(node: Any, prefix: str) -> list[str]:
    if isinstance(node, dict):
        return [key for k, v in node.items() for key in _numeric_leaves(v, f'{prefix}.{k}')]
    array = np.asarray(node)
    if array.dtype == object or array.ndim > 1 or array.size == 0:
        return []
    return [prefix]

def _every_row(rows: np.ndarray, count: int) -> np.ndarray | slice:
    """``slice(None)`` when ``rows`` is every one of ``count`` rows in order (a slice reads and
    writes in place, where a list of rows gathers and scatters copies), else ``rows``."""
    if len(rows) == count and count and rows.tolist() == list(range(count)):  # (cheaper than numpy on a few dozen rows)
        return slice(None)
    return rows


class ObsLayout:
    """Which parts of a slot's observation dict make up the Gymnasium observation, and their spaces.

    Keys are dotted paths into the slot's observation dict, where ``robot`` stands for the chosen
    robot (``robot.position``, ``robot.controllers.move_to_point.finished``,
    ``robot.sensors.camera.rgba``), other first parts are the task's own top-level entries
    (``task.goal``, ``task.distance_to_goal``, ``objects.box.position``), and plain names are
    derived :data:`FEATURES` (``goal_vector``, ``heading``).

    A key naming a segmentation (``robot.sensors.camera.semantic_segmentation`` or
    ``instance_segmentation``) stands for its ``int32 (H, W)`` id image; its id-to-label table, the
    boxes of ``bounding_box_2d_tight`` and ``landmarks`` are not arrays of a fixed shape and are
    refused with the reason (see ``docs/perception.md``).

    Default keys: ``robot.position``, ``robot.orientation``, ``robot.joint_positions``,
    ``robot.joint_velocities``, every numeric scalar or vector the task reports under ``task``,
    and every derived feature that applies (``goal_vector`` when the task has a goal).
    """

    ROBOT_DEFAULTS = ('robot.position', 'robot.orientation', 'robot.joint_positions', 'robot.joint_velocities')

    def __init__(self, sample: dict, robot: str, keys: Sequence[str] | None = None) -> None:
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
                if feature.warm is not None:
                    feature.warm()
                array = np.asarray(value, dtype=np.float64)
                self.spaces[key] = spaces.Box(feature.low, feature.high, array.shape, np.float64)
            else:
                space = space_from_value(value, key)
                raw, parent = _lookup(sample, key, self.robot), _lookup(sample, key.rpartition('.')[0], self.robot)
                if raw is not value or (key.endswith('.data') and is_annotation(parent)):
                    # A segmentation's image keeps the annotation's space (ids from 0).
                    annotation = space_from_value(raw if raw is not value else parent, key)
                    assert isinstance(annotation, spaces.Dict)
                    space = annotation['data']
                if is_annotation(value) or not any(isinstance(leaf, spaces.Box) for leaf in _leaves(space)):
                    raise ValueError(f'observation key {key!r} is a table of labels or rows whose size '
                                     'changes from frame to frame, which no Box can hold; it is not part of a vector '
                                     "env's observation (the dict observation of gym_env.Env keeps it, and "
                                     "VectorEnv.vec_env.get_observations() gives it). Camera images and "
                                     "segmentation images ('...semantic_segmentation') can be used")
                if not isinstance(space, spaces.Box):
                    raise ValueError(f'observation key {key!r} names a dict, not a value; '
                                     f'pick one of its entries: {sorted(f"{key}.{k}" for k in value)}')
                self.spaces[key] = spaces.Box(space.low, space.high, space.shape, space.dtype)
        self.sizes = [int(np.prod(self.spaces[k].shape)) for k in self.keys]
        #: Whether :meth:`flat_rows`/:meth:`dict_rows` can build the observation from the array
        #: observation tree: every key a plain value (not a camera annotation) or a feature with a ``batch_fn``.
        self.rows_ready = all(
            FEATURES[k].batch_fn is not None if k in FEATURES
            else not key_is_annotation(sample, k, robot) for k in self.keys)

    def observed_entries(self) -> dict[str, frozenset[str] | None] | None:
        """The entries of the array observation the keys read, for ``step_arrays(observe_only=...)``:
        each key's first part (the robot's name for ``robot``) with its second, or the whole entry
        for a key of one part; a derived feature's keys are those it :attr:`~Feature.reads`.
        ``None`` (everything) when a feature among the keys does not say what it reads.

        >>> sample = {'h1': {'policy_obs': np.zeros(3), 'position': np.zeros(3)}, 'task': {'progress': 0.5}, 'fell': np.zeros(1)}
        >>> ObsLayout(sample, 'h1', ['robot.policy_obs', 'task.progress', 'fell']).observed_entries()
        {'h1': frozenset({'policy_obs'}), 'task': frozenset({'progress'}), 'fell': None}
        """
        keys: list[str] = []
        for key in self.keys:
            if key not in FEATURES:
                keys.append(key)
                continue
            reads = FEATURES[key].reads
            if reads is None:
                return None
            keys += reads
        entries: dict[str, set[str] | None] = {}
        for key in keys:
            first, _, rest = key.partition('.')
            top = self.robot if first == 'robot' else first
            children = entries.setdefault(top, set())
            if not rest:
                entries[top] = None
            elif children is not None:
                children.add(rest.split('.')[0])
        return {top: None if children is None else frozenset(children) for top, children in entries.items()}

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
        value = _annotation_image(_lookup(obs, key, self.robot))
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
        return {k: slice(int(a), int(b)) for k, a, b in zip(self.keys, bounds[:-1], bounds[1:], strict=True)}

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

    def _rows_value(self, tree: builtins.dict, key: str, rows: np.ndarray | slice) -> np.ndarray:
        if key in FEATURES:
            batch_fn = FEATURES[key].batch_fn
            assert batch_fn is not None  # rows_ready
            return np.asarray(batch_fn(tree, self.robot))[rows]
        parts = key.split('.')
        node: Any = tree.get(self.robot if parts[0] == 'robot' else parts[0], _NOT_FOUND)
        for depth, part in enumerate(parts[1:], start=1):
            if isinstance(node, np.ndarray) and node.dtype == object:
                # Per-slot dicts (the scene objects' observations): looked up row by row.
                rest = '.'.join(['_', *parts[depth:]])
                indices = range(len(node))[rows] if isinstance(rows, slice) else rows.tolist()
                return np.stack([np.asarray(_lookup({'_': node[row]}, rest, self.robot)) for row in indices])
            if not isinstance(node, dict) or part not in node:
                node = _NOT_FOUND
                break
            node = node[part]
        if node is _NOT_FOUND:
            raise ValueError(f'observation key {key!r} is not in the array observation of robot {self.robot!r}')
        return np.asarray(node)[rows]

    def flat_rows(self, tree: builtins.dict, rows: np.ndarray, out: np.ndarray) -> None:
        """Write the flat rows of slots ``rows`` into ``out[rows]`` from the array observation tree
        ``tree`` (``vec_env.Env.step_arrays``' ``obs`` with the task's entries): the numbers
        :meth:`flat` gives from the same slots' dicts."""
        count, where = len(rows), _every_row(rows, len(out))
        values = [self._rows_value(tree, key, where).reshape(count, -1) for key in self.keys]
        widths = [value.shape[1] for value in values]
        if widths != self.sizes:  # (one concatenation would take widths that only add up)
            key, width, size = next((k, w, n) for k, w, n in zip(self.keys, widths, self.sizes, strict=True) if w != n)
            raise ValueError(f'observation {key!r} has {width} numbers per env, but the observation space was built with {size}')
        if isinstance(where, slice):  # (every row: one concatenation straight into ``out``, cast as it goes)
            np.concatenate(values, axis=1, out=out, casting='same_kind')
        else:
            out[where] = np.concatenate(values, axis=1, dtype=out.dtype, casting='same_kind')

    def dict_rows(self, tree: builtins.dict, rows: np.ndarray, out: builtins.dict[str, np.ndarray]) -> None:
        """:meth:`flat_rows` for the dict observation (each key in its own dtype)."""
        count, where = len(rows), _every_row(rows, len(next(iter(out.values()))) if out else 0)
        for key in self.keys:
            out[key][where] = self._rows_value(tree, key, where).reshape((count, *self.spaces[key].shape))

    def check(self, obs: builtins.dict, slot: int) -> None:  # (``dict`` here is the method above)
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
