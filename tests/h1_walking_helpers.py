"""Helpers of the H1 walking tests (``test_h1_walking*.py``): a walking H1 env, its robot group, leg actions."""

from __future__ import annotations

import numpy as np

from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension.configs.controllers.h1_leg_action import H1LegActionControllerCfg
from internutopia_extension.configs.robots.h1 import H1RobotCfg
from internutopia_extension.configs.tasks import LocomotionTaskCfg

SCENE = gm.ASSET_PATH + '/scenes/empty.usd'
#: H1's mass as Menagerie models it (kg), and gravity.
H1_MASS = 51.4
GRAVITY = 9.81


def walking_env(env_num=2, max_steps=400, commands=((0.0, 0.0, 0.0, 0.0),), task_fields=None, **robot):
    """A reset env of ``env_num`` walking H1s on flat ground (``robot``: H1RobotCfg fields), each
    driven by leg actions unless ``walking_policy`` says otherwise, stepped at 200 Hz."""
    robot.setdefault('walking_policy', 'controller')
    robot.setdefault('controllers', [H1LegActionControllerCfg()])
    cfg = H1RobotCfg(locomotion='walking', position=(0.0, 0.0, 1.0), **robot)
    task = LocomotionTaskCfg(scene_asset_path=SCENE, robots=[cfg], max_steps=max_steps, commands=list(commands),
                             **(task_fields or {}))
    config = Config(simulator=SimConfig(physics_dt=0.005, rendering_dt=0.005), env_num=env_num, env_offset_size=3.0,
                    metrics_save_path='none', task_configs=[task] * env_num)
    env = Env(config)
    env.reset()
    return env


def h1_group(env):
    """The H1 robot group of ``env`` (every slot's H1)."""
    return env.runner.slot_robots[0]['h1']


def step(env, action, n):
    """Step ``env`` ``n`` times with the leg ``action`` in every slot; the last step's results."""
    out = None
    for _ in range(n):
        out = env.step_arrays({'h1': {'leg_action': np.tile(action, (env.env_num, 1))}})
    return out
