"""Train a behaviour-cloning policy on recorded pick-and-place demonstrations, then run it in closed loop.

Reads a dataset written by ``examples/generate_demos.py --stream`` with LeRobot's own
``LeRobotDataset`` (offline; :func:`internutopia.recording.reader.open_lerobot_dataset`) and fits a
small MLP (torch, CPU) from columns of each frame's ``observation.state`` and
``observation.environment_state``, picked by name (the cube and the goal relative to the tool, the
tool's height, the finger opening, the cube's orientation), to its ``action`` as the controllers
received it: the IK target (its position relative to the tool, taken :data:`LOOKAHEAD` frames
later on the streamed path), its orientation, and the gripper command (averaged over the next
:data:`GRIP_LOOKAHEAD` frames). The look-aheads and a noise augmentation (the tool displaced by
:data:`NOISE` m, the target kept: the policy learns to steer back onto the path) remove the
fixed points where a plain copy of the demonstrations stops for good: at rest on the cube with the
fingers open, the demonstrations close after a few frames that look just the same. Then it drives
the Franka with the policy on new random episodes (another seed) and reports how many cubes it
placed. Needs the ``franka``, ``dataset`` and ``train`` extras and lerobot (``docs/datasets.md``)::

    python examples/generate_demos.py --out demos/pick_place --episodes 256 --stream
    python examples/train_bc.py --data demos/pick_place [--epochs 30] [--eval-episodes 32]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from franka_pick_place import random_episodes  # noqa: E402
from generate_demos import PHYSICS_DT  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Layout  # noqa: E402
from internutopia.recording.reader import open_lerobot_dataset  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402

#: Action columns: the IK target position and wxyz orientation, the gripper (the IK mode column is
#: always "pose" in these demonstrations).
IK_POSITION, IK_ORIENTATION, GRIPPER = slice(0, 3), slice(3, 7), 8
#: Steps an evaluation episode may take (the streamed scripted demonstrations take 206-283 at 1/30 s).
MAX_STEPS = 450
#: Frames ahead on the demonstration's path whose IK target the policy predicts (at rest, where the
#: path goes next, not where it is).
LOOKAHEAD = 5
#: Frames over which the gripper command is averaged ahead (it closes once the tool rests on the cube).
GRIP_LOOKAHEAD = 8
#: Standard deviation (m) of the tool displacements of the augmented copies, and how many copies.
NOISE, NOISY_COPIES = 0.015, 3
#: Height (m) of the cube's centre (0.025 on the floor) that counts as picked up.
PICKED_HEIGHT = 0.1
#: Finger opening (m) below which the hand holds the cube (open: 0.04; on the 5 cm cube: 0.025).
HOLDING = 0.035

#: The observation columns the policy sees (by their dataset names; see docs/datasets.md).
TCP = [f'franka.controllers.arm_ik_controller.eef_position.{i}' for i in range(3)]
FINGER = ['franka.controllers.gripper_controller.gripper_pos.0']
CUBE = [f'objects.cube.position.{i}' for i in range(3)]
CUBE_QUAT = [f'objects.cube.orientation.{i}' for i in range(4)]
GOAL = [f'task.goal_position.{i}' for i in range(3)]


def columns(table: np.ndarray, names: list[str], which: list[str]) -> np.ndarray:
    """``table``'s columns named ``which`` (``names``: the table's column names)."""
    return table[:, [names.index(n) for n in which]]


def features(tcp: np.ndarray, cube: np.ndarray, goal: np.ndarray, finger: np.ndarray, cube_quat: np.ndarray) -> np.ndarray:
    """The policy's inputs, ``(n, 12)``: the cube and the goal relative to the tool (what carries
    over to cubes and goals elsewhere), the tool's height, the finger opening, the cube's orientation."""
    return np.concatenate([cube - tcp, goal - tcp, tcp[:, 2:3], finger, cube_quat], axis=1).astype(np.float32)


def _ahead(episode: np.ndarray, frames: int) -> np.ndarray:
    """For each frame, the index of the frame ``frames`` later in its episode (its last, at most)."""
    later = np.arange(len(episode))
    for index in np.unique(episode):
        rows = np.flatnonzero(episode == index)
        later[rows] = rows[np.minimum(np.arange(len(rows)) + frames, len(rows) - 1)]
    return later


def load_demos(root: str, seed: int = 0) -> dict:
    """The demonstrations' inputs and targets (see the module doc), read by LeRobot's dataset class,
    with :data:`NOISY_COPIES` augmented copies."""
    dataset = open_lerobot_dataset(root)
    state_names = (dataset.features.get('observation.state') or {}).get('names') or []
    env_names = (dataset.features.get('observation.environment_state') or {}).get('names') or []
    missing = [name for name in TCP + FINGER if name not in state_names] + [name for name in CUBE + CUBE_QUAT + GOAL
                                                                           if name not in env_names]
    if missing or 'action' not in dataset.features:
        more = f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''
        raise ValueError(f'{root} is not a pick-and-place dataset of examples/generate_demos.py: it has no column '
                         f"{(missing or ['action'])[0]!r}{more}")
    table = dataset.hf_dataset.with_format('numpy')
    state, environment = np.stack(table['observation.state']), np.stack(table['observation.environment_state'])
    actions, episode = np.stack(table['action']), np.asarray(table['episode_index'])
    tcp, finger = columns(state, state_names, TCP), columns(state, state_names, FINGER)
    cube, goal = columns(environment, env_names, CUBE), columns(environment, env_names, GOAL)
    cube_quat = columns(environment, env_names, CUBE_QUAT)
    target = actions[_ahead(episode, LOOKAHEAD), IK_POSITION]
    grip = np.mean([actions[_ahead(episode, k), GRIPPER] for k in range(GRIP_LOOKAHEAD)], axis=0)
    rng = np.random.default_rng(seed)
    inputs, targets = [], []
    for copy in range(1 + NOISY_COPIES):
        shift = rng.normal(0.0, NOISE, tcp.shape) if copy else np.zeros_like(tcp)
        held = finger < HOLDING  # a held cube moves with the tool
        moved = tcp + shift
        inputs.append(features(moved, cube + shift * held, goal, finger, cube_quat))
        targets.append(np.concatenate([target - moved, actions[:, IK_ORIENTATION], grip[:, None]], axis=1))
    return {'inputs': np.concatenate(inputs), 'targets': np.concatenate(targets).astype(np.float32),
            'episodes': dataset.num_episodes, 'frames': len(state), 'names': (state_names, env_names)}


def train(inputs: np.ndarray, targets: np.ndarray, epochs: int = 30, seed: int = 0) -> object:
    """An MLP fitted to the demonstrations (mean squared error on standardized inputs and targets)."""
    import torch

    torch.set_num_threads(1)  # a small network: more threads only wait on each other (on a busy machine, long)
    torch.manual_seed(seed)
    x, y = torch.from_numpy(inputs), torch.from_numpy(targets)
    x_mean, x_std = x.mean(0), x.std(0).clamp_min(1e-3)
    y_mean, y_std = y.mean(0), y.std(0).clamp_min(1e-3)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, y.shape[1]))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)
    xn, yn = (x - x_mean) / x_std, (y - y_mean) / y_std
    for _ in range(epochs):
        order = torch.randperm(len(xn))
        for start in range(0, len(xn), 256):
            batch = order[start:start + 256]
            loss = torch.nn.functional.mse_loss(net(xn[batch]), yn[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
    net.eval()

    def policy(features: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            out = net((torch.from_numpy(features.astype(np.float32)) - x_mean) / x_std) * y_std + y_mean
        return out.numpy()

    policy.final_loss = loss.item()  # type: ignore[attr-defined]
    return policy


def evaluate(policy: object, episodes: int, slots: int, seed: int, names: tuple[list, list]) -> dict:
    """Run ``policy`` in closed loop on ``episodes`` new random episodes: how many cubes it placed
    (the task's success) and how many it picked (lifted :data:`PICKED_HEIGHT` off the floor)."""
    import_extensions()
    config = Config(simulator=SimConfig(physics_dt=PHYSICS_DT, rendering_dt=PHYSICS_DT, headless=True), env_num=slots,
                    env_offset_size=3.0, metrics_save_path='none',
                    task_configs=[t.update(max_steps=MAX_STEPS) for t in random_episodes(episodes, seed)])
    placed = finished = picked = 0
    height = np.zeros(slots)  # each slot's highest cube so far in its episode
    with Env(config) as env:
        obs, _ = env.reset()
        first = next(o for o in obs if o is not None)
        layout = Layout.from_observation(first, ['franka'], {})
        if (layout.state_names, layout.environment_names) != names:  # the columns the policy was trained on
            raise RuntimeError('the evaluation episodes lay out their observations unlike the demonstrations')
        while not env.finished:
            active = [i for i, o in enumerate(obs) if o is not None]
            state = np.stack([layout.state(obs[i]) for i in active])
            environment = np.stack([layout.environment_state(obs[i]) for i in active])
            tcp = columns(state, names[0], TCP)
            height[active] = np.maximum(height[active], columns(environment, names[1], CUBE)[:, 2])
            out = policy(features(tcp, columns(environment, names[1], CUBE), columns(environment, names[1], GOAL),  # type: ignore[operator]
                                  columns(state, names[0], FINGER), columns(environment, names[1], CUBE_QUAT)))
            out = np.concatenate([out[:, 0:3] + tcp, out[:, 3:]], axis=1)  # the IK target: the tool plus the lead
            actions: list = [None] * env.env_num
            for row, slot in enumerate(active):
                quat = out[row, 3:7] / max(np.linalg.norm(out[row, 3:7]), 1e-6)
                actions[slot] = {'franka': {'arm_ik_controller': [out[row, :3].astype(float), quat.astype(float)],
                                            'gripper_controller': ['open' if out[row, 7] > 0.5 else 'close']}}
            obs, _, terminated, _, info = env.step(actions)
            ended = [slot for slot in active if terminated[slot]]
            for slot in ended:
                finished += 1
                placed += bool(info[slot]['metrics']['success'])
                picked += bool(height[slot] > PICKED_HEIGHT)
                height[slot] = 0.0
            if ended:
                new_obs, _ = env.reset(ended)
                for slot, slot_obs in zip(ended, new_obs, strict=True):
                    obs[slot] = slot_obs
    return {'episodes': finished, 'placed': placed, 'picked': picked, 'success_rate': placed / max(finished, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data', default='demos/pick_place', help='a dataset from examples/generate_demos.py')
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--eval-episodes', type=int, default=32)
    parser.add_argument('--slots', type=int, default=16)
    parser.add_argument('--seed', type=int, default=1000, help='seed of the evaluation episodes (demos: 0)')
    args = parser.parse_args()
    for flag, count in (('--epochs', args.epochs), ('--eval-episodes', args.eval_episodes), ('--slots', args.slots)):
        if count < 1:  # (before the training, not after it)
            parser.error(f'{flag} must be >= 1; got {count}')
    try:
        demos = load_demos(args.data)
    except (OSError, ValueError) as exc:  # no dataset there, or not one of generate_demos.py's
        parser.error(f'--data: {exc}')
    began = time.perf_counter()
    policy = train(demos['inputs'], demos['targets'], args.epochs)
    print(f"trained on {demos['episodes']} demonstrations ({demos['frames']} frames, {len(demos['inputs'])} with the "
          f"augmented copies) in "
          f"{time.perf_counter() - began:.0f} s; final loss {policy.final_loss:.4f}")  # type: ignore[attr-defined]
    result = evaluate(policy, args.eval_episodes, args.slots, args.seed, demos['names'])
    print(f"closed loop: {result['placed']} of {result['episodes']} cubes placed (success rate {result['success_rate']:.2f}), "
          f"{result['picked']} picked up")


if __name__ == '__main__':
    main()
