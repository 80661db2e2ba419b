"""The benchmark's registry: a :class:`Case` (how to build a run's ``Config`` and which action every
step sends) and the camera settings, with the helpers cases are built from. The built-in cases
are registered in :mod:`internutopia.bench.cases`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Case:
    """One benchmark workload.

    Attributes:
        name: what ``--robots`` selects and the ``robot`` field of the JSON rows shows.
        description: one line for ``--help`` and the docs.
        config: ``(env_num, cameras) -> Config``, ``cameras`` a key of :data:`CAMERAS`; the config
            must hold at least ``env_num`` episodes (the measurement never ends one).
        dict_actions: ``env_num -> list`` of ``env_num`` per-slot action entries for ``env.step``.
        array_action: ``env_num -> dict`` of batched actions for ``env.step_arrays``.
        robot: the robot name the action dicts use (the AsyncVectorEnv comparison drives that
            robot of a one-slot ``gym_env.Env``); ``None`` for a case without actions.
        default: whether the default run (no ``--robots``) includes the case.
        apis: the APIs the case runs through (``'dict'``, ``'array'``); others are skipped.
    """

    name: str
    description: str
    config: Callable[[int, str], Any]
    dict_actions: Callable[[int], list]
    array_action: Callable[[int], dict]
    robot: str | None = None
    default: bool = True
    apis: tuple[str, ...] = ('dict', 'array')


#: Every registered case by name, in registration order (the order of the default run).
CASES: dict[str, Case] = {}
#: Camera settings: name -> ``camera_cfg -> list of sensor configs`` for one robot.
CAMERAS: dict[str, Callable[[Any], list]] = {}


def register_case(case: Case) -> Case:
    """Add ``case`` to :data:`CASES`; a name can be registered once."""
    if case.name in CASES:
        raise ValueError(f'benchmark case {case.name!r} is already registered')
    CASES[case.name] = case
    return case


def register_camera(name: str, sensors: Callable[[Any], list]) -> None:
    """Add a camera setting: ``sensors(camera_cfg)`` returns the sensor configs one robot gets."""
    if name in CAMERAS:
        raise ValueError(f'camera setting {name!r} is already registered')
    CAMERAS[name] = sensors


def sensors_for(cameras: str, camera_cfg: Any) -> list:
    """The sensors a robot gets under the camera setting ``cameras``."""
    try:
        return CAMERAS[cameras](camera_cfg)
    except KeyError:
        raise ValueError(f'unknown camera setting {cameras!r}; choose from {", ".join(CAMERAS)}') from None


def endless_config(task: Any, env_num: int, physics_dt: float = 1 / 240) -> Any:
    """A Config of ``env_num`` copies of ``task`` (one episode per slot, never ending)."""
    from internutopia.core.config import Config, SimConfig

    return Config(simulator=SimConfig(physics_dt=physics_dt, rendering_dt=physics_dt), env_num=env_num,
                  env_offset_size=10.0, metrics_save_path='none', task_configs=[task] * env_num)


__all__ = ['CAMERAS', 'CASES', 'Case', 'endless_config', 'register_camera', 'register_case', 'sensors_for']
