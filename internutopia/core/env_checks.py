"""Argument checks of ``vec_env.Env``'s calls, run before the env changes anything.

The contract (``docs/contract.md``) says bad input raises ``ValueError`` and leaves every slot as
it was; these functions are where that input is read. Each message names the argument as the
caller wrote it (``reset_list`` or ``env_ids``) and the valid range, so a user can fix the call
from the message alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def reset_slots(reset_list: Any, env_ids: Any, env_num: int) -> list[int]:
    """The slots a ``reset(reset_list)`` or ``reset(env_ids=...)`` call names, as ints.

    ``env_ids`` is InternUtopia's name of ``reset_list``; neither given means every slot.

    Raises:
        ValueError: both are given, or the list is not one of distinct int ids in ``range(env_num)``.
    """
    name = 'reset_list'
    if env_ids is not None:
        if reset_list is not None:
            raise ValueError('give the env ids once: reset(reset_list) or reset(env_ids=...), not both')
        reset_list, name = env_ids, 'env_ids'
    if reset_list is None:
        return list(range(env_num))
    return check_reset_list(reset_list, env_num, name)


def check_reset_list(reset_list: Any, env_num: int, name: str = 'reset_list') -> list[int]:
    """``reset_list`` as a list of ints, after checking each is a distinct id in ``range(env_num)``.

    ``name`` is the argument's name in the messages (``'reset_list'`` or ``'env_ids'``).
    """
    if isinstance(reset_list, (str, bytes, dict)) or not hasattr(reset_list, '__iter__'):
        raise ValueError(f'{name} must be a list of env ids in 0..{env_num - 1}; got {reset_list!r}')
    try:
        slots = list(reset_list)
    except TypeError:  # (iterable by its type only: a 0-d numpy array)
        raise ValueError(f'{name} must be a list of env ids in 0..{env_num - 1}; got {reset_list!r}') from None
    seen = set()
    for slot in slots:
        # An int or an integer scalar (numpy's included); not a bool, a float or an array.
        if isinstance(slot, (bool, np.bool_)) or not isinstance(slot, (int, np.integer)):
            raise ValueError(f'{name} entries must be int env ids in 0..{env_num - 1}; got {slot!r}')
        if not 0 <= int(slot) < env_num:
            raise ValueError(f'env id {slot} in {name} is out of range; valid env ids: 0..{env_num - 1}')
        if int(slot) in seen:
            raise ValueError(f'env id {slot} appears more than once in {name} {slots}')
        seen.add(int(slot))
    return [int(s) for s in slots]


def check_action_list(action: Any, env_num: int) -> None:
    """Raise ``ValueError`` unless ``action`` is a sequence of ``env_num`` entries (one per slot).

    A dict is refused though it has a length: it is one slot's action, not a list of them.
    """
    if isinstance(action, dict) or not hasattr(action, '__len__') or len(action) != env_num:
        got = f'length {len(action)}' if hasattr(action, '__len__') and not isinstance(action, dict) else type(action).__name__
        raise ValueError(f'action must be a list of {env_num} entries (one per env, None for no command); got {got}')


def check_warm_up(steps: Any, render: bool, physics: bool) -> None:
    """Raise ``ValueError`` for a ``warm_up`` call with nothing to do or a bad step count."""
    if not render and not physics:
        raise ValueError('warm_up: render and physics are both False; nothing to warm up')
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f'warm_up: steps must be an int >= 1; got {steps!r}')
