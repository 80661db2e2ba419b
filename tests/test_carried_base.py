"""The carried humanoids (H1's and GR1's ``locomotion='carried'``, :mod:`internutopia_extension.robots.carried_base`):
a teleported robot's mocap target goes along, so the robot stays where it was put, upright, at the
heading it was given (only the heading: a tilted orientation does not tip it over)."""

from __future__ import annotations

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.util.math import quat_to_yaw, yaw_to_quat
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg


def _robot_cfg(robot: str):
    if robot == 'gr1':
        pytest.importorskip('fourier_robot_descriptions', reason='the GR1 model: pip install --no-deps fourier-robot-descriptions')
        from internutopia_extension.configs.robots.gr1 import GR1RobotCfg, move_by_speed_cfg

        return GR1RobotCfg(locomotion='carried', controllers=[move_by_speed_cfg])
    from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg

    return H1RobotCfg(locomotion='carried', controllers=[move_by_speed_cfg])


@pytest.mark.parametrize('robot', ['h1', 'gr1'])
def test_a_teleported_carried_humanoid_stays_where_it_was_put_upright_at_the_given_heading(robot):
    import_extensions()
    task = SingleInferenceTaskCfg(robots=[_robot_cfg(robot)])
    config = Config(simulator=SimConfig(physics_dt=1 / 100, rendering_dt=1 / 100), env_num=2, env_offset_size=10,
                    metrics_save_path='none', task_configs=[task] * 2)
    stand = [{robot: {'move_by_speed': [0.0, 0.0, 0.0]}}] * 2
    with Env(config) as env:
        env.reset()
        obs, *_ = env.step(stand)
        start = [np.array(obs[slot][robot]['position']) for slot in range(2)]
        group = next(iter(env.runner.robot_groups.values()))
        # Slot 1 moved 1.5 m forward and 0.5 m right, turned 90 degrees left and tilted 0.3 rad
        # (the tilt is dropped: the target stays upright).
        tilted = np.array([np.cos(0.15), np.sin(0.15), 0.0, 0.0])
        turned = yaw_to_quat(np.array([np.pi / 2]))[0]
        w1, x1, y1, z1 = turned
        w2, x2, y2, z2 = tilted
        orientation = np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                                w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])
        group.teleport(1, start[1] + (1.5, -0.5, 0.0), orientation)
        for _ in range(100):  # 1 s with no command
            obs, *_ = env.step([{}] * 2)
    moved, kept = (np.array(obs[slot][robot]['position']) for slot in (1, 0))
    np.testing.assert_allclose(moved[:2], start[1][:2] + (1.5, -0.5), atol=0.03)
    assert abs(moved[2] - start[1][2]) < 0.03  # upright, at its standing height
    yaw = float(quat_to_yaw(np.asarray(obs[1][robot]['orientation'], dtype=float)[None])[0])
    assert abs(yaw - np.pi / 2) < 0.05
    np.testing.assert_allclose(kept, start[0], atol=0.03)  # the other slot untouched
