"""Gymnasium spaces from observation values and from controllers (the registry of action spaces)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.spaces import utils as space_utils


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
    observation dict get this space instead. It flattens to nothing (``flatdim`` 0: an empty
    ``bool`` ``Box``, which changes no other part's dtype), so a ``Dict`` holding it goes through
    ``gymnasium.spaces.flatten`` and ``gymnasium.wrappers.FlattenObservation``.
    """

    def __init__(self, seed: Any = None) -> None:
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        return {}

    def contains(self, x: Any) -> bool:
        return isinstance(x, dict) and not x

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, EmptyDict)

    def __repr__(self) -> str:
        return 'EmptyDict()'

# Gymnasium's flattening functions dispatch on the space's type, and know only their own spaces.
@space_utils.flatdim.register(EmptyDict)
def _flatdim_empty_dict(space: EmptyDict) -> int:
    return 0

@space_utils.flatten.register(EmptyDict)
def _flatten_empty_dict(space: EmptyDict, x: dict) -> np.ndarray:
    return np.zeros(0, dtype=np.bool_)

@space_utils.unflatten.register(EmptyDict)
def _unflatten_empty_dict(space: EmptyDict, x: Any) -> dict:
    return {}

@space_utils.flatten_space.register(EmptyDict)
def _flatten_space_empty_dict(space: EmptyDict) -> spaces.Box:
    nothing: np.dtype[Any] = np.dtype(np.bool_)  # (bool: promotes no other part's dtype in a Dict's Box)
    return spaces.Box(low=0, high=1, shape=(0,), dtype=nothing)

class LabelTable(spaces.Space):
    """The space of a camera annotation's side table: labels and ids whose keys and lengths change
    from frame to frame (``info`` of a segmentation or of ``bounding_box_2d_tight``, with
    ``idToLabels``, ``bboxIds``, ``primPaths``; the ``landmarks`` list; ``camera_params``'
    ``cameraModel`` string).

    No ``Box`` can hold such a value: its size is not fixed and it holds strings. It stays in the
    dict observation (``gym_env.Env``) as it is, under this space, which accepts any value of the
    same kind (``dict``, ``list`` or ``str``) made of strings, numbers and numeric arrays; it is not
    flattenable, so the vector adapters' ``Box`` observations leave it out (see ``ObsLayout``).
    """

    def __init__(self, kind: type = dict, seed: Any = None) -> None:
        if kind not in (dict, list, str):
            raise ValueError(f'a label table is a dict, a list or a str; got {kind!r}')
        self.kind = kind
        super().__init__(None, None, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        return self.kind()

    def contains(self, x: Any) -> bool:
        kind = list if isinstance(x, tuple) else type(x)
        return kind is self.kind and _is_table_entry(x)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, LabelTable) and other.kind is self.kind

    def __repr__(self) -> str:
        return f'LabelTable({self.kind.__name__})'


def _is_table_entry(x: Any) -> bool:
    if isinstance(x, dict):
        return all(isinstance(k, str) and _is_table_entry(v) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return all(_is_table_entry(v) for v in x)
    if isinstance(x, np.ndarray):
        return x.dtype != object and x.dtype.names is None
    return isinstance(x, (str, bool, int, float, np.generic))


class TableRows(spaces.Space):
    """The space of a table of rows with a fixed record ``dtype`` and any number of rows (a
    structured array of shape ``(n,)``): ``bounding_box_2d_tight['data']``, one row per labelled
    thing in view. Not flattenable (the number of rows changes from frame to frame)."""

    def __init__(self, dtype: np.dtype, seed: Any = None) -> None:
        dtype = np.dtype(dtype)
        if dtype.names is None:
            raise ValueError(f'table rows need a record dtype (with named fields); got {dtype}')
        super().__init__(None, dtype, seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        return np.zeros(0, dtype=self.dtype)

    def contains(self, x: Any) -> bool:
        return isinstance(x, np.ndarray) and x.dtype == self.dtype and x.ndim == 1

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TableRows) and other.dtype == self.dtype

    def __repr__(self) -> str:
        return f'TableRows({self.dtype})'


def is_annotation(value: Any) -> bool:
    """Whether ``value`` is a camera annotation in Isaac's layout: ``{'data': ..., 'info': {...}}``
    (a segmentation image or ``bounding_box_2d_tight`` with its label table)."""
    return isinstance(value, dict) and set(value) == {'data', 'info'} and isinstance(value['info'], dict)


def is_label_table(value: Any) -> bool:
    """Whether ``value`` is text (a string, or a list of strings) rather than numbers."""
    if isinstance(value, str):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, str) for v in value)


def _annotation_space(value: dict, key: str) -> spaces.Dict:
    data = np.asarray(value['data'])
    if data.dtype.names is not None:
        data_space: spaces.Space = TableRows(data.dtype)
    elif np.issubdtype(data.dtype, np.integer):  # a segmentation image: ids are never negative
        data_space = spaces.Box(0, np.iinfo(data.dtype).max, data.shape, data.dtype)
    else:
        data_space = space_from_value(data, f'{key}.data')
    return spaces.Dict({'data': data_space, 'info': LabelTable(dict)})


def _box_for(value: np.ndarray, key: str = '') -> spaces.Box:
    dtype = value.dtype
    shape = value.shape
    low: float
    high: float
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

    Camera annotations (``{'data', 'info'}``, see ``docs/perception.md``) get ``Dict(data=...,
    info=LabelTable)``: a segmentation image is a ``Box`` of its ids (``int32``, from 0), the rows
    of ``bounding_box_2d_tight`` are :class:`TableRows`; text (``landmarks``, ``cameraModel``) and
    the label tables are :class:`LabelTable`, which no ``Box`` can hold.
    """
    if isinstance(value, dict):
        if not value:
            return EmptyDict()
        if is_annotation(value):
            return _annotation_space(value, key)
        return spaces.Dict({k: space_from_value(v, f'{key}.{k}' if key else str(k)) for k, v in value.items()})
    if isinstance(value, (bool, np.bool_)):
        return _box_for(np.asarray(value, dtype=np.bool_), key)
    if is_label_table(value) or (isinstance(value, list) and not value):
        return LabelTable(str if isinstance(value, str) else list)
    array = np.asarray(value)
    if array.dtype.names is not None:
        return TableRows(array.dtype)
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

def _box(low: Sequence[float] | np.ndarray, high: Sequence[float] | np.ndarray) -> spaces.Box:
    return spaces.Box(np.asarray(low, dtype=np.float32), np.asarray(high, dtype=np.float32), dtype=np.float32)

@register_action_space('DifferentialDriveController')
def _differential_drive(controller: Any, env: Any) -> spaces.Box:
    # [forward m/s, yaw rate rad/s]; the jetbot tracks these without tipping over.
    return _box([-0.5, -3.0], [0.5, 3.0])

@register_action_space('HolonomicBaseController', 'H1MoveBySpeedController')
def _holonomic(controller: Any, env: Any) -> spaces.Box:
    # [forward m/s, lateral m/s, yaw rate rad/s]
    return _box([-1.0, -1.0, -1.0], [1.0, 1.0, 1.0])

@register_action_space('H1LegActionController')
def _leg_actions(controller: Any, env: Any) -> spaces.Box:
    # A walking H1's leg actions (its walking policy's outputs), each in [-1, 1].
    shape = tuple(getattr(controller, 'action_shape', (10,)))
    return spaces.Box(-1.0, 1.0, shape, np.float32)

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
    model = world.pack(slot).model
    actuators = controller.actuators[slot]
    limited = model.actuator_ctrllimited[actuators].astype(bool)
    ranges = model.actuator_ctrlrange[actuators]
    low = np.where(limited, ranges[:, 0], -np.pi)
    high = np.where(limited, ranges[:, 1], np.pi)
    return _box(low, high)

@register_action_space('InverseKinematicsController')
def _end_effector_pose(controller: Any, env: Any) -> spaces.Box:
    # [position (3,) env-local m, orientation wxyz (4,), normalised by the controller]: within the
    # slot's cell, as a reachable arm target must be.
    half = env.config.env_offset_size / 2
    return _box([-half, -half, -half, -1.0, -1.0, -1.0, -1.0], [half, half, half, 1.0, 1.0, 1.0, 1.0])

@register_action_space('GripperController')
def _gripper(controller: Any, env: Any) -> spaces.Box:
    # >= 0.5 opens, below closes.
    return _box([0.0], [1.0])

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
