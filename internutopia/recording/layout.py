"""What a recording stores per frame: the features table, fixed once from the first recorded step
(the ``action`` columns from the first step that sends a command, :meth:`Layout.set_actions`).

A :class:`Layout` is LeRobot's features table (name -> dtype, shape, names) plus the functions that
turn one slot's observation and action into that table's row. It is derived from the run itself:

- ``observation.state`` (float32): every numeric or boolean leaf (as 0/1) of each robot's
  observation except its ``sensors`` (joint positions and velocities, base position and
  orientation, end-effector pose, gripper opening, controller readings and flags...), robot by
  robot, leaves in the observation's own order, each array flattened; ``names`` gives each column
  as ``robot.path.i``.
- ``observation.environment_state`` (float32, when the episode has objects or task readings): the
  numeric leaves of ``obs['objects']`` and ``obs['task']`` (object poses, the goal), same naming.
- ``action`` (float32): per robot, per controller of its config in config order, the arguments as
  the controller received them (its ``parse_action`` result, flattened: the Franka's IK target is
  ``x, y, z, qw, qx, qy, qz`` (a unit quaternion) and its mode (0 hold, 1 position, 2 pose), the
  gripper ``1.0`` open / ``0.0`` closed); ``NaN`` where that
  controller got no command on the step. A controller whose parsed arguments are not a fixed-size
  number array (a path of waypoints: more than one dimension) is left out, with a warning naming
  it; a later command of another size than the first is recorded as ``NaN`` (warned about).
- ``observation.images.<camera>`` (video): each camera sensor's RGB image (``rgba`` without alpha),
  named by the sensor, prefixed by ``<robot>.`` when the run has several robots.

>>> import numpy as np
>>> obs = {'arm': {'position': np.zeros(3), 'joint_positions': np.arange(2.0), 'render': True,
...                'sensors': {'cam': {'rgba': np.zeros((4, 6, 4), np.uint8)}}},
...        'objects': {'cube': {'position': np.ones(3)}}}
>>> layout = Layout.from_observation(obs, robots=['arm'], actions={})
>>> layout.state_names
['arm.position.0', 'arm.position.1', 'arm.position.2', 'arm.joint_positions.0', 'arm.joint_positions.1', 'arm.render']
>>> layout.cameras, layout.features['observation.images.cam']['shape']
({'observation.images.cam': ('arm', 'cam')}, (4, 6, 3))
>>> layout.state(obs).tolist(), layout.environment_state(obs).tolist()
([0.0, 0.0, 0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0])
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from internutopia.core.util.caller import caller_stacklevel

__all__ = ['Layout', 'numeric_leaves']

#: Observation keys beside the robots' (objects' poses and the task's readings).
ENVIRONMENT_KEYS = ('objects', 'task')
#: Frame columns LeRobot's reader expects in every dataset (its default features).
DEFAULT_FEATURES: dict[str, dict[str, Any]] = {
    'timestamp': {'dtype': 'float32', 'shape': (1,), 'names': None},
    'frame_index': {'dtype': 'int64', 'shape': (1,), 'names': None},
    'episode_index': {'dtype': 'int64', 'shape': (1,), 'names': None},
    'index': {'dtype': 'int64', 'shape': (1,), 'names': None},
    'task_index': {'dtype': 'int64', 'shape': (1,), 'names': None},
}
#: Columns this recorder adds to every frame (rewards and flags describe the step the frame's
#: action led to, LeRobot's ``next.*`` convention).
EXTRA_FEATURES: dict[str, dict[str, Any]] = {
    'next.reward': {'dtype': 'float32', 'shape': (1,), 'names': None},
    'next.done': {'dtype': 'bool', 'shape': (1,), 'names': None},
    'next.truncated': {'dtype': 'bool', 'shape': (1,), 'names': None},
    'next.success': {'dtype': 'bool', 'shape': (1,), 'names': None},
    'run_episode_index': {'dtype': 'int64', 'shape': (1,), 'names': None},
    'env_slot': {'dtype': 'int64', 'shape': (1,), 'names': None},
}


def numeric_leaves(tree: Mapping[str, Any], prefix: str, skip: Sequence[str] = ()) -> list[tuple[str, Any]]:
    """``(path, value)`` of each number, flag or array of them in ``tree`` (strings left out),
    depth first in the dict's order; ``skip`` names top-level keys to leave out.

    >>> numeric_leaves({'a': 1.0, 'b': {'c': [1, 2]}, 'd': True, 'e': 'x'}, 'r')
    [('r.a', 1.0), ('r.b.c', [1, 2]), ('r.d', True)]
    """
    out: list[tuple[str, Any]] = []
    for key, value in tree.items():
        if key in skip:
            continue
        path = f'{prefix}.{key}'
        if isinstance(value, Mapping):
            out.extend(numeric_leaves(value, path))
        elif isinstance(value, (str, bytes)) or value is None:
            continue
        else:
            array = np.asarray(value)
            if array.dtype.kind in 'fiub' and array.size > 0:
                out.append((path, value))
    return out


def _column_names(leaves: list[tuple[str, Any]]) -> list[str]:
    names = []
    for path, value in leaves:
        size = np.asarray(value).size
        names.extend([path] if np.ndim(value) == 0 else [f'{path}.{i}' for i in range(size)])
    return names


def _flattener(leaves: list[tuple[str, Any]]) -> Callable[[Mapping[str, Any]], np.ndarray]:
    """A function that reads the same leaves from a tree of the same shape into one float32 row."""
    paths = [path.split('.')[1:] for path, _ in leaves]
    heads = [path.split('.')[0] for path, _ in leaves]
    sizes = [int(np.asarray(value).size) for _, value in leaves]
    total = sum(sizes)

    def flatten(tree: Mapping[str, Any]) -> np.ndarray:
        row = np.empty(total, np.float32)
        at = 0
        for head, path, size in zip(heads, paths, sizes, strict=True):
            node: Any = tree[head]
            for key in path:
                node = node[key]
            row[at:at + size] = np.ravel(node)
            at += size
        return row

    return flatten


@dataclasses.dataclass
class ActionBlock:
    """Where one controller's parsed arguments sit in the flat ``action`` row."""

    robot: str
    controller: str
    start: int
    size: int
    parse: Callable[[Any], Any]


@dataclasses.dataclass
class Layout:
    """A recording's features table and the readers that fill its rows (see the module doc)."""

    features: dict[str, dict[str, Any]]
    state_names: list[str]
    environment_names: list[str]
    action_blocks: list[ActionBlock]
    cameras: dict[str, tuple[str, str]]
    robots: list[str]
    state: Callable[[Mapping[str, Any]], np.ndarray]
    environment_state: Callable[[Mapping[str, Any]], np.ndarray]
    #: Controllers left out of ``action`` because none of them had a command when it was fixed
    #: (warned about at the first command one of them gets later: only then is anything lost).
    unsized: set[tuple[str, str]] = dataclasses.field(default_factory=set)

    @classmethod
    def from_observation(cls, obs: Mapping[str, Any], robots: Sequence[str],
                         actions: Mapping[str, Mapping[str, tuple[Callable[[Any], Any], Any]]]) -> Layout:
        """The layout of a slot whose observation is ``obs``.

        Args:
            obs: one slot's observation (``{robot: {...}, 'objects': ..., 'task': ...}``).
            robots: the slot's robot names, in the order their columns are laid out.
            actions: per robot, per controller (config order), ``(parse, example)``: the
                controller's ``parse_action`` and one command it received (``None`` when none was
                seen yet: then a fixed ``action_shape`` sizes it, else it is left out).
        """
        state_leaves, env_leaves, cameras, shapes = _observation_parts(obs, robots)
        features: dict[str, dict[str, Any]] = {}
        state_names = _column_names(state_leaves)
        features['observation.state'] = {'dtype': 'float32', 'shape': (len(state_names),), 'names': state_names}
        environment_names = _column_names(env_leaves)
        if environment_names:
            features['observation.environment_state'] = {'dtype': 'float32', 'shape': (len(environment_names),),
                                                         'names': environment_names}
        for key in cameras:
            height, width = shapes[key]
            features[key] = {'dtype': 'video', 'shape': (height, width, 3), 'names': ['height', 'width', 'channels']}
        features.update(EXTRA_FEATURES)
        features.update(DEFAULT_FEATURES)
        no_env = np.zeros(0, np.float32)
        layout = cls(features=features, state_names=state_names, environment_names=environment_names,
                     action_blocks=[], cameras=cameras, robots=list(robots), state=_flattener(state_leaves),
                     environment_state=_flattener(env_leaves) if env_leaves else (lambda tree: no_env))
        if actions:
            layout.set_actions(actions)
        return layout

    def set_actions(self, actions: Mapping[str, Mapping[str, tuple[Callable[[Any], Any], Any]]]) -> None:
        """Fix the ``action`` columns (:meth:`from_observation`'s ``actions``): a recording lays out
        the observation at its first step and the actions at the first step that sends a command."""
        blocks: list[ActionBlock] = []
        action_names: list[str] = []
        for robot in self.robots:
            for controller, (parse, example) in actions.get(robot, {}).items():
                size = _action_size(parse, example)
                if size is None and example is None:
                    self.unsized.add((robot, controller))
                    continue
                if size is None:
                    warnings.warn(f'recording: controller {controller!r} of robot {robot!r} takes arguments that are not a '
                                  'fixed-size number array (a path of waypoints); its commands are left out of the '
                                  'recorded action', stacklevel=caller_stacklevel())
                    continue
                blocks.append(ActionBlock(robot, controller, len(action_names), size, parse))
                action_names.extend([f'{robot}.{controller}'] if size == 1 else [f'{robot}.{controller}.{i}' for i in range(size)])
        action = {'dtype': 'float32', 'shape': (len(action_names),), 'names': action_names} if action_names else None
        ordered: dict[str, dict[str, Any]] = {}
        for key, spec in self.features.items():  # (after the states, before the cameras)
            if key == 'action':
                continue
            if action is not None and 'action' not in ordered and (key.startswith('observation.images.')
                                                                   or key in EXTRA_FEATURES):
                ordered['action'] = action
            ordered[key] = spec
        self.features, self.action_blocks = ordered, blocks

    @property
    def action_size(self) -> int:
        """Columns of the flat ``action`` row."""
        return int(self.features['action']['shape'][0]) if 'action' in self.features else 0

    def action(self, entry: Mapping[str, Any] | None) -> np.ndarray:
        """One slot's action entry (``{robot: {controller: args}}``) as the flat ``action`` row."""
        row = np.full(self.action_size, np.nan, np.float32)
        if not entry:
            return row
        if self.unsized:
            self._warn_unsized(entry)
        for block in self.action_blocks:
            commands = entry.get(block.robot)
            if commands and block.controller in commands:
                values = np.ravel(np.asarray(block.parse(commands[block.controller]), np.float32))
                if values.size != block.size:  # (the step itself was fine: its frame is kept, this command NaN)
                    warnings.warn(f'recording: controller {block.controller!r} of robot {block.robot!r} got a command of '
                                  f'{values.size} numbers where the layout has {block.size}; it is recorded as NaN',
                                  stacklevel=caller_stacklevel())
                    continue
                row[block.start:block.start + block.size] = values
        return row

    def _warn_unsized(self, entry: Mapping[str, Any]) -> None:
        """Warn (once per controller) of a command for a controller the ``action`` columns left out."""
        for robot, controller in sorted(self.unsized):
            if controller in (entry.get(robot) or {}):
                self.unsized.discard((robot, controller))
                warnings.warn(f'recording: controller {controller!r} of robot {robot!r} got no command before the '
                              'layout was fixed; its commands are left out of the recorded action',
                              stacklevel=caller_stacklevel())

    def images(self, obs: Mapping[str, Any]) -> list[np.ndarray]:
        """Each camera's RGB image of one slot's observation, in :attr:`cameras` order."""
        return [obs[robot]['sensors'][sensor]['rgba'][..., :3] for robot, sensor in self.cameras.values()]

    def matches(self, obs: Mapping[str, Any], robots: Sequence[str]) -> bool:
        """Whether another episode's first observation fits this layout: the same robots, the same
        state and environment columns (names, so sizes too) and the same cameras at the same sizes,
        none missing and none more."""
        if list(robots) != self.robots:
            return False
        try:
            state_leaves, env_leaves, cameras, shapes = _observation_parts(obs, robots)
        except (KeyError, TypeError, ValueError, AttributeError):
            return False
        return (_column_names(state_leaves) == self.state_names and _column_names(env_leaves) == self.environment_names
                and cameras == self.cameras
                and all(shapes[key] == tuple(self.features[key]['shape'][:2]) for key in cameras))


def _observation_parts(obs: Mapping[str, Any], robots: Sequence[str]) -> tuple[
        list[tuple[str, Any]], list[tuple[str, Any]], dict[str, tuple[str, str]], dict[str, tuple[int, int]]]:
    """A slot observation's state leaves, environment leaves, cameras (feature key -> robot,
    sensor) and their image sizes (height, width)."""
    state_leaves = [leaf for robot in robots for leaf in numeric_leaves(obs[robot], robot, skip=('sensors',))]
    env_leaves = [leaf for key in ENVIRONMENT_KEYS if isinstance(obs.get(key), Mapping)
                  for leaf in numeric_leaves(obs[key], key)]
    cameras: dict[str, tuple[str, str]] = {}
    shapes: dict[str, tuple[int, int]] = {}
    for robot in robots:
        for sensor, reading in (obs[robot].get('sensors') or {}).items():
            image = reading.get('rgba') if isinstance(reading, Mapping) else None
            if isinstance(image, np.ndarray) and image.ndim == 3 and image.dtype == np.uint8:
                key = 'observation.images.' + (sensor if len(robots) == 1 else f'{robot}.{sensor}')
                cameras[key] = (robot, sensor)
                shapes[key] = (int(image.shape[0]), int(image.shape[1]))
    return state_leaves, env_leaves, cameras, shapes


def _action_size(parse: Callable[[Any], Any], example: Any) -> int | None:
    if example is None:
        return None
    try:
        parsed = np.asarray(parse(example))
    except (ValueError, TypeError):
        return None
    if parsed.dtype.kind not in 'fiub' or parsed.dtype == object:
        return None
    if parsed.ndim > 1:  # a list of points (move_along_path's (n, 3)): its length varies from command to command
        return None
    return int(parsed.size)
