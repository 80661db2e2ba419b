"""The Jetbot drives what ``move_by_speed`` commands: open loop, at any physics_dt and scale.

``move_by_speed [forward, rotation]`` sets the wheel speeds of an ideal differential drive; the
wheel servos must hold them (a weak servo against the wheels' ground contact once reached only
57-81 % of a commanded yaw rate, less at a finer physics_dt), and a scaled Jetbot (upstream's demo
uses ``scale=(5, 5, 5)``) must not drive ``scale`` times as fast (the controller scales the wheel
base and radius with the model, as upstream's does).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from internutopia.core.config import Config, SimConfig
from internutopia.core.util.math import quat_to_yaw
from internutopia.core.vec_env import Env
from internutopia.macros import gm
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg

import_extensions()

COMMANDS = ([0.0, 1.0], [0.3, 0.0], [0.2, 0.5])
SCALES = (1.0, 5.0)
#: Least share of the commanded forward speed and yaw rate reached at steady state (and at most
#: a little over it).
LEAST, MOST = 0.9, 1.02


def _yaw(obs) -> float:
    return float(quat_to_yaw(np.array([obs['jetbot']['orientation']]))[0])


def _steady(env: Env, command: list[float], dt: float) -> list[tuple[float, float]]:
    """Per slot: (path speed m/s, yaw rate rad/s) over 1 s, after 1 s of driving ``command``."""
    slots = len(SCALES)
    actions = [{'jetbot': {'move_by_speed': command}}] * slots
    for _ in range(round(1 / dt)):
        obs = env.step(actions)[0]
    start = [o['jetbot']['position'][:2].copy() for o in obs]
    previous = [_yaw(o) for o in obs]
    turned = [0.0] * slots
    path = [0.0] * slots
    last = [p.copy() for p in start]
    for _ in range(round(1 / dt)):
        obs = env.step(actions)[0]
        for k, o in enumerate(obs):
            yaw = _yaw(o)
            turned[k] += (yaw - previous[k] + math.pi) % (2 * math.pi) - math.pi
            previous[k] = yaw
            here = o['jetbot']['position'][:2]
            path[k] += float(np.linalg.norm(here - last[k]))
            last[k] = here.copy()
    for _ in range(round(0.5 / dt)):  # stop between commands
        env.step([{}] * slots)
    return list(zip(path, turned, strict=True))


@pytest.mark.parametrize('dt', [1 / 60, 1 / 240], ids=['dt60', 'dt240'])
def test_jetbot_tracks_move_by_speed(dt):
    tasks = [SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                    robots=[JetbotRobotCfg(scale=(s, s, s))]) for s in SCALES]
    env = Env(Config(simulator=SimConfig(physics_dt=dt, rendering_dt=dt), env_num=len(SCALES), env_offset_size=20,
                     task_configs=tasks))
    try:
        env.reset()
        for command in COMMANDS:
            forward, rotation = command
            for scale, (speed, yaw_rate) in zip(SCALES, _steady(env, command, dt), strict=True):
                where = f'scale {scale}, dt {dt:.4f}, command {command}: speed {speed:.3f} m/s, yaw rate {yaw_rate:.3f} rad/s'
                if rotation:
                    assert LEAST * rotation <= yaw_rate <= MOST * rotation, where
                else:
                    assert abs(yaw_rate) < 0.01, where
                if forward and not rotation:
                    assert LEAST * forward <= speed <= MOST * forward, where
                elif forward:  # an arc of radius forward / rotation: the path speed is the forward speed
                    assert LEAST * forward <= speed <= MOST * forward, where
                else:  # turning in place stays in place
                    assert speed < 0.01 * scale, where
    finally:
        env.close()


def test_scaled_controller_scales_wheel_geometry():
    """The wheel targets of a scale-5 Jetbot are those of wheels 5 times as large and as far apart."""
    tasks = [SingleInferenceTaskCfg(scene_asset_path=gm.ASSET_PATH + '/scenes/empty.usd',
                                    robots=[JetbotRobotCfg(scale=(s, s, s))]) for s in SCALES]
    env = Env(Config(simulator=SimConfig(physics_dt=1 / 60, rendering_dt=1 / 60), env_num=len(SCALES), env_offset_size=20,
                     task_configs=tasks))
    try:
        env.reset()
        env.step([{'jetbot': {'move_by_speed': [0.3, 0.5]}}] * len(SCALES))
        targets = []
        for slot in range(len(SCALES)):
            robot = env.runner.slot_robots[slot]['jetbot']
            controller = robot.controllers['move_by_speed']
            targets.append(controller.wheel_speeds(np.array([0.3]), np.array([0.5]))[0])
            assert controller.scale == SCALES[slot]
        for scale, target in zip(SCALES, targets, strict=True):
            half_base, radius = 0.1125 / 2 * scale, 0.03 * scale
            np.testing.assert_allclose(target, [(0.3 - 0.5 * half_base) / radius, (0.3 + 0.5 * half_base) / radius])
    finally:
        env.close()
