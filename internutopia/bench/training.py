"""Training throughput: a PPO loop on ``internutopia/H1Walk-v0``, in env-steps per second.

What an RL user gets end to end: ``gymnasium.make_vec`` of the walking H1 (``SameStep``
autoreset), the Stable-Baselines3 bridge (:func:`~internutopia.core.gym_vector.sb3_vec_env`) and
SB3's PPO with the settings of the project's walking trainer (an MLP of 256-128-64 for the actor
and the critic, ELU, ``--rollout`` env steps per env between updates, batches of 2048, 5 epochs,
``--threads`` torch threads). After one warm-up iteration it runs ``--iterations`` iterations and
times, per iteration:

- **collection**: SB3's ``collect_rollouts`` (the policy's forward pass, the env's step, the
  rollout buffer); within it, the time inside the env's ``step`` (``env share``);
- **update**: SB3's ``train`` (the gradient steps);
- **whole loop**: both.

Speeds are env steps (one env advanced by one action: ``action_repeat`` physics steps) per
second; the ``physics`` figures count the physics steps. The figures move with the machine's
load (this is a throughput, not a ratio to a limit taken side by side): read them with the load
the output records.

    python -m internutopia.bench.training                      # 64 envs, 3 iterations of 128 steps per env
    python -m internutopia.bench.training --num-envs 128 --iterations 2 --json
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

__all__ = ['main', 'measure_training']


def measure_training(env_id: str = 'internutopia/H1Walk-v0', num_envs: int = 64, rollout: int = 128, iterations: int = 3,
                     threads: int = 1, seed: int = 0) -> dict[str, Any]:
    """Run the PPO loop (see the module docstring) and return its throughput figures."""
    try:
        import torch
        from stable_baselines3 import PPO
        from stable_baselines3.common.vec_env import VecMonitor
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise SystemExit(f"the training benchmark needs the 'train' extra: pip install 'internutopia[train]' ({exc})") from None
    import gymnasium

    import internutopia.envs  # noqa: F401  (registers the ids)
    from internutopia.core.gym_vector import sb3_vec_env

    torch.set_num_threads(threads)
    vector = gymnasium.make_vec(env_id, num_envs=num_envs, autoreset_mode='SameStep')
    repeat = vector.unwrapped.action_repeat  # type: ignore[attr-defined]
    envs = VecMonitor(sb3_vec_env(vector))
    envs.seed(seed)
    model = PPO('MlpPolicy', envs, n_steps=rollout, batch_size=min(2048, rollout * num_envs), n_epochs=5, learning_rate=3e-4,
                gamma=0.99, gae_lambda=0.95, clip_range=0.2, ent_coef=0.001, vf_coef=1.0, max_grad_norm=1.0, seed=seed,
                device='cpu', verbose=0, policy_kwargs={'net_arch': {'pi': [256, 128, 64], 'vf': [256, 128, 64]},
                                                        'activation_fn': torch.nn.ELU, 'log_std_init': -0.7})
    timings = {'collect': 0.0, 'update': 0.0, 'env': 0.0}
    timing = [False]

    def timed(name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                if timing[0]:
                    timings[name] += time.perf_counter() - began
        return call

    model.collect_rollouts = timed('collect', model.collect_rollouts)  # type: ignore[method-assign]
    model.train = timed('update', model.train)  # type: ignore[method-assign]
    envs.step_wait = timed('env', envs.step_wait)  # type: ignore[method-assign]
    per_iteration = rollout * num_envs
    model.learn(total_timesteps=per_iteration)  # warm-up: compiled kernels, torch's first passes, episodes under way
    timing[0] = True
    began = time.perf_counter()
    model.learn(total_timesteps=per_iteration * iterations, reset_num_timesteps=False)
    wall = time.perf_counter() - began
    envs.close()
    steps = per_iteration * iterations
    loop = timings['collect'] + timings['update']
    return {'id': env_id, 'num_envs': num_envs, 'rollout': rollout, 'iterations': iterations, 'threads': threads,
            'action_repeat': repeat, 'env_steps': steps,
            'collection_env_steps_per_s': steps / timings['collect'],
            'loop_env_steps_per_s': steps / loop, 'wall_env_steps_per_s': steps / wall,
            'env_only_env_steps_per_s': steps / timings['env'],
            'env_share_of_collection': timings['env'] / timings['collect'], 'update_share_of_loop': timings['update'] / loop,
            'collection_physics_steps_per_s': steps * repeat / timings['collect'],
            'collect_s': timings['collect'], 'update_s': timings['update'], 'env_s': timings['env'], 'wall_s': wall}


def format_training(row: dict[str, Any]) -> str:
    """The figures as a few lines."""
    return (f"{row['id']} x{row['num_envs']}, {row['iterations']} iterations of {row['rollout']} steps per env "
            f"({row['env_steps']:,} env steps, torch threads {row['threads']}):\n"
            f"  collection {row['collection_env_steps_per_s']:,.0f} env-steps/s (env step alone {row['env_only_env_steps_per_s']:,.0f}; "
            f"the env is {row['env_share_of_collection']:.0%} of collection)\n"
            f"  whole loop {row['loop_env_steps_per_s']:,.0f} env-steps/s (update {row['update_share_of_loop']:.0%} of it)")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import os

    from internutopia.bench.report import machine

    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--id', default='internutopia/H1Walk-v0', help='the Gymnasium id (default internutopia/H1Walk-v0)')
    parser.add_argument('--num-envs', type=int, default=64, help='envs in the vector env (default 64)')
    parser.add_argument('--rollout', type=int, default=128, help='env steps per env between updates (default 128)')
    parser.add_argument('--iterations', type=int, default=3, help='timed PPO iterations after one warm-up (default 3)')
    parser.add_argument('--threads', type=int, default=1, help="torch threads (default 1, as the walking trainer's)")
    parser.add_argument('--json', action='store_true', help='print the figures as one JSON object on the last line')
    args = parser.parse_args(argv)
    for option in ('num_envs', 'rollout', 'iterations', 'threads'):
        if getattr(args, option) < 1:
            parser.error(f'--{option.replace("_", "-")} must be at least 1')
    os.environ.setdefault('MUJOCO_GL', 'egl')
    first = machine()
    row = measure_training(args.id, args.num_envs, args.rollout, args.iterations, args.threads)
    row.update({'machine': first, 'load_at_end': machine()['load'], 'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})
    print(format_training(row))
    print(f"machine: {first}, load at end {row['load_at_end']}")
    if args.json:
        print(json.dumps(row))
    return row


if __name__ == '__main__':
    main()
