"""Extension loading and the type registries, as an extension author and a script user meet them.

- ``@BaseRobot.register`` without a name, a name that is no string or is empty, and a decorated
  object that is not a subclass of the base are refused at the decorator, naming what was given and
  the base (a function registered before the first env used to make every env fail, blaming the
  per-slot layer: ``internutopia extension 'internutopia_per_slot' ... failed to load``).
- A class the per-slot layer cannot adapt breaks only the configs naming it (a warning names it),
  not every env.
- A type asked for in the wrong registry says which kind it is.
- Two installed distributions whose entry points share a name but not a target are both loaded
  (the second was silently skipped); one whose loading reads a config or builds an env (and so
  calls ``load_extensions`` again) is loaded once (it recursed some 300 times, then failed).
- An installed extension replacing a built-in type does so whether or not the script called
  ``import_extensions()`` (or imported a built-in module) first: the built-ins are never the
  script's own registration.
- ``internutopia.core.extras``: a module a script put in ``sys.modules`` (a stub) is present; a
  dotted name whose parent package fails to import is missing (not a traceback out of ``validate``);
  a declaration naming a relative or empty module is refused.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import types
import warnings

import pytest

from internutopia.core.controller.base import BaseController
from internutopia.core.extras import forget_extra, missing_extra, needs_extra
from internutopia.core.registry import Registry, loading_extensions
from internutopia.core.robot.base import BaseRobot
from internutopia.core.task.base import BaseTask

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(code: str, path: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*path, ROOT, os.environ.get('PYTHONPATH', '')]))
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


def install(folder, distribution: str, module: str, source: str, entries: str) -> None:
    """A distribution on the path ``folder`` with ``module`` and ``[internutopia.extensions]`` ``entries``."""
    (folder / f'{module}.py').write_text(textwrap.dedent(source))
    info = folder / f'{distribution.replace("-", "_")}-0.1.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text(f'Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n')
    (info / 'entry_points.txt').write_text(f'[internutopia.extensions]\n{entries}\n')


# -- registering: names and classes ------------------------------------------------------------------


def test_register_without_a_name_is_refused_naming_the_usage():
    with pytest.raises(TypeError, match=r"@BaseRobot\.register\(name\) takes the robot type's name, a str, as in "
                                        r"@BaseRobot\.register\('MyRobot'\); got <class .*NoName'> \(the decorator "
                                        r"was used without a name\?\)"):
        @BaseRobot.register
        class NoName(BaseRobot):
            pass


@pytest.mark.parametrize('name', [None, 3, ('HuntRobot',)])
def test_a_name_that_is_no_string_is_refused(name):
    with pytest.raises(TypeError, match=r"takes the robot type's name, a str"):
        BaseRobot.register(name)


def test_an_empty_name_is_refused():
    with pytest.raises(ValueError, match=r"@BaseTask\.register: the task type name must not be empty"):
        BaseTask.register('')


def test_what_is_not_a_subclass_of_the_base_is_refused_and_nothing_is_registered():
    class NotARobot:
        pass

    with pytest.raises(TypeError, match=r"@BaseRobot\.register\('HuntNotARobot'\): .*NotARobot is not a subclass of "
                                        r"internutopia\.core\.robot\.base\.BaseRobot; a robot type must derive from it"):
        BaseRobot.register('HuntNotARobot')(NotARobot)
    with pytest.raises(TypeError, match=r"is not a subclass of internutopia\.core\.controller\.base\.BaseController"):
        BaseController.register('HuntFunction')(lambda config, robot: None)
    with pytest.raises(TypeError, match=r"an object type must derive"):
        from internutopia.core.object.base import BaseObject

        BaseObject.register('HuntPlainObject')(NotARobot)
    assert 'HuntNotARobot' not in BaseRobot.registry and 'HuntFunction' not in BaseController.registry


def test_a_function_registered_before_the_first_env_no_longer_breaks_every_env():
    out = run_python('''
        from internutopia.core.robot.base import BaseRobot
        try:
            BaseRobot.register('NotAClass')(lambda config, env_num, sim: None)
        except TypeError as exc:
            print('refused:', exc)
        from internutopia.core.plugins import load_extensions
        print(load_extensions())
    ''', [])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("refused: @BaseRobot.register('NotAClass')"), out.stdout
    assert "'internutopia_per_slot'" in out.stdout.splitlines()[-1]


def test_a_standalone_registry_takes_any_class_and_learns_its_base_from_the_class_it_is_made_in():
    free = Registry('widget')
    assert free.base is None

    @free.register('Anything')
    class Anything:
        pass

    assert free.get('Anything') is Anything

    class Base:
        registry: Registry[type] = Registry('gadget')

    assert Base.registry.base is Base
    with pytest.raises(TypeError, match=r'is not a subclass of .*Base; a gadget type must derive from it'):
        Base.registry.register('Loose')(Anything)


def test_re_registering_a_name_replaces_it_as_in_internutopia_and_a_reloaded_module_replaces_its_own(tmp_path,
                                                                                                    monkeypatch):
    (tmp_path / 'hunt_reloaded_ext.py').write_text(textwrap.dedent('''
        from internutopia.core.task.base import BaseTask

        @BaseTask.register('HuntReloadedTask')
        class HuntReloadedTask(BaseTask):
            pass
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module('hunt_reloaded_ext')
    first = BaseTask.registry.get('HuntReloadedTask')
    reloaded = importlib.reload(module)
    assert BaseTask.registry.get('HuntReloadedTask') is reloaded.HuntReloadedTask is not first
    with loading_extensions():  # the env's own loading keeps the script's class
        BaseTask.register('HuntReloadedTask')(type('Other', (BaseTask,), {}))
    assert BaseTask.registry.get('HuntReloadedTask') is reloaded.HuntReloadedTask
    monkeypatch.delitem(sys.modules, 'hunt_reloaded_ext')


# -- a class the per-slot layer cannot adapt -----------------------------------------------------------


def test_a_class_its_adapter_fails_for_breaks_only_its_own_type():
    class Thing:
        registry: Registry[type] = Registry('thing')

    @Thing.registry.register('Good')
    class Good(Thing):
        pass

    @Thing.registry.register('Bad')
    class Bad(Thing):
        pass

    def adapter(cls):
        if issubclass(cls, Bad):
            raise TypeError('cannot be adapted')
        return None

    with pytest.warns(RuntimeWarning, match=r"thing type 'Bad' \(.*Bad\) cannot be built: TypeError: cannot be adapted"):
        Thing.registry.adapt_with(adapter)
    assert Thing.registry.maker('Good') is Good
    with pytest.raises(TypeError, match=r"thing type 'Bad' \(in here\) \(.*Bad\) cannot be built: TypeError: "
                                        r"cannot be adapted"):
        Thing.registry.maker('Bad', 'here')
    with pytest.warns(RuntimeWarning, match=r"thing type 'Late'"):  # registered after: the same
        @Thing.registry.register('Late')
        class Late(Bad):
            pass
    with pytest.raises(TypeError, match="cannot be adapted"):
        Thing.registry.maker('Late')
    with warnings.catch_warnings():
        warnings.simplefilter('error')

        @Thing.registry.register('Bad')  # a good class under the name: fine again
        class Fixed(Thing):
            pass

    assert Thing.registry.maker('Bad') is Fixed


UNADAPTABLE = '''
import warnings
warnings.simplefilter('always')
warnings.showwarning = lambda message, category, filename, lineno, *rest: print(f'{filename}:{lineno}: {message}')
from internutopia.core.config import Config, TaskCfg
from internutopia.core.task.base import BaseTask
from internutopia.core.vec_env import Env
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg


class Tagged(BaseTask):
    def __init_subclass__(cls, *, tag, **kwargs):  # (the per-slot layer's class made from it lacks the tag)
        super().__init_subclass__(**kwargs)
        cls.tag = tag


@BaseTask.register('TaggedTask')
class TaggedTask(Tagged, tag='x'):
    def __init__(self, config, scene):  # InternUtopia's way
        super().__init__(config, scene)


class TaggedTaskCfg(TaskCfg):
    type: str = 'TaggedTask'


with Env(Config(env_num=1, metrics_save_path='none',
                task_configs=[FiniteStepTaskCfg(max_steps=2, robots=[JetbotRobotCfg()])])) as env:
    env.reset()
    print('other env ok')
try:
    with Env(Config(env_num=1, metrics_save_path='none', episode_attempts=1,
                    task_configs=[TaggedTaskCfg(robots=[JetbotRobotCfg()])])) as env:
        env.reset()
except Exception as exc:
    print(type(exc).__name__, exc)
'''


def test_a_task_class_the_per_slot_layer_cannot_adapt_fails_only_the_configs_naming_it():
    out = run_python(UNADAPTABLE, [])
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line for line in out.stdout.strip().splitlines() if 'MUJOCO' not in line]
    warned = [line for line in lines if 'RuntimeWarning' in line or 'cannot be built' in line]
    assert "task type 'TaggedTask' (__main__.TaggedTask) cannot be built: TypeError:" in warned[0], lines
    assert 'other env ok' in lines, out.stdout + out.stderr[-3000:]
    assert "'TaggedTask'" in lines[-1] and 'cannot be built' in lines[-1] and "'tag'" in lines[-1], lines
    assert 'internutopia_per_slot' not in out.stdout


# -- unknown names -------------------------------------------------------------------------------------


def test_a_type_named_in_the_wrong_registry_says_which_kind_it_is():
    with pytest.raises(ValueError, match=r"unknown robot type 'DifferentialDriveController' \(in task_configs\[0\]"
                                         r"\.robots\[0\]\); registered robot types: \[.*'JetbotRobot'.*\] "
                                         r"\('DifferentialDriveController' is a controller type\)"):
        BaseRobot.registry.get('DifferentialDriveController', 'task_configs[0].robots[0]')
    with pytest.raises(ValueError, match=r"\('JetbotRobot' is a robot type\)$"):
        BaseTask.registry.maker('JetbotRobot')
    with pytest.raises(ValueError, match=r"registered robot types: \[[^(]*\]$"):  # an unknown name: no hint
        BaseRobot.registry.get('Jetbt')
    assert ['x'] not in BaseRobot.registry  # (an unhashable name is simply not there)
    with pytest.raises(ValueError, match=r"unknown robot type \['x'\]"):
        BaseRobot.registry.get(['x'])


# -- entry points --------------------------------------------------------------------------------------

TASK_EXTENSION = '''
from internutopia.core.task.base import BaseTask

LOADS = []


def register():
    LOADS.append(1)

    @BaseTask.register('{task}')
    class T(BaseTask):
        pass
'''


def test_two_distributions_declaring_one_entry_point_name_are_both_loaded_and_one_target_once(tmp_path):
    install(tmp_path, 'alpha-ext', 'alpha_ext', TASK_EXTENSION.format(task='AlphaHuntTask'), 'tasks = alpha_ext:register')
    install(tmp_path, 'beta-ext', 'beta_ext', TASK_EXTENSION.format(task='BetaHuntTask'), 'tasks = beta_ext:register')
    install(tmp_path, 'beta-ext-again', 'beta_again', '', 'tasks = beta_ext:register')  # the same target again
    out = run_python('''
        from internutopia.core.plugins import load_extensions
        from internutopia.core.task.base import BaseTask
        import alpha_ext, beta_ext
        print(load_extensions().count('tasks'), load_extensions().count('tasks'))
        print('AlphaHuntTask' in BaseTask.registry, 'BetaHuntTask' in BaseTask.registry, alpha_ext.LOADS, beta_ext.LOADS)
    ''', [str(tmp_path)])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split('\n')[:2] == ['2 2', 'True True [1] [1]']


def test_an_extension_whose_loading_loads_the_extensions_again_is_loaded_once(tmp_path):
    install(tmp_path, 'loop-ext', 'loop_ext', '''
        from internutopia.core.plugins import load_extensions
        from internutopia.core.task.base import BaseTask

        CALLS = []


        def register():
            CALLS.append(1)

            @BaseTask.register('LoopHuntTask')
            class LoopHuntTask(BaseTask):
                pass

            load_extensions()  # (as Config.from_yaml of a default config at import does)
    ''', 'loop = loop_ext:register')
    out = run_python('''
        from internutopia.core.plugins import load_extensions
        from internutopia.core.task.base import BaseTask
        import loop_ext
        print(load_extensions().count('loop'), len(loop_ext.CALLS), 'LoopHuntTask' in BaseTask.registry)
    ''', [str(tmp_path)])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == '1 1 True'


OVERRIDE = '''
def register():
    from internutopia.core.task.base import BaseTask
    from internutopia_extension.tasks.finite_step import FiniteStepTask

    @BaseTask.register('FiniteStepTask')
    class PatchedFiniteStepTask(FiniteStepTask):
        pass
'''


@pytest.mark.parametrize('before', ['', 'from internutopia_extension import import_extensions; import_extensions()',
                                    'from internutopia_extension.tasks.finite_step import FiniteStepTask'])
def test_an_installed_extension_replaces_a_built_in_whatever_the_script_imported_first(tmp_path, before):
    install(tmp_path, 'patch-ext', 'patch_ext', OVERRIDE, 'patch = patch_ext:register')
    out = run_python(f'''
        {before}
        from internutopia.core.plugins import load_extensions
        from internutopia.core.task.base import BaseTask
        load_extensions()
        print(BaseTask.registry.get('FiniteStepTask').__name__)
    ''', [str(tmp_path)])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == 'PatchedFiniteStepTask'


def test_a_scripts_own_class_under_a_built_in_name_still_stays_after_import_extensions():
    out = run_python('''
        from internutopia.core.plugins import load_extensions
        from internutopia.core.task.base import BaseTask
        from internutopia_extension import import_extensions

        import_extensions()

        @BaseTask.register('ManipulationTask')  # InternManip's
        class ManipulationTask(BaseTask):
            def is_done(self):
                return False

        load_extensions()
        print(BaseTask.registry.get('ManipulationTask').__module__)
    ''', [])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == '__main__'


# -- optional extras -----------------------------------------------------------------------------------


def test_a_stub_module_in_sys_modules_is_present(monkeypatch):
    monkeypatch.setitem(sys.modules, 'hunt_stubbed_assets', types.ModuleType('hunt_stubbed_assets'))  # no __spec__
    needs_extra('robot', 'HuntStubRobot', 'hunt', 'hunt_stubbed_assets')
    try:
        assert missing_extra('robot', 'HuntStubRobot') is None
    finally:
        forget_extra('robot', 'HuntStubRobot')


def test_a_dotted_module_whose_parent_fails_to_import_is_missing_not_a_traceback(tmp_path, monkeypatch):
    (tmp_path / 'hunt_broken_parent').mkdir()
    (tmp_path / 'hunt_broken_parent' / '__init__.py').write_text('raise RuntimeError("CUDA libraries missing")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    needs_extra('robot', 'HuntBrokenRobot', 'hunt', 'hunt_broken_parent.models')
    try:
        assert missing_extra('robot', 'HuntBrokenRobot') == (
            "robot type 'HuntBrokenRobot' needs the 'hunt' extra (hunt_broken_parent.models is not installed): "
            "pip install 'internutopia[hunt]'")
    finally:
        forget_extra('robot', 'HuntBrokenRobot')
        sys.modules.pop('hunt_broken_parent', None)


@pytest.mark.parametrize('module', ['', '.relative', 3])
def test_a_declaration_naming_no_absolute_module_is_refused(module):
    with pytest.raises(ValueError, match=r"modules are absolute import names"):
        needs_extra('robot', 'HuntRobot', 'hunt', module)


COUNTDOWN_EXTENSION = '''
from internutopia.core.config import TaskCfg
from internutopia.core.task.base import BaseTask


class CountdownTaskCfg(TaskCfg):
    type: str = 'CountdownTask'
    steps: int = 3


def register():
    @BaseTask.register('CountdownTask')
    class CountdownTask(BaseTask):
        pass
'''


def test_the_command_line_validates_a_file_naming_an_installed_extensions_type(tmp_path):
    """``internutopia validate`` (and ``run``, which reads the file alike) loaded the built-in types
    only: a file naming an installed extension's task was refused (``unknown task type``, then
    ``unknown field 'steps'``) though the env itself would run it."""
    install(tmp_path, 'countdown-ext', 'countdown_ext', COUNTDOWN_EXTENSION, 'countdown = countdown_ext:register')
    config = tmp_path / 'countdown.yaml'
    config.write_text('metrics_save_path: none\ntask_configs:\n  - type: CountdownTask\n    steps: 5\n')
    bad = tmp_path / 'bad.yaml'
    bad.write_text('metrics_save_path: none\ntask_configs:\n  - type: CountdownTask\n    stepz: 5\n')
    out = run_python(f'''
        from internutopia.cli import main
        print('rc', main(['validate', {str(config)!r}]))
        print('rc', main(['validate', {str(bad)!r}, '--set', 'task_configs.0.steps=7']))
    ''', [str(tmp_path)])
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert 'rc 0' in lines and lines.count('rc 1') == 1, out.stdout + out.stderr[-2000:]
    assert 'stepz' in out.stdout + out.stderr
