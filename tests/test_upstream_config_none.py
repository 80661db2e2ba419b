"""``None`` in configs, as InternUtopia's ``Optional`` fields take it.

Where InternUtopia's code gives ``None`` a meaning, ``None`` is that value here (built, assigned,
updated or read from YAML); where InternUtopia would fail on it later, it is an error naming the
field and what it takes. Also: upstream defaults that go with it (a ``RepCameraCfg`` without a
resolution renders 64x64, ``MoveAlongPathPointsControllerCfg`` is named ``'move_along_path'``), and
``metric_config`` given as a pydantic model reaching the metric.
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from pathlib import Path

os.environ.setdefault('MUJOCO_GL', 'egl')

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from pydantic import BaseModel, ValidationError  # noqa: E402

from internutopia.core.config import Config, DistributedConfig, MetricCfg, ObjectCfg, RewardCfg, SimConfig  # noqa: E402
from internutopia.core.config.distribution import RayDistributionCfg  # noqa: E402
from internutopia.core.task import BaseMetric  # noqa: E402
from internutopia.core.vec_env import Env  # noqa: E402
from internutopia_extension.configs.controllers import (  # noqa: E402
    MoveAlongPathPointsControllerCfg,
    MoveToPointBySpeedControllerCfg,
    RotateControllerCfg,
)
from internutopia_extension.configs.metrics import TraveledDistanceMetricCfg  # noqa: E402
from internutopia_extension.configs.objects import DynamicCubeCfg, UsdObjCfg, VisualCubeCfg  # noqa: E402
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg, move_by_speed_cfg, move_to_point_cfg  # noqa: E402
from internutopia_extension.configs.sensors import MocapControlledCameraCfg, RepCameraCfg  # noqa: E402
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, SingleInferenceTaskCfg  # noqa: E402
from tests.rendering_helpers import scene_file_fixture  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def a_config(**fields):
    return Config(task_configs=[SingleInferenceTaskCfg()], **fields)


def a_distributed_config(**fields):
    return DistributedConfig(task_configs=[SingleInferenceTaskCfg()], **{'distribution_config': RayDistributionCfg(), **fields})


def a_camera(**fields):
    return RepCameraCfg(name='camera', **fields)


def a_usd_object(**fields):
    return UsdObjCfg(name='thing', usd_path=str(ROOT / 'internutopia' / 'assets' / 'scenes' / 'empty.usd'), **fields)


#: ``(make(**fields), field, what None becomes)``: fields where InternUtopia's code gives None a meaning.
ACCEPTED = [
    (a_config, 'metrics_save_path', 'none'),
    (SingleInferenceTaskCfg, 'metrics_save_path', 'none'),
    (SimConfig, 'physics_dt', 1 / 60),
    (SimConfig, 'rendering_dt', 1 / 60),
    (SimConfig, 'headless', False),
    (SimConfig, 'use_fabric', False),
    (SimConfig, 'webrtc', False),
    (SimConfig, 'native', False),
    (RayDistributionCfg, 'type', 'ray'),
    (lambda **f: MetricCfg(type='Anything', **f), 'metric_config', {}),
    (TraveledDistanceMetricCfg, 'metric_config', {}),
    (lambda **f: ObjectCfg(name='o', type='Anything', **f), 'orientation', (1.0, 0.0, 0.0, 0.0)),
    (lambda **f: ObjectCfg(name='o', type='Anything', **f), 'scale', (1.0, 1.0, 1.0)),
    (lambda **f: VisualCubeCfg(name='o', **f), 'orientation', (1.0, 0.0, 0.0, 0.0)),
    (a_usd_object, 'scale', (1.0, 1.0, 1.0)),
    (a_usd_object, 'collider', False),
    (lambda **f: DynamicCubeCfg(name='o', **f), 'collider', True),
    (SingleInferenceTaskCfg, 'scene_scale', (1.0, 1.0, 1.0)),
    (SingleInferenceTaskCfg, 'scene_orientation', (1.0, 0.0, 0.0, 0.0)),
    (a_camera, 'resolution', (64, 64)),
    (a_camera, 'rgba', False),
    (a_camera, 'depth', False),
    (a_camera, 'pointcloud', False),
    (a_camera, 'camera_params', False),
    (a_camera, 'landmarks', False),
    (lambda **f: MocapControlledCameraCfg(name='camera', **f), 'resolution', (320, 240)),
    (MoveAlongPathPointsControllerCfg, 'forward_speed', 1.0),
    (MoveAlongPathPointsControllerCfg, 'rotation_speed', 8.0),
    (MoveAlongPathPointsControllerCfg, 'threshold', 0.02),
    (lambda **f: MoveToPointBySpeedControllerCfg(name='m', **f), 'rotation_speed', 8.0),
    (lambda **f: MoveToPointBySpeedControllerCfg(name='m', **f), 'threshold', 0.02),
    (lambda **f: RotateControllerCfg(name='r', **f), 'rotation_speed', 3.0),
    (lambda **f: RotateControllerCfg(name='r', **f), 'threshold', 0.02),
]

#: ``(make(**fields), field, words of what it takes)``: fields InternUtopia types Optional but fails
#: on (or misreads) when they are None.
REJECTED = [
    (a_config, 'simulator', 'a SimConfig'),
    (a_config, 'env_num', 'an integer'),
    (a_config, 'env_offset_size', 'a number'),
    (SingleInferenceTaskCfg, 'robots', 'a list'),
    (SingleInferenceTaskCfg, 'objects', 'a list'),
    (SingleInferenceTaskCfg, 'metrics', 'a list'),
    (SingleInferenceTaskCfg, 'scene_position', '3 numbers'),
    (SingleInferenceTaskCfg, 'type', 'a string'),
    (FiniteStepTaskCfg, 'max_steps', 'an integer'),
    (JetbotRobotCfg, 'position', '3 numbers'),
    (JetbotRobotCfg, 'name', 'a string'),
    (JetbotRobotCfg, 'type', 'a string'),
    (lambda **f: DynamicCubeCfg(name='o', **f), 'position', '3 numbers'),
    (lambda **f: DynamicCubeCfg(name='o', **f), 'orientation', '4 numbers'),
    (lambda **f: DynamicCubeCfg(name='o', **f), 'scale', '3 numbers'),
    (lambda **f: VisualCubeCfg(name='o', **f), 'scale', '3 numbers'),
    (a_camera, 'type', 'a string'),
    (MoveAlongPathPointsControllerCfg, 'name', 'a string'),
    (a_distributed_config, 'distribution_config', 'a RayDistributionCfg'),
    (RayDistributionCfg, 'proc_num', 'an integer >= 1'),
    (RayDistributionCfg, 'gpu_num_per_proc', 'a number >= 0'),
]


def label(case):
    make, field, _ = case
    name = getattr(make, '__name__', '')
    return f'{name if name not in ("<lambda>", "") else "cfg"}.{field}'


@pytest.mark.parametrize('make, field, value', ACCEPTED, ids=[label(c) for c in ACCEPTED])
def test_none_is_what_internutopia_makes_of_it_built_assigned_or_updated(make, field, value):
    built = make(**{field: None})
    assert getattr(built, field) == value and getattr(built, field) is not None
    cfg = make()
    cfg_dump = cfg.model_dump()
    changed = cfg.update(**{field: None})
    assert getattr(changed, field) == value
    assert cfg.model_dump() == cfg_dump  # update returns a copy
    setattr(cfg, field, None)
    assert getattr(cfg, field) == value


@pytest.mark.parametrize('make, field, words', REJECTED, ids=[label(c) for c in REJECTED])
def test_none_where_internutopia_fails_on_it_is_an_error_naming_the_field_and_its_values(make, field, words):
    with pytest.raises(ValidationError) as error:
        make(**{field: None})
    [problem] = error.value.errors()
    assert problem['loc'] == (field,)
    assert problem['msg'].startswith(f'{field} must not be None: give {words}'), problem['msg']
    cfg = make()
    before = cfg.model_dump()
    with pytest.raises(ValidationError, match=f'{field} must not be None'):
        setattr(cfg, field, None)
    assert cfg.model_dump() == before  # a failed assignment changes nothing


def test_every_problem_is_reported_at_once_and_the_callers_mapping_is_left_as_it_was():
    data = {'name': None, 'position': None, 'scale': (-1.0, 1.0, 1.0)}
    with pytest.raises(ValidationError) as error:
        JetbotRobotCfg.model_validate(data)
    assert sorted(e['loc'][0] for e in error.value.errors()) == ['name', 'position', 'scale']
    assert data == {'name': None, 'position': None, 'scale': (-1.0, 1.0, 1.0)}
    camera = {'name': 'camera', 'resolution': None, 'rgba': None}
    assert RepCameraCfg.model_validate(camera).resolution == (64, 64)
    assert camera == {'name': 'camera', 'resolution': None, 'rgba': None}


def test_fields_that_declare_none_keep_it():
    assert JetbotRobotCfg(orientation=None).orientation is None
    assert SimConfig(device=None, rendering_interval=None).device is None
    assert SingleInferenceTaskCfg(reward=None, scene_asset_path=None).reward is None


def test_a_reward_type_of_none_beside_a_reward_type_is_that_reward_type():
    # InternUtopia's RewardCfg has reward_type only; a type=None there is an unknown key it keeps.
    assert RewardCfg(reward_type='Progress', type=None).type == 'Progress'
    with pytest.raises(ValidationError, match='type must not be None: give a string'):
        RewardCfg(type=None)


def test_none_in_a_yaml_file_reads_as_in_python_and_round_trips(tmp_path):
    path = tmp_path / 'nulls.yaml'
    path.write_text("""\
metrics_save_path: null
simulator: {physics_dt: null, rendering_dt: null, headless: null}
task_configs:
  - type: FiniteStepTask
    max_steps: 5
    scene_scale: null
    metrics: [{type: TraveledDistanceMetric, metric_config: null}]
    robots:
      - type: JetbotRobot
        name: jetbot
        sensors: [{type: RepCamera, name: camera, prim_path: chassis/Camera, resolution: null, depth: null}]
""")
    config = Config.from_yaml(path)
    assert config.metrics_save_path == 'none'
    assert (config.simulator.physics_dt, config.simulator.rendering_dt, config.simulator.headless) == (1 / 60, 1 / 60, False)
    task = config.task_configs[0]
    assert task.scene_scale == (1.0, 1.0, 1.0) and task.metrics[0].metric_config == {}
    camera = task.robots[0].sensors[0]
    assert (camera.resolution, camera.depth) == ((64, 64), False)
    config.to_yaml(tmp_path / 'again.yaml')
    written = (tmp_path / 'again.yaml').read_text()
    assert 'metrics_save_path: none' in written and 'headless: false' in written and 'resolution: null' not in written
    assert Config.from_yaml(tmp_path / 'again.yaml') == config

    path.write_text('env_num: null\ntask_configs:\n  - {type: FiniteStepTask, robots: null}\n')
    with pytest.raises(ValueError) as error:
        Config.from_yaml(path)
    text = str(error.value)
    assert f'{path}:1: env_num: env_num must not be None: give an integer' in text
    assert f'{path}:3: task_configs[0].robots: robots must not be None: give a list' in text


# -- what a run shows ------------------------------------------------------------------------------
@pytest.mark.parametrize('save_path', [None, 'console'])
def test_metrics_save_path_none_writes_no_file_and_prints_no_results(save_path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    task = FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()], metrics=[TraveledDistanceMetricCfg()])
    ended = []
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), metrics_save_path=save_path, task_configs=[task])) as env:
        env.reset()
        for _ in range(10):
            obs, _, terminated, _, info = env.step([{'jetbot': {'move_by_speed': [0.3, 0.0]}}])
            if terminated[0] and obs[0] is not None:
                ended.append(info[0])
                break
    out = capsys.readouterr().out
    assert ended and 'traveled_distance_metric' in ended[0]['metrics']  # the script still gets the metrics
    assert os.listdir(tmp_path) == []
    if save_path is None:
        assert 'traveled_distance_metric' not in out
    else:  # (the same run with 'console' does print them: the check above can see a print)
        assert 'traveled_distance_metric' in out


WALL_XML = """<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="3 3 0.1" rgba="0.5 0.5 0.5 1"/>
    <geom name="wall" type="box" size="0.05 1.5 1.0" pos="1.5 0 1.0" rgba="0.8 0.2 0.1 1"/>
  </worldbody>
</mujoco>
"""
wall_scene = scene_file_fixture(WALL_XML, 'wall.xml')


def test_a_camera_without_a_resolution_renders_64x64_as_internutopia(wall_scene):
    cameras = [RepCameraCfg(name='left_out', prim_path='chassis/Camera'),
               RepCameraCfg(name='given_none', prim_path='chassis/Camera', resolution=None, depth=True)]
    assert [c.resolution for c in cameras] == [(64, 64), (64, 64)]
    task = FiniteStepTaskCfg(max_steps=50, scene_asset_path=wall_scene, robots=[JetbotRobotCfg(sensors=cameras)])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240, rendering_dt=1 / 240), metrics_save_path=None,
                    task_configs=[task])) as env:
        env.reset()
        obs, *_ = env.step([None])
    sensors = obs[0]['jetbot']['sensors']
    for name in ('left_out', 'given_none'):
        image = sensors[name]['rgba']
        assert image.shape == (64, 64, 4) and image.dtype == np.uint8
        assert image[..., :3].std() > 5.0, f'{name}: the image is (nearly) blank'
        assert np.all(image[..., 3] == 255)
    np.testing.assert_array_equal(sensors['left_out']['rgba'], sensors['given_none']['rgba'])
    assert sensors['given_none']['depth'].shape == (64, 64)


def test_move_along_path_is_named_as_internutopia_names_it_and_drives_the_robot():
    follow = MoveAlongPathPointsControllerCfg(sub_controllers=[move_to_point_cfg])
    assert follow.name == 'move_along_path'
    robot = JetbotRobotCfg(controllers=[move_by_speed_cfg, move_to_point_cfg, follow])
    with Env(Config(simulator=SimConfig(physics_dt=1 / 60), metrics_save_path=None,
                    task_configs=[FiniteStepTaskCfg(max_steps=1000, robots=[robot])])) as env:
        obs, _ = env.reset()
        start = np.asarray(obs[0]['jetbot']['position'])
        for _ in range(60):
            obs, *_ = env.step([{'jetbot': {'move_along_path': [[(1.0, 0.0, 0.0)]]}}])
    assert 'move_along_path' in obs[0]['jetbot']['controllers']
    assert np.asarray(obs[0]['jetbot']['position'])[0] - start[0] > 0.2


# -- metric_config as a pydantic model ---------------------------------------------------------------
class Thresholds(BaseModel):
    success_distance: float = 3.0


class RobotChoice(BaseModel):
    robot_name: str = 'jetbot'


class ConfigEchoCfg(MetricCfg):
    type: str = 'NoneTestConfigEcho'
    name: str = 'config_echo'


@BaseMetric.register('NoneTestConfigEcho')
class ConfigEcho(BaseMetric):
    """Written InternUtopia's way: reports what it got as ``self.metric_config``."""

    def update(self, obs):
        pass

    def calc(self):
        options = self.metric_config
        if isinstance(options, BaseModel):
            return {'class': type(options).__name__, 'success_distance': options.success_distance}
        return {'class': type(options).__name__, 'success_distance': options.get('success_distance')}


def test_metric_config_reaches_the_metric_as_given_model_dict_or_none():
    model = Thresholds(success_distance=1.5)
    forms = [model, {'success_distance': 2.0}, None]
    tasks = [FiniteStepTaskCfg(max_steps=3, robots=[JetbotRobotCfg()],
                               metrics=[ConfigEchoCfg(metric_config=form),
                                        TraveledDistanceMetricCfg(metric_config=RobotChoice())])
             for form in forms]
    assert tasks[0].metrics[0].metric_config is model  # kept as given
    assert tasks[0].metrics[1].metric_config == {'robot_name': 'jetbot'}  # a built-in metric reads keys
    assert tasks[2].metrics[0].metric_config == {}
    metrics = {}
    with Env(Config(simulator=SimConfig(physics_dt=1 / 240), env_num=3, metrics_save_path=None,
                    task_configs=tasks)) as env:
        env.reset()
        for _ in range(10):
            obs, _, terminated, _, info = env.step([{'jetbot': {'move_by_speed': [0.3, 0.0]}}] * 3)
            metrics.update({slot: info[slot]['metrics'] for slot in range(3) if terminated[slot] and obs[slot] is not None})
            if len(metrics) == 3:
                break
    assert metrics[0]['config_echo'] == {'class': 'Thresholds', 'success_distance': 1.5}
    assert metrics[1]['config_echo'] == {'class': 'dict', 'success_distance': 2.0}
    assert metrics[2]['config_echo'] == {'class': 'dict', 'success_distance': None}
    assert all(metrics[slot]['traveled_distance_metric'] > 0.0 for slot in range(3))
    assert model == Thresholds(success_distance=1.5)  # the user's model is untouched


def test_metric_option_reads_both_forms_and_yaml_holds_a_models_fields(tmp_path):
    assert MetricCfg(type='X', metric_config=Thresholds()).metric_option('success_distance') == 3.0
    assert MetricCfg(type='X', metric_config={'success_distance': 2.0}).metric_option('success_distance') == 2.0
    assert MetricCfg(type='X').metric_option('success_distance', 9.0) == 9.0
    with pytest.raises(ValidationError, match='metric_config must be a dict'):
        MetricCfg(type='X', metric_config=[1, 2])
    config = Config(metrics_save_path=None, task_configs=[
        FiniteStepTaskCfg(robots=[JetbotRobotCfg()], metrics=[ConfigEchoCfg(metric_config=Thresholds(success_distance=1.5))])])
    config.to_yaml(tmp_path / 'c.yaml')
    assert 'success_distance: 1.5' in (tmp_path / 'c.yaml').read_text()
    loaded = Config.from_yaml(tmp_path / 'c.yaml')
    assert type(loaded.task_configs[0].metrics[0]) is ConfigEchoCfg
    assert loaded.task_configs[0].metrics[0].metric_config == {'success_distance': 1.5}


# -- docs --------------------------------------------------------------------------------------------
def undefined_names(code: str) -> set[str]:
    """Names a block reads that it neither binds nor imports (nor are builtins)."""
    tree = ast.parse(code)
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {alias.asname or alias.name.split('.')[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def test_each_gymnasium_page_example_imports_what_it_uses():
    text = (ROOT / 'docs' / 'gymnasium.md').read_text()
    blocks = re.findall(r'^```python\n(.*?)^```', text, flags=re.S | re.M)
    assert blocks
    missing = {number + 1: sorted(names) for number, block in enumerate(blocks) if (names := undefined_names(block))}
    assert missing == {}, f'python blocks of docs/gymnasium.md use names they do not import: {missing}'
