"""The walking trainer's Stable-Baselines3 path: PPO with the mirror pass, the adaptive learning
rate, the critic's warm-up and a checkpoint every ``--checkpoint-every`` env steps.

Its checkpoints are SB3's (``checkpoint.zip``), resumed by ``--resume`` (a long run goes on in
pieces: never change what a checkpoint holds without keeping the old ones loadable).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from internutopia_extension.robots.h1_locomotion.policy.mirror import freeze_actor, mirrored_ppo
from internutopia_extension.robots.h1_locomotion.policy.onnx_io import export_onnx, start_from
from internutopia_extension.robots.h1_locomotion.policy.ppo_settings import (
    CRITIC_WARMUP_RATE,
    DESIRED_KL,
    LEARNING_RATE_BOUNDS,
    sb3_ppo_kwargs,
)
from internutopia_extension.robots.h1_locomotion.policy.progress import ProgressLog, format_row
from internutopia_extension.robots.h1_locomotion.policy.walking_robots import WalkingRobot

__all__ = ['quiet_logger', 'train_sb3']


def quiet_logger() -> Any:
    """An SB3 logger that writes nothing anywhere. SB3's default (``verbose=0``) still makes an
    empty ``/tmp/SB3-<date>`` folder on every ``learn``; the values it records stay readable
    (``name_to_value``) until each dump, as before."""
    from stable_baselines3.common.logger import Logger

    return Logger(folder=None, output_formats=[])


def _records(infos: list[dict[str, Any]], dones: np.ndarray, records: list[dict[str, Any]], rewards: list[float]) -> None:
    for row in np.flatnonzero(dones):
        info = infos[row]
        if isinstance(info.get('metrics'), dict):
            records.append(info['metrics'])
            if 'episode' in info:
                rewards.append(float(info['episode']['r']))


def train_sb3(args: argparse.Namespace, robot: WalkingRobot, gait_module: ModuleType, envs: Any, out: Path,
              init_scale: np.ndarray | None) -> None:
    """Train on the SB3 ``envs`` (the walking env under ``VecMonitor``) with the trainer's ``args``
    (see :mod:`.train`) until ``args.steps`` env steps, writing under ``out``."""
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    checkpoint = out / 'checkpoint.zip'
    warmup = 0
    ppo_class = mirrored_ppo()
    if args.resume and checkpoint.is_file():
        model = ppo_class.load(checkpoint, env=envs, device=args.torch_device)
        print(f'resumed from {checkpoint} at {model.num_timesteps:,} steps', flush=True)
        if model.num_timesteps >= args.steps:
            print(f'the run is at {model.num_timesteps:,} steps already (--steps {args.steps:,}): nothing to train', flush=True)
            envs.close()
            return
    else:
        model = ppo_class('MlpPolicy', envs, **sb3_ppo_kwargs(args.rollout, args.num_envs, args.learning_rate, args.seed,
                                                              args.torch_device))
        if args.init_from:
            start_from(model, Path(args.init_from), args.max_std, init_scale, gait_module)
            warmup = args.critic_warmup
    model.set_logger(quiet_logger())
    model.mirror_weight = args.mirror_loss
    model.gait_module = gait_module
    if args.mirror_loss:
        print(f'mirror loss at weight {args.mirror_loss}', flush=True)
    progress = ProgressLog(out)
    if model.num_timesteps and progress.last_rate is not None:  # resumed: at the adapted rate
        resumed_rate = progress.last_rate
        model.lr_schedule = lambda _: resumed_rate
    update_threads = getattr(args, 'update_threads', None) or args.threads

    class Checkpoints(BaseCallback):
        """Episode records in, a progress row and a checkpoint out every ``--checkpoint-every`` steps."""

        def __init__(self) -> None:
            super().__init__()
            self.records: list[dict[str, Any]] = []
            self.rewards: list[float] = []
            self.next_save = (model.num_timesteps // args.checkpoint_every + 1) * args.checkpoint_every
            self.rate = float(model.lr_schedule(1.0))
            self.updates = 0
            self.last_row = model.num_timesteps  # (the step of the last progress row: a resumed run's is its checkpoint's)

        def _on_rollout_start(self) -> None:
            torch.set_num_threads(args.threads)  # the physics steps again: it takes the other cores
            # The last update's KL (logged by PPO.train, still held until the next dump).
            kl = model.logger.name_to_value.get('train/approx_kl')
            if kl is None or self.updates <= warmup:  # a frozen actor's KL says nothing of the rate
                return
            rate = float(model.lr_schedule(1.0))
            if kl > 2.0 * DESIRED_KL:
                rate /= 1.5
            elif kl < 0.5 * DESIRED_KL:
                rate *= 1.5
            rate = float(np.clip(rate, *LEARNING_RATE_BOUNDS))
            model.lr_schedule = lambda _: rate
            self.rate = rate

        def _on_step(self) -> bool:
            dones = self.locals['dones']
            if dones.any():
                _records(self.locals['infos'], dones, self.records, self.rewards)
            return True

        def _on_rollout_end(self) -> None:
            # PPO updates right after this: the first `warmup` updates train the critic alone, at
            # CRITIC_WARMUP_RATE (only the critic moves, and it starts far from the returns).
            warming = self.updates < warmup
            freeze_actor(model, warming)
            rate = CRITIC_WARMUP_RATE if warming else self.rate
            model.lr_schedule = lambda _: rate
            if self.updates == warmup and warmup:
                print(f'critic warmed up over {warmup} updates; the actor trains from here', flush=True)
            self.updates += 1
            self._maybe_save()
            torch.set_num_threads(update_threads)  # the physics is idle during the update

        def _maybe_save(self) -> None:
            if self.num_timesteps < self.next_save:
                return
            self.next_save += args.checkpoint_every
            self.save()

        def save(self) -> None:
            """The checkpoint and the policy, then the progress row: a row always has its checkpoint
            (a run stopped in between resumes from it, without a row for steps it did not keep)."""
            temporary = out / 'checkpoint.tmp.zip'
            model.save(temporary)
            os.replace(temporary, checkpoint)
            export_onnx(model, out / robot.policy_file, gait_module)
            steps = model.num_timesteps
            if steps <= self.last_row:
                return  # (the end of a run: its last update saved, its row written at the rollout's end)
            episodes = {key: np.array([float(r.get(key, np.nan)) for r in self.records])
                        for key in ('fell', 'seconds', 'mean_velocity_error', 'mean_yaw_rate_error')}
            episodes['reward'] = np.array(self.rewards, dtype=float)  # (VecMonitor's returns)
            row = progress.append(steps, episodes, self.rate)
            self.last_row = steps
            extra = f'  mirror_loss {model.last_mirror_loss:.3g}' if model.mirror_weight else ''
            self.records, self.rewards = [], []
            print(format_row(row) + extra, flush=True)

    callback = Checkpoints()
    try:
        model.learn(total_timesteps=args.steps - model.num_timesteps, callback=callback, reset_num_timesteps=False)
        # The end of the run: its last update (and the steps past the last checkpoint) saved too.
        callback.save()
    finally:
        torch.set_num_threads(args.threads)
        envs.close()
