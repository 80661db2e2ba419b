"""A PPO loop on ``internutopia/H1Walk-v0`` through the public API only, to compare trees of the project.

:mod:`internutopia.bench.training` measures the walking trainer as it is now (its settings
module, its trainers). This script needs nothing but what every version of the project since the
Gymnasium ids has: ``gymnasium.make_vec``, ``internutopia.core.gym_vector.sb3_vec_env`` and
Stable-Baselines3's PPO with the walking trainer's network and batch settings. So one file times
any tree: run it with ``PYTHONPATH`` at an extracted older tree, then at this one, alternately,
and the ratio of the two is the speed-up of the code between them, on the same machine and load::

    mkdir -p /tmp/old && git archive ce83f66 | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python internutopia/bench/ppo_public.py --update-threads 1 --openmp-wait active
    python internutopia/bench/ppo_public.py            # this tree, the trainer's defaults now

It prints one JSON line: env steps per second of the collection (rollouts), of the update and of
the whole loop, over ``--iterations`` timed iterations after one warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--num-envs', type=int, default=64)
    parser.add_argument('--rollout', type=int, default=128, help='env steps per env between updates')
    parser.add_argument('--iterations', type=int, default=3, help='timed iterations (after one warm-up)')
    parser.add_argument('--update-threads', type=int, default=2, help='torch threads of the update (collection: 1)')
    parser.add_argument('--openmp-wait', choices=('passive', 'active'), default='passive',
                        help="OpenMP's waiting policy (passive: the walking trainer's now; active: the library default)")
    args = parser.parse_args(argv)
    if args.openmp_wait == 'passive':
        os.environ['OMP_WAIT_POLICY'] = 'PASSIVE'  # (read when torch loads OpenMP)
    import gymnasium
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    import internutopia
    import internutopia.envs  # noqa: F401  (registers the ids)
    from internutopia.core.gym_vector import sb3_vec_env

    torch.set_num_threads(1)
    envs = sb3_vec_env(gymnasium.make_vec('internutopia/H1Walk-v0', num_envs=args.num_envs, autoreset_mode='SameStep'))
    model = PPO('MlpPolicy', envs, n_steps=args.rollout, batch_size=min(2048, args.rollout * args.num_envs), n_epochs=5,
                gamma=0.99, gae_lambda=0.95, clip_range=0.2, ent_coef=0.001, vf_coef=1.0, device='cpu', seed=0,
                policy_kwargs={'net_arch': {'pi': [256, 128, 64], 'vf': [256, 128, 64]},
                               'activation_fn': torch.nn.ELU, 'log_std_init': -0.7})
    seconds = {'collect': 0.0, 'update': 0.0}
    counting = [False]
    collect, update = model.collect_rollouts, model.train

    def timed_collect(*a, **k):  # (SB3 calls these by name on the model)
        began = time.perf_counter()
        try:
            return collect(*a, **k)
        finally:
            if counting[0]:
                seconds['collect'] += time.perf_counter() - began

    def timed_update() -> None:
        torch.set_num_threads(args.update_threads)
        began = time.perf_counter()
        try:
            update()
        finally:
            torch.set_num_threads(1)
            if counting[0]:
                seconds['update'] += time.perf_counter() - began

    model.collect_rollouts, model.train = timed_collect, timed_update  # type: ignore[method-assign]
    # (SB3's own logger class, as every tree's trainer could use it: its default makes an empty
    # /tmp/SB3-<date> folder on every learn(), which no run should leave behind)
    model.set_logger(Logger(folder=None, output_formats=[]))
    per_iteration = args.rollout * args.num_envs
    model.learn(per_iteration)  # warm-up: compiled kernels, first episodes
    counting[0] = True
    model.learn(per_iteration * args.iterations, reset_num_timesteps=False)
    steps = per_iteration * args.iterations
    total = seconds['collect'] + seconds['update']
    print(json.dumps({'tree': os.path.dirname(os.path.dirname(os.path.abspath(internutopia.__file__))),
                      'collect_steps_per_s': steps / seconds['collect'], 'update_s_per_iteration': seconds['update'] / args.iterations,
                      'loop_steps_per_s': steps / total, 'update_threads': args.update_threads, 'openmp_wait': args.openmp_wait,
                      'load': os.getloadavg()[0], 'python': sys.version.split()[0]}), flush=True)
    envs.close()


if __name__ == '__main__':
    main()
