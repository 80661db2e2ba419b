"""Distil a walking policy into a smaller network (DAgger): the same gait from a cheaper 50 Hz tick.

The teacher is a walking policy as the walker runs it (:class:`~..walker.OnnxPolicy`: the mean of
the network and its mirror image). The student is an MLP of ``--hidden`` layers (ELU, as the
trainer's) that learns the teacher's actions on the states it meets itself (DAgger, Ross, Gordon
and Bagnell 2011): each round ``--num-envs`` robots of the robot's training id (random commands,
pushes) walk ``--steps`` ticks, each robot driven by the teacher with probability ``beta`` (1 in
the first round, halved each round) and by the student otherwise; every observation is labelled
with the teacher's action, and so is its mirror image with the mirrored action (the teacher is
exactly symmetric, so the student learns both sides alike). After each round the student is
trained on everything gathered so far, and the round's held-out twentieth is scored first.

Writes under ``--out`` the student as the walker's graph (``h1_walk.onnx``, the trainer's
:func:`~.onnx_io.export_actor`) and ``distill.csv``, a row per round: samples gathered, the
student's mean squared error on the round's held-out states before and after training on them,
the share of the round's steps the student drove, and the episodes that ended in a fall.
Evaluate the result as any policy (:mod:`.evaluate`)::

    python -m internutopia_extension.robots.h1_locomotion.policy.distill --out runs/h1_distilled
    python -m internutopia_extension.robots.h1_locomotion.policy.evaluate --policy runs/h1_distilled/h1_walk.onnx
"""

from __future__ import annotations

import argparse
import csv
import importlib
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from internutopia_extension.robots.h1_locomotion.policy.onnx_io import export_actor
from internutopia_extension.robots.h1_locomotion.policy.walking_robots import ROBOTS

__all__ = ['distill', 'main']

#: distill.csv's columns.
COLUMNS = ('round', 'samples', 'seconds', 'beta', 'heldout_mse_before', 'heldout_mse_after', 'falls', 'episodes')


def _student(obs_size: int, action_size: int, hidden: list[int]) -> tuple[Any, Any]:
    """The student's body (Linear + ELU per hidden layer) and head, named as the trainer's export expects."""
    import torch

    layers: list[Any] = []
    width = obs_size
    for size in hidden:
        layers += [torch.nn.Linear(width, size), torch.nn.ELU()]
        width = size
    return torch.nn.Sequential(*layers), torch.nn.Linear(width, action_size)


def _fit(body: Any, head: Any, obs: np.ndarray, actions: np.ndarray, epochs: int, batch: int, rate: float, seed: int) -> None:
    """``epochs`` passes of Adam over ``(obs, actions)`` in shuffled minibatches (mean squared error
    of the clamped output, as the exported graph clamps it)."""
    import torch

    params = [*body.parameters(), *head.parameters()]
    optimizer = torch.optim.Adam(params, lr=rate)
    x, y = torch.as_tensor(obs), torch.as_tensor(actions)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), batch):
            rows = order[start:start + batch]
            loss = torch.mean((torch.clamp(head(body(x[rows])), -1.0, 1.0) - y[rows]) ** 2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def _mse(body: Any, head: Any, obs: np.ndarray, actions: np.ndarray) -> float:
    import torch

    with torch.no_grad():
        out = torch.clamp(head(body(torch.as_tensor(obs))), -1.0, 1.0).numpy()
    return float(np.mean((out - actions) ** 2))


def distill(robot: str = 'h1', teacher: str = 'default', out: str | Path = 'runs/h1_distilled', hidden: tuple[int, ...] = (128, 64),
            rounds: int = 8, steps: int = 3000, num_envs: int = 64, epochs: int = 10, batch: int = 4096, rate: float = 1e-3,
            seed: int = 0, shares: dict[str, float] | None = None) -> Path:
    """Run the distillation (see the module docstring); returns the student's ONNX path."""
    import gymnasium
    import torch

    from internutopia_extension.robots.h1_locomotion.walker import POLICY_PATH, OnnxPolicy

    spec = ROBOTS[robot]
    gait = importlib.import_module(spec.gait)
    if teacher == 'default' and robot != 'h1':
        raise ValueError(f"teacher='default' is H1's shipped policy; give the path of the {robot} policy to distil")
    teacher_path = Path(POLICY_PATH if teacher == 'default' else teacher)
    policy = OnnxPolicy(teacher_path, symmetric=True, gait_module=gait, robot=robot.upper())
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    body, head = _student(gait.OBS_SIZE, gait.ACTION_SIZE, list(hidden))
    env_kwargs: dict[str, Any] = {**(shares or {}), **spec.env_kwargs}
    envs = gymnasium.make_vec(f'internutopia:{spec.env_id}', num_envs=num_envs, autoreset_mode='SameStep', **env_kwargs)
    rng = np.random.default_rng(seed)
    gathered_obs: list[np.ndarray] = []
    gathered_actions: list[np.ndarray] = []
    rows = []
    obs, _ = envs.reset(seed=seed)
    try:
        for round_index in range(rounds):
            began = time.perf_counter()
            beta = 0.5 ** round_index
            by_teacher = rng.random(num_envs) < beta
            round_obs, round_actions = [], []
            falls = episodes = 0
            for _ in range(steps):
                observed = np.asarray(obs, dtype=np.float32)
                labels = policy(observed).astype(np.float32)
                with torch.no_grad():
                    own = torch.clamp(head(body(torch.as_tensor(observed))), -1.0, 1.0).numpy()
                round_obs += [observed, gait.mirror_observation(observed).astype(np.float32)]
                round_actions += [labels, gait.mirror_action(labels).astype(np.float32)]
                obs, _, terminated, truncated, infos = envs.step(np.where(by_teacher[:, None], labels, own))
                falls += int(np.count_nonzero(terminated))
                episodes += int(np.count_nonzero(terminated | truncated))
            new_obs, new_actions = np.concatenate(round_obs), np.concatenate(round_actions)
            held = rng.random(len(new_obs)) < 0.05
            before = _mse(body, head, new_obs[held], new_actions[held])
            gathered_obs.append(new_obs[~held])
            gathered_actions.append(new_actions[~held])
            _fit(body, head, np.concatenate(gathered_obs), np.concatenate(gathered_actions), epochs, batch, rate, seed + round_index)
            after = _mse(body, head, new_obs[held], new_actions[held])
            row = dict(round=round_index + 1, samples=sum(len(o) for o in gathered_obs), seconds=round(time.perf_counter() - began, 1),
                       beta=beta, heldout_mse_before=before, heldout_mse_after=after, falls=falls, episodes=episodes)
            rows.append(row)
            print(', '.join(f'{k} {v:.5g}' if isinstance(v, float) else f'{k} {v}' for k, v in row.items()), flush=True)
            export_actor(body, head, gait.OBS_SIZE, out / spec.policy_file, gait)
            temporary = out / 'distill.csv.tmp'  # (then replaced at once: a stopped run leaves the whole file)
            with open(temporary, 'w', newline='') as stream:
                writer = csv.DictWriter(stream, fieldnames=COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
            os.replace(temporary, out / 'distill.csv')
    finally:
        envs.close()
    return out / spec.policy_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', choices=sorted(ROBOTS), default='h1')
    parser.add_argument('--teacher', default='default', help="'default' (the shipped H1 policy; --robot h1 only) or an ONNX policy's path")
    parser.add_argument('--out', default='runs/h1_distilled')
    parser.add_argument('--hidden', default='128,64', help='the student\'s hidden layer widths (default 128,64)')
    parser.add_argument('--rounds', type=int, default=8)
    parser.add_argument('--steps', type=int, default=3000, help='policy ticks per round (each of --num-envs robots)')
    parser.add_argument('--num-envs', type=int, default=64)
    parser.add_argument('--epochs', type=int, default=10, help='passes over everything gathered, after each round')
    parser.add_argument('--seed', type=int, default=0)
    # The commands the shipped H1 policy was trained on (docs/training.md), with standing twice as
    # often: a student's small bias shows most as drift while it stands.
    parser.add_argument('--lateral-share', type=float, default=0.5)
    parser.add_argument('--sidestep-share', type=float, default=0.3)
    parser.add_argument('--stand-share', type=float, default=0.3)
    args = parser.parse_args(argv)
    try:
        hidden = tuple(int(width) for width in args.hidden.split(','))
    except ValueError:
        hidden = ()
    if not hidden or min(hidden) < 1:
        parser.error(f'--hidden {args.hidden!r}: comma-separated layer widths >= 1, e.g. 128,64')
    for flag, count in (('--rounds', args.rounds), ('--steps', args.steps), ('--num-envs', args.num_envs), ('--epochs', args.epochs)):
        if count < 1:
            parser.error(f'{flag} must be >= 1; got {count}')
    for flag, share in (('--lateral-share', args.lateral_share), ('--sidestep-share', args.sidestep_share),
                        ('--stand-share', args.stand_share)):
        if not 0.0 <= share <= 1.0:
            parser.error(f'{flag} must be between 0 and 1; got {share}')
    if args.teacher == 'default' and args.robot != 'h1':
        parser.error(f"--teacher default is H1's shipped policy; give the path of the {args.robot} policy to distil")
    if args.teacher != 'default' and not Path(args.teacher).is_file():
        parser.error(f'--teacher {args.teacher}: no such file')
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f'--out {args.out}: cannot be created: {exc.strerror or exc}')
    shares = {'lateral_share': args.lateral_share, 'sidestep_share': args.sidestep_share, 'stand_share': args.stand_share}
    path = distill(args.robot, args.teacher, args.out, hidden, args.rounds, args.steps, args.num_envs, args.epochs, seed=args.seed,
                   shares=shares)
    print(f'student written to {path}', flush=True)


if __name__ == '__main__':
    main()
