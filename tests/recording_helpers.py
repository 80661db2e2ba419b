"""Helpers of the recording tests: a queue of Jetbot episodes driven by known speeds."""

from __future__ import annotations

from internutopia.core.config import Config, SimConfig
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_by_speed_cfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


def jetbot_config(count: int, env_num: int, steps: int, task_cfg: type[FiniteStepTaskCfg] = FiniteStepTaskCfg) -> Config:
    """``count`` episodes of ``steps`` steps, each one Jetbot driven by speed, at 60 Hz on ``env_num`` slots."""
    robot = JetbotRobotCfg(position=(0.0, 0.0, 0.05), controllers=[move_by_speed_cfg])
    return Config(simulator=SimConfig(physics_dt=1 / 60, rendering_dt=1 / 60, headless=True), env_num=env_num,
                  env_offset_size=5.0, metrics_save_path='none',
                  task_configs=[task_cfg(max_steps=steps, robots=[robot]) for _ in range(count)])


def speed(run_index: int, step: int) -> float:
    """The forward speed sent to the ``run_index``-th episode of the queue on its ``step``-th step
    (different for every episode and step, so a frame shows which it is)."""
    return round(0.05 * (run_index + 1) + 0.01 * step, 3)
