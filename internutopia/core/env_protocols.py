"""What ``vec_env.Env`` talks to besides its runners: the tools watching a run and a window on the world.

- :class:`StepObserver`: what :meth:`Env.add_observer <internutopia.core.vec_env.Env.add_observer>`
  calls with the results the user saw (``internutopia.recording.Recorder`` is one);
- :class:`Viewer`: a backend's window (``Backend.passive_viewer``'s result), opened with
  :func:`open_viewer` and kept in step with :func:`synced_viewer`: a window that fails is closed
  with a warning, and the run goes on without it.
"""

from __future__ import annotations

import warnings
from typing import Any, Protocol, runtime_checkable

from internutopia.core.util.caller import caller_stacklevel

__all__ = ['ArrayStepObserver', 'ObservedCalls', 'StepObserver', 'Viewer', 'notify_observers', 'open_viewer', 'synced_viewer']


class Viewer(Protocol):
    """A backend's window on the world (``Backend.passive_viewer``'s result)."""

    def sync(self) -> None: ...

    def close(self) -> None: ...


class StepObserver(Protocol):
    """What :meth:`Env.add_observer` calls: the results the user saw, after each call returns them."""

    def on_reset(self, slots: list[int], obs: list[Any], info: list[Any]) -> None: ...

    def on_step(self, action: list[Any], result: tuple[list, list, list, list, list]) -> None: ...

    def on_close(self) -> None: ...


@runtime_checkable
class ArrayStepObserver(StepObserver, Protocol):
    """A :class:`StepObserver` that also sees the array API's calls (an observer without these two
    methods is not called for them)."""

    def on_reset_arrays(self, slots: list[int], obs: dict[str, Any] | None, info: list[Any] | None) -> None:
        """``reset_arrays``' result (``obs``/``info`` ``None``: a reset that raised once complete)."""

    def on_step_arrays(self, action: dict[str, dict[str, Any]], result: Any, repeat: int,
                       reset_list: list[int] | None) -> None:
        """``step_arrays``' batched action, its ``ArrayStep``, its ``repeat`` and ``reset_list``."""


class ObservedCalls:
    """The env's observer hook (:meth:`add_observer`, :meth:`remove_observer`): the tools that
    watch a run, called by ``vec_env.Env``'s ``reset``, ``step`` and ``close``."""

    #: Tools watching the run (:meth:`add_observer`); empty: the step path checks one tuple.
    _observers: tuple[StepObserver, ...] = ()
    #: Those of them that take the array API's calls too (``on_step_arrays``, ``on_reset_arrays``).
    _array_observers: tuple[ArrayStepObserver, ...] = ()

    def add_observer(self, observer: StepObserver) -> None:
        """Call ``observer`` with what every later :meth:`reset` and :meth:`step` return, and on
        :meth:`close` (``on_reset(slots, obs, info)``, ``on_step(action, result)``, ``on_close()``);
        an observer that defines ``on_reset_arrays(slots, obs, info)`` and ``on_step_arrays(action,
        result, repeat, reset_list)`` is called with ``reset_arrays``' and ``step_arrays``' too
        (while one is added, ``step_arrays(observe=False)`` observes every slot all the same).

        The hook of tools that watch a run, such as ``internutopia.recording.Recorder``; nothing
        runs for it while no observer is added.
        Observers are called with Ctrl-C held, so a call a ``KeyboardInterrupt`` ended still
        reaches every observer, whole, before the interrupt is raised; an observer that raises
        does not keep the others from the call (the first error is raised after them all).
        """
        self._observers = (*self._observers, observer)
        self._array_observers = tuple(added for added in self._observers if isinstance(added, ArrayStepObserver))

    @property
    def observed(self) -> bool:
        """Whether an observer of the array API's calls too (an :class:`ArrayStepObserver`, such as a
        ``Recorder``) watches this env: a Gymnasium vector env's first reset then starts its episodes
        in view rather than handing out those its construction started."""
        return bool(self._array_observers)

    def remove_observer(self, observer: StepObserver) -> None:
        """Stop calling ``observer`` (added with :meth:`add_observer`); the run goes on without it.

        Raises:
            ValueError: ``observer`` was not added (or was removed already).
        """
        if not any(added is observer for added in self._observers):
            raise ValueError(f'remove_observer: {observer!r} is not an observer of this env')
        self._observers = tuple(added for added in self._observers if added is not observer)
        self._array_observers = tuple(added for added in self._array_observers if added is not observer)


def notify_observers(observers: tuple[Any, ...], method: str, *args: Any) -> None:
    """Call ``method`` of every observer with ``args``; the first error is raised after them all
    (each observer sees every call, whatever another one does with it)."""
    error: Exception | None = None
    for observer in observers:
        try:
            getattr(observer, method)(*args)
        except Exception as exc:  # noqa: BLE001 - raised below
            error = error or exc
    if error is not None:
        raise error


def open_viewer(runner: Any) -> Viewer | None:
    """The backend's window on ``runner``'s world (MuJoCo's passive viewer), or ``None`` where the
    backend has none or the machine's GUI stack fails (warned). It opens on the first step (the
    world is built by ``reset``), follows every step and reopens when a reset rebuilds the world."""
    if runner.backend.passive_viewer is None:
        return None
    try:
        return runner.backend.passive_viewer(runner.world)
    except Exception as exc:  # pragma: no cover - depends on the machine's GUI stack
        warnings.warn(f'headless=False but the viewer is unavailable ({exc}); running without a window', stacklevel=caller_stacklevel())
        return None


def synced_viewer(viewer: Viewer) -> Viewer | None:
    """``viewer`` brought up to date with the world; ``None`` (closed, warned) when it failed."""
    try:
        viewer.sync()
    except Exception as exc:  # pragma: no cover - needs a display
        warnings.warn(f'the viewer failed ({exc}); running without a window', stacklevel=caller_stacklevel())
        viewer.close()
        return None
    return viewer
