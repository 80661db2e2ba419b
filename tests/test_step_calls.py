"""How many Python functions a steady step calls: a budget per case, so per-step Python that
creeps in shows as a failing count, not as a ratio lost in a noisy benchmark.

At one slot a step's Python is most of its time (``docs/performance.md``, issue 49's one-slot
goals), and each Python call costs from a tenth of a microsecond to a few: a
``contextlib.contextmanager`` around the commands (a generator, ``__enter__``, ``__exit__`` and a
helper, four calls) cost 9,600 instructions, 4.8 % of the carried H1's one-slot step, before it
was counted here. Calls are counted, not timed: the count of a tree does not move with the
machine's load, and the installed libraries' own Python calls are left out of it.

A change that must add a call on every step raises the budget below and says what it costs in
``docs/performance.md``; one that removes calls lowers it.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from internutopia.bench.cases import get_case
from internutopia.core.vec_env import Env

#: Python calls of one steady step, (case, env_num, API) -> budget (the count at the fortieth session).
BUDGETS = {
    ('h1', 1, 'array'): 57,
    ('h1', 1, 'dict'): 69,
    ('h1', 64, 'array'): 57,
    ('jetbot', 1, 'array'): 58,
}


def _calls_per_step(step: Callable[[], Any], steps: int) -> tuple[float, str]:
    """The Python calls ``steps`` calls of ``step`` make, per call, and a listing of them."""
    calls: Counter = Counter()

    def profile(frame: Any, event: str, arg: Any) -> None:
        # (ours and the standard library's: an installed library's own Python, MuJoCo's batch
        # wrapper say, is its release's business, not this budget's)
        if event == 'call' and 'site-packages' not in frame.f_code.co_filename:
            calls[f'{frame.f_code.co_filename.rsplit("/", 1)[-1]}:{frame.f_code.co_name}'] += 1

    sys.setprofile(profile)
    try:
        for _ in range(steps):
            step()
    finally:
        sys.setprofile(None)
    calls.pop(f'{__name__.rsplit(".", 1)[-1]}.py:{step.__name__}', None)  # (the caller's own function)
    return sum(calls.values()) / steps, ', '.join(f'{name} x{count / steps:g}' for name, count in sorted(calls.items()))


def _env_calls_per_step(case_name: str, env_num: int, api: str, steps: int = 6) -> tuple[float, str]:
    case = get_case(case_name)
    with Env(case.config(env_num, 'off')) as env:
        env.reset()
        if api == 'dict':
            actions = case.dict_actions(env_num)

            def step() -> Any:
                return env.step(actions)
        else:
            batched = case.array_action(env_num)

            def step() -> Any:
                return env.step_arrays(batched)
        for _ in range(5):  # (past the first steps' plans and caches)
            step()
        return _calls_per_step(step, steps)


@pytest.mark.parametrize(('case_name', 'env_num', 'api'), list(BUDGETS))
def test_a_steady_step_calls_no_more_python_functions_than_its_budget(case_name: str, env_num: int, api: str) -> None:
    per_step, listing = _env_calls_per_step(case_name, env_num, api)
    budget = BUDGETS[case_name, env_num, api]
    assert per_step <= budget, (f'{case_name} x{env_num} {api}: {per_step:g} Python calls a step against a budget of '
                                f'{budget}; raise the budget only for a call the step needs (and record its cost '
                                f'in docs/performance.md). Calls: {listing}')
    # (the count is the same step after step: a case whose count drifts is not a steady step)
    assert per_step == int(per_step), listing


#: Python calls of one steady Gymnasium vector step (8 envs, zero actions, no episode ending), id -> budget.
GYM_BUDGETS = {
    'internutopia/H1Walk-v0': 136,
    'internutopia/JetbotPointNav-v0': 136,
}


@pytest.mark.parametrize('env_id', list(GYM_BUDGETS))
def test_a_steady_gymnasium_vector_step_calls_no_more_python_functions_than_its_budget(env_id: str) -> None:
    """The path RL users take, over 24 vector steps (a whole number of the walking policy's 50 Hz
    ticks at H1Walk-v0's action repeat of 4) in which no episode ends."""
    import gymnasium as gym
    import numpy as np

    import internutopia.envs  # noqa: F401  (registers the ids)

    envs = gym.make_vec(env_id, num_envs=8)
    try:
        envs.reset(seed=0)
        action = np.zeros(envs.action_space.shape, dtype=envs.action_space.dtype)
        for _ in range(5):
            envs.step(action)
        ended = 0

        def step() -> None:
            nonlocal ended
            _, _, terminated, truncated, _ = envs.step(action)
            ended += int((terminated | truncated).sum())

        per_step, listing = _calls_per_step(step, 24)
    finally:
        envs.close()
    assert ended == 0  # (a steady stretch: the budget has no episode's end or start in it)
    assert per_step <= GYM_BUDGETS[env_id], (f'{env_id}: {per_step:g} Python calls a vector step against a budget of '
                                             f'{GYM_BUDGETS[env_id]}. Calls: {listing}')
