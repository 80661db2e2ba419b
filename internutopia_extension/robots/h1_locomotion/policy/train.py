"""Train a walking policy with PPO (Stable-Baselines3): H1's on ``internutopia/H1Walk-v0``,
(``--robot aliengo``) Aliengo's on ``internutopia/AliengoWalk-v0`` or (``--robot gr1``) GR1's on
``internutopia/GR1Walk-v0``.

One trainer for every walking robot: what differs is data (:data:`ROBOTS`: the Gymnasium id, the
policy's file name, the robot's gait and reward modules).

The env is this project's own vectorized env: ``--num-envs`` H1s in one MuJoCo world, each
following random velocity commands (:mod:`internutopia.envs.locomotion`). Every
``--checkpoint-every`` env steps, and at its end, the run saves, under ``--out``, a checkpoint (``checkpoint.zip``,
the PPO model and optimizer), the policy as ONNX (``h1_walk.onnx``, what the walking H1 runs), and
a row of ``progress.csv``: episodes ended, share that fell, mean episode length, velocity
tracking error and reward. ``--resume`` continues from the checkpoint (the step count carries on),
so a long training can run in pieces; a new run is refused in an ``--out`` that holds one (its
checkpoint or progress rows), as is a run of one robot or trainer in another's. ``--plot`` draws
``progress.csv`` as ``training.png``.

The learning rate adapts to the policy's change per update (legged_gym's rule): after each update
whose mean KL divergence was above twice :data:`DESIRED_KL` it drops by 1.5x, below half it rises
by 1.5x. ``--init-from`` starts a new run from another run's checkpoint whose observation had
fewer inputs (an older observation layout): the inputs it lacked start with zero weights, so the
started policy acts exactly as the old one did until it learns to use them. ``--init-from`` also
takes an exported ``h1_walk.onnx`` (the shipped policy, say): its actor starts the run, the
critic starts untrained, and ``--critic-warmup N`` keeps the actor still for the first ``N``
updates while the critic learns the returns at :data:`CRITIC_WARMUP_RATE` (an untrained critic's
advantages would otherwise pull a good policy apart). ``--lateral-share``, ``--sidestep-share``,
``--stand-share`` and ``--reward-scale TERM=SCALE`` shift a run's emphasis (more side-stepping or
standing commands, other reward scales) without changing the env's defaults (the shipped policy's flags are in
docs/training.md).
``--mirror-loss W`` ends every update with gradient steps on the gap between the policy and its
mirror image (:func:`mirror_loss`: what it does for the robot reflected left to right, reflected
back), so the gait comes out the same on both legs.

``--trainer rsl_rl`` trains with rsl-rl's PPO (:mod:`.rsl_rl_trainer`: the same settings,
its symmetry extension for the mirror loss, ``checkpoint.pt`` instead of ``checkpoint.zip``)
instead of Stable-Baselines3's (:mod:`.sb3_trainer`, the default). ``--update-threads N`` lets
the PPO update use N torch threads (the physics is idle meanwhile; ``--threads`` is what the
policy's forward pass gets while the physics steps; by default 2 on a machine of 2 cores or more,
with OpenMP's waiting threads asleep: :mod:`.torch_threads`).

The parts live beside this command-line module: :mod:`.walking_robots` (the robots as data),
:mod:`.ppo_settings`, :mod:`.mirror`, :mod:`.onnx_io` (export and ``--init-from``) and
:mod:`.progress` (``progress.csv`` and its plot).

Install the ``train`` extra; run, e.g. in the background on a 2-core machine::

    nohup python -m internutopia_extension.robots.h1_locomotion.policy.train --out runs/h1_walk --resume &

To ship a policy, copy ``h1_walk.onnx``, ``progress.csv`` and ``training.png`` next to this file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

import numpy as np

from internutopia_extension.robots.h1_locomotion.policy.mirror import (
    freeze_actor,
    mirror_loss,
    mirror_updates,
    mirrored_ppo,
)
from internutopia_extension.robots.h1_locomotion.policy.onnx_io import (
    ONNX_TO_POLICY,
    actor_from_onnx,
    export_onnx,
    start_from,
    widen_inputs,
)
from internutopia_extension.robots.h1_locomotion.policy.ppo_settings import (
    CRITIC_WARMUP_RATE,
    DESIRED_KL,
    LEARNING_RATE_BOUNDS,
)
from internutopia_extension.robots.h1_locomotion.policy.progress import PROGRESS_COLUMNS, plot
from internutopia_extension.robots.h1_locomotion.policy.torch_threads import default_update_threads, sleeping_openmp
from internutopia_extension.robots.h1_locomotion.policy.walking_robots import ROBOTS, WalkingRobot

# What this module offered before it was split (tests and notebooks import them from here).
__all__ = ['CRITIC_WARMUP_RATE', 'DESIRED_KL', 'LEARNING_RATE_BOUNDS', 'ONNX_TO_POLICY', 'PROGRESS_COLUMNS', 'ROBOTS',
           'TRAINERS', 'WalkingRobot', 'actor_from_onnx', 'export_onnx', 'freeze_actor', 'main', 'mirror_loss',
           'mirror_updates', 'mirrored_ppo', 'plot', 'start_from', 'widen_inputs']

#: The PPO implementations ``--trainer`` chooses from.
TRAINERS = ('sb3', 'rsl_rl')


def _named_numbers(parser: argparse.ArgumentParser, flag: str, items: list[str], valid: list[str], noun: str,
                   plural: str) -> dict[str, float]:
    """``NAME=SCALE`` items of ``flag`` as a dict, or a parser error naming the bad item and, for an
    unknown name (a ``noun``), the ``valid`` ones (``plural``)."""
    numbers = {}
    for item in items:
        name, _, value = item.partition('=')
        if name not in valid:
            parser.error(f'{flag} {item!r}: unknown {noun} {name!r}; valid {plural}: {sorted(valid)}')
        try:
            numbers[name] = float(value)
        except ValueError:
            parser.error(f'{flag} {item!r}: the scale must be a number ({plural[:-1].upper()}=SCALE)')
    return numbers


def _reward_scales(parser: argparse.ArgumentParser, items: list[str], rewards: ModuleType) -> dict[str, float]:
    """``--reward-scale TERM=SCALE`` items as a dict, or a parser error naming the bad one."""
    return _named_numbers(parser, '--reward-scale', items, list(rewards.REWARD_SCALES), 'term', 'terms')


def _init_action_scale(parser: argparse.ArgumentParser, items: list[str], gait: ModuleType) -> np.ndarray | None:
    """``--init-action-scale KIND=SCALE`` items over the current scales, or ``None`` without any."""
    ACTION_SCALE_BY_KIND, action_scale = gait.ACTION_SCALE_BY_KIND, gait.action_scale
    if not items:
        return None
    given = _named_numbers(parser, '--init-action-scale', items, list(ACTION_SCALE_BY_KIND), 'joint kind', 'kinds')
    for kind, scale in given.items():
        if not scale > 0:
            parser.error(f'--init-action-scale {kind}={scale:g}: the scale must be positive')
    return action_scale({**ACTION_SCALE_BY_KIND, **given})


#: Each trainer's checkpoint file in ``--out``.
CHECKPOINTS = {'sb3': 'checkpoint.zip', 'rsl_rl': 'checkpoint.pt'}


def _progress_rows(out: Path) -> int:
    """How many rows ``out/progress.csv`` holds (0 without the file)."""
    path = out / 'progress.csv'
    if not path.is_file():
        return 0
    with open(path, encoding='utf-8') as stream:
        return max(0, sum(1 for line in stream if line.strip()) - 1)


def _check_out(parser: argparse.ArgumentParser, args: argparse.Namespace, out: Path) -> None:
    """A parser error, before anything is built, where ``out`` holds files the run would overwrite
    or mix with its own: another robot's run, the other trainer's checkpoint, or, for a new run (no
    ``--resume``, or nothing it could resume), a run's checkpoint or progress rows."""
    own, other = CHECKPOINTS[args.trainer], CHECKPOINTS['rsl_rl' if args.trainer == 'sb3' else 'sb3']
    checkpoints = [name for name in CHECKPOINTS.values() if (out / name).is_file()]
    policies = [name for name, robot in ROBOTS.items() if (out / robot.policy_file).is_file()]
    if (checkpoints or _progress_rows(out)) and policies and args.robot not in policies:
        parser.error(f"{out} holds {' and '.join(policies)}'s run ({ROBOTS[policies[0]].policy_file}); "
                     f'train --robot {args.robot} in another --out (or continue that run with --robot {policies[0]})')
    if args.resume and not (out / own).is_file() and (out / other).is_file():
        if args.trainer == 'rsl_rl':
            parser.error(f"{out} holds the sb3 trainer's checkpoint.zip; resume it with --trainer sb3 (or train rsl_rl in another --out)")
        parser.error(f"{out} holds the rsl_rl trainer's checkpoint.pt; resume it with --trainer rsl_rl (or train sb3 in another --out)")
    if args.resume and (out / own).is_file():
        if args.init_from:
            parser.error(f'--init-from starts a new run, but {out} holds {own}, which --resume continues; '
                         'drop one of them (a new run needs another --out)')
        return
    rows = _progress_rows(out)
    if checkpoints or rows:
        held = ', '.join([*checkpoints, *([f'progress.csv ({rows} rows)'] if rows else [])])
        how = ('--resume continues it' if checkpoints else f'there is no {own} to resume it from')
        parser.error(f'{out} holds a run ({held}): a new run would overwrite its checkpoint and policy and add its rows '
                     f'to its progress; {how}, or choose another --out')


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', choices=sorted(ROBOTS), default='h1', help='the walking robot to train (default h1)')
    parser.add_argument('--steps', type=int, default=200_000_000, help='total env steps (50 Hz ticks of one robot)')
    parser.add_argument('--num-envs', type=int, default=64)
    parser.add_argument('--out', default=None, help='where checkpoints, the policy and progress go (default runs/ROBOT_walk)')
    parser.add_argument('--resume', action='store_true', help='continue from OUT/checkpoint.zip when it exists')
    parser.add_argument('--checkpoint-every', type=int, default=500_000)
    parser.add_argument('--threads', type=int, default=1, help='torch threads (default 1: the physics uses the rest)')
    parser.add_argument('--learning-rate', type=float, default=3e-4, help='the starting rate (it adapts to the KL)')
    parser.add_argument('--rollout', type=int, default=128, help='env steps per env between updates')
    parser.add_argument('--init-from', help="another run's checkpoint.zip, or an exported .onnx policy, to start from "
                                            '(see the module docstring)')
    parser.add_argument('--max-std', type=float, default=0.5,
                        help='with --init-from: cap the action noise at this std (an .onnx start: set it to this)')
    parser.add_argument('--init-action-scale', action='append', default=[], metavar='KIND=SCALE',
                        help="with an .onnx --init-from that does not record its action scale: the scale it was trained "
                             "with for a joint kind (repeatable), e.g. hip_roll=0.45; the others are gait.ACTION_SCALE_BY_KIND's")
    parser.add_argument('--critic-warmup', type=int, default=0,
                        help='with --init-from: updates at the start of the run that train only the critic')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--backend', default='mujoco', help="physics backend: 'mujoco' (CPU, every core) or 'warp'")
    parser.add_argument('--device', default=None, help="the warp backend's device (cpu or cuda:N)")
    parser.add_argument('--torch-device', default='cpu', help='where PPO updates run (cpu or cuda)')
    parser.add_argument('--no-pushes', action='store_true', help='episodes without random pushes')
    parser.add_argument('--lateral-share', type=float, default=None,
                        help='share of moving training commands with a lateral part (default: episodes.LATERAL_SHARE)')
    parser.add_argument('--sidestep-share', type=float, default=None,
                        help='share of moving training commands that are pure side-steps (default: episodes.SIDESTEP_SHARE)')
    parser.add_argument('--stand-share', type=float, default=None,
                        help='share of training commands that are zero, stand still (default: episodes.STAND_SHARE)')
    parser.add_argument('--mirror-loss', type=float, default=0.0, metavar='WEIGHT',
                        help='after each update, steps on the gap between the policy and its own mirror image '
                             '(left and right legs swapped) at this weight: a gait the same on both legs (default 0: off)')
    parser.add_argument('--reward-scale', action='append', default=[], metavar='TERM=SCALE',
                        help='override one reward scale (repeatable), e.g. --reward-scale hip_pos=-0.3')
    parser.add_argument('--plot', action='store_true', help='only draw OUT/progress.csv as OUT/training.png')
    parser.add_argument('--trainer', choices=TRAINERS, default='sb3',
                        help="the PPO implementation: 'sb3' (Stable-Baselines3, checkpoint.zip; the default) or 'rsl_rl' "
                             '(rsl-rl-lib, checkpoint.pt)')
    parser.add_argument('--update-threads', type=int, default=None,
                        help='torch threads of the PPO update, while the physics is idle (default: the cores, at most 2, '
                             'with OpenMP waiting passively; --threads where torch was loaded before with spinning waits)')
    args = parser.parse_args(argv)
    import importlib

    robot = ROBOTS[args.robot]
    gait_module = importlib.import_module(robot.gait)
    reward_scales = _reward_scales(parser, args.reward_scale, importlib.import_module(robot.rewards))
    init_scale = _init_action_scale(parser, args.init_action_scale, gait_module)
    for flag, share in (('--lateral-share', args.lateral_share), ('--sidestep-share', args.sidestep_share),
                        ('--stand-share', args.stand_share)):
        if share is not None and not 0.0 <= share <= 1.0:
            parser.error(f'{flag} must be between 0 and 1; got {share}')
    if not args.mirror_loss >= 0.0:
        parser.error(f'--mirror-loss takes a weight >= 0; got {args.mirror_loss}')
    if args.critic_warmup < 0 or (args.critic_warmup and not args.init_from):
        parser.error(f'--critic-warmup takes a count of updates >= 0 and needs --init-from; got {args.critic_warmup}')
    if args.trainer == 'rsl_rl' and (args.critic_warmup or (args.init_from and not args.init_from.endswith('.onnx'))):
        parser.error("--trainer rsl_rl starts from an exported .onnx policy only, without --critic-warmup "
                     "(a checkpoint.zip and the critic's warm-up are the sb3 trainer's)")
    for flag, count in (('--threads', args.threads), ('--update-threads', args.update_threads), ('--steps', args.steps),
                        ('--num-envs', args.num_envs), ('--checkpoint-every', args.checkpoint_every), ('--rollout', args.rollout)):
        if count is not None and count < 1:
            parser.error(f'{flag} must be at least 1; got {count}')
    if args.rollout * args.num_envs < 2:
        parser.error('--rollout x --num-envs must be at least 2 (the transitions of one update)')
    for flag, value in (('--learning-rate', args.learning_rate), ('--max-std', args.max_std)):
        if not value > 0:
            parser.error(f'{flag} must be > 0; got {value}')
    if args.init_from and not Path(args.init_from).is_file():
        parser.error(f'--init-from {args.init_from}: no such file')
    out = Path(args.out or f'runs/{args.robot}_walk')
    if args.plot:
        if not (out / 'progress.csv').is_file():
            parser.error(f'--plot draws {out / "progress.csv"}, which does not exist (a run writes it there)')
        plot(out / 'progress.csv', out / 'training.png', robot.title)
        return
    _check_out(parser, args, out)

    # Before torch loads (policy.torch_threads): more update threads pay only with sleeping OpenMP waits.
    passive = sleeping_openmp()
    if args.update_threads is None:
        args.update_threads = default_update_threads() if passive else args.threads
    import gymnasium
    import torch

    torch.set_num_threads(args.threads)
    print(f'torch threads: {args.threads} collecting, {args.update_threads} updating '
          f'(OpenMP waits {"passively" if passive else "actively"})', flush=True)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f'--out {out}: cannot be created: {exc.strerror or exc}')
    # By its id (the 'module:' prefix imports what registers it): the env is an application's.
    walk = gymnasium.make_vec(f'internutopia:{robot.env_id}', num_envs=args.num_envs, autoreset_mode='SameStep',
                              backend=args.backend, device=args.device, pushes=not args.no_pushes,
                              lateral_share=args.lateral_share, sidestep_share=args.sidestep_share, stand_share=args.stand_share,
                              reward_scales=reward_scales or None,
                              **robot.env_kwargs)
    if robot.env_kwargs:
        print(f'training model: {robot.env_kwargs}', flush=True)
    if args.lateral_share is not None or args.sidestep_share is not None or args.stand_share is not None or reward_scales:
        print(f'training emphasis: lateral_share {args.lateral_share}, sidestep_share {args.sidestep_share}, '
              f'stand_share {args.stand_share}, '
              f'reward scales {reward_scales}', flush=True)
    if args.trainer == 'rsl_rl':
        from internutopia.core.gym_vector.rsl_rl_env import RslRlVecEnv
        from internutopia_extension.robots.h1_locomotion.policy.rsl_rl_trainer import train_rsl_rl

        train_rsl_rl(args, robot, gait_module, RslRlVecEnv(walk, seed=args.seed, device=args.torch_device), out, init_scale)
        return
    from stable_baselines3.common.vec_env import VecMonitor

    from internutopia.core.gym_vector import sb3_vec_env
    from internutopia_extension.robots.h1_locomotion.policy.sb3_trainer import train_sb3

    envs = VecMonitor(sb3_vec_env(walk))
    envs.seed(args.seed)
    train_sb3(args, robot, gait_module, envs, out, init_scale)


if __name__ == '__main__':
    main()
