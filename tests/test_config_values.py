"""Config values a reset can use: numbers that are numbers, integers that fit the step counters,
coordinates, offsets and sizes in finite, sane ranges; rejected at ``Config`` time naming the field."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from pydantic import ValidationError

from internutopia import cli
from internutopia.core.config import Config, RobotCfg, SimConfig, TaskCfg
from internutopia.core.config.values import MAX_STEPS
from internutopia_extension.configs.objects import DynamicCubeCfg, VisualCubeCfg
from internutopia_extension.configs.robots.jetbot import JetbotRobotCfg
from internutopia_extension.configs.sensors import RepCameraCfg
from internutopia_extension.configs.tasks import FiniteStepTaskCfg, ManipulationTaskCfg, PointNavTaskCfg


def jetbot_task(**fields):
    return FiniteStepTaskCfg(robots=[JetbotRobotCfg()], **fields)


@pytest.mark.parametrize('value', [np.timedelta64(1, 's'), np.datetime64('2024-01-01'), b'0.01', True, '0.01x'])
def test_times_bytes_and_bools_are_no_step_length(value):
    with pytest.raises(ValidationError, match='physics_dt'):
        SimConfig(physics_dt=value)


@pytest.mark.parametrize('build, field', [
    (lambda v: Config(env_offset_size=v, task_configs=[jetbot_task()]), 'env_offset_size'),
    (lambda v: Config(env_num=v, task_configs=[jetbot_task()]), 'env_num'),
    (lambda v: FiniteStepTaskCfg(max_steps=v), 'max_steps'),
    (lambda v: JetbotRobotCfg(position=(v, 0.0, 0.0)), 'position'),
    (lambda v: RepCameraCfg(name='c', resolution=(v, 240)), 'resolution'),
    (lambda v: SimConfig(rendering_interval=v), 'rendering_interval'),
])
@pytest.mark.parametrize('value', [np.timedelta64(3, 's'), np.datetime64('2024-01-01'), b'3', np.array([b'3'])[0]])
def test_non_numbers_are_rejected_where_numbers_belong(build, field, value):
    with pytest.raises(ValidationError, match=field) as error:
        build(value)
    assert 'must be' in str(error.value)


def test_numpy_numbers_and_arrays_of_numbers_still_work():
    robot = JetbotRobotCfg(position=np.array([1.0, 2.0, 0.0]))
    assert robot.position == (1.0, 2.0, 0.0)
    assert FiniteStepTaskCfg(max_steps=np.int64(7)).max_steps == 7
    with pytest.raises(ValidationError, match='position'):
        JetbotRobotCfg(position=np.array([np.timedelta64(1, 's')] * 3))


@pytest.mark.parametrize('value', [1e100, math.inf, math.nan, -1.0, 0.0, 1e4 + 1])
def test_env_offset_size_must_be_a_sane_spacing(value):
    with pytest.raises(ValidationError, match='env_offset_size'):
        Config(env_offset_size=value, task_configs=[jetbot_task()])
    assert Config(env_offset_size=1e4, task_configs=[jetbot_task()]).env_offset_size == 1e4


@pytest.mark.parametrize('cls, extra', [(FiniteStepTaskCfg, {}), (PointNavTaskCfg, {'goal': (1.0, 0.0, 0.0)}),
                                        (ManipulationTaskCfg, {'target': 'x', 'episode_idx': 0})])
@pytest.mark.parametrize('value', [2**63, 2**62, MAX_STEPS + 1, 0])
def test_absurd_step_limits_fail_at_config_time_naming_max_steps(cls, extra, value):
    with pytest.raises(ValidationError, match=r'max_steps\n.*(max_steps must be a number of env steps in 1\.\.1_000_000_000'
                                              r'|must be an integer that fits 64 bits)'):
        cls(max_steps=value, robots=[JetbotRobotCfg()], **extra)


def test_every_integer_field_fits_64_bits():
    class CountCfg(TaskCfg):
        type: str = 'CountingTask'
        count: int = 0

    with pytest.raises(ValidationError, match=r'count\n.*fits 64 bits'):
        CountCfg(count=2**63)
    assert CountCfg(count=2**63 - 1).count == 2**63 - 1


@pytest.mark.parametrize('build, field', [
    (lambda: JetbotRobotCfg(position=(math.nan, 0.0, 0.0)), 'position'),
    (lambda: PointNavTaskCfg(goal=(math.nan, 0.0, 0.0), robots=[JetbotRobotCfg()]), 'goal'),
    (lambda: JetbotRobotCfg(position=(1e100, 0.0, 0.0)), 'position'),
    (lambda: jetbot_task(scene_position=(0.0, -1e6, 0.0)), 'scene_position'),
    (lambda: jetbot_task(scene_scale=(1e9, 1.0, 1.0)), 'scene_scale'),
    (lambda: jetbot_task(scene_scale=(1e-9, 1.0, 1.0)), 'scene_scale'),
    (lambda: RobotCfg(name='r', type='X', scale=(math.inf, 1.0, 1.0)), 'scale'),
    (lambda: VisualCubeCfg(name='c', scale=(math.inf, 1.0, 1.0)), 'scale'),
    (lambda: VisualCubeCfg(name='c', scale=(1e5, 1.0, 1.0)), 'scale'),
    (lambda: DynamicCubeCfg(name='c', scale=(1e-4, 1e-4, 1e-4)), 'at least 1 mm'),
    (lambda: DynamicCubeCfg(name='c', mass=1e-9), '1 mg'),
    (lambda: DynamicCubeCfg(name='c', density=1e-300), '1 mg'),
    (lambda: JetbotRobotCfg(scale=(0.005, 0.005, 0.005)), 'scaled below 0.01'),
    (lambda: RepCameraCfg(name='c', clipping_range_m=(1e-300, 10.0)), 'clipping_range_m'),
])
def test_values_that_would_break_a_reset_or_a_render_are_rejected(build, field):
    with pytest.raises(ValidationError, match=field):
        build()


def test_the_largest_accepted_values_reset_and_step(make_config):
    from internutopia.core.vec_env import Env

    task = FiniteStepTaskCfg(max_steps=MAX_STEPS, scene_position=(0.0, 0.0, 0.0),
                             robots=[JetbotRobotCfg(position=(1e5, 0.0, 0.0))],
                             objects=[DynamicCubeCfg(name='cube', scale=(1e-3, 1e-3, 1e-3), mass=1e-6, position=(1e5 - 1, 0, 0.1))])
    env = Env(make_config([task], env_num=1, offset=1e4))
    try:
        env.reset()
        obs, reward, terminated, truncated, info = env.step([{'jetbot': {'move_by_speed': [0.2, 0.0]}}])
        assert terminated == [False] and np.isfinite(obs[0]['jetbot']['position']).all()
    finally:
        env.close()


def test_validate_reports_an_infinite_cube_and_a_far_away_body_in_a_scene(tmp_path, capsys):
    (tmp_path / 'huge.usda').write_text(textwrap.dedent("""\
        #usda 1.0
        (
            defaultPrim = "World"
            metersPerUnit = 1
            upAxis = "Z"
        )

        def Xform "World"
        {
            def Cube "Huge" (
                prepend apiSchemas = ["PhysicsCollisionAPI"]
            )
            {
                double size = inf
            }
            def Cube "Far" (
                prepend apiSchemas = ["PhysicsCollisionAPI"]
            )
            {
                double size = 1
                double3 xformOp:translate = (1e100, 0, 0.5)
                uniform token[] xformOpOrder = ["xformOp:translate"]
            }
        }
        """))
    path = tmp_path / 'c.yaml'
    path.write_text('task_configs:\n  - type: FiniteStepTask\n    scene_asset_path: huge.usda\n')
    assert cli.main(['validate', str(path)]) == cli.EXIT_ERROR
    err = capsys.readouterr().err
    assert f"{path}:3: task_configs[0].scene_asset_path: scene " in err
    # (the loader skips a prim of non-finite size, with a warning; validate reports it)
    assert "huge.usda': " in err and 'prim /World/Huge has a non-finite size or placement; skipped' in err
    assert "geom 'World/Far' has geom position [1e+100, 0.0, 0.5]" in err
    assert 'must be finite and within +-100000 m' in err


def test_validate_rejects_an_absurd_offset_with_its_line(tmp_path, capsys):
    path = tmp_path / 'c.yaml'
    path.write_text('env_offset_size: 1.0e+100\ntask_configs:\n  - {type: FiniteStepTask, max_steps: 9223372036854775808}\n')
    assert cli.main(['validate', str(path)]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f'{path}:1: env_offset_size: env_offset_size must be > 0 and at most 10000 metres')
    assert err[1].startswith(f'{path}:3: task_configs[0].max_steps: must be an integer that fits 64 bits')
