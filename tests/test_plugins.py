"""Extension entry points and physics backends: found by name, loaded without the core importing them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from internutopia.core.backend import Backend, backend_names, get_backend, register_backend
from internutopia.core.config import Config, SimConfig
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FAKE_EXTENSION = '''
from internutopia.core.config import TaskCfg
from internutopia.core.task.base import BaseTask

LOADS = []


class CountdownTaskCfg(TaskCfg):
    type: str = 'CountdownTask'
    steps: int = 3


def register():
    LOADS.append(1)

    @BaseTask.register('CountdownTask')
    class CountdownTask(BaseTask):
        def __init__(self, view):
            super().__init__(view)

        def step(self, slots):
            import numpy as np
            done = self.view.steps[slots] >= np.array([self.configs[s].steps for s in slots])
            return np.zeros(len(slots)), done, np.zeros(len(slots), dtype=bool)
'''


def run_python(code: str, path: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*path, ROOT, os.environ.get('PYTHONPATH', '')]))
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


@pytest.fixture
def installed_extension(tmp_path):
    """A distribution on the path declaring an ``internutopia.extensions`` entry point, as pip installs one."""
    (tmp_path / 'countdown_ext.py').write_text(FAKE_EXTENSION)
    info = tmp_path / 'countdown_ext-0.1.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: countdown-ext\nVersion: 0.1\n')
    (info / 'entry_points.txt').write_text('[internutopia.extensions]\ncountdown = countdown_ext:register\n')
    return tmp_path


def test_from_yaml_and_env_load_an_installed_extension_and_ours_without_imports(installed_extension, tmp_path):
    config = tmp_path / 'run.yaml'
    config.write_text(textwrap.dedent('''
        env_num: 2
        metrics_save_path: none
        task_configs:
          - {type: CountdownTask, steps: 2, robots: [{type: JetbotRobot, name: jetbot, position: [0.0, 0.0, 0.0]}]}
          - {type: CountdownTask, steps: 4, robots: [{type: JetbotRobot, name: jetbot, position: [0.0, 0.0, 0.0]}]}
    '''))
    out = run_python(f'''
        from internutopia.core.config import Config
        from internutopia.core.plugins import loaded_extensions
        from internutopia.core.vec_env import Env

        config = Config.from_yaml({str(config)!r})  # no import_extensions(), no import of the extension
        print(type(config.task_configs[0]).__name__, type(config.task_configs[0].robots[0]).__name__)
        with Env(config) as env:
            env.reset()
            ends = [env.step([None, None])[2] for _ in range(4)]
        print([[bool(t) if t is not None else None for t in row] for row in ends])
        import countdown_ext
        print(sorted(loaded_extensions()), len(countdown_ext.LOADS))
    ''', [str(installed_extension)])
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert lines[0] == 'CountdownTaskCfg JetbotRobotCfg'
    assert lines[1] == '[[False, False], [True, False], [True, False], [True, True]]'  # a done slot stays terminated
    assert lines[2] == "['countdown', 'internutopia_distribution', 'internutopia_extension', 'internutopia_per_slot'] 1"  # each once


def test_a_failing_extension_names_itself(tmp_path):
    (tmp_path / 'broken_ext.py').write_text('def register():\n    raise RuntimeError("needs a GPU")\n')
    info = tmp_path / 'broken_ext-0.1.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: broken-ext\nVersion: 0.1\n')
    (info / 'entry_points.txt').write_text('[internutopia.extensions]\nbroken = broken_ext:register\n')
    out = run_python('''
        from internutopia.core.plugins import load_extensions
        load_extensions()
    ''', [str(tmp_path)])
    assert out.returncode != 0
    assert "ImportError: internutopia extension 'broken' (broken_ext:register) failed to load: needs a GPU" in out.stderr


def test_backend_is_chosen_by_name_and_unknown_names_are_rejected():
    assert 'mujoco' in backend_names() and SimConfig().backend == 'mujoco'
    with pytest.raises(ValueError, match=r"unknown physics backend 'bullet'; registered backends: \['mujoco', 'warp'"):
        SimConfig(backend='bullet')
    with pytest.raises(ValueError, match=r"unknown physics backend 'bullet'; registered backends"):
        get_backend('bullet')


def test_a_registered_backend_builds_the_world(make_config, monkeypatch):
    import internutopia.core.backend.registry as backends
    import internutopia.core.config.simulator as simulator_config

    for module, name in ((backends, '_loaders'), (backends, '_backends'), (simulator_config, '_BACKEND_NAMES')):
        monkeypatch.setattr(module, name, type(getattr(module, name))(getattr(module, name)))  # registered here only
    mujoco_backend = get_backend('mujoco')
    built = []

    class CountingWorld(mujoco_backend.create_world):  # the MuJoCo world, counting its steps
        steps = 0

        def step(self) -> None:
            super().step()
            CountingWorld.steps += 1

    def create(sim, env_num, offset):
        built.append((sim.backend, env_num))
        return CountingWorld(sim, env_num, offset)

    register_backend('counting', lambda: Backend('counting', create, mujoco_backend.render_overview, mujoco_backend.release))
    task = FiniteStepTaskCfg(max_steps=5, robots=[JetbotRobotCfg(position=(0.0, 0.0, 0.0))])
    config = make_config([task], env_num=1).update(simulator=SimConfig(backend='counting'))
    with Env(config) as env:
        env.reset()
        for _ in range(3):
            env.step([None])
        image = env.render(32, 24)
    assert built == [('counting', 1)] and CountingWorld.steps == 3 and image.shape == (24, 32, 3)


def test_env_of_a_distributed_config_is_the_ray_adapters_class():
    pytest.importorskip('ray')
    from internutopia.core.config.distribution import RayDistributionCfg
    from internutopia.core.distribution.env import DistributedEnv

    config = Config(env_num=1, metrics_save_path='none', task_configs=[FiniteStepTaskCfg(max_steps=2)])
    distributed = config.distribute(RayDistributionCfg(proc_num=1, startup_timeout_s=0.001, head_address='127.0.0.1:1'))
    # The class is chosen before Ray is touched (connecting to this address then fails).
    assert Env.__new__(Env, distributed).__class__ is DistributedEnv
    assert Env.__new__(Env, config).__class__ is Env
