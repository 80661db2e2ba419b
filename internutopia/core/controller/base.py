"""Controllers: vectorized over every slot that has the controller's robot.

A step runs in two phases so bad input changes nothing: first every slot's arguments go through
:meth:`BaseController.parse_action` (validate, convert to arrays; raise ``ValueError`` naming the
slot, robot and controller), then each controller's :meth:`BaseController.apply` runs once with
the slots that commanded it and their stacked arguments.

Controllers keep their state in arrays indexed by slot id (``env_num`` rows), so rebuilding the
world never disturbs it. ``sub_controllers`` are built from the config's ``sub_controllers`` and
are driven by their parent with arrays, bypassing parsing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from internutopia.core.config import ControllerCfg
from internutopia.core.registry import Registry

if TYPE_CHECKING:
    from internutopia.core.backend.interface import Pack

#: The robot group the object belongs to (a :class:`~internutopia.core.robot.base.BaseRobot`; not
#: imported, since a robot is built from its controllers and sensors, a layer it sits on).
RobotGroup = Any


SubController = TypeVar('SubController', bound='BaseController')


class BaseController:
    """One controller of one robot group, for every slot of the group.

    Classes written InternUtopia's way (one object per slot, ``action_to_control(action)``)
    subclass it too; the per-slot layer (:mod:`internutopia.per_slot`) runs them.
    """

    registry: Registry[type[BaseController]] = Registry('controller')
    #: Whether applying the same command again, with nothing run in between, changes nothing (it
    #: only stores the command): the runner may then apply an action repeat's command once for
    #: several physics steps advanced in one call. ``False`` (the default) for a controller that
    #: computes from the state at every step. A class attribute; an object may set its own when
    #: it is bound (a controller that only stores the command for some robots, not for others).
    idempotent_apply: bool = False
    #: InternUtopia's name of the registry table.
    controllers = registry.table

    def __init__(self, config: ControllerCfg, robot: RobotGroup) -> None:
        self.config = config
        self.name = config.name
        self.robot = robot
        self.env_num = robot.env_num
        self.sub_controllers: list[BaseController] = [
            BaseController.create(sub, robot, where=f'sub_controllers of {config.name!r}') for sub in config.sub_controllers or []
        ]

    @classmethod
    def register(cls, name: str) -> Callable[[type[BaseController]], type[BaseController]]:
        """Class decorator registering a controller type under ``name``."""
        return cls.registry.register(name)

    @classmethod
    def create(cls, config: ControllerCfg, robot: RobotGroup, where: str = '') -> BaseController:
        """The controller of the type registered for ``config.type``, for every slot of ``robot``."""
        return cls.registry.maker(config.type, where)(config, robot)

    def sub_controller(self, kind: type[SubController]) -> SubController:
        """The first sub-controller that is a ``kind``; ``ValueError`` if the config lacks one."""
        for sub in self.sub_controllers:
            if isinstance(sub, kind):
                return sub
        raise ValueError(f'controller {self.name!r} needs a {kind.__name__} among its sub_controllers; '
                         f'has {[type(s).__name__ for s in self.sub_controllers]}')

    # -- per step ----------------------------------------------------------------------------
    def parse_action(self, action: Any) -> Any:
        """Validate one slot's arguments and convert them; raise ``ValueError`` saying what is wrong."""
        raise NotImplementedError

    def batch(self, parsed: list[Any]) -> Any:
        """Stack the parsed arguments of the commanding slots (default: ``np.stack``)."""
        return np.stack(parsed)

    def parse_batch(self, actions: Any) -> Any:
        """Validate and stack the arguments of several slots at once (the array API).

        ``actions`` holds one row per commanding slot. The default parses row by row; controllers
        with fixed-shape arguments override it with one vectorized check.
        """
        return self.batch([self.parse_action(action) for action in actions])

    def apply(self, slots: np.ndarray, batch: Any) -> None:
        """Compute and write engine commands for ``slots`` (sorted ids) from their stacked args."""
        raise NotImplementedError

    def get_obs(self, slots: np.ndarray) -> Any:
        """Controller observations, arrays with a leading ``len(slots)`` axis (none by default)."""
        return {}

    # -- lifecycle ---------------------------------------------------------------------------
    def bind(self, world: Pack) -> None:
        """Look up model indices after the robot's pack changed (the robot is already bound)."""
        for sub in self.sub_controllers:
            sub.bind(world)

    def reset(self, slots: np.ndarray) -> None:
        """Forget the state of ``slots`` (their episodes start over)."""
        for sub in self.sub_controllers:
            sub.reset(slots)


class FixedShapeController(BaseController):
    """A controller whose arguments are one fixed-shape float array per slot (``action_shape``)."""

    action_shape: tuple[int, ...] = ()
    action_text: str = 'action'

    def parse_action(self, action: Any) -> np.ndarray:
        return as_float_array(action, self.action_shape, self.action_text)

    def parse_batch(self, actions: Any) -> np.ndarray:
        return as_float_array(actions, (-1, *self.action_shape), self.action_text)


class BaseVelocityController(FixedShapeController):
    """A controller that moves a robot's base at body-frame ``[forward, lateral, yaw_rate]``.

    Every mobile robot has one (named ``move_by_speed`` in the ready-made configs); the shared
    base-motion controllers (move_to_point, move_along_path, rotate) drive it as a sub-controller.
    """

    def apply_base_velocity(self, slots: np.ndarray, velocity: np.ndarray) -> None:
        """Command ``(k, 3)`` body-frame base velocities for ``slots``."""
        raise NotImplementedError


_FLOAT64 = np.dtype(float)


def as_float_array(value: Any, shape: tuple[int, ...] | None, what: str) -> np.ndarray:
    """``value`` as a finite float array of ``shape`` (``-1`` = any length), or a ``ValueError``.

    Numbers only: a bool, a string or a complex number anywhere in ``value`` is an error, not a
    number numpy would quietly make of it (``True`` -> 1.0, ``'2'`` -> 2.0, ``1+2j`` -> 1.0).
    """
    if type(value) is np.ndarray and value.dtype is _FLOAT64:  # the array API's usual argument, as it is
        array = value
    elif isinstance(value, np.ndarray) and value.dtype.kind in 'fiu':
        array = value.astype(float, copy=False)
    else:
        bad = non_number(value)
        if bad is not None:
            raise ValueError(f'{what} must be numbers{_shape_text(shape)}; got {bad} in {value!r}')
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):  # (an int past a float's range is not a number either)
            raise ValueError(f'{what} must be numbers{_shape_text(shape)}; got {value!r}') from None
    if shape is not None and (array.ndim != len(shape) or any(w != -1 and w != n for w, n in zip(shape, array.shape, strict=False))):
        raise ValueError(f'{what} must have shape {_shape_text(shape).strip()}; got shape {array.shape} from {value!r}')
    if not all_true(np.isfinite(array)):
        raise ValueError(f'{what} must be finite (no NaN or inf); got {value!r}')
    return array


def all_true(flags: np.ndarray) -> bool:
    """``flags.all()`` for a bool array, as a search for a zero byte: on the few rows of a step's
    arguments, a numpy reduction costs several times more than the search.

    >>> all_true(np.array([True, True])), all_true(np.array([[True], [False]])), all_true(np.zeros(0, dtype=bool))
    (True, False, True)
    """
    return b'\x00' not in flags.tobytes()


_KIND_NAMES = {'b': 'bools', 'U': 'text', 'S': 'text', 'c': 'complex numbers', 'M': 'dates', 'm': 'time deltas', 'V': 'raw bytes'}


def non_number(value: Any) -> str | None:
    """What in ``value`` (nested lists, tuples, arrays) is not a real number, or ``None``.

    >>> non_number([[0.5, 1], (2,)]) is None, non_number([0.1, True]), non_number(np.array(['1']))
    (True, 'the bool True', 'an array of text')
    """
    kind = type(value)
    if kind is float or kind is int:
        return None
    if kind is list or kind is tuple:
        for item in value:
            item_kind = type(item)
            if item_kind is float or item_kind is int:
                continue  # (the usual item: no call for it)
            bad = non_number(item)
            if bad is not None:
                return bad
        return None
    if isinstance(value, (bool, np.bool_)):
        return f'the bool {value!r}'
    if isinstance(value, (str, bytes)):
        return f'the text {value!r}'
    if isinstance(value, (complex, np.complexfloating)):
        return f'the complex number {value!r}'
    if isinstance(value, np.ndarray):
        if value.dtype.kind == 'O':
            return non_number(value.tolist())
        if value.dtype.kind not in 'fiu':
            return f'an array of {_KIND_NAMES.get(value.dtype.kind, value.dtype)}'
    return None


def _shape_text(shape: tuple[int, ...] | None) -> str:
    if shape is None:
        return ''
    return ' (' + ', '.join('N' if n == -1 else str(n) for n in shape) + ')'
