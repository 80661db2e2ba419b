"""What a config value may be: numbers that are numbers, and positions, scales and counts in ranges
that the simulation can represent.

A config value that passes here is one a reset can use: a value that would only fail later (an
``OverflowError`` deep in a reset, a scene placed at 1e100 m where no camera sees anything) is
rejected when the config is built, with a message that names the field.

>>> from internutopia.core.config import RobotCfg
>>> RobotCfg(name='r', type='X', position=(1e100, 0, 0))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for RobotCfg
position
  Value error, every coordinate must be within +-100000 m (env-local metres); got (1e+100, 0.0, 0.0) ...
"""

from __future__ import annotations

import functools
import math
import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any, Union

import numpy as np
from pydantic import AfterValidator

#: Largest env-local coordinate in metres (positions of robots, objects and scenes).
MAX_COORDINATE_M = 1e5
#: Largest ``env_offset_size`` in metres: slot origins further apart than this lose the precision
#: (single-precision floats) cameras and the overview render with.
MAX_OFFSET_M = 1e4
#: Range of every scale component (a scene or object scaled outside it is a mistake of units).
SCALE_RANGE = (1e-6, 1e4)
#: Largest step count (``max_steps`` and the like): a billion env steps, far below where the
#: step counters (64-bit integers) could overflow.
MAX_STEPS = 10**9
#: Range of ``SimConfig.physics_dt`` in seconds (one env step's simulated time): a step longer than
#: a second is no simulation of a robot (MuJoCo diverges), a step under a microsecond makes no
#: progress.
PHYSICS_DT_RANGE = (1e-6, 1.0)
#: Largest ``rendering_dt / physics_dt``: the render clock counts physics steps between renders in
#: a 64-bit integer (:class:`~internutopia.core.backend.clock.RenderClock`), as step counts do.
MAX_RENDER_PERIOD = MAX_STEPS
#: Every ``int`` field of every config fits a 64-bit integer (numpy arrays of counts and ids).
INT64_RANGE = (-(2**63), 2**63 - 1)


def _nonzero_quaternion(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    if value is not None and math.fsum(c * c for c in value) < 1e-12:
        raise ValueError(f'a wxyz quaternion must not be all zeros (it has no rotation to normalize); got {value}')
    return value


def _scale_in_range(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    low, high = SCALE_RANGE
    if value is not None and not all(low <= c <= high for c in value):
        raise ValueError(f'every scale component must be > 0 and within [{low:g}, {high:g}]; got {value}')
    return value


def check_position(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    """``value`` if every coordinate is within :data:`MAX_COORDINATE_M`, else a ``ValueError``."""
    if value is not None and not all(abs(c) <= MAX_COORDINATE_M for c in value):
        raise ValueError(f'every coordinate must be within +-{MAX_COORDINATE_M:g} m (env-local metres); got {value}')
    return value


def check_scale(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    """``value`` if every component is within :data:`SCALE_RANGE`, else a ``ValueError``."""
    return _scale_in_range(value)


def check_quaternion(value: tuple[float, ...] | None) -> tuple[float, ...] | None:
    """``value`` unless it is all zeros (a ``ValueError``)."""
    return _nonzero_quaternion(value)


def checked_pose(value: Any, kind: str) -> Any:
    """``value`` checked as a ``kind`` (``'position'``, ``'orientation'``, ``'scale'``) when it is a
    tuple or list of numbers: what the base config classes run for their pose fields, so a subclass
    that redeclares such a field with a plain ``tuple[float, float, float]`` keeps the checks."""
    if isinstance(value, (tuple, list)) and all(isinstance(c, (int, float)) for c in value):
        {'position': check_position, 'orientation': _nonzero_quaternion, 'scale': _scale_in_range}[kind](tuple(value))
    return value


def check_entity_name(name: str, kind: str) -> str:
    """``name`` of a robot or object (``kind``) if it is not empty and holds no ``'/'``: the model
    names an entity's parts ``<name>/<part>`` and camera annotations read the name back up to the
    first ``'/'`` (an object ``'shelf/box'`` was left unlabelled, or labelled ``'shelf'``)."""
    if not name or '/' in name:
        article = 'an' if kind[:1] in 'aeiou' else 'a'
        raise ValueError(f"{article} {kind}'s name must be non-empty and hold no '/' (its parts are named "
                         f"'<name>/<part>'); got {name!r}")
    return name


def check_positive(value: float, field: str, unit: str, most: float | None = None) -> float:
    """``value`` if it is a number > 0 (and at most ``most``), else a ``ValueError`` naming ``field``
    and the range (``unit``: what it measures, e.g. ``'m/s'``)."""
    if not (value > 0 and (most is None or value <= most)):
        bound = f' and at most {most:g}' if most is not None else ''
        raise ValueError(f'{field} must be a number > 0{bound} ({unit}); got {value}')
    return value


def check_steps(value: int, field: str = 'max_steps') -> int:
    """``value`` if it is a step count in ``1..MAX_STEPS``, else a ``ValueError`` naming ``field``."""
    if not 1 <= value <= MAX_STEPS:
        raise ValueError(f'{field} must be a number of env steps in 1..{MAX_STEPS:_}; got {value}')
    return value


#: An xyz position in env-local metres (finite, within :data:`MAX_COORDINATE_M`).
Vec3 = Annotated[tuple[float, float, float], AfterValidator(check_position)]
#: A wxyz quaternion; all zeros is rejected (MuJoCo would silently replace it).
Quat = Annotated[tuple[float, float, float, float], AfterValidator(_nonzero_quaternion)]
#: An xyz scale; every component within :data:`SCALE_RANGE`.
Scale = Annotated[tuple[float, float, float], AfterValidator(_scale_in_range)]


#: Names of the components of the checked tuples, for messages (``position must be 3 numbers (x, y, z)``).
_COMPONENTS: dict[Any, str] = {check_position: 'x, y, z', _scale_in_range: 'x, y, z', _nonzero_quaternion: 'w, x, y, z'}


def _fixed_tuple(annotation: Any) -> tuple[int, str] | None:
    """``(length, component names or '')`` of a fixed-length tuple type (also inside ``Annotated``
    and ``X | None``), else ``None``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        found = _fixed_tuple(args[0])
        if found is None:
            return None
        names = next((_COMPONENTS[m.func] for m in args[1:] if isinstance(m, AfterValidator) and m.func in _COMPONENTS), '')
        return found[0], names or found[1]
    if origin is Union or origin is types.UnionType:
        arms = [arm for arm in args if arm is not type(None)]
        return _fixed_tuple(arms[0]) if len(arms) == 1 else None
    if origin is tuple and args and args[-1] is not Ellipsis and args != ((),):
        return len(args), ''
    return None


def tuple_length_problem(name: str, annotation: Any, value: Any, metadata: Sequence[Any] = ()) -> str | None:
    """Why ``value`` (given for field ``name`` of type ``annotation``) has the wrong number of items
    for a fixed-length tuple, e.g. ``'position must be 3 numbers (x, y, z); got 2: [1.0, 2.0]'``;
    ``None`` when it has the right number, or is no list, tuple or 1-D array at all (pydantic judges that).
    ``metadata``: the field's (pydantic keeps a plain ``Annotated`` field's validators there)."""
    if not isinstance(value, (list, tuple, np.ndarray)) or (isinstance(value, np.ndarray) and value.ndim != 1):
        return None
    found = _fixed_tuple(annotation)
    if found is None or len(value) == found[0]:
        return None
    length, names = found
    names = next((_COMPONENTS[m.func] for m in metadata if isinstance(m, AfterValidator) and m.func in _COMPONENTS), names)
    what = expected_values(annotation)
    if ' or ' in what:  # ('3 numbers or None'): the tuple's part
        what = what.split(' or ')[0]
    shown = value.tolist() if isinstance(value, np.ndarray) else value
    return f'{name} must be {what}{f" ({names})" if names else ""}; got {len(value)}: {shown!r}'


def _not_a_number_kind(value: Any) -> str | None:
    """Why ``value`` is no number at all (``None`` when it is one, or is something else pydantic judges)."""
    if isinstance(value, (bool, np.bool_)):
        return f'the bool {value!r}'
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return f'the text {value!r}'
    if isinstance(value, (np.timedelta64, np.datetime64)):
        return f'the {type(value).__name__} {value!r} (a time, not a number)'
    if isinstance(value, np.ndarray) and value.dtype.kind not in 'iuf':
        return f'an array of {value.dtype} ({value!r})'
    return None


@functools.lru_cache(maxsize=1024)
def _wants_numbers(annotation: Any) -> bool:
    """Whether ``annotation`` holds an ``int`` or ``float`` anywhere (cached: checked on every field)."""
    if annotation is int or annotation is float:
        return True
    return any(_wants_numbers(arg) for arg in typing.get_args(annotation) if _hashable(arg))


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def wants_numbers(annotation: Any) -> bool:
    """Whether a field of type ``annotation`` takes numbers somewhere (so :func:`numeric_mismatch` applies)."""
    return _wants_numbers(annotation) if _hashable(annotation) else True


def numeric_mismatch(annotation: Any, value: Any) -> str | None:
    """Why ``value`` cannot stand where ``annotation`` wants a number (``None`` when it can).

    Pydantic's lax mode turns ``True`` into ``1``, ``'8'`` and ``b'8'`` into ``8``; a config must
    not: a bool, text or a time where a number belongs is a mistake (a misplaced flag, an unparsed
    value). An ``int`` must also fit 64 bits (it ends up in numpy arrays). Containers (tuples,
    lists, dicts, optionals, unions) are checked item by item.
    """
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return numeric_mismatch(args[0], value)
    if origin is Union or origin is types.UnionType:
        if value is None:
            return None
        problems = [numeric_mismatch(arm, value) for arm in args if arm is not type(None)]
        return None if any(p is None for p in problems) else problems[0]
    if annotation is int or annotation is float:
        kind = 'an integer' if annotation is int else 'a number'
        wrong = _not_a_number_kind(value)
        if wrong is not None:
            return f'must be {kind}; got {wrong}'
        if annotation is int and isinstance(value, (int, np.integer)) and not INT64_RANGE[0] <= int(value) <= INT64_RANGE[1]:
            return f'must be an integer that fits 64 bits (|value| < 2**63); got {value}'
        return None
    if origin in (tuple, list) and isinstance(value, (tuple, list, np.ndarray)) and args:
        if isinstance(value, np.ndarray):
            wrong = _not_a_number_kind(value) if value.dtype.kind != 'O' else None
            if wrong is not None and any(a in (int, float) for a in args):
                return f'must hold numbers; got {wrong}'
            if value.ndim != 1:
                return None
            value = list(value)
        items = [args[0]] * len(value) if origin is list or args[-1] is Ellipsis else list(args)
        for k, (item, entry) in enumerate(zip(items, value, strict=False)):  # lengths: pydantic's check
            problem = numeric_mismatch(item, entry)
            if problem is not None:
                return f'item {k} {problem}'
        return None
    if origin is dict and isinstance(value, dict) and len(args) == 2:
        for key, entry in value.items():
            problem = numeric_mismatch(args[1], entry)
            if problem is not None:
                return f'[{key!r}] {problem}'
    return None


def expected_values(annotation: Any, metadata: list[Any] | tuple[Any, ...] = ()) -> str:
    """What a field of type ``annotation`` takes, in words (``'an integer >= 1'``, ``'True or False'``,
    ``"one of 'records', 'upstream'"``, ``'3 numbers'``); ``metadata`` are the field's constraints
    (pydantic's ``FieldInfo.metadata``: ``Ge``, ``Gt``, ``Le``, ``Lt``). For error messages."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return expected_values(args[0], [*args[1:], *metadata])
    bounds = ''.join(f' {sign} {getattr(item, attr)}' for item in metadata
                     for attr, sign in (('ge', '>='), ('gt', '>'), ('le', '<='), ('lt', '<')) if hasattr(item, attr))
    if origin is Union or origin is types.UnionType:
        return ' or '.join(expected_values(arm) for arm in args if arm is not type(None))
    if origin is typing.Literal:
        return 'one of ' + ', '.join(repr(arg) for arg in args)
    if annotation is bool:
        return 'True or False'
    if annotation is int or annotation is float:
        return ('an integer' if annotation is int else 'a number') + bounds
    if annotation is str:
        return 'a string'
    if origin is tuple and args and args[-1] is not Ellipsis:
        kinds = {expected_values(arg) for arg in args}
        if kinds <= {'a number', 'an integer'}:
            return f"{len(args)} {'integers' if kinds == {'an integer'} else 'numbers'}"
        return f'a tuple of {len(args)} items'
    if origin in (list, tuple):
        return 'a list ([] for none)' if origin is list else 'a tuple'
    if origin is dict or annotation is dict:
        return 'a mapping'
    if isinstance(annotation, type):
        return f'a {annotation.__name__}'
    return f'a value of type {annotation!r}'


def not_a_number(value: Any) -> str | None:
    """Why ``value`` (given for a number) is none, e.g. ``'the timedelta64 ...'``; ``None`` if it is one."""
    return _not_a_number_kind(value)


__all__ = ['INT64_RANGE', 'MAX_COORDINATE_M', 'MAX_OFFSET_M', 'MAX_RENDER_PERIOD', 'MAX_STEPS', 'PHYSICS_DT_RANGE', 'SCALE_RANGE', 'Quat', 'Scale', 'Vec3',
           'check_entity_name', 'check_position', 'check_positive', 'check_quaternion', 'checked_pose', 'check_scale', 'check_steps', 'expected_values', 'not_a_number',
           'numeric_mismatch', 'tuple_length_problem']
