"""Calling a runner actor and waiting for its answer: actions it cannot be sent named, its own
exceptions out, a bounded wait, a hang named."""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from typing import Any

__all__ = ['RunnerHung', 'get_result', 'send_actions', 'unwrap']


class RunnerHung(RuntimeError):
    """A runner took longer than its call's timeout (``step_timeout_s``, ``reset_timeout_s``)."""


def get_result(ref: Any, deadline: float | None = None, runner_id: int | None = None) -> Any:
    """``ray.get`` one runner call (unpickling a packed result); an error raised by our code comes
    out as its own exception, a call still running at ``deadline`` (``time.monotonic()``) as
    :class:`RunnerHung`, a dead actor as ``ray.exceptions.RayActorError``."""
    import ray

    timeout = None if deadline is None else max(deadline - time.monotonic(), 0.0)
    try:
        result = ray.get(ref, timeout=timeout)
        return pickle.loads(result) if isinstance(result, bytes) else result
    except ray.exceptions.GetTimeoutError:
        raise RunnerHung(f'runner {runner_id} did not answer within {timeout and round(timeout, 1)} s') from None
    except ray.exceptions.RayActorError:
        raise
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, BaseException):
            raise cause from None
        raise


def unwrap(call: Callable[[], Any]) -> Any:
    """``call()``, with a Ray task's error raised as the original exception."""
    import ray

    try:
        return call()
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, BaseException):
            raise exc.cause from None
        raise


def send_actions(method: Any, actions: list[Any], offset: int, **options: Any) -> Any:
    """``method.remote(actions, **options)`` (a runner's ``check`` or ``step``); an entry Ray cannot serialize
    (a generator, a lock) is a ``ValueError`` naming its slot (``offset``: the global id of
    ``actions[0]``), as one process's check of its arguments is, and the call is not made."""
    try:
        return method.remote(actions, **options)
    except Exception:
        import ray.cloudpickle as cloudpickle

        for i, entry in enumerate(actions):
            try:
                cloudpickle.dumps(entry)
            except Exception as exc:  # noqa: BLE001 - named in the error
                raise ValueError(f'action[{offset + i}]: cannot be sent to its Ray runner ({type(exc).__name__}: {exc}); '
                                 'action arguments must be numbers, lists or arrays') from None
        raise
