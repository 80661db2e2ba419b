"""Training throughput: PPO loops on ``internutopia/H1Walk-v0``, in env-steps per second, trainers side by side.

What an RL user gets end to end: ``gymnasium.make_vec`` of the walking H1 (``SameStep``
autoreset) and a PPO library with the settings of the project's walking trainer
(:mod:`internutopia_extension.robots.h1_locomotion.policy.ppo_settings`: an MLP of 256-128-64 for
the actor and the critic, ELU, ``--rollout`` env steps per env between updates, batches of 2048,
5 epochs). ``--trainer`` names the libraries compared, one configuration after the other in one
run (``--rounds`` times, alternating, so that a change of the machine's load touches each):

- ``sb3``: Stable-Baselines3's PPO over the SB3 bridge (:func:`~internutopia.core.gym_vector.sb3_vec_env`);
- ``rsl_rl``: rsl-rl's PPO over :class:`~internutopia.core.gym_vector.rsl_rl_env.RslRlVecEnv`.

``--update-threads 1,2`` also compares the torch threads of the update (the physics is idle
then; the collection keeps ``--threads``; OpenMP's waiting threads sleep unless ``--openmp-wait
active``: spinning ones made a 2-thread update many times slower on a busy machine), and ``--mirror-loss W`` adds each library's mirror
loss as the walking trainer runs it (SB3: a pass after each update; rsl-rl: its symmetry
extension, in every minibatch). After one warm-up iteration each configuration runs
``--iterations`` iterations and times:

- **collection**: the rollout (the policy's forward pass, the env's step, the library's storage,
  the returns); within it, the time inside the env's ``step`` (``env share``);
- **update**: the gradient steps (wall and CPU seconds per iteration: on a loaded machine the CPU
  seconds of a one-thread update are the steadier figure);
- **whole loop**: both.

Speeds are env steps (one env advanced by one action: ``action_repeat`` physics steps) per
second. The figures move with the machine's load (a throughput, not a ratio to a limit taken
side by side): compare the configurations of one run, and read them with the load it records.

    python -m internutopia.bench.training                                   # SB3, 64 envs, 3 iterations
    python -m internutopia.bench.training --trainer sb3,rsl_rl --update-threads 1,2 --json
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from typing import Any

__all__ = ['TRAINERS', 'main', 'measure_training']

#: The PPO libraries the benchmark drives.
TRAINERS = ('sb3', 'rsl_rl')


def _timed(timings: dict[str, float], timing: list[bool], name: str, function: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        began, began_cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            if timing[0]:
                timings[name] += time.perf_counter() - began
                timings[f'{name}_cpu'] = timings.get(f'{name}_cpu', 0.0) + time.process_time() - began_cpu
    return call


def _gait_of(env_id: str) -> Any:
    """The gait module (mirror maps) of the walking robot that trains on ``env_id``."""
    import importlib

    from internutopia_extension.robots.h1_locomotion.policy.walking_robots import ROBOTS

    for robot in ROBOTS.values():
        if robot.env_id == env_id:
            return importlib.import_module(robot.gait)
    raise ValueError(f'--mirror-loss needs a walking robot\'s id; {env_id!r} is none of {sorted(r.env_id for r in ROBOTS.values())}')


def _sb3_loop(vector: Any, rollout: int, threads: int, update_threads: int, mirror_loss: float, seed: int,
              timings: dict[str, float], timing: list[bool]) -> tuple[Any, Any]:
    """SB3's PPO over ``vector`` with its phases timed; returns ``(learn(steps), close())``."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    from internutopia.core.gym_vector import sb3_vec_env
    from internutopia_extension.robots.h1_locomotion.policy.mirror import mirrored_ppo
    from internutopia_extension.robots.h1_locomotion.policy.ppo_settings import sb3_ppo_kwargs
    from internutopia_extension.robots.h1_locomotion.policy.sb3_trainer import quiet_logger

    envs = VecMonitor(sb3_vec_env(vector))
    envs.seed(seed)
    model: Any = (mirrored_ppo() if mirror_loss else PPO)('MlpPolicy', envs, **sb3_ppo_kwargs(rollout, vector.num_envs, 3e-4, seed))
    if mirror_loss:
        model.mirror_weight, model.gait_module = mirror_loss, _gait_of(vector.spec.id)
    model.set_logger(quiet_logger())  # no /tmp/SB3-<date> folder per learn()
    train = model.train

    def threaded_train() -> None:
        torch.set_num_threads(update_threads)
        try:
            train()
        finally:
            torch.set_num_threads(threads)

    model.collect_rollouts = _timed(timings, timing, 'collect', model.collect_rollouts)
    model.train = _timed(timings, timing, 'update', threaded_train)
    envs.step_wait = _timed(timings, timing, 'env', envs.step_wait)  # type: ignore[method-assign]

    def learn(steps: int) -> None:
        model.learn(total_timesteps=steps, reset_num_timesteps=False)

    return learn, envs.close


def _rsl_rl_loop(vector: Any, rollout: int, threads: int, update_threads: int, mirror_loss: float, seed: int,
                 timings: dict[str, float], timing: list[bool]) -> tuple[Any, Any]:
    """rsl-rl's PPO over ``vector`` with its phases timed; returns ``(learn(steps), close())``."""
    from internutopia.core.gym_vector.rsl_rl_env import RslRlVecEnv
    from internutopia_extension.robots.h1_locomotion.policy.rsl_rl_trainer import make_runner, threads_during_update

    envs = RslRlVecEnv(vector, seed=seed)
    runner = make_runner(envs, rollout, 3e-4, mirror_loss, _gait_of(vector.spec.id) if mirror_loss else None, seed)
    threads_during_update(runner, update_threads, threads)
    runner.alg.update = _timed(timings, timing, 'update', runner.alg.update)
    envs.env.step = _timed(timings, timing, 'env', envs.env.step)  # type: ignore[method-assign]

    def learn(steps: int) -> None:
        update_before = timings['update']
        began = time.perf_counter()
        runner.learn(num_learning_iterations=steps // (rollout * envs.num_envs))
        if timing[0]:  # collection: the loop less the update (rsl-rl computes the returns in it, as SB3 does)
            timings['collect'] += time.perf_counter() - began - (timings['update'] - update_before)

    return learn, envs.close


def measure_training(trainer: str = 'sb3', env_id: str = 'internutopia/H1Walk-v0', num_envs: int = 64, rollout: int = 128,
                     iterations: int = 3, threads: int = 1, update_threads: int | None = None, mirror_loss: float = 0.0,
                     seed: int = 0) -> dict[str, Any]:
    """Run one PPO loop (see the module docstring) and return its throughput figures."""
    if trainer not in TRAINERS:
        raise ValueError(f'unknown trainer {trainer!r}; trainers: {list(TRAINERS)}')
    try:
        import torch

        if trainer == 'rsl_rl':
            import rsl_rl  # noqa: F401
        else:
            import stable_baselines3  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise SystemExit(f"the training benchmark needs the 'train' extra: pip install 'internutopia[train]' ({exc})") from None
    import gymnasium

    import internutopia.envs  # noqa: F401  (registers the ids)

    update_threads = update_threads or threads
    torch.set_num_threads(threads)
    vector = gymnasium.make_vec(env_id, num_envs=num_envs, autoreset_mode='SameStep')
    repeat = vector.unwrapped.action_repeat  # type: ignore[attr-defined]
    timings = {'collect': 0.0, 'update': 0.0, 'env': 0.0}
    timing = [False]
    loop = _sb3_loop if trainer == 'sb3' else _rsl_rl_loop
    learn, close = loop(vector, rollout, threads, update_threads, mirror_loss, seed, timings, timing)
    per_iteration = rollout * num_envs
    try:
        learn(per_iteration)  # warm-up: compiled kernels, torch's first passes, episodes under way
        timing[0] = True
        began = time.perf_counter()
        learn(per_iteration * iterations)
        wall = time.perf_counter() - began
    finally:
        close()
        torch.set_num_threads(threads)
    steps = per_iteration * iterations
    whole = timings['collect'] + timings['update']
    return {'trainer': trainer, 'id': env_id, 'num_envs': num_envs, 'rollout': rollout, 'iterations': iterations,
            'threads': threads, 'update_threads': update_threads, 'mirror_loss': mirror_loss, 'action_repeat': repeat,
            'env_steps': steps, 'collection_env_steps_per_s': steps / timings['collect'],
            'loop_env_steps_per_s': steps / whole, 'wall_env_steps_per_s': steps / wall,
            'env_only_env_steps_per_s': steps / timings['env'],
            'env_share_of_collection': timings['env'] / timings['collect'], 'update_share_of_loop': timings['update'] / whole,
            'update_s_per_iteration': timings['update'] / iterations,
            # CPU seconds of the process (every thread) per update: the work, less what the load adds
            # to the wall clock (a 1-thread update's CPU time is its work; more threads add their spinning).
            'update_cpu_s_per_iteration': timings.get('update_cpu', float('nan')) / iterations,
            'collection_physics_steps_per_s': steps * repeat / timings['collect'],
            'collect_s': timings['collect'], 'update_s': timings['update'], 'env_s': timings['env'], 'wall_s': wall}


def format_training(row: dict[str, Any]) -> str:
    """The figures of one configuration as a few lines."""
    mirror = f", mirror loss {row['mirror_loss']:g}" if row['mirror_loss'] else ''
    return (f"{row['trainer']}: {row['id']} x{row['num_envs']}, {row['iterations']} iterations of {row['rollout']} steps per env "
            f"({row['env_steps']:,} env steps, torch threads {row['threads']}, update threads {row['update_threads']}{mirror}):\n"
            f"  collection {row['collection_env_steps_per_s']:,.0f} env-steps/s (env step alone {row['env_only_env_steps_per_s']:,.0f}; "
            f"the env is {row['env_share_of_collection']:.0%} of collection)\n"
            f"  whole loop {row['loop_env_steps_per_s']:,.0f} env-steps/s (update {row['update_s_per_iteration']:.2f} s per "
            f"iteration, {row['update_cpu_s_per_iteration']:.2f} CPU s, {row['update_share_of_loop']:.0%} of the loop)")


def _choices(parser: argparse.ArgumentParser, flag: str, text: str, valid: tuple[str, ...] | None = None) -> list[str]:
    items = [item.strip() for item in text.split(',') if item.strip()]
    if not items:
        parser.error(f'{flag} needs at least one value')
    for item in items:
        if valid is not None and item not in valid:
            parser.error(f'{flag}: unknown {item!r}; valid: {list(valid)}')
    return items


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    import os
    import sys

    from internutopia.bench.report import machine

    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--trainer', default='sb3', help=f'comma-separated PPO libraries to compare, of {list(TRAINERS)} (default sb3)')
    parser.add_argument('--id', default='internutopia/H1Walk-v0', help='the Gymnasium id (default internutopia/H1Walk-v0)')
    parser.add_argument('--num-envs', type=int, default=64, help='envs in the vector env (default 64)')
    parser.add_argument('--rollout', type=int, default=128, help='env steps per env between updates (default 128)')
    parser.add_argument('--iterations', type=int, default=3, help='timed PPO iterations after one warm-up (default 3)')
    parser.add_argument('--threads', type=int, default=1, help="torch threads while collecting (default 1, as the walking trainer's)")
    parser.add_argument('--update-threads', default=None, help='comma-separated torch threads of the update to compare (default: --threads)')
    parser.add_argument('--mirror-loss', type=float, default=0.0, help="the walking trainer's mirror loss at this weight (default 0: off)")
    parser.add_argument('--rounds', type=int, default=1, help='times every configuration runs, alternating (default 1)')
    parser.add_argument('--openmp-wait', choices=('passive', 'active'), default='passive',
                        help="OpenMP's waiting threads sleep (passive, the trainer's choice) or spin (active, OpenMP's default)")
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON list on the last line')
    args = parser.parse_args(argv)
    for option in ('num_envs', 'rollout', 'iterations', 'threads', 'rounds'):
        if getattr(args, option) < 1:
            parser.error(f'--{option.replace("_", "-")} must be at least 1')
    if not args.mirror_loss >= 0:
        parser.error(f'--mirror-loss takes a weight >= 0; got {args.mirror_loss}')
    trainers = _choices(parser, '--trainer', args.trainer, TRAINERS)
    update_threads = [args.threads]
    if args.update_threads is not None:
        texts = _choices(parser, '--update-threads', args.update_threads)
        if not all(t.isdigit() and int(t) >= 1 for t in texts):
            parser.error(f'--update-threads takes thread counts >= 1; got {args.update_threads!r}')
        update_threads = [int(t) for t in texts]
    os.environ.setdefault('MUJOCO_GL', 'egl')
    # Before torch loads (internutopia_extension.robots.h1_locomotion.policy.torch_threads explains why).
    if 'torch' not in sys.modules:
        os.environ['OMP_WAIT_POLICY'] = args.openmp_wait.upper()
    openmp_wait = os.environ.get('OMP_WAIT_POLICY', 'unset (torch loaded before)').lower()
    first = machine()
    rows = []
    for round_index, (trainer, threads) in itertools.product(range(args.rounds), itertools.product(trainers, update_threads)):
        row = measure_training(trainer, args.id, args.num_envs, args.rollout, args.iterations, args.threads, threads,
                               args.mirror_loss)
        row.update({'round': round_index, 'openmp_wait': openmp_wait, 'load': machine()['load'], 'date': time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())})
        print(format_training(row), flush=True)
        rows.append(row)
    print(f"machine: {first}, load at end {machine()['load']}, OpenMP waits: {openmp_wait}")
    if args.json:
        print(json.dumps(rows))
    return rows


if __name__ == '__main__':
    main()
