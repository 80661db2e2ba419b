"""Train PPO (Stable-Baselines3) on ``internutopia/FrankaReach-v0``: the Panda's tool frame to a marker.

16 env slots of one MuJoCo world; the action combines the arm and the gripper
(``[x, y, z, qw, qx, qy, qz, grip]``, rescaled to [-1, 1]; the orientation is pinned pointing
down), 10 Hz. The policy sees the arm's joints, the tool frame and the marker. The reward is the
task's shaped reward (``reach``: ``1 - tanh(5 d)`` per physics step, plus ``success``); an episode
runs 2 s and succeeds when the tool frame is within 4 cm of the marker at its end (it does not end on
success: the policy must stay there).

A random policy and the untrained policy are evaluated on held-out episodes, then the policy every
``--eval-every`` steps. The curve is printed and saved as ``learning_curve.png`` and
``learning_curve.json``.

Install the ``train`` extra; run: ``python examples/train_franka_reach.py`` (a few minutes on 2 CPU cores).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

EVAL_SEED = 12345


def make_envs(num_envs: int, autoreset_mode: str) -> Any:
    """The reach vector env, actions rescaled to [-1, 1]."""
    import gymnasium as gym

    import internutopia  # noqa: F401  (registers the Gymnasium ids)

    envs = gym.make_vec('internutopia/FrankaReach-v0', num_envs=num_envs, autoreset_mode=autoreset_mode)
    unit = np.ones(tuple(envs.single_action_space.shape or ()), dtype=np.float32)
    return gym.wrappers.vector.RescaleAction(envs, min_action=-unit, max_action=unit)


def evaluate(envs: Any, policy: Callable[[np.ndarray], np.ndarray], episodes: int, seed: int = EVAL_SEED) -> dict[str, float]:
    """Success rate and mean episode length in physics steps (``info['steps']``; an env step is 12)
    over episodes ``0 .. episodes-1`` of the seeded stream."""
    obs, _ = envs.reset(seed=seed)
    results: dict[int, tuple[float, float]] = {}
    while len(results) < episodes:
        obs, _, terminated, truncated, info = envs.step(policy(obs))
        for slot in np.flatnonzero(terminated | truncated):
            index = int(info['episode_index'][slot])
            if index < episodes:
                results[index] = (float(info['metrics']['success'][slot]), float(info['steps'][slot]))
    return {'success': float(np.mean([r[0] for r in results.values()])), 'steps': float(np.mean([r[1] for r in results.values()]))}


def progress_line(point: dict[str, Any]) -> str:
    """A line of the learning curve: env steps trained, held-out success, mean held-out episode
    length (physics steps, as ``info['steps']`` counts them), minutes so far."""
    return (f"steps {point['steps']:>7d}  eval success {point['eval_success']:6.1%}  mean episode "
            f"{point['eval_steps']:.0f} physics steps  {point['minutes']:5.1f} min")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=81_920, help='PPO env steps (each = 12 physics steps)')
    parser.add_argument('--num-envs', type=int, default=16)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--eval-episodes', type=int, default=32)
    parser.add_argument('--eval-every', type=int, default=4096)
    parser.add_argument('--out', default='results/ppo_franka_reach')
    parser.add_argument('--threads', type=int, default=1, help='torch threads (default 1: the env uses the other core)')
    parser.add_argument('--learning-rate', type=float, default=3e-4)
    args = parser.parse_args(argv)
    for flag, count in (('--steps', args.steps), ('--num-envs', args.num_envs), ('--eval-episodes', args.eval_episodes),
                        ('--eval-every', args.eval_every), ('--threads', args.threads)):
        if count < 1:
            parser.error(f'{flag} must be >= 1; got {count}')
    if not args.learning_rate > 0:
        parser.error(f'--learning-rate must be > 0; got {args.learning_rate}')
    try:  # (the results are written at the end: a folder they cannot go to is refused now)
        os.makedirs(args.out, exist_ok=True)
    except OSError as exc:
        parser.error(f'--out {args.out}: cannot be created: {exc.strerror or exc}')

    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from internutopia.core.gym_vector import sb3_vec_env

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    eval_envs = make_envs(args.num_envs, 'NextStep')
    rng = np.random.default_rng(args.seed)
    action_size = eval_envs.single_action_space.shape[0]
    random_eval = evaluate(eval_envs, lambda obs: rng.uniform(-1.0, 1.0, size=(len(obs), action_size)), args.eval_episodes)
    print(f"random policy: success {random_eval['success']:.1%}", flush=True)

    train_envs = VecNormalize(VecMonitor(sb3_vec_env(make_envs(args.num_envs, 'SameStep'))), norm_obs=True,
                              norm_reward=True, gamma=0.95)
    train_envs.seed(args.seed)
    model = PPO('MlpPolicy', train_envs, n_steps=64, batch_size=256, n_epochs=10, learning_rate=args.learning_rate, gamma=0.95,
                gae_lambda=0.95, clip_range=0.2, ent_coef=0.0, policy_kwargs={'net_arch': [64, 64], 'log_std_init': -1.0}, seed=args.seed,
                device='cpu', verbose=0)
    # SB3's default logger leaves an empty /tmp/SB3-<date> folder per run; this one writes nothing.
    model.set_logger(Logger(folder=None, output_formats=[]))

    def trained_policy(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(train_envs.normalize_obs(obs), deterministic=True)
        return action

    first = evaluate(eval_envs, trained_policy, args.eval_episodes)
    curve = [{'steps': 0, 'eval_success': first['success'], 'eval_steps': first['steps'],
              'minutes': (time.perf_counter() - started) / 60}]
    print(f"steps {0:>7d}  eval success {first['success']:6.1%}  (untrained)", flush=True)

    class Progress(BaseCallback):
        """Evaluate on the held-out episodes every ``eval_every`` steps."""

        def __init__(self) -> None:
            super().__init__()
            self.next_eval = args.eval_every

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            if self.num_timesteps < self.next_eval:
                return
            self.next_eval += args.eval_every
            result = evaluate(eval_envs, trained_policy, args.eval_episodes)
            point = {'steps': self.num_timesteps, 'eval_success': result['success'], 'eval_steps': result['steps'],
                     'minutes': (time.perf_counter() - started) / 60}
            curve.append(point)
            print(progress_line(point), flush=True)

    model.learn(total_timesteps=args.steps, callback=Progress())
    final = evaluate(eval_envs, trained_policy, args.eval_episodes)
    minutes = (time.perf_counter() - started) / 60
    if curve[-1]['steps'] != model.num_timesteps:
        curve.append({'steps': model.num_timesteps, 'eval_success': final['success'], 'eval_steps': final['steps'],
                      'minutes': minutes})
    summary = {'random_success': random_eval['success'], 'trained_success': final['success'],
               'trained_mean_steps': final['steps'], 'steps': int(model.num_timesteps), 'minutes': round(minutes, 2),
               'eval_episodes': args.eval_episodes, 'num_envs': args.num_envs, 'curve': curve}
    print(f"\nrandom policy : success {random_eval['success']:6.1%}")
    print(f"trained policy: success {final['success']:6.1%} ({summary['steps']} steps, {minutes:.1f} min on CPU)")
    with open(os.path.join(args.out, 'learning_curve.json'), 'w', encoding='utf-8') as stream:
        json.dump(summary, stream, indent=2)
    plot(summary, os.path.join(args.out, 'learning_curve.png'))
    eval_envs.close()
    train_envs.close()
    return summary


def plot(summary: dict[str, Any], path: str) -> None:
    """Success rate against env steps, with the random policy's."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    curve = summary['curve']
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    ax.plot([p['steps'] for p in curve], [100 * p['eval_success'] for p in curve], 'o-', color='tab:blue',
            label=f"PPO, held-out episodes ({summary['eval_episodes']}, deterministic)")
    ax.axhline(100 * summary['random_success'], color='tab:red', linestyle=':',
               label=f"random policy ({100 * summary['random_success']:.1f}%)")
    ax.set_xlabel(f"env steps (10 Hz actions, {summary['num_envs']} slots in one world)")
    ax.set_ylabel('success rate (%)')
    ax.set_ylim(-2, 102)
    ax.set_title(f"Franka reach, PPO on CPU: {100 * summary['trained_success']:.0f}% success "
                 f"({summary['steps']:,} steps, {summary['minutes']:.1f} min)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(loc='center right', fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == '__main__':
    main()
