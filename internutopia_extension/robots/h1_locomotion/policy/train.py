"""Train a walking policy with PPO (Stable-Baselines3): H1's on ``internutopia/H1Walk-v0``,
(``--robot aliengo``) Aliengo's on ``internutopia/AliengoWalk-v0`` or (``--robot gr1``) GR1's on
``internutopia/GR1Walk-v0``.

One trainer for every walking robot: what differs is data (:data:`ROBOTS`: the Gymnasium id, the
policy's file name, the robot's gait and reward modules).

The env is this project's own vectorized env: ``--num-envs`` H1s in one MuJoCo world, each
following random velocity commands (:mod:`internutopia.envs.locomotion`). Every
``--checkpoint-every`` env steps the run saves, under ``--out``, a checkpoint (``checkpoint.zip``,
the PPO model and optimizer), the policy as ONNX (``h1_walk.onnx``, what the walking H1 runs), and
a row of ``progress.csv``: episodes ended, share that fell, mean episode length, velocity
tracking error and reward. ``--resume`` continues from the checkpoint (the step count carries on),
so a long training can run in pieces. ``--plot`` draws ``progress.csv`` as ``training.png``.

The learning rate adapts to the policy's change per update (legged_gym's rule): after each update
whose mean KL divergence was above twice :data:`DESIRED_KL` it drops by 1.5x, below half it rises
by 1.5x. ``--init-from`` starts a new run from another run's checkpoint whose observation had
fewer inputs (an older observation layout): the inputs it lacked start with zero weights, so the
started policy acts exactly as the old one did until it learns to use them. ``--init-from`` also
takes an exported ``h1_walk.onnx`` (the shipped policy, say): its actor starts the run, the
critic starts untrained, and ``--critic-warmup N`` keeps the actor still for the first ``N``
updates while the critic learns the returns at :data:`CRITIC_WARMUP_RATE` (an untrained critic's
advantages would otherwise pull a good policy apart). ``--lateral-share``, ``--sidestep-share``
and ``--reward-scale TERM=SCALE`` shift a run's emphasis (more side-stepping commands, other
reward scales) without changing the env's defaults (the shipped policy's flags are in
docs/training.md).
``--mirror-loss W`` ends every update with gradient steps on the gap between the policy and its
mirror image (:func:`mirror_loss`: what it does for the robot reflected left to right, reflected
back), so the gait comes out the same on both legs.

Install the ``train`` extra; run, e.g. in the background on a 2-core machine::

    nohup python -m internutopia_extension.robots.h1_locomotion.policy.train --out runs/h1_walk --resume &

To ship a policy, copy ``h1_walk.onnx``, ``progress.csv`` and ``training.png`` next to this file.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class WalkingRobot:
    """What the trainer needs to know of one walking robot."""

    env_id: str  #: the Gymnasium id it trains on
    policy_file: str  #: the exported policy's file name (in ``--out``)
    gait: str  #: its gait module (observation, action scale, mirror maps)
    rewards: str  #: its reward module (term names of ``--reward-scale``)
    title: str  #: the training plot's title


#: The robots this trainer trains, by ``--robot`` name.
ROBOTS = {
    'h1': WalkingRobot('internutopia/H1Walk-v0', 'h1_walk.onnx', 'internutopia_extension.robots.h1_locomotion.gait',
                       'internutopia_extension.robots.h1_locomotion.rewards', 'H1 walking policy, PPO on CPU'),
    'aliengo': WalkingRobot('internutopia/AliengoWalk-v0', 'aliengo_walk.onnx', 'internutopia_extension.robots.aliengo_locomotion.gait',
                            'internutopia_extension.robots.aliengo_locomotion.rewards', 'Aliengo walking policy, PPO on CPU'),
    'gr1': WalkingRobot('internutopia/GR1Walk-v0', 'gr1_walk.onnx', 'internutopia_extension.robots.gr1_locomotion.gait',
                        'internutopia_extension.robots.gr1_locomotion.rewards', 'GR1 walking policy, PPO on CPU'),
}


def _gait(gait_module: ModuleType | None) -> ModuleType:
    """``gait_module``, or H1's gait (the default robot's)."""
    if gait_module is not None:
        return gait_module
    from internutopia_extension.robots.h1_locomotion import gait

    return gait

#: Mean KL divergence per update the adaptive learning rate aims at, and the rate's bounds.
DESIRED_KL = 0.01
LEARNING_RATE_BOUNDS = (1e-5, 1e-2)
#: Learning rate of the critic's warm-up updates (``--critic-warmup``; the actor is frozen then).
CRITIC_WARMUP_RATE = 1e-3
#: Columns of ``progress.csv``.
PROGRESS_COLUMNS = ('steps', 'minutes', 'episodes', 'fall_rate', 'mean_seconds', 'velocity_error', 'yaw_rate_error',
                    'episode_reward', 'learning_rate')


def export_onnx(model: Any, path: str | Path, gait_module: ModuleType | None = None) -> None:
    """The policy's deterministic action (the Gaussian's mean) as an ONNX graph ``obs -> action``,
    with the robot's ``gait_module.ACTION_SCALE`` (default H1's) in its metadata."""
    import onnx
    import torch

    gait = _gait(gait_module)
    ACTION_SCALE, ACTION_SCALE_METADATA = gait.ACTION_SCALE, gait.ACTION_SCALE_METADATA

    policy = model.policy

    class Mean(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = policy.mlp_extractor.policy_net
            self.head = policy.action_net

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return torch.clamp(self.head(self.body(obs)), -1.0, 1.0)

    mean = Mean().eval()
    size = int(policy.observation_space.shape[0])
    temporary = Path(str(path) + '.tmp')
    # The TorchScript exporter (dynamo=False) on purpose: torch.export's needs onnxscript, which is
    # not installed, and writes another graph; its deprecation notices say nothing to act on here.
    with torch.no_grad(), warnings.catch_warnings():
        # By message, not module: run as ``-m`` the warning is attributed to ``__main__``.
        warnings.filterwarnings('ignore', category=DeprecationWarning, message=r'.*legacy TorchScript-based ONNX export')
        warnings.filterwarnings('ignore', category=DeprecationWarning, module=r'torch\.onnx')
        torch.onnx.export(mean, (torch.zeros(1, size, device=policy.device),), str(temporary), input_names=['obs'], output_names=['action'],
                          dynamic_axes={'obs': {0: 'batch'}, 'action': {0: 'batch'}}, dynamo=False)
    # The action scale the policy was trained with travels in the file: the walker refuses a policy
    # made for other scales instead of driving the joints wrong.
    graph = onnx.load(str(temporary))
    onnx.helper.set_model_props(graph, {ACTION_SCALE_METADATA: json.dumps([float(v) for v in ACTION_SCALE])})
    onnx.save(graph, str(temporary))
    os.replace(temporary, path)


def widen_inputs(state: dict[str, Any], new_columns: list[int]) -> dict[str, Any]:
    """A policy's ``state_dict`` with zero-weight inputs inserted at ``new_columns`` (indices in the
    new observation) of the first layer of the actor and the critic."""
    import torch

    widened = dict(state)
    for key in ('mlp_extractor.policy_net.0.weight', 'mlp_extractor.value_net.0.weight'):
        old = state[key]
        size = old.shape[1] + len(new_columns)
        kept = [c for c in range(size) if c not in set(new_columns)]
        weight = torch.zeros(old.shape[0], size, dtype=old.dtype)
        weight[:, kept] = old
        widened[key] = weight
    return widened


def plot(progress: str | Path, out: str | Path, title: str = 'H1 walking policy, PPO on CPU') -> None:
    """Fall rate, velocity error and episode length against env steps, from ``progress.csv`` (a
    dashed line where a ``stage`` column, if any, changes: one run continued by another)."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    with open(progress, encoding='utf-8') as stream:
        rows = [{k: float(v) if v else float('nan') for k, v in row.items()} for row in csv.DictReader(stream)]
    steps = [r['steps'] / 1e6 for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), dpi=110)
    for ax, key, label in zip(axes, ('fall_rate', 'velocity_error', 'mean_seconds'),
                              ('share of episodes that fell', 'velocity tracking error (m/s)', 'mean episode length (s)'),
                              strict=True):
        ax.plot(steps, [r[key] for r in rows], color='tab:blue')
        # A progress file joined from runs ('stage' column): where each later run took over.
        for before, after, step in zip(rows, rows[1:], steps[1:], strict=False):
            if after.get('stage', 0) != before.get('stage', 0):
                ax.axvline(step, color='gray', linestyle='--', linewidth=0.8)
        ax.set_xlabel('env steps (millions, 50 Hz)')
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


#: The exported graph's weights (:func:`export_onnx`'s names) and the PPO policy's they came from.
ONNX_TO_POLICY = {'body.': 'mlp_extractor.policy_net.', 'head.': 'action_net.'}


def actor_from_onnx(path: str | Path, action_scale: np.ndarray | None = None, gait_module: ModuleType | None = None) -> dict[str, Any]:
    """The actor's weights of an ONNX file :func:`export_onnx` wrote, as a PPO policy's
    ``state_dict`` entries (no critic, no action noise: the file holds neither), for the current
    :data:`~..gait.ACTION_SCALE`: where the file was trained with other scales (its metadata, or
    ``action_scale`` for a file without), the action head is rescaled so that the servo targets stay
    the same (except where an action sat at the old limit: the wider one lets it reach further)."""
    import onnx
    import torch
    from onnx import numpy_helper

    gait = _gait(gait_module)
    ACTION_SCALE, ACTION_SCALE_METADATA = gait.ACTION_SCALE, gait.ACTION_SCALE_METADATA

    graph = onnx.load(str(path))
    recorded = {prop.key: prop.value for prop in graph.metadata_props}.get(ACTION_SCALE_METADATA)
    trained_scale = np.asarray(json.loads(recorded) if recorded else (ACTION_SCALE if action_scale is None else action_scale), dtype=float)
    state = {}
    for tensor in graph.graph.initializer:
        prefix = next((p for p in ONNX_TO_POLICY if tensor.name.startswith(p)), None)
        if prefix is None:
            raise ValueError(f'{path}: weight {tensor.name!r} is not one of an exported walking policy '
                             f'(names start with {sorted(ONNX_TO_POLICY)})')
        state[ONNX_TO_POLICY[prefix] + tensor.name[len(prefix):]] = torch.from_numpy(numpy_helper.to_array(tensor).copy())
    ratio = torch.as_tensor(trained_scale / ACTION_SCALE, dtype=torch.float32)
    state['action_net.weight'] = state['action_net.weight'] * ratio[:, None]
    state['action_net.bias'] = state['action_net.bias'] * ratio
    return state


def start_from(model: Any, checkpoint: Path, max_std: float, action_scale: np.ndarray | None = None,
               gait_module: ModuleType | None = None) -> None:
    """Load ``checkpoint``'s policy into ``model``, widening its first layers to ``model``'s
    observation (new inputs first, the old layout after them, as :mod:`..gait` grew) and capping
    its action noise at ``max_std``. ``checkpoint`` is a run's ``checkpoint.zip`` or an exported
    ``.onnx`` policy (then only the actor is loaded, rescaled by :func:`actor_from_onnx` to the
    current action scale, ``action_scale`` being the file's where it does not record it; the critic
    keeps its fresh weights)."""
    import io
    import zipfile

    import torch

    if checkpoint.suffix == '.onnx':
        actor = actor_from_onnx(checkpoint, action_scale, gait_module)
        state = {**model.policy.state_dict(), **actor}
        if state['mlp_extractor.policy_net.0.weight'].shape[1] != int(model.policy.observation_space.shape[0]):
            raise ValueError(f'{checkpoint} observes {state["mlp_extractor.policy_net.0.weight"].shape[1]} inputs; '
                             f'the env gives {model.policy.observation_space.shape[0]}')
        state['log_std'] = torch.full_like(state['log_std'], float(np.log(max_std)))
        model.policy.load_state_dict(state)
        print(f'started the actor from {checkpoint} (critic untrained, action noise {max_std})', flush=True)
        return
    with zipfile.ZipFile(checkpoint) as archive:
        state = torch.load(io.BytesIO(archive.read('policy.pth')), map_location='cpu')
    old_size = int(state['mlp_extractor.policy_net.0.weight'].shape[1])
    new_size = int(model.policy.observation_space.shape[0])
    if new_size < old_size:
        raise ValueError(f'{checkpoint} observes {old_size} inputs, more than the current {new_size}')
    state = widen_inputs(state, list(range(new_size - old_size)))
    state['log_std'] = torch.clamp(state['log_std'], max=float(np.log(max_std)))
    model.policy.load_state_dict(state)
    print(f'started from {checkpoint} ({old_size} -> {new_size} inputs)', flush=True)


def mirror_loss(policy: Any, obs: np.ndarray, gait_module: ModuleType | None = None) -> Any:
    """Mean squared gap, per action, between each observation's action (the Gaussian's mean) and
    the mirror of what the policy does in the observation's mirror image (:func:`..gait.mirror_observation`,
    :data:`..gait.LEG_MIRROR_INDEX`): zero for a policy that walks the same on both legs. ``obs`` is
    a numpy batch ``(k, OBS_SIZE)``; the loss is a torch scalar with the actor's gradient."""
    import torch

    gait = _gait(gait_module)
    LEG_MIRROR_INDEX, LEG_MIRROR_SIGN, mirror_observation = gait.LEG_MIRROR_INDEX, gait.LEG_MIRROR_SIGN, gait.mirror_observation

    def batch(values: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(values, dtype=torch.float32, device=policy.device)

    action = policy.get_distribution(batch(obs)).distribution.mean
    mirror_action = policy.get_distribution(batch(mirror_observation(obs))).distribution.mean
    return torch.mean((action - mirror_action[:, LEG_MIRROR_INDEX] * batch(LEG_MIRROR_SIGN)) ** 2)


def mirror_updates(model: Any, weight: float) -> float:
    """One pass over the last rollout's observations in minibatches, each a gradient step on
    ``weight`` times :func:`mirror_loss` (the run's optimizer, at its current rate); returns the
    last loss. Nothing while the actor is frozen (``--critic-warmup``)."""
    import torch

    policy = model.policy
    if not policy.log_std.requires_grad:
        return float('nan')
    obs = model.rollout_buffer.observations.reshape(-1, int(policy.observation_space.shape[0]))
    order = np.random.default_rng(model.num_timesteps).permutation(len(obs))
    loss = torch.zeros(())
    for start in range(0, len(obs), model.batch_size):
        loss = mirror_loss(policy, obs[order[start:start + model.batch_size]], getattr(model, 'gait_module', None))
        policy.optimizer.zero_grad()
        (weight * loss).backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
        policy.optimizer.step()
    return float(loss.detach())


def mirrored_ppo() -> Any:
    """Stable-Baselines3's PPO whose every update ends with :func:`mirror_updates` at the weight
    ``mirror_weight`` (an attribute; 0 leaves PPO as it is). Its checkpoints are PPO's."""
    from stable_baselines3 import PPO

    class MirroredPPO(PPO):
        mirror_weight = 0.0
        last_mirror_loss = float('nan')
        gait_module: ModuleType | None = None  # the robot's gait (mirror maps); None: H1's

        def _excluded_save_params(self) -> list[str]:
            # A module is set again by the trainer on load, not saved in the checkpoint.
            return [*super()._excluded_save_params(), 'gait_module']

        def train(self) -> None:
            super().train()
            if self.mirror_weight:
                # After PPO's epochs: the rollout buffer still holds the observations they used.
                self.last_mirror_loss = mirror_updates(self, self.mirror_weight)

    return MirroredPPO


def freeze_actor(model: Any, frozen: bool) -> None:
    """Keep the actor (its layers, head and action noise) out of the next updates, or let it back in."""
    policy = model.policy
    for parameter in (*policy.mlp_extractor.policy_net.parameters(), *policy.action_net.parameters(), policy.log_std):
        parameter.requires_grad_(not frozen)


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
    parser.add_argument('--mirror-loss', type=float, default=0.0, metavar='WEIGHT',
                        help='after each update, steps on the gap between the policy and its own mirror image '
                             '(left and right legs swapped) at this weight: a gait the same on both legs (default 0: off)')
    parser.add_argument('--reward-scale', action='append', default=[], metavar='TERM=SCALE',
                        help='override one reward scale (repeatable), e.g. --reward-scale hip_pos=-0.3')
    parser.add_argument('--plot', action='store_true', help='only draw OUT/progress.csv as OUT/training.png')
    args = parser.parse_args(argv)
    import importlib

    robot = ROBOTS[args.robot]
    gait_module = importlib.import_module(robot.gait)
    reward_scales = _reward_scales(parser, args.reward_scale, importlib.import_module(robot.rewards))
    init_scale = _init_action_scale(parser, args.init_action_scale, gait_module)
    for flag, share in (('--lateral-share', args.lateral_share), ('--sidestep-share', args.sidestep_share)):
        if share is not None and not 0.0 <= share <= 1.0:
            parser.error(f'{flag} must be between 0 and 1; got {share}')
    if not args.mirror_loss >= 0.0:
        parser.error(f'--mirror-loss takes a weight >= 0; got {args.mirror_loss}')
    if args.critic_warmup < 0 or (args.critic_warmup and not args.init_from):
        parser.error(f'--critic-warmup takes a count of updates >= 0 and needs --init-from; got {args.critic_warmup}')
    out = Path(args.out or f'runs/{args.robot}_walk')
    if args.plot:
        plot(out / 'progress.csv', out / 'training.png', robot.title)
        return

    import gymnasium
    import torch
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor

    from internutopia.core.gym_vector import sb3_vec_env

    torch.set_num_threads(args.threads)
    out.mkdir(parents=True, exist_ok=True)
    # By its id (the 'module:' prefix imports what registers it): the env is an application's.
    walk = gymnasium.make_vec(f'internutopia:{robot.env_id}', num_envs=args.num_envs, autoreset_mode='SameStep',
                              backend=args.backend, device=args.device, pushes=not args.no_pushes,
                              lateral_share=args.lateral_share, sidestep_share=args.sidestep_share, reward_scales=reward_scales or None)
    if args.lateral_share is not None or args.sidestep_share is not None or reward_scales:
        print(f'training emphasis: lateral_share {args.lateral_share}, sidestep_share {args.sidestep_share}, '
              f'reward scales {reward_scales}', flush=True)
    envs = VecMonitor(sb3_vec_env(walk))
    envs.seed(args.seed)
    checkpoint = out / 'checkpoint.zip'
    warmup = 0
    ppo_class = mirrored_ppo()
    if args.resume and checkpoint.is_file():
        model = ppo_class.load(checkpoint, env=envs, device=args.torch_device)
        print(f'resumed from {checkpoint} at {model.num_timesteps:,} steps', flush=True)
    else:
        model = ppo_class('MlpPolicy', envs, n_steps=args.rollout, batch_size=min(2048, args.rollout * args.num_envs), n_epochs=5,
                    learning_rate=args.learning_rate, gamma=0.99, gae_lambda=0.95, clip_range=0.2, ent_coef=0.001, vf_coef=1.0,
                    max_grad_norm=1.0, seed=args.seed, device=args.torch_device, verbose=0,
                    policy_kwargs={'net_arch': {'pi': [256, 128, 64], 'vf': [256, 128, 64]},
                                   'activation_fn': torch.nn.ELU, 'log_std_init': -0.7})
        if args.init_from:
            start_from(model, Path(args.init_from), args.max_std, init_scale, gait_module)
            warmup = args.critic_warmup
    model.mirror_weight = args.mirror_loss
    model.gait_module = gait_module
    if args.mirror_loss:
        print(f'mirror loss at weight {args.mirror_loss}', flush=True)
    progress = out / 'progress.csv'
    if not progress.is_file():
        with open(progress, 'w', encoding='utf-8', newline='') as stream:
            csv.writer(stream).writerow(PROGRESS_COLUMNS)
    started = time.perf_counter()
    minutes_before = 0.0
    with open(progress, encoding='utf-8') as stream:
        rows = list(csv.DictReader(stream))
        if rows:
            minutes_before = float(rows[-1]['minutes'])
            if model.num_timesteps and rows[-1].get('learning_rate'):  # resumed: at the adapted rate
                resumed_rate = float(rows[-1]['learning_rate'])
                model.lr_schedule = lambda _: resumed_rate

    class Checkpoints(BaseCallback):
        """Episode records in, a progress row and a checkpoint out every ``--checkpoint-every`` steps."""

        def __init__(self) -> None:
            super().__init__()
            self.records: list[dict[str, Any]] = []
            self.rewards: list[float] = []
            self.next_save = (model.num_timesteps // args.checkpoint_every + 1) * args.checkpoint_every
            self.rate = float(model.lr_schedule(1.0))
            self.updates = 0

        def _on_rollout_start(self) -> None:
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
            for done, info in zip(self.locals['dones'], self.locals['infos'], strict=True):
                if done and isinstance(info.get('metrics'), dict):
                    self.records.append(info['metrics'])
                    if 'episode' in info:
                        self.rewards.append(float(info['episode']['r']))
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
            if self.num_timesteps < self.next_save:
                return
            self.next_save += args.checkpoint_every
            records = self.records or [{}]
            row = {'steps': self.num_timesteps,
                   'minutes': round(minutes_before + (time.perf_counter() - started) / 60, 2),
                   'episodes': len(self.records),
                   'fall_rate': float(np.mean([bool(r.get('fell', False)) for r in records])),
                   'mean_seconds': float(np.mean([r.get('seconds', 0.0) for r in records])),
                   'velocity_error': float(np.mean([r.get('mean_velocity_error', np.nan) for r in records])),
                   'yaw_rate_error': float(np.mean([r.get('mean_yaw_rate_error', np.nan) for r in records])),
                   'episode_reward': float(np.mean(self.rewards)) if self.rewards else float('nan'),
                   'learning_rate': self.rate}
            extra = f'  mirror_loss {model.last_mirror_loss:.3g}' if model.mirror_weight else ''
            self.records, self.rewards = [], []
            with open(progress, 'a', encoding='utf-8', newline='') as stream:
                csv.writer(stream).writerow([row[c] for c in PROGRESS_COLUMNS])
            temporary = out / 'checkpoint.tmp.zip'
            model.save(temporary)
            os.replace(temporary, checkpoint)
            export_onnx(model, out / robot.policy_file, gait_module)
            print('  '.join(f'{k} {v:.3g}' if isinstance(v, float) else f'{k} {v:,}' for k, v in row.items()) + extra, flush=True)

    try:
        model.learn(total_timesteps=max(args.steps - model.num_timesteps, 1), callback=Checkpoints(), reset_num_timesteps=False)
    finally:
        envs.close()


if __name__ == '__main__':
    main()
