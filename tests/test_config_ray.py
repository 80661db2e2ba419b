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


CALIBRATED = '''
import os
from internutopia.core.task.base import BaseTask
from internutopia_extension.configs.tasks import FiniteStepTaskCfg
from internutopia_extension.tasks.finite_step import FiniteStepTask

CALIBRATION = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'calibration.txt')


class CalibratedTaskCfg(FiniteStepTaskCfg):
    type: str = 'CalibratedTask'


@BaseTask.register('CalibratedTask')
class CalibratedTask(FiniteStepTask):
    pass


with open(CALIBRATION) as calibration:  # (registered above: a failure here leaves a half-done import)
    GAIN = float(calibration.read())
'''

HALF_IMPORTED = '''
import os, warnings
from calib_ext import CALIBRATION, CalibratedTaskCfg
from internutopia.core.config import Config
from internutopia.core.distribution import RayDistributionCfg
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

os.remove(CALIBRATION)  # (the workers will not find it: as on a machine without the file)
assert CalibratedTaskCfg  # (imported, so registered here; this run's episodes do not use it)
tasks = [FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])] * 2
env = Env(Config(env_num=2, metrics_save_path='none', episode_errors='record', task_configs=tasks)
          .distribute(RayDistributionCfg(proc_num=1)))
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        obs, info = env.reset()
    print('WARNED', [str(w.message) for w in caught])
    print('STARTED', [o is not None for o in obs])
finally:
    env.close()
'''


@pytest.mark.xdist_group('ray')  # one Ray cluster at a time (see conftest.py)
@pytest.mark.slow
def test_an_extension_module_a_worker_cannot_import_is_warned_in_the_driver(tmp_path):
    """A user's extension package imports on the driver but raises halfway in the Ray worker (a
    file only the driver's machine has): the run goes on without it (its episodes do not need it),
    and the driver warns the worker's error at the first reset (a worker's own log is not shown).
    (An episode list holding one of its configs cannot even be sent to the workers: the env's
    start fails naming the import error.)"""
    pytest.importorskip('ray')
    package = tmp_path / 'calib_ext'
    package.mkdir()
    (package / '__init__.py').write_text(CALIBRATED)
    (tmp_path / 'calibration.txt').write_text('1.5')
    script = tmp_path / 'driver.py'
    script.write_text(HALF_IMPORTED)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, 'PYTHONPATH': f'{ROOT}{os.pathsep}{tmp_path}'})
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    warned = next(line for line in lines if line.startswith('WARNED'))
    assert ('cannot import extension module calib_ext in a Ray worker: FileNotFoundError: '
            '[Errno 2] No such file or directory: ') in warned, warned
    assert next(line for line in lines if line.startswith('STARTED')) == 'STARTED [True, True]'
