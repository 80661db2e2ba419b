"""Generate pick-and-place demonstrations with the scripted policy, recorded as a LeRobot dataset.

Runs ``--episodes`` random Franka pick-and-place episodes (``examples/franka_pick_place.py``'s,
optionally on a table) on ``--slots`` env slots with the scripted policy
(:class:`internutopia_extension.policies.ScriptedPickPlace`), and records every successful one
with :class:`internutopia.recording.Recorder` (failed ones are dropped; ``--keep-failed`` keeps them,
marked). ``--cameras`` adds 256x256 front and wrist cameras, saved as videos. Needs the ``franka``
and ``dataset`` extras::

    python examples/generate_demos.py --out demos/pick_place --episodes 64 --slots 16 [--cameras] [--stream] [--physics-dt 0.0333]

Then ``examples/train_bc.py --data demos/pick_place`` trains a policy on them (record them with
``--stream``: docs/datasets.md says why).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from franka_pick_place import random_episodes  # noqa: E402

from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia.recording import Recorder  # noqa: E402
from internutopia_extension import import_extensions  # noqa: E402
from internutopia_extension.configs.robots.franka import front_camera_256_cfg, wrist_camera_256_cfg  # noqa: E402
from internutopia_extension.policies import ScriptedPickPlace  # noqa: E402

#: The env step of the demonstrations (InternManip's GenManip steps at 1/30 s).
PHYSICS_DT = 1 / 30


def demo_config(episodes: int, slots: int, seed: int = 0, cameras: bool = False, physics_dt: float = PHYSICS_DT) -> Config:
    """The run: ``episodes`` random pick-and-place episodes on ``slots`` slots, with 256x256 RGB front
    and wrist cameras when ``cameras``."""
    tasks = random_episodes(episodes, seed)
    if cameras:
        sensors = [front_camera_256_cfg.update(depth=False), wrist_camera_256_cfg.update(depth=False)]
        tasks = [t.update(robots=[t.robots[0].update(sensors=sensors)]) for t in tasks]
    return Config(simulator=SimConfig(physics_dt=physics_dt, rendering_dt=physics_dt, headless=True), env_num=slots,
                  env_offset_size=3.0, metrics_save_path='none', task_configs=tasks)


def scripted_actions(policy: ScriptedPickPlace, obs: list, targets: dict[int, str]) -> list:
    """The scripted policy's action for every slot with an observation (``None`` elsewhere)."""
    active = [i for i, o in enumerate(obs) if o is not None]
    actions: list = [None] * len(obs)
    if not active:
        return actions
    cube = np.array([obs[i]['objects'][targets[i]]['position'] for i in active])
    quat = np.array([obs[i]['objects'][targets[i]]['orientation'] for i in active])
    tcp = np.array([obs[i]['franka']['controllers']['arm_ik_controller']['eef_position'] for i in active])
    pose, grip = policy.act(np.array(active), cube, quat, tcp)
    for row, slot in enumerate(active):
        actions[slot] = {'franka': {'arm_ik_controller': [pose[row, :3], pose[row, 3:]],
                                    'gripper_controller': ['open' if grip[row] > 0.5 else 'close']}}
    return actions


def generate(config: Config, out: str | Recorder | None, keep_failed: bool = False, overwrite: bool = False,
             stream: bool = False) -> dict:
    """Run every episode of ``config`` with the scripted policy, recording into ``out`` (a folder, a
    :class:`Recorder` made for it, or ``None``: no recording); the counts of episodes run, succeeded
    and saved, and the wall time. ``stream``: the scripted policy streams a smooth path instead of
    sending each waypoint at once."""
    import_extensions()
    # The dataset folder is claimed before the env is built: one that cannot be used is refused at once.
    recorder = out if isinstance(out, Recorder) else Recorder(out, keep_failed=keep_failed, overwrite=overwrite) if out else None
    try:
        env = Env(config)
    except BaseException:
        if recorder is not None:
            recorder.close()  # (releases the folder's claim)
        raise
    if recorder is not None:
        recorder.attach(env)
    policy = ScriptedPickPlace(physics_dt=config.simulator.physics_dt, jump=not stream)
    began = time.perf_counter()
    steps = succeeded = finished = 0
    try:
        obs, infos = env.reset()
        targets = {slot: info.target for slot, info in enumerate(infos) if info is not None}
        started = sorted(targets)
        policy.reset(np.array(started), np.array([infos[s].goal_position for s in started]))
        while not env.finished:
            obs, _, terminated, _, info = env.step(scripted_actions(policy, obs, targets))
            steps += 1
            ended = [slot for slot in range(env.env_num) if terminated[slot] and info[slot] is not None]
            for slot in ended:
                finished += 1
                succeeded += bool(info[slot]['metrics'].get('success'))
            if ended:
                new_obs, new_infos = env.reset(ended)
                for slot, slot_obs, slot_info in zip(ended, new_obs, new_infos, strict=True):
                    obs[slot] = slot_obs
                    if slot_info is not None:
                        targets[slot] = slot_info.target
                        policy.reset(np.array([slot]), np.array([slot_info.goal_position]))
    finally:
        env.close()  # also finishes the recording's last saves
    return {'episodes': finished, 'succeeded': succeeded, 'saved': recorder.episodes_saved if recorder else 0,
            'steps': steps, 'wall_s': round(time.perf_counter() - began, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out', default='demos/pick_place', help='the dataset folder (must be new or empty)')
    parser.add_argument('--episodes', type=int, default=64)
    parser.add_argument('--slots', type=int, default=16)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--cameras', action='store_true', help='record 256x256 front and wrist camera videos')
    parser.add_argument('--physics-dt', type=float, default=PHYSICS_DT)
    parser.add_argument('--keep-failed', action='store_true', help='also save failed episodes (marked next.success=false)')
    parser.add_argument('--overwrite', action='store_true', help='replace an existing dataset at --out')
    parser.add_argument('--stream', action='store_true', help='stream smooth paths instead of jumping to each waypoint')
    args = parser.parse_args()
    if args.episodes < 1 or args.slots < 1:
        parser.error('--episodes and --slots must be >= 1')
    if not args.physics_dt > 0:
        parser.error(f'--physics-dt must be > 0 seconds; got {args.physics_dt}')
    config = demo_config(args.episodes, args.slots, args.seed, args.cameras, args.physics_dt)
    try:  # the folder first: one that holds a dataset or cannot be written is refused before anything runs
        recorder = Recorder(args.out, keep_failed=args.keep_failed, overwrite=args.overwrite)
    except OSError as exc:  # (FileExistsError included)
        parser.error(f"--out: {str(exc).replace('overwrite=True', '--overwrite')}")
    summary = generate(config, recorder, stream=args.stream)
    print(f"{summary['episodes']} episodes, {summary['succeeded']} succeeded, {summary['saved']} saved to {args.out} "
          f"({summary['steps']} steps, {summary['wall_s']} s)")


if __name__ == '__main__':
    main()
