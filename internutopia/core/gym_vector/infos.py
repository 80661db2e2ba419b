"""Per-env infos written as Gymnasium's vector infos, for several envs at once.

Gymnasium's ``VectorEnv._add_info`` adds one env's info dict to the vector infos: each key becomes
a ``(num_envs,)`` column (of the value's type; nested dicts the same way, recursively) with a
boolean mask ``_key`` marking the envs that have it. A vector step adds the infos of one or two envs
whose episodes ended or started; :func:`add_env_infos` gives the same arrays, in the same key order,
with each column and mask written once for all of them.

>>> import numpy as np
>>> infos = add_env_infos({}, [0, 2], [{'steps': 5, 'metrics': {'fell': True}}, {'steps': 7}], 3, None)
>>> infos['steps'].tolist(), infos['_steps'].tolist(), infos['metrics']['fell'].tolist(), infos['_metrics'].tolist()
([5, 0, 7], [True, False, True], [True, False, False], [True, False, False])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ['add_env_infos']

#: Gymnasium's way for one env: ``(infos, env_info, env) -> infos`` (``VectorEnv._add_info``).
AddOne = Callable[[dict[str, Any], dict[str, Any], int], dict[str, Any]]


def add_env_infos(infos: dict[str, Any], envs: Sequence[int], env_infos: Sequence[dict[str, Any]], num_envs: int,
                  add_one: AddOne | None) -> dict[str, Any]:
    """``infos`` with ``env_infos`` (one dict per env of ``envs``, in order) added: what
    ``add_one`` (Gymnasium's ``_add_info``) gives env by env. What that writes in a way of its own
    (``final_obs``, array values, a key whose values are dicts for some envs only) is left to
    ``add_one``, env by env (``None``: there is none such, or a ``ValueError``)."""
    if len(envs) == 1:  # (a vector step's usual one env that ended or started: no grouping by key)
        return _add_one_env(infos, envs[0], env_infos[0], num_envs, add_one)
    by_key: dict[str, list[tuple[int, Any]]] = {}  # (keys in the order env by env adds them)
    for env, env_info in zip(envs, env_infos, strict=True):
        for key, value in env_info.items():
            having = by_key.get(key)
            if having is None:
                by_key[key] = [(env, value)]
            else:
                having.append((env, value))
    for key, having in by_key.items():
        nested = [isinstance(value, dict) for _, value in having]
        first = having[0][1]
        if key != 'final_obs' and all(nested):
            infos[key] = add_env_infos(infos.get(key, {}), [env for env, _ in having], [value for _, value in having],
                                       num_envs, add_one)
        elif key == 'final_obs' or any(nested) or isinstance(first, np.ndarray):
            for env, value in having:
                infos = _gymnasiums_way(infos, key, value, env, add_one)
            continue
        else:
            column = _column(infos, key, first, num_envs)
            for env, value in having:
                column[env] = value  # (item by item: a task config must not be taken for a sequence)
        mask = _column(infos, f'_{key}', False, num_envs)
        for env, _ in having:
            mask[env] = True
    return infos


def _column(infos: dict[str, Any], key: str, first: Any, num_envs: int) -> np.ndarray:
    """``infos[key]``, made first when it is not there: zeros of ``first``'s type where it is a
    number (a bool too), else ``None`` objects."""
    column = infos.get(key)
    if column is None:
        kind = type(first)
        numeric = kind in (int, float, bool) or issubclass(kind, np.number)
        column = infos[key] = np.zeros(num_envs, dtype=kind) if numeric else np.full(num_envs, None, dtype=object)
    return column


def _gymnasiums_way(infos: dict[str, Any], key: str, value: Any, env: int, add_one: AddOne | None) -> dict[str, Any]:
    """``infos`` with ``key: value`` of ``env`` added by ``add_one`` (Gymnasium's own way)."""
    if add_one is None:
        raise ValueError(f'info {key!r} needs Gymnasium\'s own way of adding it')
    return add_one(infos, {key: value}, env)


def _add_one_env(infos: dict[str, Any], env: int, env_info: dict[str, Any], num_envs: int,
                 add_one: AddOne | None) -> dict[str, Any]:
    """:func:`add_env_infos` of one env: the same columns, masks and key order, key by key."""
    for key, value in env_info.items():
        if key != 'final_obs' and isinstance(value, dict):
            infos[key] = _add_one_env(infos.get(key, {}), env, value, num_envs, add_one)
        elif key == 'final_obs' or isinstance(value, np.ndarray):
            infos = _gymnasiums_way(infos, key, value, env, add_one)
            continue
        else:
            _column(infos, key, value, num_envs)[env] = value
        _column(infos, f'_{key}', False, num_envs)[env] = True
    return infos
