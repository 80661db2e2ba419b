"""Instructions per env step of our Python (physics off), counted by valgrind's callgrind.

Timings on a shared machine move with whatever else runs; instruction counts do not. This script
counts the machine instructions one ``env.step`` / ``env.step_arrays`` (or one phase of it) executes
with the physics switched off (``internutopia.bench.profile_step.switch_physics_off``), so two
versions of the code can be compared on a busy machine, to a fraction of a percent. It is how the
breakdown in ``docs/performance.md`` was measured. Instructions are not time: a numpy call on
cold caches costs more than its count says, and the paired benchmark (``python -m
internutopia.bench``) remains the measure of speed.

    python -m internutopia.bench.step_instructions --robots h1 --env-nums 1,64 --api array,dict
    python -m internutopia.bench.step_instructions --robots h1 --env-nums 1 --api array --phases step,parse,controllers,observe
    python -m internutopia.bench.step_instructions --robots h1 --env-nums 64 --api dict --code "runner.observe(slots)"
    python -m internutopia.bench.step_instructions --gym internutopia/H1Walk-v0,internutopia/JetbotPointNav-v0 --env-nums 64

``--gym IDS`` counts one ``step()`` of those Gymnasium vector envs instead (``gymnasium.make_vec``,
random actions drawn once; its ``action_repeat`` physics steps are switched off, so a robot
that does not move reaches no goal and falls over nowhere while it is counted: the steady vector
step, without resets, until the episodes' time limits come: the Jetbot id's come about 150
vector steps in, so keep the calls of all phases together under about 120). Its phase
``turnover`` counts the same ``step()`` while episodes end and restart as they do under random
actions: the bench ends each episode (truncated) after a length drawn from its index, spread so
that about :data:`TURNOVER_ENDS_PER_STEP` episodes end a vector step at 64 envs (H1Walk-v0's rate
with random leg actions, its robots falling), each then finished, recorded, reported in the
infos and restarted by the vector env's autoreset: what a step with turnover costs beyond the
steady one.

    python -m internutopia.bench.step_instructions --gym internutopia/H1Walk-v0 --env-nums 64 --phases step,turnover

``--baseline FILE`` reads a previous run's output (its lines ``CASE xN API PHASE: COUNT
instructions per call``; others are ignored) and prints each count's change against it;
``--max-increase PCT`` makes the run exit with status 1 when a count rose by more than ``PCT``
per cent, for a check that a change added no work (counts move by about 0.5 % from run to run of
one tree, a turnover's by about 1.5 %)::

    python -m internutopia.bench.step_instructions --robots h1 --env-nums 1 --api array \
        --baseline docs/assets/instructions_main_session21.txt --max-increase 2

``--code`` counts any Python expression instead, evaluated with ``env``, ``runner``, ``np``,
``step``, ``parse``, ``actions`` (the step's actions), ``commands`` (parsed actions), ``slots``
(the active slots) and ``group`` (the first robot group) in scope.

Needs ``valgrind`` and a C compiler (for a five-line helper that switches the counting on and off
around the measured calls, through callgrind's client requests). Each case takes about a minute,
whatever the number of phases (they are counted one after another in one process): start-up
runs under valgrind too, uncounted.
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
from typing import Any

from internutopia.bench import options

_HELPER = '''
#include <valgrind/callgrind.h>
void count_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void count_stop(void) { CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS; CALLGRIND_STOP_INSTRUMENTATION; }
'''

PHASES = ('step', 'parse', 'controllers', 'advance', 'observe', 'get_obs', 'nothing')
#: The phases of ``--gym``.
GYM_PHASES = ('step', 'turnover', 'nothing')

#: Episodes ending a vector step in the ``turnover`` phase, at 64 envs (in proportion at others).
TURNOVER_ENDS_PER_STEP = 1.5


def _helper(directory: str) -> str:
    source, library = os.path.join(directory, 'count.c'), os.path.join(directory, 'libcount.so')
    pathlib.Path(source).write_text(_HELPER, encoding='utf-8')
    compiler = shutil.which('cc') or shutil.which('gcc')
    if compiler is None:
        raise SystemExit('step_instructions: needs a C compiler (cc or gcc) for the callgrind helper')
    subprocess.run([compiler, '-O2', '-shared', '-fPIC', '-o', library, source], check=True)
    return library


def _count_calls(counter: ctypes.CDLL, calls_by_phase: dict, scope: dict, phases: list[str], calls: int) -> None:
    """Count ``calls`` calls of each of ``phases`` (a name in ``calls_by_phase`` or a Python
    expression evaluated in ``scope``), one callgrind dump each."""
    for phase in phases:
        call = calls_by_phase.get(phase) or eval(f'lambda: ({phase})', scope)  # noqa: S307 - the user's own expression
        for _ in range(5):
            call()
        counter.count_start()
        for _ in range(calls):
            call()
        counter.count_stop()


def _measure_gym(counter: ctypes.CDLL, env_id: str, num_envs: int, phases: list[str], calls: int) -> None:
    """Runs under valgrind: a Gymnasium vector env of ``env_id``, its physics off, ``step()`` counted."""
    import gymnasium
    import numpy as np

    import internutopia.envs  # noqa: F401  (registers the ids)
    from internutopia.bench.profile_step import switch_physics_off

    envs = gymnasium.make_vec(env_id, num_envs=num_envs)
    envs.reset(seed=0)
    space = envs.single_action_space
    assert isinstance(space, gymnasium.spaces.Box)  # (every id's action)
    action = np.random.default_rng(0).uniform(space.low, space.high, (num_envs, *space.shape)).astype(space.dtype)
    for _ in range(20):
        envs.step(action)
    vec_env = envs.unwrapped.vec_env  # type: ignore[attr-defined]
    switch_physics_off(vec_env)

    def step() -> None:
        envs.step(action)

    def turnover() -> None:
        if not ending:  # (first call: episodes end from now on; steps enough for their ends to spread out)
            end_at_a_spread(vec_env.runner, envs.unwrapped.action_repeat)  # type: ignore[attr-defined]
            ending.append(True)
            for _ in range(120):
                step()
        step()

    ending: list[bool] = []
    scope = {'envs': envs, 'np': np, 'step': step, 'action': action, 'runner': vec_env.runner}
    _count_calls(counter, {'step': step, 'turnover': turnover, 'nothing': lambda: None}, scope, phases, calls)
    envs.close()


def end_at_a_spread(runner: Any, repeat: int, ends_per_step: float = TURNOVER_ENDS_PER_STEP) -> None:
    """From now on, end every episode of ``runner`` (truncated) once it has run a length drawn
    from its index: ``repeat`` physics steps times a number of vector steps spread evenly from
    half to one and a half times their mean, the mean such that about ``ends_per_step`` episodes
    (at 64 envs; in proportion at others) end a vector step. The tasks' own ends still come
    first. Wraps the runner's terms (their per-step call and their recorded passes), as a bench
    alone may."""
    import numpy as np

    mean = max(2.0, 64 / ends_per_step - 1)  # (an env that ended spends one vector step restarting)
    low, high = max(1, round(mean / 2)), max(2, round(mean * 3 / 2))
    table, terms = runner.table, runner.terms
    step, recorded_pass = terms.step, terms.recorded_pass
    limit = np.zeros(table.env_num, dtype=np.int64)  # each slot's episode's length (physics steps)

    def limits(slots: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """The lengths of ``slots``' episodes, those of the ``fresh`` ones (begun since) found first:
        what the bench adds to a step stays a few numpy calls, not a loop over the envs."""
        for slot in slots[fresh].tolist():
            limit[slot] = repeat * (low + table.episodes[slot].index * 7919 % (high - low + 1))
        return limit[slots]

    running = table.active_slots()
    limits(running, np.ones(len(running), dtype=bool))

    def step_and_end(slots: np.ndarray) -> tuple:
        reward, terminated, truncated, stepped, failed = step(slots)
        steps = table.steps[slots]
        due = slots[steps >= limits(slots, steps <= repeat)]  # (an episode's first step call counts at most repeat)
        truncated[due] = ~terminated[due]
        return reward, terminated, truncated, stepped or bool(len(due)), failed

    def recorded_and_end(slots: np.ndarray) -> Any:
        run = recorded_pass(slots)
        if run is None:
            return None

        def run_and_end(recorded: Any) -> tuple:
            reward, terminated, truncated, ran = run(recorded)
            before = recorded.steps_before[slots]
            due = (limits(slots, before == 0) - before).clip(1)  # (the inner step each is due on)
            own_end = (terminated[slots] | truncated[slots]) & (ran[slots] <= due)  # (the task's end came first)
            cut = slots[(due <= ran[slots]) & ~own_end]
            ran[cut] = np.minimum(ran[cut], due[np.searchsorted(slots, cut)])
            terminated[cut], truncated[cut] = False, True
            return reward, terminated, truncated, ran

        return run_and_end

    terms.step, terms.recorded_pass = step_and_end, recorded_and_end


def _measure(library: str, robot: str, env_num: int, api: str, phases: list[str], calls: int) -> None:
    """Runs under valgrind: build the env, switch the physics off, count ``calls`` calls of each
    of ``phases`` (a name of :data:`PHASES` or a Python expression), one callgrind dump each."""
    counter = ctypes.CDLL(library)  # (first: a helper that does not load fails before the imports)
    import numpy as np

    if api == 'gym':
        _measure_gym(counter, robot, env_num, phases, calls)
        return

    from internutopia.bench.cases import get_case
    from internutopia.bench.profile_step import switch_physics_off
    from internutopia.core.runner.actions import Commands, Unbatched
    from internutopia.core.vec_env import Env

    case = get_case(robot)
    env = Env(case.config(env_num, 'off'))
    env.reset()
    runner = env.runner
    given: list | dict  # the actions as the API takes them
    if api == 'dict':
        actions = given = case.dict_actions(env_num)

        def step() -> None:
            env.step(actions)

        def parse() -> Commands:
            return runner.parse_actions(actions)
    else:
        batched = given = case.array_action(env_num)

        def step() -> None:
            env.step_arrays(batched)

        def parse() -> Commands:
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
    scope = {'env': env, 'runner': runner, 'np': np, 'step': step, 'parse': parse, 'commands': commands, 'slots': slots,
             'group': next(iter(runner.robot_groups.values()), None),
             'actions': given}
    _count_calls(counter, calls_by_phase, scope, phases, calls)
    env.close()


def _check_case(robot: str, api: str) -> None:
    """``ValueError`` naming the valid choices for an unknown case (or, with ``api='gym'``, id)."""
    if api != 'gym':
        from internutopia.bench.cases import get_case

        get_case(robot)
        return
    import gymnasium

    from internutopia.envs.ids import registered_ids  # (importing internutopia.envs registers the ids)

    if robot not in gymnasium.registry:
        raise ValueError(f'unknown Gymnasium id {robot!r}; choose from {", ".join(registered_ids())}')


def count(robot: str, env_num: int, api: str, phases: list[str], calls: int = 50) -> list[int]:
    """Instructions per call of each of ``phases`` (names of :data:`PHASES` or Python expressions),
    counted under callgrind in one process.

    Raises:
        ValueError: an unknown benchmark case or Gymnasium id (checked here, before valgrind starts).
        RuntimeError: the counting child failed (the last lines of its traceback).
    """
    _check_case(robot, api)
    valgrind = shutil.which('valgrind')
    if valgrind is None:
        raise SystemExit('step_instructions: needs valgrind (apt-get install valgrind)')
    with tempfile.TemporaryDirectory() as directory:
        library = _helper(directory)
        environment = dict(os.environ, PYTHONHASHSEED='0', MUJOCO_GL=os.environ.get('MUJOCO_GL', 'egl'))
        child = subprocess.run([valgrind, '--tool=callgrind', '--instr-atstart=no', '--collect-atstart=no',
                                f'--callgrind-out-file={directory}/out.%p', sys.executable, '-m', 'internutopia.bench.step_instructions',
                                '--child', library, robot, str(env_num), api, str(calls), *phases],
                               cwd=directory, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if child.returncode != 0:
            # The child's own traceback, without valgrind's banner lines (they start with '==PID==').
            lines = [line for line in child.stderr.splitlines() if not re.match(r'==\d+==', line)]
            raise RuntimeError(f'counting {robot} x{env_num} {api} failed (exit {child.returncode}):\n' + '\n'.join(lines[-20:]))
        dumps = []  # (dump number, instructions): out.PID.N is the N-th dump, one per phase
        for name in os.listdir(directory):
            numbered = re.fullmatch(r'out\.\d+\.(\d+)', name)
            if numbered:
                match = re.search(r'^summary:\s+(\d+)', pathlib.Path(directory, name).read_text(encoding='utf-8'), re.M)
                if match:
                    dumps.append((int(numbered.group(1)), int(match.group(1))))
        if len(dumps) != len(phases):
            raise RuntimeError(f'{len(dumps)} callgrind dumps for {len(phases)} phases of {robot} x{env_num} {api}')
        return [total // calls for _, total in sorted(dumps)]


def main(argv: list[str] | None = None) -> int:
    """``python -m internutopia.bench.step_instructions``: see ``--help``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == '--child':
        library, child_robot, child_env_num, child_api, calls = argv[1:6]
        _measure(library, child_robot, int(child_env_num), child_api, argv[6:], int(calls))
        return 0
    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.step_instructions', description=__doc__.split('\n\n')[0])
    parser.add_argument('--robots', default='h1', help='comma-separated benchmark cases (internutopia.bench.cases)')
    parser.add_argument('--env-nums', default='1,64', help='comma-separated slot counts')
    options.add_api_option(parser, 'array,dict')
    parser.add_argument('--phases', default='step', help=f'comma-separated: {",".join(PHASES)}')
    parser.add_argument('--code', action='append', default=[],
                        help='a Python expression to count instead of the phases (repeatable; see above for its scope)')
    parser.add_argument('--calls', type=int, default=50, help='counted calls per phase')
    parser.add_argument('--gym', default='', help="comma-separated Gymnasium ids: count their vector env's step() "
                        "(phases step, turnover and nothing, or --code with envs, runner, step, action in scope) instead of --robots")
    parser.add_argument('--baseline', help="a previous run's output: print each count's change against it")
    parser.add_argument('--max-increase', type=float, default=None, metavar='PCT',
                        help='with --baseline: exit with status 1 when a count rose by more than PCT per cent')
    args = parser.parse_args(argv)
    if args.max_increase is not None and not args.baseline:
        parser.error('--max-increase needs --baseline')
    if args.baseline and not os.path.isfile(args.baseline):
        parser.error(f'--baseline: no file {args.baseline!r}')
    phases = args.code or args.phases.split(',')
    valid = GYM_PHASES if args.gym else PHASES
    for phase in [] if args.code else phases:
        if phase not in valid:
            parser.error(f'unknown phase {phase!r}; choose from {", ".join(valid)}')
    options.at_least(parser, '--calls', args.calls)
    env_nums = options.int_list(parser, '--env-nums', args.env_nums)
    if args.gym:
        names = options.checked_list(parser, '--gym', options.text_list(args.gym), what='id')
        cases = [(env_id, ['gym']) for env_id in names]
    else:
        apis = options.checked_apis(parser, args)
        names = options.checked_list(parser, '--robots', options.text_list(args.robots), what='robot')
        cases = [(robot, apis) for robot in names]
    for name, apis in cases:  # (before valgrind starts, which takes seconds: every case, not only the first)
        try:
            _check_case(name, apis[0])
        except ValueError as exc:
            parser.error(str(exc))
    baseline = read_counts(pathlib.Path(args.baseline).read_text(encoding='utf-8')) if args.baseline else None
    changes: dict[str, float] = {}
    missing: list[str] = []  # (counted, but not in the baseline)
    for robot, apis in cases:
        for env_num in env_nums:
            for api in apis:
                for phase, instructions in zip(phases, count(robot, env_num, api, phases, args.calls), strict=True):
                    key = f'{robot} x{env_num} {api} {phase}'
                    line = f'{key}: {instructions:,} instructions per call'
                    if baseline is not None and key in baseline:
                        changes[key] = instructions / baseline[key] - 1.0
                        line += f'  (baseline {baseline[key]:,}: {changes[key]:+.1%})'
                    elif baseline is not None:
                        missing.append(key)
                    print(line, flush=True)
    if baseline is None:
        return 0
    risen = {key: change for key, change in changes.items()
             if args.max_increase is not None and change * 100.0 > args.max_increase}
    print(f'{len(changes)} count(s) compared with {args.baseline}' +
          (f' ({len(missing)} not in it: {", ".join(missing)})' if missing else '') +
          (f'; {len(risen)} rose by more than {args.max_increase:g} %: {", ".join(risen)}' if risen else ''), flush=True)
    return 1 if risen else 0


#: A line of this script's output (and of ``--baseline``'s file): the case and phase, the count.
_COUNT_LINE = re.compile(r'^(?P<key>\S+ x\d+ \S+ .+?): (?P<count>[\d,]+) instructions per call')


def read_counts(text: str) -> dict[str, int]:
    """The counts of a previous run's output, by ``'CASE xN API PHASE'`` (other lines ignored).

    >>> read_counts('# a comment\\nh1 x1 array step: 185,131 instructions per call  (baseline 185,000: +0.1%)\\n')
    {'h1 x1 array step': 185131}
    """
    return {match['key']: int(match['count'].replace(',', '')) for match in map(_COUNT_LINE.match, text.splitlines()) if match}


if __name__ == '__main__':
    sys.exit(options.interrupted('python -m internutopia.bench.step_instructions', main))
