"""Upstream's ``forward()`` of the built-in controllers, both ways.

InternUtopia's controllers compute their commands in ``forward(...)`` and their
``action_to_control(action)`` calls it. Here the built-ins are vectorized and have no ``forward``,
so the per-slot layer maps between the two: an instance whose class overrides ``forward`` has its
default ``action_to_control`` call it with the arguments upstream makes of the action
(:data:`UPSTREAM_ACTION_TO_FORWARD`, :func:`forward_call`), and a built-in seen from one slot takes
upstream's ``forward`` arguments as the action they stand for (:data:`UPSTREAM_FORWARD`,
:func:`forward_action`). :data:`UPSTREAM_ATTRIBUTES` are the attributes upstream's twins set.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.core.controller.base import BaseController, BaseVelocityController

_NO_VALUE: Any = object()


#: Upstream's ``forward`` of the built-in controllers other than move-by-speed ones, by class name:
#: its parameters (with defaults, ``_NO_VALUE`` where required) and those that make the action the
#: built-in takes (the rest, a start pose, speeds, a threshold, are the built-in's own: the robot's
#: pose now, its config's speeds).
UPSTREAM_FORWARD: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    'MoveToPointBySpeedController': ({'start_position': _NO_VALUE, 'start_orientation': _NO_VALUE, 'goal_position': _NO_VALUE,
                                      'forward_speed': 1.0, 'rotation_speed': 8.0, 'threshold': 0.02}, ('goal_position',)),
    'MoveAlongPathPointsController': ({'start_position': _NO_VALUE, 'start_orientation': _NO_VALUE, 'path_points': _NO_VALUE,
                                       'forward_speed': 1.0, 'rotation_speed': 8.0, 'threshold': 0.02}, ('path_points',)),
    'RotateController': ({'start_orientation': _NO_VALUE, 'goal_orientation': _NO_VALUE, 'rotation_speed': 3.0,
                          'threshold': 0.02}, ('goal_orientation',)),
    'JointController': ({'joint_positions': None, 'joint_velocities': None}, ('joint_positions',)),
    'GripperController': ({'action': _NO_VALUE}, ('action',)),
    'RecoverController': ({'target_position': _NO_VALUE, 'target_orientation': None}, ('target_position', 'target_orientation')),
    'InverseKinematicsController': ({'eef_target_position': _NO_VALUE, 'eef_target_orientation': None},
                                    ('eef_target_position', 'eef_target_orientation')),
}
#: The attributes upstream's ``__init__`` of a built-in's twin sets, by class name:
#: ``{attribute: (source, default)}``, the source a config key (``''``: none, the default stands)
#: or a function of the built-in controller, where the built-in holds the value as it uses it (a
#: differential drive's wheels, scaled with the robot as upstream's ``__init__`` scales them).
UPSTREAM_ATTRIBUTES: dict[str, dict[str, tuple[str | Callable[[Any], Any], Any]]] = {
    'DifferentialDriveController': {'_robot_scale': (lambda drive: drive.scale, 1.0),
                                    '_wheel_base': (lambda drive: 2 * drive.half_base, None),
                                    '_wheel_radius': (lambda drive: drive.radius, None)},
    'MoveToPointBySpeedController': {'forward_speed': ('forward_speed', 1.0), 'rotation_speed': ('rotation_speed', 8.0),
                                     'threshold': ('threshold', 0.02), 'goal_position': ('', None), 'last_threshold': ('', None)},
    'MoveAlongPathPointsController': {'forward_speed': ('forward_speed', 1.0), 'rotation_speed': ('rotation_speed', 8.0),
                                      'threshold': ('threshold', 0.02)},
    'RotateController': {'rotation_speed': ('rotation_speed', 3.0), 'threshold': ('threshold', 0.02), 'goal_orientation': ('', None)},
    'RecoverController': {'recover_height': ('recover_height', None)},
}


def _need(name: str, action: Any, count: int, at_least: bool = False) -> None:
    if at_least and len(action) < count or not at_least and len(action) != count:
        raise ValueError(f'controller {name!r}: the action must contain {"at least " if at_least else ""}{count} '
                         f'element(s); got {len(action)}')


def _array(value: Any) -> Any:
    return None if value is None else np.array(value)


def _speeds_call(count: int, height: float | None = None) -> Callable[[Any, Any], tuple[tuple, dict[str, Any]]]:
    """Upstream's move-by-speed ``action_to_control``: ``[forward, rotation]`` for a differential
    drive (``count`` 2), else ``[forward, lateral, rotation]`` (and, with ``height``, G1's and GR1's
    optional ``height`` and ``target_upper_joint_pos``)."""
    def call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
        _need(controller.name, action, count, at_least=height is not None)
        if count == 2:
            return (), {'forward_speed': action[0], 'rotation_speed': action[1]}
        kwargs = {'forward_speed': action[0], 'lateral_speed': action[1], 'rotation_speed': action[2]}
        if height is not None:
            kwargs['height'] = action[3] if len(action) > 3 and action[3] is not None else height
            kwargs['target_upper_joint_pos'] = action[4] if len(action) > 4 else None
        return (), kwargs
    return call


def _goal_call(key: str, convert: Callable[[Any], Any], oracle: bool = False) -> Callable[[Any, Any], tuple[tuple, dict[str, Any]]]:
    """Upstream's move_to_point / move_along_path ``action_to_control``: the robot's pose now, the
    action's goal, the controller's speeds and threshold (the oracle's scaled by the robot's scale)."""
    def call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
        _need(controller.name, action, 1)
        position, orientation = controller.robot.get_pose()
        threshold = controller.threshold * (float(controller.robot.get_robot_scale()[0]) if oracle else 1.0)
        return (), {'start_position': position, 'start_orientation': orientation, key: convert(action[0]),
                    'forward_speed': controller.forward_speed, 'rotation_speed': controller.rotation_speed,
                    'threshold': threshold}
    return call


def _rotate_call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
    _need(controller.name, action, 1)
    return (), {'start_orientation': controller.robot.get_pose()[1], 'goal_orientation': action[0],
                'rotation_speed': controller.rotation_speed, 'threshold': controller.threshold}


def _joint_call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]] | None:
    if len(action) == 0:
        return None  # (upstream returns an empty ArticulationAction without calling forward)
    positions = _array(action[0])
    velocities = _array(action[1]) if len(action) > 1 else None
    if positions is None and len(action) > 1:
        subset = getattr(controller, 'joint_subset', None)
        positions = (subset if subset is not None else controller.robot.articulation).get_joint_positions()
    return (), {'joint_positions': positions, 'joint_velocities': velocities}


def _gripper_call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
    if len(action) != 1 or action[0] not in ('open', 'close'):
        raise ValueError(f'controller {controller.name!r}: the action must be a list with one str, "open" or "close"; got {action}')
    return (action[0],), {}


def _ik_call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
    _need(controller.name, action, 2)
    return (), {'eef_target_position': _array(action[0]), 'eef_target_orientation': _array(action[1])}


def _recover_call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
    return (tuple(action[:2]) if len(action) > 1 else (action[0],)), {}


def _first_call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
    return (action[0],), {}


def _teleop_call(controller: Any, action: Any) -> tuple[tuple, dict[str, Any]]:
    _need(controller.name, action, 5)
    keys = ('left_pose', 'right_pose', 'head_pose', 'left_hand_mat', 'right_hand_mat')
    return (), dict(zip(keys, action, strict=True))


#: What upstream's ``action_to_control`` of each built-in controller's twin passes to its
#: ``forward``, by class name: ``call(controller, action) -> (args, kwargs)`` (``None``: no call),
#: and whether upstream unpacks ``forward``'s result as ``(action, success)``.
UPSTREAM_ACTION_TO_FORWARD: dict[str, tuple[Callable[[Any, Any], tuple[tuple, dict[str, Any]] | None], bool]] = {
    'DifferentialDriveController': (_speeds_call(2), False),
    'H1MoveBySpeedController': (_speeds_call(3), False),
    'AliengoMoveBySpeedController': (_speeds_call(3), False),
    'G1MoveBySpeedController': (_speeds_call(3, height=0.74), False),
    'GR1MoveBySpeedController': (_speeds_call(3, height=0.9), False),
    'MoveToPointOracleController': (_goal_call('goal_position', np.array, oracle=True), False),
    'MoveToPointBySpeedController': (_goal_call('goal_position', np.array), False),
    'MoveAlongPathPointsController': (_goal_call('path_points', lambda points: points), False),
    'RotateController': (_rotate_call, False),
    'JointController': (_joint_call, False),
    'GripperController': (_gripper_call, False),
    'InverseKinematicsController': (_ik_call, True),
    'RecoverController': (_recover_call, False),
    'FrankaMocapTeleopController': (_first_call, True),
    'GR1TeleOpController': (_teleop_call, False),
}


def forward_call(controller: Any, runner: Any, action: Any) -> Any:
    """Upstream's ``action_to_control(action)`` of the built-in ``runner``'s twin, for an instance
    ``controller`` whose class overrides ``forward``: ``controller.forward(...)`` with the arguments
    upstream makes of ``action`` (:data:`UPSTREAM_ACTION_TO_FORWARD`), its result returned (the
    action of an ``(action, success)`` pair, ``success`` kept as ``controller.success``).

    Raises:
        TypeError: the built-in has no upstream twin whose ``action_to_control`` calls ``forward``.
        ValueError: an action upstream's ``action_to_control`` refuses (its length, ...).
    """
    entry = upstream_table(runner, UPSTREAM_ACTION_TO_FORWARD)
    if not entry:
        raise TypeError(f'{type(controller).__name__} overrides forward(), but {type(runner).__name__}\'s action_to_control '
                        'has no upstream forward() to call; define action_to_control(action) as well')
    make, unpacks = entry
    call = make(controller, action)
    if call is None:
        return None
    args, kwargs = call
    result = controller.forward(*args, **kwargs)
    if unpacks and isinstance(result, tuple) and len(result) == 2:
        result, controller.success = result
    return result


def upstream_table(controller: Any, table: dict[str, Any]) -> Any:
    """The entry of ``table`` for the nearest class of ``controller`` named in it (``{}`` for none)."""
    for klass in type(controller).__mro__:
        entry = table.get(klass.__name__)
        if entry is not None:
            return entry
    return {}


def forward_action(controller: BaseController, slot: int, name: str, args: tuple, kwargs: dict[str, Any]) -> list[Any] | None:
    """What InternUtopia's ``forward(...)`` of the built-in ``controller``'s upstream twin does for
    ``slot``: a move-by-speed controller's is applied here (its speeds, right away); the others'
    give the action the built-in takes for the slot (``None``: nothing to command), which
    :func:`~internutopia.per_slot.controller.upstream_forward` commands.

    - a move-by-speed controller (the differential drive's, H1's, G1's):
      ``forward(forward_speed=0, rotation_speed=0, lateral_speed=0)`` drives the base at those
      speeds (m/s, rad/s; ``lateral_speed`` is ignored by a robot that cannot move sideways), from
      now on; further arguments of upstream's signatures (a G1's ``height``, ...) change nothing;
    - the others (move_to_point, move_along_path, rotate, joint, gripper, recover, IK) take
      upstream's arguments and command the built-in with the action upstream's
      ``action_to_control`` would have made of them (``goal_position``, ``path_points``,
      ``goal_orientation``, ...): the built-in steers from the robot's pose now, with its config's
      speeds and threshold.

    Raises:
        AttributeError: the controller's upstream twin has no ``forward`` known here.
        TypeError: arguments that upstream's ``forward`` does not take.
        ValueError: arguments the built-in refuses (not finite speeds, a bad goal...).
    """
    if isinstance(controller, BaseVelocityController):
        speeds = _speeds(name, args, kwargs)
        if not np.all(np.isfinite(speeds)):
            raise ValueError(f'{name!r}.forward: speeds must be finite numbers; got {speeds[0].tolist()}')
        controller.apply_base_velocity(np.array([slot], dtype=np.intp), speeds)
        return None
    entry = upstream_table(controller, UPSTREAM_FORWARD)
    if not entry:
        raise AttributeError(f'{type(controller).__name__} {name!r} has no forward() here; command it with '
                             'action_to_control(action)')
    parameters, used = entry
    bound = _bind(name, parameters, args, kwargs)
    if used == ('joint_positions',) and bound['joint_positions'] is None:
        return None  # (no targets: nothing changes, as upstream's empty ArticulationAction)
    action = [bound[key] for key in used]
    while action and action[-1] is None:
        action.pop()
    return action


#: Upstream's ``forward`` of a move-by-speed controller: its speeds (further arguments of upstream's
#: signatures, a G1's ``height``, ... are taken and change nothing).
_SPEEDS = {'forward_speed': 0.0, 'rotation_speed': 0.0, 'lateral_speed': 0.0}


def _speeds(name: str, args: tuple, kwargs: dict[str, Any]) -> np.ndarray:
    """``[[forward, lateral, rotation]]`` of a move-by-speed ``forward(forward_speed, rotation_speed, lateral_speed, ...)``."""
    values = _bind(name, _SPEEDS, args[:3], {key: value for key, value in kwargs.items() if key in _SPEEDS})
    try:
        return np.array([[values['forward_speed'], values['lateral_speed'], values['rotation_speed']]], dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f'{name!r}.forward: speeds must be numbers; got {values}') from None


def _bind(name: str, parameters: dict[str, Any], args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Upstream's ``forward`` arguments ``args``, ``kwargs`` by parameter name, defaults filled in
    (``parameters``: name -> default, ``_NO_VALUE`` where required); ``TypeError`` as Python's own."""
    signature = inspect.Signature([inspect.Parameter(key, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                     default=inspect.Parameter.empty if default is _NO_VALUE else default)
                                   for key, default in parameters.items()])
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f'{name!r}.forward{signature}: {exc}') from None
    bound.apply_defaults()
    return dict(bound.arguments)


__all__ = ['UPSTREAM_ACTION_TO_FORWARD', 'UPSTREAM_ATTRIBUTES', 'UPSTREAM_FORWARD', 'forward_action', 'forward_call',
           'upstream_table']
