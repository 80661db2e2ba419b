"""The action of a vector env: which controllers it drives, its ``Box``, and the commands made from it.

:class:`ActionLayout` is the action's counterpart of :class:`~internutopia.core.gym_vector.features.ObsLayout`:
it picks the robot's controller(s), builds the action space (one controller's, or several
controllers' concatenated into one flat ``Box``, each with its slice), checks a batch of actions and
turns it into the ``{robot: {controller: args}}`` commands ``vec_env.Env`` takes, per slot or batched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from internutopia.core.controller.base import non_number
from internutopia.core.gym_vector.spaces import ACTION_SPACES, controller_action_space
from internutopia.core.vec_env import Env as InternVecEnv

__all__ = ['ActionLayout', 'pick_controller']


def pick_controller(robot_group: Any, controller: str | None) -> str:
    """``controller`` if the robot has it (else a ``ValueError`` listing its controllers); with
    ``None``, ``move_by_speed`` when the robot has it, else its first controller with a known action
    space, else its first controller.

    >>> from types import SimpleNamespace as Namespace
    >>> def controller(type_name): return Namespace(config=Namespace(type=type_name))
    >>> arm = Namespace(name='franka', controllers={'recorder': controller('Recorder'),
    ...                                             'gripper_controller': controller('GripperController')})
    >>> pick_controller(arm, None)
    'gripper_controller'
    >>> pick_controller(arm, 'move_by_speed')
    Traceback (most recent call last):
    ...
    ValueError: controller 'move_by_speed' is not a controller of robot 'franka'; its controllers: ['recorder', 'gripper_controller']
    """
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


def _holds_none(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, np.ndarray):
        return value.dtype == object and any(_holds_none(v) for v in value.ravel().tolist())
    if isinstance(value, (list, tuple)):
        return any(_holds_none(v) for v in value)
    return False

def _rows_with_none(actions: Any) -> list[int]:
    """The envs (rows of ``actions``) whose action holds ``None`` (numpy would make it NaN)."""
    if isinstance(actions, np.ndarray) and (actions.dtype != object or actions.ndim == 0):
        return []
    if not isinstance(actions, (list, tuple, np.ndarray)):
        return []  # (not a batch: the shape check says so)
    return [i for i, row in enumerate(actions) if _holds_none(row)]


def _tensor_numpy(tensor: Any) -> np.ndarray:
    """A torch tensor on the host as a numpy array: ``bfloat16`` (a mixed-precision policy's
    output), which numpy has no type for, as the ``float32`` that holds it exactly."""
    try:
        return tensor.numpy()
    except TypeError:
        if tensor.is_floating_point():
            return tensor.float().numpy()
        raise


class ActionLayout:
    """How one sub-environment's action (a ``Box``) drives the controllers of one robot.

    Args:
        robot_name: the robot the action drives.
        robot_group: that robot's entity group (its ``controllers`` by name).
        controller: a controller name, ``None`` (see :func:`pick_controller`), or a list of distinct
            controller names whose actions are concatenated into one ``Box`` in that order.
        env: the ``vec_env.Env`` (for the controllers' action spaces, :func:`controller_action_space`).
        action_space: override the controllers' action space (a ``Box`` of their argument shape).

    Actions outside :attr:`space` are clipped to it.
    """

    def __init__(self, robot_name: str, robot_group: Any, controller: str | Sequence[str] | None, env: InternVecEnv,
                 action_space: spaces.Box | None = None) -> None:
        if controller is None or isinstance(controller, str):
            names = [pick_controller(robot_group, controller)]
        else:
            names = [pick_controller(robot_group, name) for name in controller]
            if not names or len(set(names)) != len(names):
                raise ValueError(f'controller: a list of distinct controller names of robot {robot_name!r}; got {controller!r}')
        self.robot_name = robot_name
        #: The controllers the action drives, and each one's slice of the action.
        self.controller_names = tuple(names)
        self.controller_name = names[0] if len(names) == 1 else '+'.join(names)
        if action_space is not None and not isinstance(action_space, spaces.Box):
            raise TypeError(f'action_space must be a gymnasium Box; got {type(action_space).__name__}')
        if action_space is not None and len(names) == 1:
            # (the override stands for a controller whose space is not known: its shape is the argument's)
            try:
                parts = [controller_action_space(robot_group.controllers[names[0]], env)]
            except ValueError:
                parts = [action_space]
        else:
            parts = [controller_action_space(robot_group.controllers[name], env) for name in names]
        #: ``(controller, slice of the flat action, the controller's argument shape)`` per controller.
        self.slices: list[tuple[str, slice, tuple[int, ...]]] = []
        start = 0
        for name, part in zip(names, parts, strict=True):
            size = int(np.prod(part.shape))
            self.slices.append((name, slice(start, start + size), part.shape))
            start += size
        if action_space is None:
            action_space = parts[0] if len(parts) == 1 else spaces.Box(
                np.concatenate([p.low.ravel() for p in parts]), np.concatenate([p.high.ravel() for p in parts]),
                dtype=np.float32)
        else:
            expected = parts[0].shape if len(parts) == 1 else (start,)
            if action_space.shape != expected:
                what = ', '.join(f'{name} {shape}' for name, _, shape in self.slices)
                raise ValueError(f'action_space must have shape {expected} (the argument shape of the controllers it '
                                 f'drives: {what}); got a Box of shape {action_space.shape}')
        #: One sub-environment's action space.
        self.space: spaces.Box = action_space
        self._float_bounds: tuple[spaces.Box, np.ndarray, np.ndarray] | None = None  # (see _bounds)

    def check(self, actions: Any, num_envs: int, one: bool = False) -> np.ndarray:
        """``actions`` of ``num_envs`` envs as a ``float64`` array, or a ``ValueError`` saying what is wrong.

        ``one``: ``actions`` is one env's action (``FlatEnv``'s, of :attr:`space`'s shape), named so in
        the errors (not as a batch its caller never made), and returned as a batch of one.
        """
        shape = self.space.shape if one else (num_envs, *self.space.shape)
        if not isinstance(actions, np.ndarray) and hasattr(actions, 'numpy'):  # a torch tensor or a Warp array
            actions = _tensor_numpy(actions.detach().cpu()) if hasattr(actions, 'detach') else actions.numpy()
        if type(actions) is np.ndarray and actions.dtype.kind in 'fiu':  # (the usual batch: no walk of it)
            array = actions.astype(np.float64, copy=False)
        else:
            # Numbers only, as vec_env's own actions: numpy would make 1.0 of True, 0.1 of '0.1'
            # and drop a complex number's imaginary part.
            bad = non_number(actions)
            if bad is not None:
                raise ValueError(f'actions must be numbers of shape {shape}; got {bad}')
            if one and _holds_none(actions):
                raise ValueError(f'action holds None, which is not a number; actions must be numbers of shape {shape}')
            nones = [] if one else _rows_with_none(actions)
            if nones:
                raise ValueError(f'actions of env(s) {nones} hold None, which is not a number; '
                                 f'actions must be numbers of shape {shape}')
            try:
                array = np.asarray(actions, dtype=np.float64)
            except OverflowError:
                raise ValueError(f'actions must be numbers of shape {shape}; got an int past the range of a float') from None
            except (TypeError, ValueError):
                raise ValueError(f'actions must be numbers of shape {shape}; got {type(actions).__name__}') from None
        if array.shape != shape:
            if one:
                raise ValueError(f'action must have shape {shape} (action_space.shape); got {array.shape}')
            raise ValueError(f'actions must have shape {shape} (num_envs, *single_action_space.shape); got {array.shape}')
        # (a finite sum means every action is finite; only a sum that is not looks at each one)
        if not math.isfinite(float(array.sum())) and not np.isfinite(array).all():
            if one:
                raise ValueError(f'action {array.tolist()} is not finite (NaN or inf)')
            envs = sorted({int(i) for i in np.argwhere(~np.isfinite(array))[:, 0]})
            raise ValueError(f'actions of env(s) {envs} are not finite (NaN or inf)')
        return array[None] if one else array

    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """:attr:`space`'s bounds as ``float64`` (the actions' type: a ufunc on the two types costs
        more), made again when :attr:`space` is another object."""
        space, kept = self.space, self._float_bounds
        if kept is None or kept[0] is not space:
            kept = self._float_bounds = (space, np.asarray(space.low, dtype=np.float64), np.asarray(space.high, dtype=np.float64))
        return kept[1], kept[2]

    def slot_commands(self, actions: np.ndarray, slots: np.ndarray, num_envs: int) -> list[Any]:
        """The per-slot commands of ``vec_env.Env.step``: ``slots``' clipped actions, ``None`` for the others."""
        commands: list[Any] = [None] * num_envs
        space = self.space
        single = len(self.slices) == 1
        for slot in slots:
            args = np.clip(actions[slot], space.low, space.high)
            if single:
                commands[slot] = {self.robot_name: {self.controller_name: args}}
            else:  # a combined action: each controller its own part
                flat = args.ravel()
                commands[slot] = {self.robot_name: {name: flat[part].reshape(shape) for name, part, shape in self.slices}}
        return commands

    def batched_commands(self, actions: np.ndarray, num_envs: int) -> dict[str, dict[str, np.ndarray]]:
        """The batched command of every env (rows of envs without a running episode are ignored)."""
        low, high = self._bounds()
        clipped = np.maximum(actions, low)  # (np.clip without its wrappers' cost, the second pass in place)
        np.minimum(clipped, high, out=clipped)
        if len(self.slices) == 1:
            return {self.robot_name: {self.controller_name: clipped}}
        flat = clipped.reshape(num_envs, -1)
        return {self.robot_name: {name: flat[:, part].reshape(num_envs, *shape)
                                  for name, part, shape in self.slices}}
