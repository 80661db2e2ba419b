"""The Gymnasium vector step against the physics limit: the path RL users take.

``gymnasium.make_vec(ID, num_envs=N)`` steps with random actions (drawn before the timing; or,
``--actions policy``, a walking id's shipped policy, called outside the timed steps:
:mod:`internutopia.bench.action_sources`), and each vector step is paired with the physics it
ran (:mod:`internutopia.bench.paired`'s method: alternating chunks, one ratio per pair, the
median over the pairs):

- **ours**: one ``env.step(actions)`` of the vector env: ``action_repeat`` physics steps with the
  controllers, tasks, rewards, observations, autoresets (the episodes that ended start anew) and
  infos around them;
- **limit**: the same physics steps replayed on raw ``mujoco.batch.Batch`` copies of the packs
  (:class:`GymLimit`): per physics step the controls ours applied, written in one numpy
  assignment, then ``Batch.step()``. What ours wrote to the state between two physics steps besides
  the controls (an episode's start state after a reset, a push) is written to that slot's row too,
  so both sides simulate the same motion;
- **physics share**: the time ours spent inside the world's physics step over its vector step (what
  the ratio would be if ours' physics ran as fast as the limit's: it leaves out the pool thread's
  wake-up and the cold caches after our Python, see docs/performance.md), per pair (the median);
- **physics share, plain loop**: the same share over a user's own loop, measured after the pairs:
  :data:`PLAIN_STEPS` vector steps one after the other with nothing in between (no limit replay
  to chill the caches), the physics time over the whole loop's (every reset and infos included,
  however rare: a point-nav world whose 64 episodes all end on one vector step counts that step).

The per-step recording (a copy of the positions and velocities after each physics step, to find
the rows written between steps) is timed and taken out of ours' time.

    python -m internutopia.bench.gym_step                                  # the default ids at 64 envs
    python -m internutopia.bench.gym_step --ids internutopia/H1Walk-v0 --num-envs 1,64 --json
    python -m internutopia.bench.gym_step --phases                         # where a vector step's time goes
    python -m internutopia.bench.gym_step --ids internutopia/H1Walk-v0 --actions policy   # its robots walking, not falling
    python -m internutopia.bench.gym_step --ab fuse_steps --ids internutopia/H1Walk-v0   # a switch on and off
    python -m internutopia.bench.gym_step --ids internutopia/Config-v0 --config configs/jetbot_point_nav.yaml   # any config
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from internutopia.bench import options
from internutopia.bench.action_sources import ACTION_KINDS, action_source, policy_ids
from internutopia.bench.fresh import DEFAULT_TIMEOUT_S, run_in_fresh_process
from internutopia.bench.gym_limit import GymLimit
from internutopia.bench.paired import involuntary_switches, summarize, time_calls
from internutopia.bench.switch_ab import PAIRS as AB_PAIRS
from internutopia.bench.switch_ab import SWITCHES, format_switch_ab, measure_switch_ab
from internutopia.core.backend.mujoco.render.gl import default_to_egl

__all__ = ['CONFIG_ID', 'DEFAULT_IDS', 'PAIRS', 'PHASES', 'GymLimit', 'main', 'measure_gym', 'phase_shares', 'run_gym']

#: Timed pairs of chunks a measurement takes by default (with 5 vector steps a chunk, a point-nav
#: episode of 200 vector steps ends and restarts during the run).
PAIRS = 60

#: Vector steps of the plain loop after the pairs (three point-nav episodes of 200 vector steps, two of
#: G1's 300: a world whose episodes all end together counts its resets in their share).
PLAIN_STEPS = 600

#: The ids of the default run: the walking H1 (the training id) and the point-nav id of every robot.
DEFAULT_IDS = ('internutopia/H1Walk-v0', 'internutopia/JetbotPointNav-v0', 'internutopia/H1PointNav-v0',
               'internutopia/G1PointNav-v0', 'internutopia/AliengoPointNav-v0', 'internutopia/GR1PointNav-v0',
               'internutopia/H1WithHandPointNav-v0')
#: The id of any config (``make_vec(CONFIG_ID, config=PATH)``): measured with ``--config PATH``.
CONFIG_ID = 'internutopia/Config-v0'
#: Vector steps timed and thrown away first (the limit's first replay starts its batch's threads).
WARM_PAIRS = 2

def _plain_share(step: Callable[[], None], prepare: Callable[[], None], limit: GymLimit, steps: int) -> tuple[float, float]:
    """``steps`` vector steps one after the other (``limit`` only timing the physics, recording
    nothing), each action made by ``prepare`` first: the physics time over the loop's (the
    actions' making left out), and the loop's seconds per vector step."""
    limit.recording = False
    physics_before = limit.physics_s
    preparing = 0.0
    began = time.perf_counter()
    for _ in range(steps):
        start = time.perf_counter()
        prepare()
        preparing += time.perf_counter() - start
        step()
    seconds = time.perf_counter() - began - preparing
    return (limit.physics_s - physics_before) / seconds, seconds / steps


def _measure(env_id: str, num_envs: int, pairs: int, chunk: int, kwargs: dict[str, Any],
             plain_steps: int = PLAIN_STEPS, actions: str = 'random') -> dict[str, Any]:
    import gymnasium as gym

    import internutopia.envs  # noqa: F401  (registers the ids)

    began = time.perf_counter()
    env = gym.make_vec(env_id, num_envs=num_envs, **kwargs)
    inner: Any = env.unwrapped  # internutopia's VectorEnv
    world = inner._vec.runner.world
    obs, _ = env.reset(seed=0)
    startup_s = time.perf_counter() - began
    source = action_source(actions, env, env_id, obs, 20)
    limit = GymLimit(world)

    def step() -> None:
        source.observe(env.step(source.action)[0])

    ours = np.empty(pairs)
    theirs = np.empty(pairs)
    physics = np.empty(pairs)
    clean = np.empty(pairs, dtype=bool)
    written = 0
    for pair in range(-WARM_PAIRS, pairs):
        limit.start_round()
        ours_steps, ours_clean, physics_steps = np.empty(chunk), np.empty(chunk, dtype=bool), np.empty(chunk)
        for k in range(chunk):
            source.prepare()  # (not timed: the action is the caller's)
            before, began = involuntary_switches(), time.perf_counter()
            kept, physics_before = limit.bookkeeping_s, limit.physics_s
            step()
            ours_steps[k] = time.perf_counter() - began - (limit.bookkeeping_s - kept)
            physics_steps[k] = limit.physics_s - physics_before
            ours_clean[k] = involuntary_switches() == before
            limit.end_vector_step()
        if pair >= 0:
            written += sum(len(rows) for part in limit.parts for _, rows, _, _ in part.steps)
        limit_steps, limit_clean = limit.replay_steps()
        if pair < 0:
            continue
        both = ours_clean & limit_clean
        clean[pair] = 2 * np.count_nonzero(both) >= chunk
        use = both if clean[pair] else slice(None)
        ours[pair], theirs[pair] = ours_steps[use].mean(), limit_steps[use].mean()
        physics[pair] = physics_steps[use].mean()
    plain_share, plain_step_s = (_plain_share(step, source.prepare, limit, plain_steps) if plain_steps > 0
                                 else (float('nan'), float('nan')))
    limit.close()
    out = summarize(ours, theirs, clean)
    use = np.ones(pairs, dtype=bool) if out['used'] == 'all' else clean
    shares = physics[use] / ours[use]
    out.update({'id': env_id, 'num_envs': num_envs, 'actions': actions, 'action_repeat': inner.action_repeat, 'chunk': chunk,
                'physics_share': float(np.median(shares)), 'physics_share_q1': float(np.percentile(shares, 25)),
                'physics_share_q3': float(np.percentile(shares, 75)), 'plain_physics_share': plain_share,
                'plain_steps': plain_steps, 'plain_env_steps_per_s': num_envs / plain_step_s,
                'vector_steps_per_s': 1.0 / out['ours_step_s'], 'env_steps_per_s': num_envs / out['ours_step_s'],
                'limit_env_steps_per_s': num_envs / out['limit_step_s'], 'startup_s': startup_s,
                'written_rows_per_vector_step': written / (pairs * chunk)})
    env.close()
    return out


#: The parts of a vector step :func:`phase_shares` times: (label, owner path from the vector env, method).
PHASES = (
    ('physics (world.step)', '_vec.runner.world', 'step'),
    ('physics, a repeat recorded (world.rollout)', '_vec.runner.world', 'rollout'),
    ('tasks, rewards, metrics (terms.step)', '_vec.runner.terms', 'step'),
    ('commands (parse_batched)', '_vec.runner.actions', 'parse_batched'),
    ('observations (observe_arrays)', '_vec.runner.observer', 'observe_arrays'),
    # (a reset takes its episodes first, then starts them; a NEXT_STEP vector step starts its ended
    # envs in the step's own call, their first observation the step's, counted under observations too)
    ('episodes taken and checked for resets (starts.take)', '_vec.runner.starts', 'take'),
    ('  of which the next episodes drawn (queue.next)', '_vec.runner.queue', 'next'),
    ('resets (starts.reset: placed, started, the first observation)', '_vec.runner.starts', 'reset'),
    ('  of which placed and started (starts._reset_taken)', '_vec.runner.starts', '_reset_taken'),
    ('    of which their start states written (starts.place)', '_vec.runner.starts', 'place'),
    ('    of which the tasks\' starts (terms.start_many)', '_vec.runner.terms', 'start_many'),
    ('    of which their forward passes (world.forward)', '_vec.runner.world', 'forward'),
    ('episode ends and their records (runner.ends.finish)', '_vec.runner.ends', 'finish'),
    ('  of which their metrics (terms.episode_metrics)', '_vec.runner.terms', 'episode_metrics'),
    ('  of which their records written (results.write)', '_vec.runner.results', 'write'),
    ('infos of envs that ended or started (add_infos)', '', '_add_infos'),
    ('observation rows (layout.flat_rows)', 'layout', 'flat_rows'),
)


def _phases(env_id: str, num_envs: int, steps: int, kwargs: dict[str, Any], actions: str = 'random') -> dict[str, Any]:
    import gymnasium as gym

    import internutopia.envs  # noqa: F401  (registers the ids)

    env = gym.make_vec(env_id, num_envs=num_envs, **kwargs)
    inner: Any = env.unwrapped
    obs, _ = env.reset(seed=0)  # (first: a seeded reset makes the episode queue anew, whose calls are timed)
    spent: dict[str, float] = {}
    for label, path, name in PHASES:
        owner = inner
        for part in filter(None, path.split('.')):
            owner = getattr(owner, part)
        time_calls(spent, owner, name, label)
    source = action_source(actions, env, env_id, obs, 20)
    spent.clear()
    total = 0.0
    for _ in range(steps):
        source.prepare()  # (not timed)
        began = time.perf_counter()
        source.observe(env.step(source.action)[0])
        total += time.perf_counter() - began
    env.close()
    return {'id': env_id, 'num_envs': num_envs, 'actions': actions, 'steps': steps, 'vector_step_ms': total / steps * 1e3,
            'shares': {label: spent.get(label, 0.0) / total for label, _, _ in PHASES}}


def phase_shares(env_id: str, num_envs: int, steps: int = 300, kwargs: dict[str, Any] | None = None,
                 timeout_s: float | None = DEFAULT_TIMEOUT_S, actions: str = 'random') -> dict[str, Any]:
    """Where a vector step's time goes (:data:`PHASES`, each timed around its call; one timer costs
    about a microsecond), over ``steps`` vector steps with ``actions`` (:data:`ACTION_KINDS`), in a
    fresh process: the share of each phase in the whole and the milliseconds per vector step."""
    return run_in_fresh_process(_phases, env_id, num_envs, steps, dict(kwargs or {}), actions,
                                what=f'gym phases {env_id} x{num_envs}', timeout_s=timeout_s)


def measure_gym(env_id: str, num_envs: int, pairs: int = PAIRS, chunk: int = 5, kwargs: dict[str, Any] | None = None,
                timeout_s: float | None = DEFAULT_TIMEOUT_S, plain_steps: int = PLAIN_STEPS, actions: str = 'random') -> dict[str, Any]:
    """One run of ``env_id`` at ``num_envs`` in a fresh process, stepped with ``actions``
    (:data:`ACTION_KINDS`): ``pairs`` pairs of ``chunk`` vector steps, then a plain loop of
    ``plain_steps`` (0: none). Returns
    :func:`~internutopia.bench.paired.summarize`'s figures (``ratio``: ours over the limit, median
    of the pairs) with ``physics_share`` (and its quartiles), ``plain_physics_share`` (``nan``
    without the loop), speeds and ``written_rows_per_vector_step`` (rows the limit copied from
    ours: resets and pushes)."""
    return run_in_fresh_process(_measure, env_id, num_envs, pairs, chunk, dict(kwargs or {}), plain_steps, actions,
                                what=f'gym benchmark {env_id} x{num_envs}', timeout_s=timeout_s)


def format_phases(row: dict[str, Any]) -> str:
    """The lines of a :func:`phase_shares` row: the vector step, then each phase's share."""
    lines = [f"{row['id']} x{row['num_envs']} ({row.get('actions', 'random')} actions): {row['vector_step_ms']:.2f} ms per vector step"]
    width = max(len(label) for label in row['shares'])
    lines += [f'  {label:<{width}} {share:6.1%}' for label, share in row['shares'].items()]
    return '\n'.join(lines)


def format_gym_row(row: dict[str, Any]) -> str:
    """One progress line of a gym row."""
    return (f"{row['id']} x{row['num_envs']} ({row.get('actions', 'random')} actions): ours/limit {row['ratio']:.2f} (IQR {row['ratio_q1']:.2f}-{row['ratio_q3']:.2f}), "
            f"physics share {row['physics_share']:.2f} ({row['physics_share_q1']:.2f}-{row['physics_share_q3']:.2f}), "
            f"plain loop {_share(row['plain_physics_share'])}, "
            f"{row['env_steps_per_s']:,.0f} env-steps/s (limit {row['limit_env_steps_per_s']:,.0f}), "
            f"{row['pairs']} pairs of {row['chunk']} vector steps, {row['clean_pairs']} clean")


def run_gym(ids: list[str], num_envs: list[int], pairs: int = PAIRS, chunk: int = 5, log: Callable[[str], Any] = print,
            timeout_s: float | None = DEFAULT_TIMEOUT_S, id_kwargs: dict[str, dict[str, Any]] | None = None,
            plain_steps: int = PLAIN_STEPS, actions: str = 'random') -> list[dict[str, Any]]:
    """Measure every id at every env count (one fresh process each) with ``actions``; the rows, as
    they come. ``id_kwargs``: ``make_vec`` keyword arguments of some ids (``internutopia/Config-v0``'s ``config``)."""
    rows = []
    for env_id in ids:
        for n in num_envs:
            try:
                row = measure_gym(env_id, n, pairs, chunk, (id_kwargs or {}).get(env_id), timeout_s=timeout_s,
                                  plain_steps=plain_steps, actions=actions)
            except RuntimeError as exc:
                log(f'{env_id} x{n}: failed ({str(exc).splitlines()[0]}); row left out')
                continue
            rows.append(row)
            log(format_gym_row(row))
    return rows


def gym_markdown_table(rows: list[dict[str, Any]]) -> str:
    """The rows as docs/performance.md's table of the Gymnasium path."""
    lines = ['| id | envs | repeat | ours (env-steps/s) | limit (env-steps/s) | ours / limit (median) | pair IQR '
             '| physics share (median) | physics share, plain loop | clean pairs |',
             '|---|---:|---:|---:|---:|---:|---|---:|---:|---:|']
    for r in rows:
        lines.append(f"| {r['id']} | {r['num_envs']} | {r['action_repeat']} | {r['env_steps_per_s']:,.0f} | "
                     f"{r['limit_env_steps_per_s']:,.0f} | {r['ratio']:.2f} | {r['ratio_q1']:.2f}-{r['ratio_q3']:.2f} | "
                     f"{r['physics_share']:.2f} | {_share(r['plain_physics_share'])} | {r['clean_pairs']}/{r['pairs']} |")
    return '\n'.join(lines)


def _share(value: float) -> str:
    """A physics share as the rows print it: ``n/a`` for the plain loop's when it did not run (``nan``)."""
    return 'n/a' if value != value else f'{value:.2f}'


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    from internutopia.bench import processes
    from internutopia.bench.report import machine

    parser = argparse.ArgumentParser(prog='python -m internutopia.bench.gym_step', description=__doc__.split('\n\n')[0])
    parser.add_argument('--ids', default=','.join(DEFAULT_IDS), help=f'comma-separated ids (default {",".join(DEFAULT_IDS)})')
    parser.add_argument('--num-envs', default='64', help='comma-separated env counts (default 64)')
    parser.add_argument('--pairs', type=int, default=None,
                        help=f'timed pairs of chunks (default {PAIRS}: with 5 vector steps a chunk, a point-nav episode '
                             'of 200 vector steps ends and restarts during the run); with --ab, pairs of blocks '
                             f'(default {AB_PAIRS})')
    parser.add_argument('--chunk', type=int, default=5, help='vector steps per chunk (default 5)')
    parser.add_argument('--plain-steps', type=int, default=PLAIN_STEPS,
                        help=f'vector steps of the plain loop after the pairs (default {PLAIN_STEPS}; 0: none)')
    parser.add_argument('--timeout', type=float, default=DEFAULT_TIMEOUT_S, help='time limit of one measurement (s)')
    parser.add_argument('--config', default=None, metavar='PATH',
                        help=f'the YAML config {CONFIG_ID} runs (its make_vec config=); that id needs it')
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--phases', action='store_true',
                      help='instead of the paired rows: where a vector step\'s time goes (physics, tasks, resets, ...), '
                           'each part timed around its call over 300 vector steps')
    mode.add_argument('--ab', choices=sorted(SWITCHES),
                      help='instead of the paired rows: the vector step with this switch of the step on and off, in '
                           'alternating blocks of one process (internutopia.bench.switch_ab)')
    mode.add_argument('--fused-ab', action='store_true', help='the same as --ab fuse_steps')
    parser.add_argument('--actions', choices=ACTION_KINDS, default='random',
                        help="what the vector steps take: 'random' (uniform over the action space, the default) or "
                             "'policy' (a walking id's shipped policy on its observation, called outside the timing; "
                             'its robots walk instead of falling within a second)')
    parser.add_argument('--markdown', action='store_true', help='print the rows as a markdown table')
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object on the last line')
    args = parser.parse_args(argv)
    if args.fused_ab:
        args.ab = 'fuse_steps'
    if args.markdown and (args.phases or args.ab):
        parser.error('--markdown prints the paired rows as a table; --phases and --ab print lines of their own')
    num_envs = options.int_list(parser, '--num-envs', args.num_envs)
    if args.pairs is not None:
        options.at_least(parser, '--pairs', args.pairs)
    options.at_least(parser, '--chunk', args.chunk)
    options.positive_seconds(parser, '--timeout', args.timeout)
    if args.plain_steps < 0:
        parser.error(f'--plain-steps must be 0 (no plain loop) or more; got {args.plain_steps}')
    ids = options.checked_list(parser, '--ids', options.text_list(args.ids), what='id')
    import gymnasium as gym

    from internutopia.envs.ids import registered_ids  # (importing internutopia.envs registers the ids)

    unknown = [i for i in ids if i not in gym.registry]
    if unknown:
        parser.error(f'unknown ids {unknown}; internutopia ids: {registered_ids()}')
    if args.actions == 'policy' and args.ab:
        parser.error('--ab steps with random actions; --actions policy goes with the paired rows and --phases')
    without_policy = [i for i in ids if i not in policy_ids()] if args.actions == 'policy' else []
    if without_policy:
        parser.error(f'--actions policy needs a walking id with a shipped policy; {without_policy} have none (walking ids: {policy_ids()})')
    if (CONFIG_ID in ids) != (args.config is not None):
        parser.error(f'--config PATH goes with the id {CONFIG_ID} (the config it runs), and that id needs it')
    id_kwargs = {CONFIG_ID: {'config': os.path.abspath(args.config)}} if args.config is not None else {}
    if args.ab and id_kwargs:
        parser.error(f'--ab measures the built-in ids; {CONFIG_ID} is measured by the paired rows and --phases')
    default_to_egl(headless_only=False)
    processes.install_cleanup()
    first = machine()
    try:
        if args.ab or args.phases:  # (one fresh process per id and env count)
            measure: Callable[..., dict[str, Any]]
            ab_pairs = AB_PAIRS if args.pairs is None else args.pairs
            measure, describe = ((functools.partial(measure_switch_ab, switch=args.ab, pairs=ab_pairs), format_switch_ab) if args.ab
                                 else (phase_shares, format_phases))
            rows = []
            for env_id in ids:
                for n in num_envs:
                    if args.phases:
                        rows.append(phase_shares(env_id, n, kwargs=id_kwargs.get(env_id), timeout_s=args.timeout, actions=args.actions))
                    else:
                        rows.append(measure(env_id, n, timeout_s=args.timeout))
                    print(describe(rows[-1]), flush=True)
        else:
            pairs = PAIRS if args.pairs is None else args.pairs
            rows = run_gym(ids, num_envs, pairs, args.chunk, log=lambda text: print(text, flush=True), timeout_s=args.timeout,
                           id_kwargs=id_kwargs, plain_steps=args.plain_steps, actions=args.actions)
    finally:
        processes.kill_tracked()
        processes.uninstall_cleanup()  # (the caller's own handlers again, where main runs in its process)
    print(f'machine: {first}, load at end {machine()["load"]}')
    if args.markdown and not (args.phases or args.ab):
        print(gym_markdown_table(rows))
    if args.json:
        print(options.json_line({'machine': first, 'load_at_end': machine()['load'], 'rows': rows}))
    return rows


if __name__ == '__main__':
    options.interrupted('python -m internutopia.bench.gym_step', main)
