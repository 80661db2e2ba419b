"""The benchmark's physics limit replays exactly the motion ours simulated."""

from __future__ import annotations

import numpy as np

from internutopia.core.vec_env import Env
from internutopia.limit import PhysicsLimit
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_along_path_cfg, move_by_speed_cfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def test_replay_reaches_the_state_ours_reached(make_config):
    # Two structures (an H1 moved through its mocap target, jetbots through wheel controls): two packs.
    h1 = FiniteStepTaskCfg(max_steps=1000, robots=[H1RobotCfg(controllers=[move_by_speed_cfg, move_along_path_cfg])])
    jetbot = FiniteStepTaskCfg(max_steps=1000, robots=[JetbotRobotCfg()])
    env = Env(make_config([h1, jetbot, jetbot], env_num=3, offset=5.0))
    env.reset()
    world = env.runner.world
    limit = PhysicsLimit(world)
    steps = 30
    limit.start_round(steps)
    for k in range(steps):
        env.step([{'h1': {'move_along_path': [[(1.0, 0.5, 0.0), (2.0, 0.0, 0.0)]]}},
                  {'jetbot': {'move_by_speed': [0.3, 0.5 * np.sin(k / 5)]}},
                  {'jetbot': {'move_by_speed': [0.1, -1.0]}}])
        limit.record(k)
    seconds = limit.replay()
    assert seconds > 0
    for part in limit._parts:
        pack = part.pack
        np.testing.assert_array_equal(part.batch.bind('qpos'), pack.data.qpos[pack.slots])
    per_step, clean = limit.replay_steps()  # step by step (the benchmark's pairs): the same motion again
    assert per_step.shape == clean.shape == (steps,) and (per_step > 0).all() and clean.all()
    assert len(limit._parts) == 2
    for part in limit._parts:
        pack = part.pack
        np.testing.assert_array_equal(part.batch.bind('qpos'), pack.data.qpos[pack.slots])
        np.testing.assert_array_equal(part.batch.bind('qvel'), pack.data.qvel[pack.slots])
    env.close()
