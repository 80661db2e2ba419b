"""How ``vec_env.Env`` hands its runners' results to the caller.

The runners report episode ends with Gymnasium's meaning (a step limit is ``truncated`` only);
InternUtopia's loops expect ``terminated`` on every end, which :func:`internutopia_flags` gives.
``step_arrays`` results are numpy arrays; :func:`convert_step` hands them over in the library the
caller asked for. :class:`Finished` is ``env.finished``: InternUtopia calls it, users test it.
``vec_env`` re-exports :class:`Finished` and :func:`internutopia_flags`.
"""

from __future__ import annotations

import dataclasses

from internutopia.core.backend.arrays import convert_tree
from internutopia.core.runner import ArrayStep

#: The ``(env_num,)`` arrays of an :class:`ArrayStep` besides its observations.
STEP_ARRAYS = ('reward', 'terminated', 'truncated', 'active')


class Finished:
    """A bool that can also be called: ``env.finished`` and ``env.finished()`` give the same answer."""

    __slots__ = ('_value',)

    def __init__(self, value: bool) -> None:
        self._value = bool(value)

    def __call__(self) -> bool:
        return self._value

    def __bool__(self) -> bool:
        return self._value

    def __eq__(self, other: object) -> bool:
        return self._value == (bool(other) if isinstance(other, Finished) else other)

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return repr(self._value)


def internutopia_flags(result: tuple[list, list, list, list, list]) -> tuple[list, list, list, list, list]:
    """Runner flags (Gymnasium's meaning) -> InternUtopia's: ``terminated`` whenever an episode
    ended, or no episode runs in the slot; ``truncated`` as it was."""
    obs, reward, terminated, truncated, info = result
    flags = [True if t is None else bool(t or u) for t, u in zip(terminated, truncated, strict=True)]
    return obs, reward, flags, truncated, info


def convert_step(result: ArrayStep, array_backend: str, device: str) -> ArrayStep:
    """``result`` with its observations and :data:`STEP_ARRAYS` in ``array_backend`` on ``device``
    (``metrics``, ``diverged`` and ``failed`` are per-slot records, kept as they are)."""
    return dataclasses.replace(result, obs=convert_tree(result.obs, array_backend, device),
                               **convert_tree({name: getattr(result, name) for name in STEP_ARRAYS}, array_backend, device))
