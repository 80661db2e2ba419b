"""What the downstream packages (InternNav, InternManip) need of InternUtopia's API and got wrong here.

Each test writes its own small extension class the way those packages write theirs.

- A package registering its own class under a built-in type name (InternManip's
  ``@BaseTask.register('ManipulationTask')``, a ``BaseTask`` subclass with its own config) keeps
  it: the built-in extensions the env loads by itself do not replace it (InternUtopia's env loads
  none).
- ``env.warm_up(steps)`` runs an upstream-style task's ``pre_step`` on each of its physics steps,
  as Isaac Sim's ``World.step`` does for InternUtopia's runner: InternManip's evaluator warms up
  after each reset, and its task counts ``steps`` (``pre_step`` and its own ``is_done``) against
  ``max_step``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.task import TaskCfg
from internutopia.core.plugins import add_extension, load_extensions
from internutopia.core.task import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg

WHEELS = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)


def test_the_extensions_the_env_loads_keep_a_class_a_script_registered_under_the_same_name():
    @BaseTask.register('DownstreamPickTask')
    class ScriptsPick(BaseTask):
        def is_done(self):
            return False

    def builtin_types() -> None:  # a package the env loads by itself, with a type of the same name
        @BaseTask.register('DownstreamPickTask')
        class BuiltinPick(BaseTask):
            def is_done(self):
                return True

        @BaseTask.register('DownstreamPlaceTask')
        class BuiltinPlace(BaseTask):
            def is_done(self):
                return True

    add_extension('test_downstream_builtin_types', builtin_types)
    load_extensions()
    assert BaseTask.registry.get('DownstreamPickTask') is ScriptsPick
    assert BaseTask.registry.get('DownstreamPlaceTask').__name__ == 'BuiltinPlace'  # (new names are added)

    @BaseTask.register('DownstreamPlaceTask')  # and a script may still replace a built-in type itself
    class ScriptsPlace(BaseTask):
        def is_done(self):
            return False

    assert BaseTask.registry.get('DownstreamPlaceTask') is ScriptsPlace


SCRIPT = '''
import json
from typing import Optional

from internutopia.core.config import Config, SimConfig
from internutopia.core.config.task import TaskCfg
from internutopia.core.task import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension.configs.controllers import DifferentialDriveControllerCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg


class ManipulationTaskCfg(TaskCfg):  # InternManip's config: its own fields, the built-in's type name
    type: Optional[str] = 'ManipulationTask'
    max_step: int = 500
    prompt: Optional[str] = None


@BaseTask.register('ManipulationTask')
class ManipulationTask(BaseTask):  # registered before any env exists, as InternManip's create_env does
    def get_observations(self):
        return {name: {'instruction': self.config.prompt, 'step': self.steps} for name in self.robots}

    def is_done(self):
        self.steps += 1
        return self.steps > self.config.max_step


wheels = DifferentialDriveControllerCfg(name='move_by_speed', wheel_base=0.1125, wheel_radius=0.03)
task = ManipulationTaskCfg(robots=[JetbotRobotCfg(controllers=[wheels])], max_step=5, prompt='stack the cubes')
with Env(Config(simulator=SimConfig(), env_num=1, metrics_save_path='none', task_configs=[task])) as env:
    obs, _ = env.reset()
    seen = [obs[0]]
    for _ in range(3):
        obs, _, terminated, _, _ = env.step([{'jetbot': {'move_by_speed': [0.1, 0.0]}}])
        seen.append([obs[0], terminated[0]])
    print(json.dumps({'seen': seen}))
'''


def test_a_packages_own_task_registered_under_a_built_in_name_runs_in_the_env():
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(SCRIPT)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])['seen']
    assert seen[0]['jetbot'] == {'instruction': 'stack the cubes', 'step': 0, 'render': True}
    # The package's task counts two a step (InternUtopia's pre_step and its own is_done) and ends
    # its episode itself once past max_step=5: on the third step.
    assert [(entry[0]['jetbot']['step'], entry[1]) for entry in seen[1:]] == [(1, False), (3, False), (5, True)]


class CountingTaskCfg(TaskCfg):
    type: str | None = 'DownstreamCountingTask'
    max_step: int = 20


@BaseTask.register('DownstreamCountingTask')
class CountingTask(BaseTask):  # InternManip's ManipulationTask: steps from pre_step and its is_done
    def get_observations(self):
        return {name: {'step': self.steps} for name in self.robots}

    def is_done(self):
        self.steps += 1
        return self.steps > self.config.max_step


def test_warm_up_runs_an_upstream_style_tasks_pre_step_on_each_physics_step():
    task = CountingTaskCfg(robots=[JetbotRobotCfg(controllers=[WHEELS])])
    with Env(Config(simulator=SimConfig(), env_num=2, metrics_save_path='none', task_configs=[task] * 3)) as env:
        env.reset()
        env.warm_up(steps=10)  # (InternManip's GenmanipEvaluator, after every reset)
        assert [o['jetbot']['step'] for o in env.get_observations()] == [10, 10]
        ends = []
        for n in range(1, 12):
            _, _, terminated, _, _ = env.step([{'jetbot': {'move_by_speed': [0.0, 0.0]}}] * 2)
            ends += [n] * sum(terminated)
            if all(terminated):
                break
        assert ends == [6, 6]  # 10 warm-up steps, then two a step: past 20 on the sixth
        env.reset([0])
        assert env.get_observations()[0]['jetbot']['step'] == 0  # a new episode counts from 0
        env.warm_up(steps=4)
        assert env.get_observations()[0]['jetbot']['step'] == 4
        assert env.get_observations()[1] is None  # (slot 1 holds no episode: nothing to count)
