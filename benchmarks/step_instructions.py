"""Instructions per env step of our Python (physics off), counted by valgrind's callgrind.

Timings on a shared machine move with whatever else runs; instruction counts do not. This script
counts the machine instructions one ``env.step`` / ``env.step_arrays`` (or one phase of it) executes
with the physics switched off (``internutopia.bench.profile_step.switch_physics_off``), so two
versions of the code can be compared on a busy machine, to a fraction of a percent. It is how the
breakdown in ``docs/performance.md`` was measured. Instructions are not time: a numpy call on
cold caches costs more than its count says, and the paired benchmark (``python -m
internutopia.bench``) remains the measure of speed.

    python benchmarks/step_instructions.py --robots h1 --env-nums 1,64 --api array,dict
    python benchmarks/step_instructions.py --robots h1 --env-nums 1 --api array --phases step,parse,controllers,observe

Needs ``valgrind`` and a C compiler (for a five-line helper that switches the counting on and off
around the measured calls, through callgrind's client requests). Each case takes about a minute:
start-up runs under valgrind too, uncounted.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

_HELPER = '''
#include <valgrind/callgrind.h>
void count_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void count_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; CALLGRIND_STOP_INSTRUMENTATION; }
'''

PHASES = ('step', 'parse', 'controllers', 'advance', 'observe', 'get_obs', 'nothing')


def _helper(directory: str) -> str:
    source, library = os.path.join(directory, 'count.c'), os.path.join(directory, 'libcount.so')
    pathlib.Path(source).write_text(_HELPER, encoding='utf-8')
    compiler = shutil.which('cc') or shutil.which('gcc')
    if compiler is None:
        raise SystemExit('step_instructions: needs a C compiler (cc or gcc) for the callgrind helper')
    subprocess.run([compiler, '-O2', '-shared', '-fPIC', '-o', library, source], check=True)
    return library


def _measure(library: str, robot: str, env_num: int, api: str, phase: str, calls: int) -> None:
    """Runs under valgrind: build the env, switch the physics off, count ``calls`` calls of ``phase``."""
    import numpy as np

    from internutopia.bench.cases import get_case
    from internutopia.bench.profile_step import switch_physics_off
    from internutopia.core.runner.actions import Unbatched
    from internutopia.core.vec_env import Env

    counter = ctypes.CDLL(library)
    case = get_case(robot)
    env = Env(case.config(env_num, 'off'))
    env.reset()
    runner = env.runner
    if api == 'dict':
        actions = case.dict_actions(env_num)

        def step() -> None:
            env.step(actions)

        def parse() -> dict:
            return runner.parse_actions(actions)
    else:
        batched = case.array_action(env_num)

        def step() -> None:
            env.step_arrays(batched)

        def parse() -> dict:
            return runner.parse_batched_actions(batched)
    for _ in range(20):
        step()
    switch_physics_off(env)
    commands = parse()
    slots = runner.active_slots()

    def controllers() -> None:  # as the step applies them
        for controller, rows, batch in commands.values():
            controller.apply(np.asarray(rows, dtype=np.intp), controller.batch(batch) if isinstance(batch, Unbatched) else batch)

    calls_by_phase = {
        'step': step, 'parse': parse, 'controllers': controllers, 'advance': lambda: runner._advance(commands),
        'observe': (lambda: runner.observe(slots)) if api == 'dict' else (lambda: runner.observe_arrays(slots)),
        'get_obs': lambda: [group.get_obs(group.slots) for group in runner.robot_groups.values()],
        'nothing': lambda: None,
    }
    call = calls_by_phase[phase]
    for _ in range(5):
        call()
    counter.count_start()
    for _ in range(calls):
        call()
    counter.count_stop()
    env.close()


def count(robot: str, env_num: int, api: str, phase: str, calls: int = 50) -> int:
    """Instructions per call of ``phase`` (one of :data:`PHASES`), counted under callgrind."""
    valgrind = shutil.which('valgrind')
    if valgrind is None:
        raise SystemExit('step_instructions: needs valgrind (apt-get install valgrind)')
    with tempfile.TemporaryDirectory() as directory:
        library = _helper(directory)
        environment = dict(os.environ, PYTHONHASHSEED='0', MUJOCO_GL=os.environ.get('MUJOCO_GL', 'egl'))
        subprocess.run([valgrind, '--tool=callgrind', '--instr-atstart=no', '--collect-atstart=no',
                        f'--callgrind-out-file={directory}/out.%p', sys.executable, __file__, '--child', library,
                        robot, str(env_num), api, phase, str(calls)],
                       cwd=directory, env=environment, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        totals = []
        for name in os.listdir(directory):
            if name.startswith('out.'):
                match = re.search(r'^summary:\s+(\d+)', pathlib.Path(directory, name).read_text(encoding='utf-8'), re.M)
                if match and int(match.group(1)) < 2**62:  # the dump at exit has nothing counted
                    totals.append(int(match.group(1)))
        if not totals:
            raise RuntimeError(f'no callgrind counts for {robot} x{env_num} {api} {phase}')
        return max(totals) // calls


def main(argv: list[str] | None = None) -> int:
    """``python benchmarks/step_instructions.py``: see ``--help``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == '--child':
        library, robot, env_num, api, phase, calls = argv[1:7]
        _measure(library, robot, int(env_num), api, phase, int(calls))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robots', default='h1', help='comma-separated benchmark cases (internutopia.bench.cases)')
    parser.add_argument('--env-nums', default='1,64', help='comma-separated slot counts')
    parser.add_argument('--api', default='array,dict', help='dict, array, or both')
    parser.add_argument('--phases', default='step', help=f'comma-separated: {",".join(PHASES)}')
    parser.add_argument('--calls', type=int, default=50, help='counted calls per phase')
    args = parser.parse_args(argv)
    for robot in args.robots.split(','):
        for env_num in (int(n) for n in args.env_nums.split(',')):
            for api in args.api.split(','):
                for phase in args.phases.split(','):
                    if phase not in PHASES:
                        parser.error(f'unknown phase {phase!r}; choose from {", ".join(PHASES)}')
                    print(f'{robot} x{env_num} {api} {phase}: {count(robot, env_num, api, phase, args.calls):,} instructions per call',
                          flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
