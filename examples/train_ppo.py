"""Train PPO (Stable-Baselines3) to drive the jetbot to point goals, on CPU, across 16 env slots.

All 16 envs are slots of one MuJoCo world (``gymnasium.make_vec('internutopia/JetbotPointNav-v0')``
builds the same env). The policy sees the goal in the robot's frame (``goal_vector``), the distance
to it and the wheel speeds, and commands ``move_by_speed = [forward m/s, yaw rad/s]`` at 10 Hz.
Goals are sampled 1-3 m away on flat ground; an episode succeeds when the robot gets within 0.3 m
of the goal within 20 s.

Before training, a random policy is evaluated on held-out episodes; during training the policy is
evaluated on the same episodes every ``--eval-every`` steps. The example prints the learning curve,
saves it as ``learning_curve.png`` (success rate against steps) and ``learning_curve.json``, and
saves the model and its observation normalisation.

Install: ``pip install torch==2.13.0`` (the CPU wheel) first, then ``pip install -e '.[train]'``.
Run: ``python examples/train_ppo.py`` (a few minutes on 2 CPU cores; ``--steps 8192`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

#: What the policy observes (see internutopia.core.gym_vector.ObsLayout).
OBS_KEYS = ['goal_vector', 'task.distance_to_goal', 'robot.joint_velocities']
EVAL_SEED = 12345


def make_envs(num_envs: int, autoreset_mode: str) -> Any:
    """The jetbot point-nav vector env, actions rescaled to [-1, 1]."""
    import gymnasium as gym

    import internutopia  # noqa: F401  (registers the Gymnasium ids)

    envs = gym.make_vec('internutopia/JetbotPointNav-v0', num_envs=num_envs, obs_keys=OBS_KEYS,
                        autoreset_mode=autoreset_mode)
    unit = np.ones(tuple(envs.single_action_space.shape or ()), dtype=np.float32)
    return gym.wrappers.vector.RescaleAction(envs, min_action=-unit, max_action=unit)


def evaluate(envs: Any, policy: Callable[[np.ndarray], np.ndarray], episodes: int, seed: int = EVAL_SEED) -> dict[str, float]:
    """Run episodes ``0 .. episodes-1`` of the seeded episode stream with ``policy``; mean metrics.

    Every evaluation with the same seed runs the same episodes (start poses and goals).
    """
    obs, _ = envs.reset(seed=seed)
    results: dict[int, dict[str, float]] = {}
    while len(results) < episodes:
        obs, _, terminated, truncated, info = envs.step(policy(obs))
        for slot in np.flatnonzero(terminated | truncated):
            index = int(info['episode_index'][slot])
            if index < episodes:
                metrics = info['metrics']
                results[index] = {k: float(metrics[k][slot]) for k in ('success', 'spl', 'distance_to_goal')}
                results[index]['steps'] = float(info['steps'][slot])
    return {k: float(np.mean([r[k] for r in results.values()])) for k in ('success', 'spl', 'distance_to_goal', 'steps')}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=60_000, help='PPO env steps (each = 6 physics steps; default 60000)')
    parser.add_argument('--num-envs', type=int, default=16, help='env slots (default 16)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--eval-episodes', type=int, default=64, help='held-out episodes per evaluation (default 64)')
    parser.add_argument('--eval-every', type=int, default=4096, help='evaluate every N steps (default 4096)')
    parser.add_argument('--out', default='results/ppo_jetbot', help='output folder (default results/ppo_jetbot)')
    parser.add_argument('--threads', type=int, default=1, help='torch threads (default 1: the env uses the other core)')
    args = parser.parse_args(argv)
    for flag, count in (('--steps', args.steps), ('--num-envs', args.num_envs), ('--eval-episodes', args.eval_episodes),
                        ('--eval-every', args.eval_every), ('--threads', args.threads)):
        if count < 1:
            parser.error(f'{flag} must be >= 1; got {count}')
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
    random_policy = lambda obs: rng.uniform(-1.0, 1.0, size=(len(obs), 2))  # noqa: E731
    random_eval = evaluate(eval_envs, random_policy, args.eval_episodes)
    print(f"random policy: success {random_eval['success']:.1%}, SPL {random_eval['spl']:.3f} "
          f"on {args.eval_episodes} held-out episodes", flush=True)

    train_envs = VecNormalize(VecMonitor(sb3_vec_env(make_envs(args.num_envs, 'SameStep'))), norm_obs=True,
                              norm_reward=True, gamma=0.99)
    train_envs.seed(args.seed)
    model = PPO('MlpPolicy', train_envs, n_steps=128, batch_size=512, n_epochs=10, learning_rate=3e-4, gamma=0.99,
                gae_lambda=0.95, clip_range=0.2, ent_coef=0.0, policy_kwargs={'net_arch': [64, 64]}, seed=args.seed,
                device='cpu', verbose=0)
    # SB3's default logger leaves an empty /tmp/SB3-<date> folder per run; this one writes nothing.
    model.set_logger(Logger(folder=None, output_formats=[]))

    def trained_policy(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(train_envs.normalize_obs(obs), deterministic=True)
        return action

    untrained = evaluate(eval_envs, trained_policy, args.eval_episodes)
    curve: list[dict[str, float]] = [{'steps': 0, 'eval_success': untrained['success'], 'eval_spl': untrained['spl'],
                                      'train_success': float('nan'), 'minutes': (time.perf_counter() - started) / 60}]
    print(f"steps {0:>7d}  eval success {untrained['success']:6.1%}  SPL {untrained['spl']:.3f}  (untrained policy)", flush=True)

    class Progress(BaseCallback):
        """Evaluate on the held-out episodes every ``eval_every`` steps; print a line each time."""

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
            buffer = list(model.ep_success_buffer or ())
            point = {'steps': self.num_timesteps, 'eval_success': result['success'], 'eval_spl': result['spl'],
                     'train_success': float(np.mean(buffer)) if buffer else float('nan'),
                     'minutes': (time.perf_counter() - started) / 60}
            curve.append(point)
            print(progress_line(point), flush=True)

    model.learn(total_timesteps=args.steps, callback=Progress())
    train_minutes = (time.perf_counter() - started) / 60
    final = evaluate(eval_envs, trained_policy, args.eval_episodes)
    if curve[-1]['steps'] != model.num_timesteps:
        curve.append({'steps': model.num_timesteps, 'eval_success': final['success'], 'eval_spl': final['spl'],
                      'train_success': float(np.mean(model.ep_success_buffer)) if model.ep_success_buffer else float('nan'),
                      'minutes': train_minutes})
    summary = {
        'random_success': random_eval['success'], 'random_spl': random_eval['spl'],
        'trained_success': final['success'], 'trained_spl': final['spl'],
        'trained_mean_steps': final['steps'], 'steps': int(model.num_timesteps),
        'physics_steps': int(model.num_timesteps) * 6, 'minutes': round(train_minutes, 2),
        'eval_episodes': args.eval_episodes, 'num_envs': args.num_envs, 'curve': curve,
    }
    print(f"\nrandom policy : success {random_eval['success']:6.1%}  SPL {random_eval['spl']:.3f}")
    print(f"trained policy: success {final['success']:6.1%}  SPL {final['spl']:.3f}  "
          f"({summary['steps']} steps, {summary['minutes']:.1f} min on CPU)")

    with open(os.path.join(args.out, 'learning_curve.json'), 'w', encoding='utf-8') as stream:
        # NaN (no training episode had ended yet) is written as null: NaN is not JSON, and strict readers refuse it.
        json.dump(without_nan(summary), stream, indent=2, allow_nan=False)
    model.save(os.path.join(args.out, 'model.zip'))
    train_envs.save(os.path.join(args.out, 'vecnormalize.pkl'))
    plot(summary, os.path.join(args.out, 'learning_curve.png'))
    print(f"saved {args.out}/learning_curve.png, learning_curve.json, model.zip, vecnormalize.pkl")
    eval_envs.close()
    train_envs.close()
    return summary


def progress_line(point: dict[str, Any]) -> str:
    """A line of the learning curve; the training success (over the last 100 training episodes) is
    ``n/a`` until a training episode has ended."""
    train = point['train_success']
    train_text = '   n/a' if np.isnan(train) else f'{train:6.1%}'
    return (f"steps {point['steps']:>7d}  eval success {point['eval_success']:6.1%}  SPL {point['eval_spl']:.3f}  "
            f"train success (last 100) {train_text}  {point['minutes']:5.1f} min")


def without_nan(value: Any) -> Any:
    """``value`` (dicts, lists, numbers) with every NaN replaced by ``None``."""
    if isinstance(value, dict):
        return {key: without_nan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_nan(item) for item in value]
    return None if isinstance(value, float) and np.isnan(value) else value


def plot(summary: dict[str, Any], path: str) -> None:
    """Success rate against env steps: held-out evaluations, training episodes, the random policy."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    curve = summary['curve']
    steps = [p['steps'] for p in curve]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    ax.plot(steps, [100 * p['eval_success'] for p in curve], 'o-', color='tab:blue',
            label=f"PPO, held-out episodes ({summary['eval_episodes']}, deterministic)")
    train = [(p['steps'], 100 * p['train_success']) for p in curve if not np.isnan(p['train_success'])]
    if train:
        ax.plot(*zip(*train, strict=True), 's--', color='tab:green', alpha=0.7, label='PPO, last 100 training episodes')
    ax.axhline(100 * summary['random_success'], color='tab:red', linestyle=':',
               label=f"random policy ({100 * summary['random_success']:.1f}%)")
    ax.set_xlabel(f"env steps (10 Hz actions, {summary['num_envs']} slots in one world)")
    ax.set_ylabel('success rate (%)')
    ax.set_ylim(-2, 102)
    ax.set_title(f"Jetbot point-goal navigation, PPO on CPU: {100 * summary['trained_success']:.0f}% success at the end "
                 f"({summary['steps']:,} steps, {summary['minutes']:.1f} min in all)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(loc='center right', fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == '__main__':
    main()
