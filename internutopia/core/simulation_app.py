"""The app handle a ``vec_env.Env`` gives scripts, and the bound that stops it in headless jobs.

InternUtopia's scripts loop on ``env.simulation_app.is_running()``; here that handle is a flag the
env clears when it closes. Its demos loop forever (keyboard control), so a headless job can set
:data:`MAX_STEPS_ENV`: the env then watches its own steps with a :class:`StopAppAfter` and stops
the app after that many. ``vec_env`` re-exports :class:`SimulationApp` and :data:`MAX_STEPS_ENV`.
"""

from __future__ import annotations

import os
from typing import Any


class SimulationApp:
    """Stand-in for Isaac Sim's app handle: scripts loop on ``is_running()`` until ``close()``."""

    def __init__(self) -> None:
        self._running = True

    def is_running(self) -> bool:
        """True until the env is closed."""
        return self._running

    def close(self) -> None:
        """Mark the app as stopped."""
        self._running = False


#: Environment variable bounding scripts that loop on ``simulation_app.is_running()`` (InternUtopia's
#: demos loop forever): after this many ``step`` calls of an env, its app reports it is not running.
MAX_STEPS_ENV = 'INTERNUTOPIA_MAX_STEPS'


class StopAppAfter:
    """A step observer that stops ``app`` after ``steps`` env steps (see :data:`MAX_STEPS_ENV`)."""

    def __init__(self, app: SimulationApp, steps: int) -> None:
        self.app, self.left = app, steps

    def on_reset(self, slots: list[int], obs: list[Any], info: list[Any]) -> None:
        pass

    def on_step(self, action: list[Any], result: tuple[list, list, list, list, list]) -> None:
        self.left -= 1
        if self.left <= 0:
            self.app.close()

    def on_close(self) -> None:
        pass


def max_steps_from_environ() -> int | None:
    """The step bound :data:`MAX_STEPS_ENV` sets, or ``None`` when it is unset or empty.

    Raises:
        ValueError: the variable is set to something other than a positive int (read when an
            env is built, so a typo fails before anything runs).
    """
    value = os.environ.get(MAX_STEPS_ENV)
    if not value:
        return None
    try:
        steps = int(value)
    except ValueError:
        raise ValueError(f'{MAX_STEPS_ENV} must be a positive int (env steps); got {value!r}') from None
    if steps <= 0:
        raise ValueError(f'{MAX_STEPS_ENV} must be a positive int (env steps); got {value!r}')
    return steps
