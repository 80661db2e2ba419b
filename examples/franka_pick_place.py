"""Pick and place with Franka arms: 4 slots, each its own cube and goal, a scripted policy.

Each episode (a ``ManipulationTaskCfg`` whose ``target`` names the cube and whose
``goal_position`` says where the cube must end up) starts a Panda at home with a 5 cm cube on the
floor in front of it and a translucent marker at the goal. The scripted policy
(:class:`internutopia_extension.policies.ScriptedPickPlace`) approaches, grasps, lifts, carries,
lowers and releases through the ``arm_ik_controller`` (IK targets, env-local) and the
``gripper_controller`` (``['open']``/``['close']``). An episode ends with success once the cube
rests within ``success_distance`` of its goal and the gripper has let go; the example checks that
every slot succeeded and prints each episode's metrics.

Run headless from the repository root (needs the ``franka`` extra); ``--config`` runs the same
episodes from ``configs/franka_pick_place.yaml`` instead of the configs built here::

    python examples/franka_pick_place.py [--config configs/franka_pick_place.yaml]
"""

from __future__ import annotations

import argparse

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.objects import DynamicCubeCfg, VisualCubeCfg
from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg
from internutopia_extension.configs.tasks import ManipulationTaskCfg
from internutopia_extension.policies import ScriptedPickPlace

#: (cube position, goal position) per slot, env-local metres; the cube's centre sits 2.5 cm up.
EPISODES = [
    ((0.50, 0.10, 0.025), (0.30, -0.40, 0.025)),
    ((0.45, -0.25, 0.025), (0.55, 0.30, 0.025)),
    ((0.60, 0.00, 0.025), (0.35, 0.35, 0.025)),
    ((0.35, 0.30, 0.025), (0.60, -0.15, 0.025)),
]


def episode(index: int, cube: tuple, goal: tuple) -> ManipulationTaskCfg:
    return ManipulationTaskCfg(
        scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
        robots=[FrankaRobotCfg(position=(0.0, 0.0, 0.0), controllers=[arm_ik_cfg, gripper_cfg])],
        objects=[
            DynamicCubeCfg(name='cube', position=cube, scale=(0.05, 0.05, 0.05), color=(0.9, 0.2, 0.1)),
            VisualCubeCfg(name='goal_marker', position=goal, scale=(0.05, 0.05, 0.05), color=(0.1, 0.8, 0.2, 0.3)),
        ],
        prompt='put the red cube on the green marker', target='cube', goal_position=goal,
        success_distance=0.03, episode_idx=index, max_steps=2400,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--config', default=None, help='a YAML config to run instead of the built-in episodes')
    args = parser.parse_args()
    import_extensions()
    if args.config is not None:
        config = Config.from_yaml(args.config)
    else:
        config = Config(simulator=SimConfig(physics_dt=1 / 240, headless=True), env_num=4, env_offset_size=3.0,
                        metrics_save_path='none', task_configs=[episode(i, *e) for i, e in enumerate(EPISODES)])
    env = Env(config)
    policy = ScriptedPickPlace(physics_dt=config.simulator.physics_dt)
    obs, infos = env.reset()
    slots = np.arange(env.env_num)
    policy.reset(slots, np.array([info.goal_position for info in infos]))
    results: dict[int, dict] = {}
    while len(results) < len(config.task_configs):
        active = [i for i in slots if obs[i] is not None]
        cube = np.array([obs[i]['objects']['cube']['position'] for i in active])
        quat = np.array([obs[i]['objects']['cube']['orientation'] for i in active])
        tcp = np.array([obs[i]['franka']['controllers']['arm_ik_controller']['eef_position'] for i in active])
        targets, grip = policy.act(np.array(active), cube, quat, tcp)
        actions = [None] * env.env_num
        for row, slot in enumerate(active):
            actions[slot] = {'franka': {'arm_ik_controller': [targets[row, :3], targets[row, 3:]],
                                        'gripper_controller': ['open' if grip[row] > 0.5 else 'close']}}
        obs, _, terminated, _, info = env.step(actions)
        ended = [slot for slot in active if terminated[slot]]
        for slot in ended:
            results[info[slot]['episode_index']] = info[slot]['metrics']
        if ended:  # next episodes from the queue, if any are left (a reset costs about a step)
            new_obs, new_infos = env.reset(ended)
            for slot, slot_obs, slot_info in zip(ended, new_obs, new_infos, strict=True):
                obs[slot] = slot_obs
                if slot_info is not None:
                    policy.reset(np.array([slot]), np.array([slot_info.goal_position]))
    env.close()
    for index in sorted(results):
        metrics = results[index]
        print(f"episode {index}: success={metrics['success']} distance={metrics['distance_to_goal']:.4f} m "
              f"steps={metrics['steps']} dropped={metrics['dropped']}")
    failed = [index for index, metrics in results.items() if not metrics['success']]
    assert not failed, f'episodes {failed} did not place their cube'
    print('all cubes placed')


if __name__ == '__main__':
    main()
