"""Issue 49's cases, their instructions per step against the budget in ``instruction_budget.txt``.

A step's time on a shared machine moves with whatever else runs, so a regression in our Python
(a per-slot loop where there was one numpy call, an observation copied twice) shows in the paired
benchmark only as a ratio a few hundredths lower, inside the noise. Its instruction count
(``internutopia.bench.step_instructions``: callgrind, the physics switched off) moves by about
0.5 % from run to run of one tree, so these tests hold each count under its recorded budget plus
:data:`MAX_INCREASE`, and a change that adds work to a step fails here as a number. The margin is
wide because numpy and MuJoCo are not pinned: a release of either moves the counts by a few per
cent. A count far below its budget fails too: the step got much cheaper (lower the budget, or it
stops guarding) or the count no longer measures it.

When a change adds work on purpose, count again and write the budget anew (the file's head says
how); the change's message and docs/performance.md say why.
"""

from __future__ import annotations

import pathlib
import shutil
import sys

import mujoco
import numpy as np
import pytest

from internutopia.bench.step_instructions import count, read_counts

BUDGET_FILE = pathlib.Path(__file__).with_name('instruction_budget.txt')
#: How far above its budget a count may rise (a fraction of the budget).
MAX_INCREASE = 0.10
#: Below this share of its budget a count is suspect (a budget to lower, or a count that broke).
MIN_SHARE = 0.6
#: Calls counted per phase (the benchmark's default is 50; fewer keep the test short, and a mean
#: over 20 calls moves by well under the margin).
CALLS = 20

#: Issue 49's cases: (benchmark case or Gymnasium id, env_num, API, phases counted in one process).
CASES = [
    ('h1', 1, 'array', ('step',)),
    ('h1_walking', 64, 'array', ('step',)),
    ('h1_walking', 64, 'dict', ('step',)),
    ('jetbot', 64, 'dict', ('step',)),
    ('internutopia/H1Walk-v0', 64, 'gym', ('step', 'turnover')),
]

def _versions() -> str:
    return f'numpy {np.__version__}, mujoco {mujoco.__version__}, Python {sys.version.split()[0]}'


@pytest.mark.slow
@pytest.mark.skipif(shutil.which('valgrind') is None, reason='instruction counts need valgrind (apt-get install valgrind)')
@pytest.mark.parametrize(('case', 'env_num', 'api', 'phases'), CASES, ids=[f'{c}-x{n}-{a}' for c, n, a, _ in CASES])
def test_a_steps_instructions_stay_within_their_budget(case, env_num, api, phases):
    text = BUDGET_FILE.read_text(encoding='utf-8')
    budget = read_counts(text)
    recorded_with = text.splitlines()[1].lstrip('# ').removeprefix('recorded with ')
    counted = count(case, env_num, api, list(phases), calls=CALLS)
    for phase, instructions in zip(phases, counted, strict=True):
        key = f'{case} x{env_num} {api} {phase}'
        allowed = budget[key]
        where = (f'{key}: {instructions:,} instructions per call against a budget of {allowed:,} '
                 f'({instructions / allowed - 1:+.1%}; budget recorded with {recorded_with}, counted with {_versions()})')
        assert instructions <= allowed * (1 + MAX_INCREASE), (
            f'{where}: more than {MAX_INCREASE:.0%} over it. Find the added work with step_instructions --phases (or --code); '
            f'if it is wanted, write the budget anew as the head of {BUDGET_FILE.name} says')
        assert instructions >= allowed * MIN_SHARE, (
            f'{where}: under {MIN_SHARE:.0%} of it. A step this much cheaper needs its budget lowered '
            f'(the head of {BUDGET_FILE.name} says how), else the budget no longer guards it')


def test_the_budget_lists_every_case_once():
    """Every case above has its line in the budget file (a case without one would fail only when
    its count runs, with a KeyError), and the file says how it was made."""
    text = BUDGET_FILE.read_text(encoding='utf-8')
    budget = read_counts(text)
    wanted = {f'{case} x{env_num} {api} {phase}' for case, env_num, api, phases in CASES for phase in phases}
    assert wanted == set(budget)
    assert text.startswith('# python -m internutopia.bench.step_instructions') and 'numpy' in text.splitlines()[1]
