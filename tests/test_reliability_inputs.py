"""Hostile input at run time: commands beyond a robot's physical range, episode lists changed
after the env is built, and the memory check's view of the machine."""

from __future__ import annotations

import numpy as np

from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def test_a_wheel_command_beyond_the_robots_range_drives_at_top_speed_not_zero(make_config):
    # MuJoCo sets a control over 1e10 to zero (a console warning only): 1e9 m/s used to stand still.
    task = FiniteStepTaskCfg(max_steps=1000, robots=[JetbotRobotCfg()])
    with Env(make_config([task] * 3, env_num=3)) as env:
        env.reset()
        for _ in range(120):
            obs, _, _, _, info = env.step([{'jetbot': {'move_by_speed': [v, 0.0]}} for v in (1e9, 50.0, -1e9)])
        x = [o['jetbot']['position'][0] for o in obs]
        assert x[0] > 0.1 and x[2] < -0.1  # it moved, each way
        np.testing.assert_allclose(x[0], x[1], rtol=1e-6)  # as fast as any command beyond top speed
        assert not any('diverged' in i for i in info)


def test_an_episode_list_is_taken_as_it_was_when_the_env_was_built(make_config):
    task = FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()])
    episodes = [task, task]
    with Env(make_config([task], env_num=1), episodes=episodes) as env:
        episodes.append(FiniteStepTaskCfg(max_steps=1, robots=[JetbotRobotCfg()]))
        episodes.append('not a task')
        task.max_steps = 7
        seen = []
        env.reset()
        while not env.finished:
            _, _, terminated, _, info = env.step([None])
            seen.append(info[0]['steps'])
            if terminated[0]:
                env.reset()
        assert seen == [1, 1]  # two episodes of one step: neither the appended ones nor the edit
