"""The walking trainer's rsl-rl path (``--trainer rsl_rl``): rsl-rl's PPO over the walking env
bridged by :class:`~internutopia.core.gym_vector.rsl_rl_env.RslRlVecEnv`, with the same settings
as the SB3 path (:mod:`.ppo_settings`), its symmetry extension for ``--mirror-loss`` and the same
outputs: ``progress.csv`` rows, the policy as the walking robots' ONNX graph, and a checkpoint
(``checkpoint.pt``: rsl-rl's models and optimizer, and the env steps so far) every
``--checkpoint-every`` env steps that ``--resume`` continues from.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from internutopia_extension.robots.h1_locomotion.policy.mirror import rsl_rl_mirror
from internutopia_extension.robots.h1_locomotion.policy.onnx_io import export_rsl_rl_actor, rsl_rl_actor_from_onnx
from internutopia_extension.robots.h1_locomotion.policy.ppo_settings import rsl_rl_config
from internutopia_extension.robots.h1_locomotion.policy.progress import ProgressLog, format_row
from internutopia_extension.robots.h1_locomotion.policy.walking_robots import WalkingRobot

__all__ = ['CHECKPOINT', 'make_runner', 'threads_during_update', 'train_rsl_rl']

#: The rsl-rl path's checkpoint file name (in ``--out``).
CHECKPOINT = 'checkpoint.pt'


def make_runner(envs: Any, rollout: int, learning_rate: float, mirror_weight: float = 0.0,
                gait_module: ModuleType | None = None, seed: int = 0, device: str = 'cpu') -> Any:
    """rsl-rl's ``OnPolicyRunner`` over ``envs`` (an rsl-rl ``VecEnv``) with :func:`~.ppo_settings.rsl_rl_config`,
    logging nothing (no log folder, no writer, its model printout swallowed)."""
    import torch
    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(seed)
    config = rsl_rl_config(rollout, envs.num_envs, learning_rate, mirror_weight, rsl_rl_mirror(gait_module), seed)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints both models and a symmetry notice
        return OnPolicyRunner(envs, config, log_dir=None, device=device)


def threads_during_update(runner: Any, update_threads: int, collect_threads: int) -> None:
    """Make ``runner``'s PPO update run on ``update_threads`` torch threads and the collection on
    ``collect_threads`` (the physics is idle during the update, so the update may take its cores)."""
    import torch

    update = runner.alg.update

    def threaded_update() -> dict[str, float]:
        torch.set_num_threads(update_threads)
        try:
            return update()
        finally:
            torch.set_num_threads(collect_threads)

    runner.alg.update = threaded_update


def _start_actor(runner: Any, path: Path, max_std: float, init_scale: np.ndarray | None, gait_module: ModuleType) -> None:
    import torch

    actor = runner.alg.get_policy()
    state = rsl_rl_actor_from_onnx(path, init_scale, gait_module)
    if state['mlp.0.weight'].shape[1] != actor.obs_dim:
        raise ValueError(f'{path} observes {state["mlp.0.weight"].shape[1]} inputs; the env gives {actor.obs_dim}')
    actor.load_state_dict({**actor.state_dict(), **state})
    with torch.no_grad():
        actor.distribution.log_std_param.fill_(float(np.log(max_std)))
    print(f'started the actor from {path} (critic untrained, action noise {max_std})', flush=True)


def train_rsl_rl(args: argparse.Namespace, robot: WalkingRobot, gait_module: ModuleType, envs: Any, out: Path,
                 init_scale: np.ndarray | None) -> None:
    """Train on the rsl-rl ``envs`` with the trainer's ``args`` (see :mod:`.train`) until
    ``args.steps`` env steps, writing under ``out``."""
    import torch

    checkpoint = out / CHECKPOINT
    runner = make_runner(envs, args.rollout, args.learning_rate, args.mirror_loss, gait_module, args.seed, args.torch_device)
    steps = 0
    if args.resume and checkpoint.is_file():
        infos = runner.load(str(checkpoint), map_location=args.torch_device) or {}
        steps = int(infos.get('steps', 0))
        print(f'resumed from {checkpoint} at {steps:,} steps', flush=True)
    elif args.init_from:
        _start_actor(runner, Path(args.init_from), args.max_std, init_scale, gait_module)
    if args.mirror_loss:
        print(f'mirror loss at weight {args.mirror_loss} (rsl-rl symmetry, every minibatch)', flush=True)
    threads_during_update(runner, args.update_threads or args.threads, args.threads)
    progress = ProgressLog(out)
    per_iteration = args.rollout * envs.num_envs
    try:
        while steps < args.steps:
            next_save = (steps // args.checkpoint_every + 1) * args.checkpoint_every
            iterations = max(1, min(-(-(next_save - steps) // per_iteration), -(-(args.steps - steps) // per_iteration)))
            runner.learn(num_learning_iterations=iterations)
            steps += iterations * per_iteration
            # The checkpoint and the policy first, then the row: a row always has its checkpoint.
            temporary = out / 'checkpoint.tmp.pt'
            runner.save(str(temporary), infos={'steps': steps, 'robot': robot.env_id})
            os.replace(temporary, checkpoint)
            export_rsl_rl_actor(runner.alg.get_policy(), out / robot.policy_file, gait_module)
            row = progress.append(steps, envs.take_episodes(), runner.alg.learning_rate)
            print(format_row(row), flush=True)
    finally:
        torch.set_num_threads(args.threads)
        envs.close()
