"""Config classes defined in a driver script (``__main__``) or a test module travel to Ray workers by
value with cloudpickle, as InternUtopia ships them."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from internutopia.core.config import RobotCfg, TaskCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_config_class_defined_in_a_function_pickles_by_value_and_keeps_its_parent_registered():
    cloudpickle = pytest.importorskip('ray.cloudpickle')

    class LocalTaskCfg(FiniteStepTaskCfg):  # '<locals>' in its name: cloudpickle sends it by value
        type: str = 'LocalPickledTask'
        speed: float = 0.5

    class LocalRobotCfg(RobotCfg):
        type: str = 'LocalPickledRobot'
        name: str = 'bot'

    task = LocalTaskCfg(speed=0.25, max_steps=7, robots=[LocalRobotCfg()])
    blob = cloudpickle.dumps(task)  # a TypeError (a ContextVar) before the fix
    assert pickle.loads(blob) == task
    # In a fresh process (a Ray worker): the class is rebuilt, and its rebuilding must not take over
    # the type of the class it derives from.
    code = textwrap.dedent(f"""
        import pickle, sys
        from internutopia.core.config import TaskCfg
        from internutopia_extension.configs.tasks import FiniteStepTaskCfg
        task = pickle.loads({blob!r})
        print(type(task).__name__, task.speed, task.max_steps, type(task.robots[0]).__name__,
              TaskCfg.config_class_for('FiniteStepTask') is FiniteStepTaskCfg)
    """)
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, 'PYTHONPATH': ROOT}, check=True).stdout.split()
    assert out == ['LocalTaskCfg', '0.25', '7', 'LocalRobotCfg', 'True']


def test_config_classes_are_registered_only_by_the_class_that_declares_the_type():
    class Refined(JetbotRobotCfg):  # declares no type: JetbotRobot stays JetbotRobotCfg's
        note: str = ''

    assert RobotCfg.config_class_for('JetbotRobot') is JetbotRobotCfg
    assert Refined().type == 'JetbotRobot'
    assert TaskCfg.config_class_for('FiniteStepTask') is FiniteStepTaskCfg


DRIVER = '''
import json, sys
import numpy as np
from internutopia.core.config import Config
from internutopia.core.distribution import RayDistributionCfg
from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension import import_extensions
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask

import_extensions()


class DriverTaskCfg(FiniteStepTaskCfg):
    """Defined in the driver script: reaches the workers by value."""
    type: str = 'DriverMarkTask'
    mark: float = 0.0


class DriverJetbotCfg(JetbotRobotCfg):
    """A robot config subclass of the script (same robot type)."""
    type: str = 'JetbotRobot'
    label: str = 'mine'


@BaseTask.register('DriverMarkTask')
class DriverMarkTask(FiniteStepTask):
    def __init__(self, view):
        super().__init__(view)
        self.marks = np.zeros(self.env_num)

    def reset_slot(self, slot, config):
        super().reset_slot(slot, config)
        self.marks[slot] = config.mark + (100.0 if config.robots[0].label == 'mine' else 0.0)

    def get_observations(self, slots):
        return {'mark': self.marks[slots]}


tasks = [DriverTaskCfg(mark=float(i), max_steps=2, robots=[DriverJetbotCfg()]) for i in range(3)]
config = Config(env_num=1, metrics_save_path='none', task_configs=tasks)
env = Env(config.distribute(RayDistributionCfg(proc_num=2)))
try:
    marks = []
    obs, info = env.reset()
    marks += [o['mark'] for o in obs if o is not None]
    for _ in range(12):
        obs, reward, terminated, truncated, info = env.step([{}] * env.env_num)
        done = [i for i, t in enumerate(terminated) if t]
        if len(done) == env.env_num and all(o is None for o in obs):
            break
        if done:
            new_obs, _ = env.reset(done)
            marks += [o['mark'] for o in new_obs if o is not None]
    print(json.dumps({'marks': sorted(float(m) for m in marks)}))
finally:
    env.close()
'''


@pytest.mark.xdist_group('ray')  # one Ray cluster at a time (see conftest.py)
@pytest.mark.slow
def test_a_driver_defined_task_and_robot_config_run_on_ray(tmp_path):
    pytest.importorskip('ray')
    script = tmp_path / 'driver.py'
    script.write_text(DRIVER)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, 'PYTHONPATH': ROOT})
    assert run.returncode == 0, run.stderr[-3000:]
    assert 'not shipped to Ray workers' not in run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # every episode ran on a worker with its own config classes (the robot's label came through)
    assert result['marks'] == [100.0, 101.0, 102.0]
