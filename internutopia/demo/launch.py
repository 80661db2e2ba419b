"""What every demo shares: its step limit, its headless switch, its check for a robot's extra and
the loop of a robot sent to a goal.

>>> args = demo_arguments('a demo', default_steps=300).parse_args(['--steps', '20'])
>>> step_budget(args, headless=True)
20
>>> list(demo_steps(3))
[1, 2, 3]
"""

from __future__ import annotations

import argparse
import itertools
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from internutopia.core.util import has_display

#: The environment variable that bounds every demo (the tests set it to run each in seconds).
STEPS_ENV = 'INTERNUTOPIA_DEMO_STEPS'


def demo_arguments(description: str | None, default_steps: int) -> argparse.ArgumentParser:
    """The parser every demo starts from: ``--steps N`` (env steps; ``0``: no limit)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--steps', type=int, default=None,
                        help=f'env steps to run at most (0: until the window closes; default: ${STEPS_ENV}, '
                             f'else {default_steps} when headless, no limit with a display)')
    parser.set_defaults(default_steps=default_steps)
    return parser


def step_budget(args: argparse.Namespace, headless: bool | None = None) -> int | None:
    """The demo's step limit (``None``: none): ``--steps``, else ``$INTERNUTOPIA_DEMO_STEPS``, else
    the demo's own default when ``headless`` (default: no display), else none."""
    steps = args.steps
    if steps is None and os.environ.get(STEPS_ENV):
        try:
            steps = int(os.environ[STEPS_ENV])
        except ValueError:
            raise ValueError(f'{STEPS_ENV} must be an int; got {os.environ[STEPS_ENV]!r}') from None
    if steps is None:
        headless = not has_display() if headless is None else headless
        steps = args.default_steps if headless else 0
    if steps < 0:
        raise ValueError(f'--steps must be >= 0 (0: no limit); got {steps}')
    return steps or None


def demo_steps(budget: int | None) -> Iterator[int]:
    """Step numbers 1, 2, ... up to ``budget`` (forever when ``None``)."""
    return iter(range(1, budget + 1)) if budget is not None else itertools.count(1)


def require_extra(kind: str, type_name: str) -> None:
    """End the demo with one line naming the extra to install when ``type_name`` needs a missing
    package (see :mod:`internutopia.core.extras`)."""
    from internutopia.core.extras import missing_extra
    from internutopia_extension import import_extensions

    import_extensions()  # the declarations live beside the types
    message = missing_extra(kind, type_name)
    if message is not None:
        raise SystemExit(f'this demo cannot run: {message}')


def run_until_finished(env: Any, action: dict, controller: str, budget: int | None,
                       report_every: int = 500) -> tuple[dict, int, bool]:
    """Step ``env`` (InternUtopia's one-robot ``gym_env.Env``) with ``action`` until ``controller``
    says it finished, the episode ends, the window closes or ``budget`` runs out; print the robot's
    position every ``report_every`` steps and close the env. Returns the last observation, the last
    step's number and whether the controller finished."""
    obs: dict = {}  # budget is None or at least 1: the loop steps at least once
    finished, step = False, 0
    try:
        for step in demo_steps(budget):
            obs, _, terminated, _, _ = env.step(action=action)
            finished = bool(obs['controllers'][controller]['finished'])
            if step % report_every == 0:
                print(f'step {step}: position {np.round(obs["position"], 2).tolist()}', flush=True)
            if finished or terminated or not env.simulation_app.is_running():
                break
    finally:
        env.close()
    return obs, step, finished
